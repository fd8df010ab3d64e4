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

    def _visibility(self, chosen: list[HudiInstant], upper: str | None) -> Visibility:
        all_instants = self.timeline.instants + self.timeline.pending
        return Visibility(
            instants=frozenset(i.timestamp for i in chosen),
            upper=upper,
            on_timeline=frozenset(i.timestamp for i in all_instants),
            timeline_start=min((i.timestamp for i in all_instants), default=None),
        )

    def snapshot_visibility(self, as_of: str | None) -> Visibility:
        data = self.timeline.data_instants
        if as_of is not None:
            data = [i for i in data if i.timestamp <= as_of]
        return self._visibility(data, as_of)

    def visibility_of(self, instants: Iterable[HudiInstant]) -> Visibility:
        chosen = list(instants)
        return self._visibility(chosen, max((i.timestamp for i in chosen), default=None))

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
        self.log_only_groups: list[tuple[str, str]] = []
        self._check_committed_files_exist(groups, set(partitions), visibility, replaced)
        slices: list[HudiFileSlice] = []
        for g in groups:
            if (g.partition_path, g.file_id) in replaced:
                continue
            if keep_group is not None and not keep_group(g.partition_path, g.file_id):
                continue
            visible = [b for b in g.base_files if visibility.sees(b[0].instant_time)]
            if not visible:
                if any(visibility.sees(lf.base_instant) for lf in g.log_files):
                    self.log_only_groups.append((g.partition_path, g.file_id))
                continue
            base, name, size = max(visible, key=lambda b: b[0].instant_time)
            # v6 log names carry the base instant, v8+ the delta commit's: either
            # way a log of this slice is not older than its base file.
            logs = sorted(
                lf for lf in g.log_files if lf.base_instant >= base.instant_time and visibility.sees(lf.base_instant)
            )
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
