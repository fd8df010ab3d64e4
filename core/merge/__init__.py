"""Merging: record-key merging of base-file rows with log records, vectorized in Arrow."""

from hudi_ray.core.merge.config import MergeConfig, MergeMode, resolve_merge_config
from hudi_ray.core.merge.merger import (
    LogRecords,
    MergeDecision,
    apply_merge,
    compared_columns,
    decide_merge,
    merge_records,
    record_keys,
)

__all__ = [
    "LogRecords",
    "MergeConfig",
    "MergeDecision",
    "MergeMode",
    "apply_merge",
    "compared_columns",
    "decide_merge",
    "merge_records",
    "record_keys",
    "resolve_merge_config",
]
