"""Which writes a read may see: the completed instants it reads as of."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from hudi_ray.core.timeline import HudiInstant, HudiTimeline


@dataclass(frozen=True)
class Visibility:
    """Which writes a read may see.

    ``instants`` are the visible completed data instants. A file written by
    any other instant on the active timeline is invisible; a file older than
    the whole active timeline was written by an archived, completed instant.
    """

    instants: frozenset[str]
    upper: str | None  # nothing written after this requested time is visible
    on_timeline: frozenset[str]  # every instant time on the active timeline
    timeline_start: str | None
    # Archived instants known to be outside the read (completed after its end).
    hidden: frozenset[str] = frozenset()
    # The archived instants of ``instants``, where the read reaches into the archived
    # history (time travel or an incremental range before the active timeline): their
    # writes are checked and their replace commits applied as the active timeline's are.
    archived: tuple[HudiInstant, ...] = ()
    # Instants the archived rollbacks undid, where the read reaches into the archived history.
    rolled_back: frozenset[str] = frozenset()

    def sees(self, ts: str) -> bool:
        if ts in self.instants:
            return True
        if ts in self.on_timeline or ts in self.hidden or ts in self.rolled_back:
            return False
        if self.upper is not None and ts > self.upper:
            return False
        return self.timeline_start is not None and ts < self.timeline_start


def visibility_of(
    timeline: HudiTimeline,
    instants: Iterable[HudiInstant],
    hidden: Iterable[HudiInstant] = (),
    history: bool = False,
) -> Visibility:
    """Visibility of exactly ``instants`` (plus archived history, but for the archived
    instants ``hidden``). ``history``: the read reaches before the active timeline, and
    the archived rollbacks apply (they do wherever an instant chosen or hidden is archived)."""
    chosen = list(instants)
    hidden = list(hidden)
    every = timeline.instants + timeline.pending
    archived = tuple(i for i in chosen if i.archived)
    return Visibility(
        instants=frozenset(i.timestamp for i in chosen),
        upper=max((i.timestamp for i in chosen), default=None),
        on_timeline=frozenset(i.timestamp for i in every),
        timeline_start=min((i.timestamp for i in every), default=None),
        hidden=frozenset(i.timestamp for i in hidden),
        archived=archived,
        rolled_back=timeline.archived_rollbacks() if archived or hidden or history else frozenset(),
    )


def snapshot_visibility(timeline: HudiTimeline, as_of: str | None) -> Visibility:
    """Completed data instants up to ``as_of`` (instant time), or all of them. Time
    travel to before the active timeline reads the archived instants up to it."""
    data = timeline.data_instants
    history = False
    if as_of is not None:
        data = [i for i in data if i.timestamp <= as_of]
        history = timeline.start is not None and as_of < timeline.start and timeline.archive.is_present()
        if history:
            data = [i for i in timeline.archived_data_instants() if i.timestamp <= as_of] + data
    vis = visibility_of(timeline, data, history=history)
    return dataclasses.replace(vis, upper=as_of)
