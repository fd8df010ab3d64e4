"""File system view: partitions and file groups listed from storage, and the
latest file slice of each group as of an instant."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from hudi_ray.core.base_file import parse_base_file_name
from hudi_ray.core.config import TableConfig
from hudi_ray.core.config.tunables import PLANNING_TUNABLES, PlanningTunables
from hudi_ray.core.exceptions import HudiFileNotFoundError
from hudi_ray.core.file_group.file_slice import HudiFileSlice
from hudi_ray.core.log_file import LogFile, parse_log_file_name
from hudi_ray.core.partition import Partitioner
from hudi_ray.core.storage import FileInfo, Storage
from hudi_ray.core.timeline import HudiInstant, HudiTimeline
from hudi_ray.core.timeline.instant import CLEAN
from hudi_ray.core.util.pools import io_map

log = logging.getLogger(__name__)

_PARTITION_METAFILE = ".hoodie_partition_metadata"


@dataclass(slots=True)
class FileGroup:
    """A file group's files as listed. Tuples, not lists: planning holds one
    group per file group of the table, and every container the garbage
    collector tracks makes each of its full passes longer."""

    partition_path: str
    file_id: str
    # (instant time, name, size): plain tuples of strings, which the collector stops tracking.
    base_files: tuple[tuple[str, str, int], ...] = ()
    log_files: tuple[LogFile, ...] = ()


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

    def sees(self, ts: str) -> bool:
        if ts in self.instants:
            return True
        if ts in self.on_timeline or (self.upper is not None and ts > self.upper):
            return False
        return self.timeline_start is not None and ts < self.timeline_start


def visibility_of(timeline: HudiTimeline, instants: Iterable[HudiInstant]) -> Visibility:
    """Visibility of exactly ``instants`` (plus archived history)."""
    chosen = list(instants)
    every = timeline.instants + timeline.pending
    return Visibility(
        instants=frozenset(i.timestamp for i in chosen),
        upper=max((i.timestamp for i in chosen), default=None),
        on_timeline=frozenset(i.timestamp for i in every),
        timeline_start=min((i.timestamp for i in every), default=None),
    )


def snapshot_visibility(timeline: HudiTimeline, as_of: str | None) -> Visibility:
    """Completed data instants up to ``as_of`` (instant time), or all of them."""
    data = timeline.data_instants
    if as_of is not None:
        data = [i for i in data if i.timestamp <= as_of]
    vis = visibility_of(timeline, data)
    return Visibility(vis.instants, as_of, vis.on_timeline, vis.timeline_start)


@dataclass(frozen=True)
class _Cleaned:
    """What cleans on the active timeline removed."""

    files: frozenset[tuple[str, str]]  # (partition, file name); (partition, "") for a partition deleted whole
    earliest_retained: str  # the latest clean's earliestCommitToRetain, "" when unknown


class _GroupTimes:
    """Base-file times per file group, needed only once a file is missing."""

    def __init__(self, view: FileSystemView, groups: list[FileGroup], visibility: Visibility) -> None:
        self.visible: dict[tuple[str, str], list[str]] = {}
        self.completed: dict[tuple[str, str], list[str]] = {}
        for g in groups:
            key = (g.partition_path, g.file_id)
            times = [t for t, _, _ in g.base_files]
            self.visible[key] = sorted(t for t in times if visibility.sees(t))
            # Files of pending or failed writes supersede nothing.
            self.completed[key] = sorted(t for t in times if view.timeline.is_completed_data_instant(t))
        # Groups a later replace commit (one this read may not see) replaced:
        # a clean may remove those files as well.
        self.replaced_later = {
            (partition, file_id)
            for instant in view.timeline.get_completed_replacecommits()
            for partition, ids in view.timeline.replaced_file_ids(instant).items()
            for file_id in ids
        }


class FileSystemView:
    """Lists a table's partitions and files once, then answers slice queries."""

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        timeline: HudiTimeline,
        partitioner: Callable[[], Partitioner],
        tunables: PlanningTunables = PLANNING_TUNABLES,
    ) -> None:
        self.storage = storage
        # The table's planning tunables (``hoodie.plan.*``): how many
        # directories are listed at once.
        self.tunables = tunables
        self.config = config
        self.timeline = timeline
        self._partitioner = partitioner
        self._partitions: list[str] | None = None
        self._listings: dict[str, list[FileInfo]] = {}
        # Listings the metadata table gave: they hold no partition metafile.
        self._from_metadata: set[str] = set()
        # Partitions the storage listing found (None: not listed from storage).
        self._listed: set[str] | None = None
        self._cleaned: _Cleaned | None = None
        self._lock = threading.Lock()

    # -- visibility ----------------------------------------------------------

    def snapshot_visibility(self, as_of: str | None) -> Visibility:
        return snapshot_visibility(self.timeline, as_of)

    def visibility_of(self, instants: Iterable[HudiInstant]) -> Visibility:
        return visibility_of(self.timeline, instants)

    # -- listing -------------------------------------------------------------

    def _list(self, rel: str) -> list[FileInfo]:
        with self._lock:
            cached = self._listings.get(rel)
        if cached is not None:
            return cached
        entries = self.storage.list_dir(rel)
        with self._lock:
            self._listings[rel] = entries
        return entries

    def _list_many(self, rels: list[str]) -> list[list[FileInfo]]:
        return io_map(self._list, rels, limit=self.tunables.listing_parallelism)

    def use_partitions(self, partitions: list[str]) -> None:
        """Take the partition list from elsewhere (the metadata table)."""
        self._partitions = sorted(partitions)
        self._listed = None

    def use_listings(self, listings: dict[str, list[FileInfo]]) -> None:
        """Take partitions' file listings from elsewhere (the metadata table)."""
        with self._lock:
            self._listings.update(listings)
            self._from_metadata.update(listings)

    def partition_paths(self) -> list[str]:
        """Every partition path of the table, listed from storage."""
        if self._partitions is not None:
            return self._partitions
        partitioner = self._partitioner()
        if not partitioner.is_partitioned:
            self._partitions = [""]
            return self._partitions
        depth = partitioner.depth()
        found: list[str] = []
        frontier = [""]
        level = 0
        while frontier:
            listings = self._list_many(frontier)
            nxt: list[str] = []
            for rel, entries in zip(frontier, listings):
                if rel and depth is None and any(e.name.startswith(_PARTITION_METAFILE) for e in entries):
                    found.append(rel)
                    continue
                for e in entries:
                    if e.is_dir and not e.name.startswith("."):
                        nxt.append(e.path)
            level += 1
            if depth is not None and level == depth:
                found.extend(nxt)
                break
            frontier = nxt
        # A partition a commit wrote but storage lacks stays in the list, so
        # that partition pruning decides whether the read needs it; reads
        # that do fail (``_present_partitions``) instead of returning fewer rows.
        self._listed = set(found)
        self._partitions = sorted(self._listed | self._written_partitions())
        return self._partitions

    def _written_partitions(self) -> set[str]:
        """Partitions commits on the active timeline wrote into: the keys of
        their metadata, which the timeline caches for the read's own checks;
        the write stats are not walked."""
        written: set[str] = set()
        for instant in self.timeline.data_instants:
            written.update(self.timeline.get_instant_metadata(instant).get("partitionToWriteStats") or ())
        return written

    def file_groups(self, partitions: list[str]) -> list[FileGroup]:
        """Every file group of ``partitions``, in the order the listing first names them."""
        bases: dict[tuple[str, str], tuple[tuple[str, str, int], ...]] = {}
        logs: dict[tuple[str, str], tuple[LogFile, ...]] = {}
        order: dict[tuple[str, str], None] = {}
        listings = self._list_many(partitions)
        for partition, entries in zip(partitions, listings):
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

    # -- slices --------------------------------------------------------------

    def replaced_file_groups(self, visibility: Visibility) -> set[tuple[str, str]]:
        replaced: set[tuple[str, str]] = set()
        for instant in self.timeline.get_completed_replacecommits():
            if instant.timestamp not in visibility.instants:
                continue
            for partition, ids in self.timeline.replaced_file_ids(instant).items():
                replaced.update((partition, fid) for fid in ids)
        return replaced

    def latest_file_slices(
        self,
        partitions: list[str],
        visibility: Visibility,
        keep_group: Callable[[str, str], bool] | None = None,
    ) -> list[HudiFileSlice]:
        replaced = self.replaced_file_groups(visibility)
        partitions = self._present_partitions(partitions, visibility, replaced)
        groups = self.file_groups(partitions)
        self._check_committed_files_exist(groups, set(partitions), visibility, replaced)
        slices: list[HudiFileSlice] = []
        for g in groups:
            if (g.partition_path, g.file_id) in replaced:
                continue
            if keep_group is not None and not keep_group(g.partition_path, g.file_id):
                continue
            visible = [b for b in g.base_files if visibility.sees(b[0])]
            latest = max(visible, key=lambda b: b[0]) if visible else None
            bases = sorted(b[0] for b in visible)
            logs = self._logs_of_latest_slice(g, bases, visibility)
            if latest is None and not logs:
                continue
            if latest is None:
                # A file group with only log files: its slice starts at the first log.
                slices.append(
                    HudiFileSlice(
                        file_id=g.file_id,
                        partition_path=g.partition_path,
                        creation_instant_time=logs[0].base_instant,
                        log_file_names=[lf.name for lf in logs],
                        log_file_sizes=[lf.size for lf in logs],
                    )
                )
                continue
            instant_time, name, size = latest
            slices.append(
                HudiFileSlice(
                    file_id=g.file_id,
                    partition_path=g.partition_path,
                    creation_instant_time=instant_time,
                    base_file_name=name,
                    base_file_size=size,
                    base_file_byte_size=size,
                    log_file_names=[lf.name for lf in logs],
                    log_file_sizes=[lf.size for lf in logs],
                    commit_time=instant_time,
                )
            )
        self._fill_record_counts(slices)
        slices.sort(key=lambda s: (s.partition_path, s.file_id))
        return slices

    def _logs_of_latest_slice(self, g: FileGroup, bases: list[str], visibility: Visibility) -> list[LogFile]:
        """Visible log files of the group's latest slice, in processing order.

        A log belongs to the slice with the greatest visible base instant not
        after its key: on table version 8+ the completion time of the delta
        commit named in the log file, before that the base instant the name
        carries. Base files of pending compactions are not visible, so logs
        written meanwhile fall to the previous slice, as Hudi merges them.
        """
        if not g.log_files:
            return []
        v8 = self.config.table_version >= 8
        latest = bases[-1] if bases else None
        chosen: list[tuple[str, LogFile]] = []
        for lf in g.log_files:
            if v8:
                instant = self.timeline.find(lf.base_instant)
                if instant is None or not visibility.sees(lf.base_instant):
                    continue  # pending, failed or outside the read's range
                key = instant.completed_at
            else:
                if not visibility.sees(lf.base_instant):
                    continue
                key = lf.base_instant
            owner = max((b for b in bases if b <= key), default=None)
            if owner == latest:
                chosen.append((key, lf))
        chosen.sort(key=lambda kv: (kv[0], kv[1].version, kv[1].write_token))
        return [lf for _, lf in chosen]

    def _expected_writes(
        self, partitions: set[str], visibility: Visibility, replaced: set[tuple[str, str]]
    ) -> Iterator[tuple[HudiInstant, dict]]:
        """Write stats of visible instants into ``partitions``, for file groups not replaced."""
        for instant in self.timeline.data_instants:
            if instant.timestamp not in visibility.instants:
                continue
            for stat in self.timeline.write_stats(instant):
                partition = stat["partitionPath"]
                if partition in partitions and (partition, stat["fileId"]) not in replaced:
                    yield instant, stat

    def _present_partitions(
        self, partitions: list[str], visibility: Visibility, replaced: set[tuple[str, str]]
    ) -> list[str]:
        """``partitions`` without the unlisted ones this read needs nothing from;
        an error when it needs one storage lacks.

        An unlisted partition that exists lacks its metafile (the listing looks
        for it): it stays, for ``_check_metafiles`` to report.
        """
        if self._listed is None:
            return partitions
        unlisted = set(partitions) - self._listed
        if not unlisted:
            return partitions
        cleaned = self._cleaned_files()
        needed: set[str] = set()
        for instant, stat in self._expected_writes(unlisted, visibility, replaced):
            partition = stat["partitionPath"]
            if partition in needed:
                continue
            if (partition, "") in cleaned.files:
                continue  # a clean deleted the whole partition after a replace
            if not self.storage.exists(partition):
                raise HudiFileNotFoundError(
                    f"Partition {self.storage.uri(partition)} written to by completed instant {instant.timestamp} "
                    f"({instant.action}) is missing from storage"
                )
            needed.add(partition)
        return [p for p in partitions if p not in unlisted or p in needed]

    def _check_committed_files_exist(
        self,
        groups: list[FileGroup],
        partitions: set[str],
        visibility: Visibility,
        replaced: set[tuple[str, str]],
    ) -> None:
        """Fail when a file a visible commit wrote, and this read needs, is
        gone from storage without a clean having removed it.

        Without this a deleted file would silently fall back to an older
        version of its file group (or to nothing), and a deleted log file
        would drop its updates and deletes. Three steps: the files visible
        commits wrote, those of them storage lacks, and which of those the
        read does not need or a clean removed.
        """
        expected = list(self._expected_writes(partitions, visibility, replaced))
        self._check_metafiles(expected)
        missing = self._missing_files(groups, expected)
        if not missing:
            return
        times = _GroupTimes(self, groups, visibility)  # built only once a file is missing
        for instant, stat in missing:
            self._check_missing_file(instant, stat, times)

    def _check_metafiles(self, expected: list[tuple[HudiInstant, dict]]) -> None:
        """Every partition a visible commit wrote into holds its metafile."""
        wrote_into: dict[str, HudiInstant] = {}
        for instant, stat in expected:
            wrote_into.setdefault(stat["partitionPath"], instant)
        for partition, instant in sorted(wrote_into.items()):
            if partition in self._from_metadata:
                continue  # the metadata table's listings hold no metafile
            if not any(e.name.startswith(_PARTITION_METAFILE) for e in self._list(partition)):
                path = f"{partition}/{_PARTITION_METAFILE}" if partition else _PARTITION_METAFILE
                raise HudiFileNotFoundError(
                    f"Partition metafile {self.storage.uri(path)} of partition {partition!r}, written to by "
                    f"completed instant {instant.timestamp} ({instant.action}), is missing from storage"
                )

    @staticmethod
    def _missing_files(
        groups: list[FileGroup], expected: list[tuple[HudiInstant, dict]]
    ) -> list[tuple[HudiInstant, dict]]:
        """The expected writes whose file the listing lacks."""
        present = {(g.partition_path, name) for g in groups for _, name, _ in g.base_files}
        present.update((g.partition_path, lf.name) for g in groups for lf in g.log_files)
        return [(i, st) for i, st in expected if (st["partitionPath"], st["path"].rsplit("/", 1)[-1]) not in present]

    def _check_missing_file(self, instant: HudiInstant, stat: dict, times: _GroupTimes) -> None:
        """Fail unless the read does not need the missing file or a clean removed it."""
        path = stat["path"]
        partition = stat["partitionPath"]
        name = path.rsplit("/", 1)[-1]
        key = (partition, stat["fileId"])
        base = parse_base_file_name(name)
        if base is not None:
            what, slice_key = "Base file", base.instant_time
        else:
            lf = parse_log_file_name(name)
            if lf is None or lf.is_cdc:
                return
            what, slice_key = "Log file", self._log_slice_key(lf)
        if not self._in_latest_slice(slice_key, times.visible.get(key, [])):
            return  # a slice this read sees supersedes it
        # Time travel may need a file a later slice supersedes (or of a group
        # replaced later); a clean may have removed it, and then fewer rows
        # are what the read gives.
        superseded = not self._in_latest_slice(slice_key, times.completed.get(key, []))
        cleanable = superseded or key in times.replaced_later
        cleaned = self._cleaned_files()
        if cleanable and ((partition, name) in cleaned.files or (partition, "") in cleaned.files):
            return
        if superseded and self._cleaned_by_retention(slice_key, times.completed.get(key, []), cleaned):
            return
        where = f"{what} {self.storage.uri(path)} written by completed instant {instant.timestamp} ({instant.action})"
        if cleanable:
            raise HudiFileNotFoundError(
                f"{where} is missing from storage; a later completed slice of its file group (or a later replace "
                "commit) supersedes it, so a clean probably removed it (it is older than the commits cleaning "
                "retains, and that clean may have been archived): this read as of an older instant cannot be answered"
            )
        raise HudiFileNotFoundError(f"{where} is missing from storage")

    def _log_slice_key(self, lf: LogFile) -> str:
        """The time that places a log in a slice, as ``_logs_of_latest_slice`` does."""
        if self.config.table_version >= 8:
            instant = self.timeline.find(lf.base_instant)
            if instant is not None:
                return instant.completed_at
        return lf.base_instant

    @staticmethod
    def _cleaned_by_retention(slice_key: str, completed: list[str], cleaned: _Cleaned) -> bool:
        """Whether the latest clean's ``earliestCommitToRetain`` removed the slice
        holding a file placed at ``slice_key``: as Hudi's cleaner keeps the
        commits it retains, that is a slice older than the earliest retained
        commit and not the last one before it."""
        retain = cleaned.earliest_retained
        if not retain:
            return False
        own = max((b for b in completed if b <= slice_key), default=slice_key)
        return own < retain and any(own < b < retain for b in completed)

    @staticmethod
    def _in_latest_slice(key: str, bases: list[str]) -> bool:
        """Whether a file placed at ``key`` belongs to the slice of the newest of ``bases``."""
        return not bases or max((b for b in bases if b <= key), default=None) == bases[-1]

    def _cleaned_files(self) -> _Cleaned:
        """What the completed cleans on the active timeline removed."""
        with self._lock:
            if self._cleaned is not None:
                return self._cleaned
        files: set[tuple[str, str]] = set()
        earliest_retained = ""
        for instant in self.timeline.instants:
            if instant.action != CLEAN:
                continue
            meta = self.timeline.get_instant_metadata(instant)
            for partition, part in (meta.get("partitionMetadata") or {}).items():
                part = part or {}
                for path in part.get("successDeleteFiles") or []:
                    files.add((partition, str(path).rsplit("/", 1)[-1]))
                if part.get("isPartitionDeleted"):
                    files.add((partition, ""))
            retained = meta.get("earliestCommitToRetain")
            if isinstance(retained, str) and retained:
                earliest_retained = retained  # instants are oldest first: the latest clean's wins
        cleaned = _Cleaned(frozenset(files), earliest_retained)
        with self._lock:
            self._cleaned = cleaned
        return cleaned

    def _fill_record_counts(self, slices: list[HudiFileSlice]) -> None:
        """Record counts from the writing commit's stats, without opening files."""
        by_instant: dict[str, list[HudiFileSlice]] = {}
        for s in slices:
            by_instant.setdefault(s.creation_instant_time, []).append(s)
        for ts, group in by_instant.items():
            instant = self.timeline.find(ts)
            if instant is None:
                continue
            try:
                stats = self.timeline.write_stats(instant)
            except HudiFileNotFoundError:
                continue
            counts = {st.get("path"): st.get("numWrites") for st in stats if st.get("path")}
            for s in group:
                n = counts.get(s.base_file_relative_path())
                if n is not None:
                    s.num_records = int(n)
