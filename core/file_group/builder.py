"""Building file groups from listed files, and the latest file slice of each
group from them: which base file and which log files a read sees."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter

from hudi_ray.core.base_file import parse_base_file_name
from hudi_ray.core.exceptions import HudiFileNotFoundError, HudiTimelineError
from hudi_ray.core.file_group.file_slice import HudiFileSlice, relative_path
from hudi_ray.core.file_group.visibility import Visibility
from hudi_ray.core.log_file import LogFile, parse_log_file_name
from hudi_ray.core.storage import UNKNOWN_SIZE, FileInfo, Storage
from hudi_ray.core.timeline import HudiTimeline
from hudi_ray.core.timeline.instant import REPLACE_COMMIT

# (instant time, name, size): plain tuples of strings, which the garbage collector stops tracking.
BaseFileEntry = tuple[str, str, int]


@dataclass(frozen=True, slots=True)
class FileGroup:
    """A file group's files as listed. Tuples, not lists: planning holds one
    group per file group of the table, and every container the garbage
    collector tracks makes each of its full passes longer."""

    partition_path: str
    file_id: str
    base_files: tuple[BaseFileEntry, ...] = ()
    log_files: tuple[LogFile, ...] = ()


def build_file_groups(listed: Iterable[tuple[str, list[FileInfo]]]) -> list[FileGroup]:
    """The file groups of ``(partition, entries)`` listings, in the order the
    listings first name them. CDC logs and files Hudi did not name are left out."""
    bases: dict[tuple[str, str], tuple[BaseFileEntry, ...]] = {}
    logs: dict[tuple[str, str], tuple[LogFile, ...]] = {}
    order: dict[tuple[str, str], None] = {}
    for partition, entries in listed:
        for e in entries:
            if e.is_dir:
                continue
            base = parse_base_file_name(e.name)
            if base is not None:
                key = (partition, base.file_id)
                order.setdefault(key)
                bases[key] = (*bases.get(key, ()), (base.instant_time, e.name, e.size))
                continue
            lf = parse_log_file_name(e.name, e.size)
            if lf is not None and not lf.is_cdc:
                key = (partition, lf.file_id)
                order.setdefault(key)
                logs[key] = (*logs.get(key, ()), lf)
    return [FileGroup(p, fid, bases.get((p, fid), ()), logs.get((p, fid), ())) for p, fid in order]


def replaced_file_groups(timeline: HudiTimeline, visibility: Visibility) -> set[tuple[str, str]]:
    """``(partition, file id)`` of the groups that replace commits ``visibility`` sees replaced.

    Only the active timeline's replace commits: Apache Hudi archives a replace commit
    only once a clean removed the groups it replaced (its archiver keeps the earliest
    instant clustering must retain), so its file system view never reads the archive
    for them, and neither does a snapshot here."""
    replaced: set[tuple[str, str]] = set()
    archived = [i for i in visibility.archived if i.action == REPLACE_COMMIT]
    for instant in archived + timeline.get_completed_replacecommits():
        if instant.timestamp not in visibility.instants:
            continue
        for partition, ids in timeline.replaced_file_ids(instant).items():
            replaced.update((partition, fid) for fid in ids)
    return replaced


def log_slice_time(lf: LogFile, timeline: HudiTimeline, table_version: int) -> str | None:
    """The time that places a log file in a slice (see ``owning_base``).

    From table version 8 on, the completion time of the delta commit the
    log file's name carries, so that a log written while a compaction was
    pending falls to the slice it was merged onto; None when that instant is
    not on the active timeline. Before version 8, that instant time itself.
    """
    if table_version < 8:
        return lf.base_instant
    instant = timeline.find(lf.base_instant)
    return None if instant is None else instant.completed_at


def owning_base(key: str, bases: Sequence[str]) -> str | None:
    """The base instant of the slice a file placed at ``key`` belongs to: the
    greatest of ``bases`` not after it."""
    return max((b for b in bases if b <= key), default=None)


def in_latest_slice(key: str, bases: Sequence[str]) -> bool:
    """Whether a file placed at ``key`` belongs to the slice of the newest of
    ``bases`` (sorted); with no bases there is one slice, and it does."""
    return not bases or owning_base(key, bases) == bases[-1]


@dataclass(frozen=True, slots=True)
class _Chosen:
    """What a group's latest slice holds, before its record count is known."""

    group: FileGroup
    base: BaseFileEntry | None
    logs: tuple[LogFile, ...]

    @property
    def creation_instant_time(self) -> str:
        # A file group with only log files: its slice starts at the first log.
        return self.base[0] if self.base is not None else self.logs[0].base_instant


