"""Merging: record-key merging of base-file rows with log records, vectorized in Arrow."""

from hudi_ray.core.merge.config import MergeConfig, MergeMode, resolve_merge_config
from hudi_ray.core.merge.merger import LogRecords, compared_columns, merge_records, record_keys

__all__ = [
    "LogRecords",
    "MergeConfig",
    "MergeMode",
    "compared_columns",
    "merge_records",
    "record_keys",
    "resolve_merge_config",
]
