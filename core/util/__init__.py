"""Small helpers shared by the planner and engines."""

from hudi_ray.core.util.collection import split_into_chunks

__all__ = ["split_into_chunks"]