class SliceBuilder:
    """Picks the latest file slice of each file group as of a visibility."""

    def __init__(self, storage: Storage, timeline: HudiTimeline, table_version: int) -> None:
        self.storage = storage
        self.timeline = timeline
        self.table_version = table_version

    def latest_file_slices(
        self, groups: Iterable[FileGroup], visibility: Visibility, skip: Callable[[FileGroup], bool]
    ) -> list[HudiFileSlice]:
        """The latest visible slice of each group not skipped, sorted by
        partition and file id; groups with no visible file have none."""
        kept = [g for g in groups if not skip(g)]
        archived = self._archived_log_times(kept, visibility)
        chosen = [c for g in kept if (c := self._latest(g, visibility, archived)) is not None]
        counts, stated = self._commit_facts(chosen)
        slices = [self._slice(c, n, size) for c, n, size in zip(chosen, counts, stated)]
        slices.sort(key=attrgetter("partition_path", "file_id"))
        return slices

    def _archived_log_times(self, groups: list[FileGroup], visibility: Visibility) -> dict[str, str | None]:
        """Completion times of the archived delta commits whose log files' slices depend
        on them (None: not in the archive): those of groups with a visible base file newer
        than the delta commit. Read from the archive together, and only when some log
        file needs one."""
        if self.table_version < 8:
            return {}
        timeline = self.timeline
        needed: set[str] = set()
        for g in groups:
            if not g.log_files:
                continue
            newest = max((b[0] for b in g.base_files if visibility.sees(b[0])), default=None)
            for lf in g.log_files:
                t = lf.base_instant
                if newest is not None and t < newest and timeline.is_archived(t) and visibility.sees(t):
                    needed.add(t)
        if not needed:
            return {}
        found = timeline.archived_completion_times(needed)
        return {t: found.get(t) for t in needed}

    def _latest(self, g: FileGroup, visibility: Visibility, archived: dict[str, str | None]) -> _Chosen | None:
        if not g.log_files and len(g.base_files) == 1:
            # The common group (one base file, no logs), once per file group of the table.
            only = g.base_files[0]
            return _Chosen(g, only, ()) if visibility.sees(only[0]) else None
        visible = [b for b in g.base_files if visibility.sees(b[0])]
        latest = max(visible, key=lambda b: b[0]) if visible else None
        logs = ()
        if g.log_files:
            logs = self._logs_of_latest_slice(g, sorted(b[0] for b in visible), visibility, archived)
        if latest is None and not logs:
            return None
        return _Chosen(g, latest, logs)

    def _logs_of_latest_slice(
        self, g: FileGroup, bases: list[str], visibility: Visibility, archived: dict[str, str | None]
    ) -> tuple[LogFile, ...]:
        """Visible log files of the group's latest slice, in processing order.

        Base files of pending compactions are not visible, so logs written
        meanwhile fall to the previous slice, as Hudi merges them.
        """
        chosen: list[tuple[str, LogFile]] = []
        for lf in g.log_files:
            if not visibility.sees(lf.base_instant):
                continue  # pending, failed or outside the read's range
            key = log_slice_time(lf, self.timeline, self.table_version)
            t = lf.base_instant
            if key is None and self.timeline.is_archived(t):
                if t in archived and archived[t] is None and t in self.timeline.archived_rollbacks():
                    continue  # left behind by a write an archived rollback undid
                key = archived.get(t) or self._unknown_completion(g, lf, bases)
            if key is None:
                continue
            if in_latest_slice(key, bases):
                chosen.append((key, lf))
        chosen.sort(key=lambda kv: (kv[0], kv[1].version, kv[1].write_token))
        return tuple(lf for _, lf in chosen)

    def _unknown_completion(self, g: FileGroup, lf: LogFile, bases: list[str]) -> str:
        """Where a log file of an archived delta commit whose completion time the archive
        does not hold (the archive is gone) is placed. As Apache Hudi archives, the commit
        completed before the active timeline's first instant; whether that falls in the
        latest slice is then known unless the latest base file lies between the commit
        and that first instant. There, guessing could drop or repeat rows: the read fails."""
        start = self.timeline.start or lf.base_instant
        latest = bases[-1] if bases else None
        if latest is None or not lf.base_instant < latest < start:
            return lf.base_instant  # the same side of the latest base file as its completion
        raise HudiTimelineError(
            f"Log file {lf.name} of file group {g.file_id} (partition {g.partition_path!r}) was written by "
            f"delta commit {lf.base_instant}, which was archived off the active timeline, and the archived "
            f"timeline at {self.timeline.archive.location} does not hold its completion time; the base file "
            f"of instant {latest} makes its file slice depend on it, so the read cannot be answered"
        )

    def _commit_facts(self, chosen: list[_Chosen]) -> tuple[list[int], list[int]]:
        """Each chosen base file's record count and size from the writing commit's stats,
        without opening the files: count 0 and size ``UNKNOWN_SIZE`` where they do not say
        (or for a slice of log files alone). Hudi records a base file's size when it closes
        it, and on every real table they agree; a commit holding several stats of one file
        that disagree (a writer that replaced the file within the commit) sizes none."""
        by_instant: dict[str, list[tuple[int, str]]] = {}
        for i, c in enumerate(chosen):
            if c.base is not None:
                by_instant.setdefault(c.base[0], []).append((i, relative_path(c.group.partition_path, c.base[1])))
        counts = [0] * len(chosen)
        sizes = [UNKNOWN_SIZE] * len(chosen)
        for ts, places in by_instant.items():
            instant = self.timeline.find(ts)
            if instant is None:
                continue
            try:
                stats = self.timeline.write_stats(instant)
            except HudiFileNotFoundError:
                continue
            named = [st for st in stats if st.get("path")]
            written = {st["path"]: st for st in named}
            unsized = _restated(named) if len(written) < len(named) else set()
            for i, path in places:
                st = written.get(path)
                if st is None:
                    continue
                if (n := st.get("numWrites")) is not None:
                    counts[i] = int(n)
                if path not in unsized and (size := st.get("fileSizeInBytes")):
                    sizes[i] = int(size)
        return counts, sizes

    def _slice(self, c: _Chosen, num_records: int, stated: int) -> HudiFileSlice:
        """The slice of ``c``. A size the listing lacks is ``stated`` by the base file's
        commit, or read from storage. A log file's size is never taken from a commit: Hudi
        appends to log files (table version 6), so a commit's stat may predate the last append."""
        g = c.group
        size = 0
        if c.base is not None:
            size = c.base[2]
            if size < 0:
                size = stated if stated >= 0 else self.storage.size(relative_path(g.partition_path, c.base[1]))
        log_names = [lf.name for lf in c.logs]
        log_sizes = [
            lf.size if lf.size >= 0 else self.storage.size(relative_path(g.partition_path, lf.name)) for lf in c.logs
        ]
        if c.base is None:
            return HudiFileSlice(
                g.file_id, g.partition_path, c.creation_instant_time, "", 0, 0, log_names, log_sizes, 0, None
            )
        instant_time, name, _ = c.base
        # Positional, in the fields' order: one per file group of the table.
        return HudiFileSlice(
            g.file_id, g.partition_path, instant_time, name, size, size, log_names, log_sizes, num_records, instant_time
        )


def _restated(stats: list[dict]) -> set[str]:
    """Paths of ``stats`` stated more than once with different sizes: a writer that replaced
    its file within the commit (Flink's merge-and-replace handle) stats each version."""
    first: dict[str, object] = {}
    out: set[str] = set()
    for st in stats:
        size = first.setdefault(st["path"], st.get("fileSizeInBytes"))
        if size != st.get("fileSizeInBytes"):
            out.add(st["path"])
    return out
