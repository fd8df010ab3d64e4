"""Merging: record-key merging of base-file rows with log records, vectorized in Arrow."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
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

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.merge.config": ("MergeConfig", "MergeMode", "resolve_merge_config"),
        "hudi_ray.core.merge.merger": (
            "LogRecords",
            "MergeDecision",
            "apply_merge",
            "compared_columns",
            "decide_merge",
            "merge_records",
            "record_keys",
        ),
    },
)
