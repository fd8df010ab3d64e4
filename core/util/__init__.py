"""Small helpers shared by the planner and engines."""

from hudi_ray.core.util.collection import split_by_size, split_into_chunks

__all__ = ["split_by_size", "split_into_chunks"]
