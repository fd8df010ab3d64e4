"""Instants: one action on the timeline, parsed from its file name."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from hudi_ray.core.timeline.timestamps import timeline_to_epoch_millis


class State(str, Enum):
    REQUESTED = "REQUESTED"
    INFLIGHT = "INFLIGHT"
    COMPLETED = "COMPLETED"


COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
REPLACE_COMMIT = "replacecommit"
CLUSTERING = "clustering"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
ROLLBACK = "rollback"
CLEAN = "clean"
# Completed actions that write data files readers must see.
DATA_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT})

_NAME = re.compile(r"^(\d{14,17})(?:_(\d{14,17}))?\.([a-z_]+)(?:\.(requested|inflight))?$")


@dataclass(frozen=True, order=True)
class HudiInstant:
    """An instant of the timeline.

    ``timestamp`` is the requested time (the instant time written into file
    names); ``completion_timestamp`` is known for table version 8 and later.
    """

    timestamp: str
    action: str = field(compare=False)
    state: str = field(compare=False, default=State.COMPLETED.value)
    completion_timestamp: str | None = field(compare=False, default=None)
    file_name: str = field(compare=False, default="")
    timezone: str = field(compare=False, default="UTC", repr=False)
    # Read from the archived history, not the active timeline: it has no file of its own.
    archived: bool = field(compare=False, default=False, repr=False)

    @property
    def epoch_mills(self) -> int:
        return timeline_to_epoch_millis(self.timestamp, self.timezone)

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED.value

    @property
    def completed_at(self) -> str:
        """The time the instant took effect: completion time when known."""
        return self.completion_timestamp or self.timestamp

    @classmethod
    def parse(cls, file_name: str, timezone: str = "UTC") -> HudiInstant | None:
        """Parse an active-timeline file name; None for files that are not instants."""
        m = _NAME.match(file_name)
        if not m:
            return None
        ts, completed, action, suffix = m.groups()
        if action in ("requested", "inflight") and suffix is None:
            # "<ts>.inflight" / "<ts>.requested" belong to a plain commit.
            action, suffix = COMMIT, action
        if suffix == "requested":
            state = State.REQUESTED
        elif suffix == "inflight":
            state = State.INFLIGHT
        else:
            state = State.COMPLETED
        return cls(
            timestamp=ts,
            action=action,
            state=state.value,
            completion_timestamp=completed,
            file_name=file_name,
            timezone=timezone,
        )
