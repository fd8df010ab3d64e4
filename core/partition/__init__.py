"""Partitions: partition paths, their typed values, and the partition schema."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.partition.partitioner import PARTITION_PATH_FIELD, Partitioner

__all__ = ["PARTITION_PATH_FIELD", "Partitioner"]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.partition.partitioner": ("PARTITION_PATH_FIELD", "Partitioner"),
    },
)
