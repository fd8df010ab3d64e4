"""Small helpers shared by the planner and engines."""

from hudi_ray.core.util.collection import split_balanced, split_by_size, split_into_chunks
from hudi_ray.core.util.locks import FreshLock
from hudi_ray.core.util.readahead import read_ahead

__all__ = ["FreshLock", "read_ahead", "split_balanced", "split_by_size", "split_into_chunks"]
