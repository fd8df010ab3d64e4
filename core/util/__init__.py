"""Small helpers shared by the planner and engines."""

from hudi_ray.core.util.collection import split_by_size, split_into_chunks
from hudi_ray.core.util.locks import FreshLock

__all__ = ["FreshLock", "split_by_size", "split_into_chunks"]
