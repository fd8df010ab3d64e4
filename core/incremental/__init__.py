"""Incremental reads over time: the ranges between positions on the timeline
(``ranges``) and the checkpoints that carry a job's position between runs."""

from hudi_ray.core.incremental.checkpoint import DEFAULT_LEASE_SECONDS, Checkpoint, CheckpointStore, Lease
from hudi_ray.core.incremental.ranges import (
    IncrementalRange,
    checked_max_instants,
    fallback_enabled,
    latest_position,
    next_range,
    position,
    resolve_start,
)

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "Checkpoint",
    "CheckpointStore",
    "IncrementalRange",
    "Lease",
    "checked_max_instants",
    "fallback_enabled",
    "latest_position",
    "next_range",
    "position",
    "resolve_start",
]
