"""Small helpers shared by the planner and engines."""

from hudi_ray.core.lazy import exported
from hudi_ray.core.util.collection import (
    SMALL_GROUP_BYTES,
    group_small,
    split_balanced,
    split_by_size,
    split_into_chunks,
)
from hudi_ray.core.util.locks import FreshLock

__all__ = [
    "SMALL_GROUP_BYTES",
    "FreshLock",
    "exported",
    "group_small",
    "split_balanced",
    "split_by_size",
    "split_into_chunks",
]
