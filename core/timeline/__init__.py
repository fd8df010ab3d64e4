"""Timeline: instants, their commit metadata, and timestamp parsing."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.timeline.instant import COMMIT, DATA_ACTIONS, DELTA_COMMIT, HudiInstant, State
    from hudi_ray.core.timeline.timeline import HudiTimeline, ask_for_timeline, decode_instant_metadata
    from hudi_ray.core.timeline.timestamps import (
        format_timeline,
        parse_timestamp,
        timeline_to_datetime,
        timeline_to_epoch_millis,
    )

__all__ = [
    "COMMIT",
    "DATA_ACTIONS",
    "DELTA_COMMIT",
    "HudiInstant",
    "HudiTimeline",
    "State",
    "ask_for_timeline",
    "decode_instant_metadata",
    "format_timeline",
    "parse_timestamp",
    "timeline_to_datetime",
    "timeline_to_epoch_millis",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.timeline.instant": ("COMMIT", "DATA_ACTIONS", "DELTA_COMMIT", "HudiInstant", "State"),
        "hudi_ray.core.timeline.timeline": ("HudiTimeline", "ask_for_timeline", "decode_instant_metadata"),
        "hudi_ray.core.timeline.timestamps": (
            "format_timeline",
            "parse_timestamp",
            "timeline_to_datetime",
            "timeline_to_epoch_millis",
        ),
    },
)
