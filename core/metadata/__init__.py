"""Metadata table: partitions and files, column and partition stats, record and secondary indexes."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.metadata.hashing import column_stats_key, file_group_index, partition_stats_key
    from hudi_ray.core.metadata.records import RecordLocation
    from hudi_ray.core.metadata.secondary_index import SECONDARY_INDEX_PREFIX, SecondaryIndexDefinition
    from hudi_ray.core.metadata.table import (
        BLOOM_FILTERS,
        BOOTSTRAP_PREFIX,
        COLUMN_STATS,
        FILES,
        PARTITION_STATS,
        RECORD_INDEX,
        MetadataTable,
    )

__all__ = [
    "BLOOM_FILTERS",
    "BOOTSTRAP_PREFIX",
    "COLUMN_STATS",
    "FILES",
    "PARTITION_STATS",
    "RECORD_INDEX",
    "MetadataTable",
    "RecordLocation",
    "SECONDARY_INDEX_PREFIX",
    "SecondaryIndexDefinition",
    "column_stats_key",
    "file_group_index",
    "partition_stats_key",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.metadata.hashing": ("column_stats_key", "file_group_index", "partition_stats_key"),
        "hudi_ray.core.metadata.records": ("RecordLocation",),
        "hudi_ray.core.metadata.secondary_index": ("SECONDARY_INDEX_PREFIX", "SecondaryIndexDefinition"),
        "hudi_ray.core.metadata.table": (
            "BLOOM_FILTERS",
            "BOOTSTRAP_PREFIX",
            "COLUMN_STATS",
            "FILES",
            "PARTITION_STATS",
            "RECORD_INDEX",
            "MetadataTable",
        ),
    },
)
