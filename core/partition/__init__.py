"""Partitions: partition paths, their typed values, and the partition schema."""

from hudi_ray.core.partition.partitioner import PARTITION_PATH_FIELD, Partitioner

__all__ = ["PARTITION_PATH_FIELD", "Partitioner"]
