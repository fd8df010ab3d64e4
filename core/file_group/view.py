"""File system view: partitions and file groups listed from storage, and the
latest file slice of each group as of an instant."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hudi_ray.core.config import TableConfig
from hudi_ray.core.exceptions import HudiFileNotFoundError
from hudi_ray.core.file_group.file_slice import (
    BaseFileName,
    HudiFileSlice,
    LogFile,
    parse_base_file_name,
    parse_log_file_name,
)
from hudi_ray.core.partition import Partitioner
from hudi_ray.core.storage import FileInfo, Storage
from hudi_ray.core.timeline import HudiInstant, HudiTimeline

log = logging.getLogger(__name__)

_PARTITION_METAFILE = ".hoodie_partition_metadata"
LISTING_PARALLELISM = 16


@dataclass
class FileGroup:
    partition_path: str
    file_id: str
    base_files: list[tuple[BaseFileName, str, int]] = field(default_factory=list)  # (parsed, name, size)
    log_files: list[LogFile] = field(default_factory=list)


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


class FileSystemView:
    """Lists a table's partitions and files once, then answers slice queries."""

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        timeline: HudiTimeline,
        partitioner: Callable[[], Partitioner],
    ) -> None:
        self.storage = storage
        self.config = config
        self.timeline = timeline
        self._partitioner = partitioner
        self._partitions: list[str] | None = None
        self._listings: dict[str, list[FileInfo]] = {}
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
        if len(rels) <= 1:
            return [self._list(r) for r in rels]
        with ThreadPoolExecutor(max_workers=min(LISTING_PARALLELISM, len(rels))) as pool:
            return list(pool.map(self._list, rels))

    def use_partitions(self, partitions: list[str]) -> None:
        """Take the partition list from elsewhere (the metadata table)."""
        self._partitions = sorted(partitions)

    def use_listings(self, listings: dict[str, list[FileInfo]]) -> None:
        """Take partitions' file listings from elsewhere (the metadata table)."""
        with self._lock:
            self._listings.update(listings)

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
        self._partitions = sorted(found)
        return self._partitions

    def file_groups(self, partitions: list[str]) -> list[FileGroup]:
        groups: dict[tuple[str, str], FileGroup] = {}
        listings = self._list_many(partitions)
        for partition, entries in zip(partitions, listings):
            for e in entries:
                if e.is_dir:
                    continue
                base = parse_base_file_name(e.name)
                if base is not None:
                    g = groups.setdefault((partition, base.file_id), FileGroup(partition, base.file_id))
                    g.base_files.append((base, e.name, e.size))
                    continue
                lf = parse_log_file_name(e.name, e.size)
                if lf is not None and not lf.is_cdc:
                    g = groups.setdefault((partition, lf.file_id), FileGroup(partition, lf.file_id))
                    g.log_files.append(lf)
        return list(groups.values())

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
        groups = self.file_groups(partitions)
        self._check_committed_files_exist(groups, set(partitions), visibility, replaced)
        slices: list[HudiFileSlice] = []
        for g in groups:
            if (g.partition_path, g.file_id) in replaced:
                continue
            if keep_group is not None and not keep_group(g.partition_path, g.file_id):
                continue
            visible = [b for b in g.base_files if visibility.sees(b[0].instant_time)]
            latest = max(visible, key=lambda b: b[0].instant_time) if visible else None
            bases = sorted(b[0].instant_time for b in visible)
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
            base, name, size = latest
            slices.append(
                HudiFileSlice(
                    file_id=g.file_id,
                    partition_path=g.partition_path,
                    creation_instant_time=base.instant_time,
                    base_file_name=name,
                    base_file_size=size,
                    base_file_byte_size=size,
                    log_file_names=[lf.name for lf in logs],
                    log_file_sizes=[lf.size for lf in logs],
                    commit_time=base.instant_time,
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

    def _check_committed_files_exist(
        self,
        groups: list[FileGroup],
        partitions: set[str],
        visibility: Visibility,
        replaced: set[tuple[str, str]],
    ) -> None:
        """Fail when a visible commit wrote a base file that storage no longer has.

        Without this a deleted file would silently fall back to an older
        version of its file group (or to nothing).
        """
        listed: dict[tuple[str, str], str] = {}
        for g in groups:
            for base, _, _ in g.base_files:
                key = (g.partition_path, g.file_id)
                listed[key] = max(listed.get(key, ""), base.instant_time)
        for instant in self.timeline.data_instants:
            if instant.timestamp not in visibility.instants:
                continue
            for stat in self.timeline.write_stats(instant):
                path = stat.get("path") or ""
                partition = stat.get("partitionPath") or ""
                name = path.rsplit("/", 1)[-1]
                base = parse_base_file_name(name)
                if base is None or partition not in partitions:
                    continue
                key = (partition, base.file_id)
                if key in replaced or listed.get(key, "") >= base.instant_time:
                    continue
                raise HudiFileNotFoundError(
                    f"Base file {self.storage.uri(path)} written by completed instant "
                    f"{instant.timestamp} ({instant.action}) is missing from storage"
                )

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
