"""Incremental ranges: which completed instants a consumer reads next, and
whether the history of a range is still there to read.

A consumer's position is a completion time: everything that completed at or
before it has been read. The next range ``(start, end]`` holds the completed
data instants after the position, in the order they took effect (completion
time, then requested time), and obeys three rules:

* it ends before the earliest pending (requested or inflight) write whose
  completion could land inside it: an instant completes no earlier than it
  was requested, so every instant of the range completed before the earliest
  pending write's requested time. A pending write is then neither read early
  nor skipped once it completes;
* a cap on instants never splits instants that completed at the same time:
  the range takes all of them, so a completion time alone orders what was
  read and positions need nothing more;
* positions are normalized to 17 digits, so a 14-digit instant time and its
  millisecond form order alike.

A range whose start is older than the active timeline takes its instants from
the archived history as well. Its history is gone when that archive cannot be
read, or was lost while files of archived instants remain, or when a file one
of its commits wrote, and that the read needs, is no longer in storage (a clean
removed it). Incremental planning checks these (``scan.IncrementalScan``) and
either fails, naming what is missing, or with
``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` reads the full
snapshot as of the range's end and says so in the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from hudi_ray.core.config import HudiReadConfig as R
from hudi_ray.core.config import int_option
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.log_file import parse_log_file_name
from hudi_ray.core.timeline import HudiInstant, HudiTimeline
from hudi_ray.core.timeline.instant import CLUSTERING, COMMIT, DELTA_COMMIT, REPLACE_COMMIT
from hudi_ray.core.timeline.timeline import archive_errors
from hudi_ray.core.timeline.timestamps import START_OF_TIME, parse_timestamp

# Pending actions whose completion adds rows an incremental read returns.
# Compaction and log compaction rewrite rows under their original commit
# times, so incremental reads never return rows for them: waiting on one would
# stall consumers for nothing.
WRITE_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLUSTERING})

EARLIEST = "earliest"
LATEST = "latest"


def position(ts: str) -> str:
    """A timeline time as a position: 17 digits (a 14-digit time takes ``000``)."""
    return ts + "000" if len(ts) == 14 else ts


def effect_order(instant: HudiInstant) -> tuple[str, str]:
    """The order in which instants took effect: completion time, then requested time."""
    return position(instant.completed_at), position(instant.timestamp)


@dataclass(frozen=True)
class IncrementalRange:
    """The completed data instants in ``(start, end]`` by completion time, in
    the order they took effect. ``start == end`` when there is nothing new.
    ``waiting_on`` is the earliest pending write the range had to stop before
    (None when nothing pending held it back)."""

    start: str
    end: str
    instants: tuple[HudiInstant, ...]
    waiting_on: HudiInstant | None = None
    # The range's history was gone: its read is the full snapshot of the latest state.
    full_snapshot: bool = False

    @property
    def is_empty(self) -> bool:
        return not self.instants

    def read_options(self) -> dict[str, str]:
        """The incremental query reading exactly this range."""
        return {
            R.QUERY_TYPE.value: "incremental",
            R.START_TIMESTAMP.value: self.start,
            R.END_TIMESTAMP.value: self.end,
        }


def earliest_pending_write(timeline: HudiTimeline) -> HudiInstant | None:
    """The pending write with the earliest requested time, if any. The
    requested and inflight files of a completed instant stay on the timeline
    after it completes: only instants without a completed file are pending."""
    done = {i.timestamp for i in timeline.instants}
    pending = [i for i in timeline.pending if i.action in WRITE_ACTIONS and i.timestamp not in done]
    return min(pending, key=lambda i: position(i.timestamp), default=None)


def checked_max_instants(value: object, name: str = "max_instants", strings: bool = False) -> int | None:
    """A cap on instants per range: None, or an integer of at least 1 (``HudiConfigError`` naming ``name``)."""
    return None if value is None else int_option(value, name, minimum=1, strings=strings)


def next_range(timeline: HudiTimeline, start: str | None = None, max_instants: int | None = None) -> IncrementalRange:
    """The next range to read after position ``start`` (None: the beginning),
    of at most ``max_instants`` instants unless more completed at the same
    time as the last one (None: every instant available)."""
    max_instants = checked_max_instants(max_instants)
    after = position(start) if start else START_OF_TIME
    waiting_on = earliest_pending_write(timeline)
    limit = position(waiting_on.timestamp) if waiting_on is not None else None
    candidates, _ = with_history(timeline, after)
    ready = sorted(
        (i for i in candidates if position(i.completed_at) > after),
        key=effect_order,
    )
    held_back = limit is not None and any(position(i.completed_at) >= limit for i in ready)
    if limit is not None:
        ready = [i for i in ready if position(i.completed_at) < limit]
    if max_instants is not None and len(ready) > max_instants:
        last = position(ready[max_instants - 1].completed_at)
        ready = [i for i in ready if position(i.completed_at) <= last]
    end = position(ready[-1].completed_at) if ready else after
    return IncrementalRange(after, end, tuple(ready), waiting_on if held_back else None)


def latest_position(timeline: HudiTimeline) -> str:
    """The position after every instant a consumer may read now."""
    return next_range(timeline).end


def resolve_start(value: str | None, timeline: HudiTimeline, timezone: str, option: str = "startingOffsets") -> str:
    """A consumer's first position: ``earliest`` (the default: everything),
    ``latest`` (only what completes from now on), an instant of the timeline
    (what took effect after it), or a timestamp, after which changes are read
    (exclusive, as the incremental query's start)."""
    text = (value or EARLIEST).strip()
    if text.lower() == EARLIEST:
        return START_OF_TIME
    if text.lower() == LATEST:
        return latest_position(timeline)
    at = parse_timestamp(text, timezone, option=option)
    for instant in with_history(timeline, at)[0]:
        if position(instant.timestamp) == at:
            return position(instant.completed_at)
    return position(at)


def fallback_enabled(options: Mapping[str, str]) -> bool:
    key = R.INCR_FALLBACK_FULL_TABLE_SCAN.value
    raw = options.get(key)
    if raw is None:
        return False
    low = str(raw).strip().lower()
    if low not in ("true", "false"):
        raise HudiConfigError(f"Config {key} must be true or false, got {raw!r}")
    return low == "true"


# -- is the history still there -----------------------------------------------------


def with_history(timeline: HudiTimeline, start: str) -> tuple[list[HudiInstant], str | None]:
    """The completed data instants a range after position ``start`` chooses from,
    oldest first: the active timeline's, and the archived history's when ``start`` is
    older than the active timeline. With an archive that cannot be read, the active
    timeline's and why the history is gone."""
    active = timeline.data_instants
    first = timeline.start
    if first is None or position(start) >= position(first):
        return active, None
    try:
        if not timeline.archive.is_present():
            return active, None
        return timeline.archived_data_instants() + active, None
    except archive_errors() as exc:
        since = "the beginning" if position(start) == START_OF_TIME else start
        return active, (
            f"instants completed after {since} were archived (the active timeline starts at instant {first}) "
            f"and the archived history cannot be read: {exc}"
        )


def archive_gone(timeline: HudiTimeline, start: str, listed_times: Callable[[], Iterable[str]]) -> str | None:
    """Why a read from ``start`` (older than the active timeline) cannot be answered when
    the table has no archived history to read but instants were archived: storage holds
    files older than the active timeline, or the active timeline rewrote file groups it
    did not create (their rows keep the commit times of archived instants). None
    otherwise. ``listed_times`` gives the instant times of the files listed."""
    first = timeline.start
    if first is None or position(start) >= position(first):
        return None
    if timeline.archive.is_present():
        return None
    older = min((t for t in listed_times() if t < first), default=None)
    evidence = f"storage holds files of instant {older}" if older is not None else timeline.rewrote_history()
    if evidence is None:
        return None
    since = "the beginning" if position(start) == START_OF_TIME else start
    return (
        f"instants completed after {since} were archived: {evidence}, older than the active timeline (which "
        f"starts at instant {first}), and the table's archived history at {timeline.archive.location} is gone"
    )


def cleaned_gap(
    timeline: HudiTimeline,
    instants: Iterable[HudiInstant],
    slices: Iterable[HudiFileSlice],
    partitions: Iterable[str],
    replaced: set[tuple[str, str]],
    base_only: bool,
) -> str | None:
    """The first file a range's commits wrote that its read needs and storage
    no longer has (named with its instant), or None.

    A file is needed unless a newer base file in the read's slice of its file
    group (written by the range's end) supersedes it, its group was replaced,
    it lies in a partition the read pruned, or it is a log file of a
    read-optimized read. The slices come from a storage listing, so a file
    absent from its slice is absent from storage.
    """
    wanted = set(partitions)
    by_group = {(s.partition_path, s.file_id): s for s in slices}
    for instant in instants:
        for stat in timeline.write_stats(instant):
            partition = stat["partitionPath"]
            key = (partition, stat["fileId"])
            if partition not in wanted or key in replaced:
                continue
            name = stat["path"].rsplit("/", 1)[-1]
            log_file = parse_log_file_name(name)
            if log_file is not None and (log_file.is_cdc or base_only):
                continue
            found = by_group.get(key)
            if found is not None:
                if name == found.base_file_name or name in found.log_file_names:
                    continue
                if found.commit_time is not None and position(found.commit_time) > position(instant.timestamp):
                    continue  # a newer base file of the group holds what this one did
            return (
                f"file {stat['path']} written by completed instant {instant.timestamp} ({instant.action}) "
                "is no longer in storage (a clean removed it, or it is missing)"
            )
    return None
