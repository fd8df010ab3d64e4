"""Incremental reads over time: the ranges between positions on the timeline
(``ranges``) and the checkpoints that carry a job's position between runs."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
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

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.incremental.checkpoint": ("DEFAULT_LEASE_SECONDS", "Checkpoint", "CheckpointStore", "Lease"),
        "hudi_ray.core.incremental.ranges": (
            "IncrementalRange",
            "checked_max_instants",
            "fallback_enabled",
            "latest_position",
            "next_range",
            "position",
            "resolve_start",
        ),
    },
)
