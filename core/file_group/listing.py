"""Listing a table's partitions and their files, from storage or from the
metadata table, each directory listed once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Set

from hudi_ray.core.config.tunables import PLANNING_TUNABLES, PlanningTunables
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.partition import Partitioner
from hudi_ray.core.storage import FileInfo, Storage
from hudi_ray.core.timeline import HudiTimeline
from hudi_ray.core.util.pools import io_map

PARTITION_METAFILE = ".hoodie_partition_metadata"


def _has_metafile(entries: list[FileInfo]) -> bool:
    return any(e.name.startswith(PARTITION_METAFILE) for e in entries)


def written_partitions(timeline: HudiTimeline) -> set[str]:
    """Partitions commits on the active timeline wrote into: the keys of their
    metadata, which the timeline caches for the read's own checks; the write
    stats are not walked."""
    written: set[str] = set()
    for instant in timeline.data_instants:
        written.update(timeline.get_instant_metadata(instant).get("partitionToWriteStats") or ())
    return written


def ask_for_partitions(storage: Storage, timeline: HudiTimeline, most: int) -> None:
    """On an object store, ask now for the listings of the partitions the active
    timeline's commits wrote into and of the folders above them (those the walk has
    not asked already), unless they are more than ``most``. The walk for partitions and
    the scan then find them answered: a partition two levels down is listed a round
    trip sooner than level by level. The timeline's listing came first, so none of
    them can miss a file of an instant it shows completed. A commit that cannot be
    read, or names a path outside the table, asks nothing here: the read reports it
    where it needs that commit."""
    if storage.is_local:
        return
    try:
        folders = {"/".join(p.split("/")[:n]) for p in written_partitions(timeline) for n in range(1, p.count("/") + 2)}
        folders = {f for f in folders if f and storage.relative(f) == f}
    except HudiCoreError:
        return
    if folders and len(folders) <= most:
        storage.ask_early_new(sorted(folders))


class FileLister:
    """Lists partitions and their files, caching every listing."""

    def __init__(
        self,
        storage: Storage,
        timeline: HudiTimeline,
        partitioner: Callable[[], Partitioner],
        tunables: PlanningTunables = PLANNING_TUNABLES,
    ) -> None:
        self.storage = storage
        self.timeline = timeline
        # How many directories are listed at once (``hoodie.plan.*``).
        self.tunables = tunables
        self._partitioner = partitioner
        self._partitions: list[str] | None = None
        self._listings: dict[str, list[FileInfo]] = {}
        # Listings the metadata table gave: they hold no partition metafile.
        self._from_metadata: set[str] = set()
        # Partitions the storage listing found (None: not listed from storage).
        self._listed: set[str] | None = None
        self._lock = threading.Lock()

    @property
    def listed(self) -> Set[str] | None:
        """Partitions found in storage; None when the partition list came from elsewhere."""
        return self._listed

    def list_dir(self, rel: str) -> list[FileInfo]:
        """The entries of directory ``rel``, listed once."""
        with self._lock:
            cached = self._listings.get(rel)
        if cached is not None:
            return cached
        # Sizes are learned for the files a read keeps (``SliceBuilder``), not for every file.
        entries = self.storage.list_dir(rel, sizes=False)
        with self._lock:
            self._listings[rel] = entries
        return entries

    def list_many(self, rels: list[str]) -> list[list[FileInfo]]:
        if self.storage.is_local:
            # One after another: os.scandir's Python loop holds the GIL, and threads
            # contending for it took three times as long on 20,000 files.
            return [self.list_dir(rel) for rel in rels]
        return io_map(self.list_dir, rels, limit=self.tunables.listing_parallelism)

    def use_partitions(self, partitions: list[str]) -> None:
        """Take the partition list from elsewhere (the metadata table)."""
        self._partitions = sorted(partitions)
        self._listed = None

    def use_listings(self, listings: dict[str, list[FileInfo]]) -> None:
        """Take partitions' file listings from elsewhere (the metadata table)."""
        with self._lock:
            self._listings.update(listings)
            self._from_metadata.update(listings)

    def lacks_metafile(self, partition: str) -> bool:
        """Whether ``partition``'s listing shows no partition metafile. A
        listing from the metadata table never holds one, so it lacks nothing."""
        with self._lock:
            from_metadata = partition in self._from_metadata
        return not from_metadata and not _has_metafile(self.list_dir(partition))

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
            listings = self.list_many(frontier)
            nxt: list[str] = []
            for rel, entries in zip(frontier, listings):
                if rel and depth is None and _has_metafile(entries):
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
        # that do fail (``IntegrityChecks.present_partitions``) instead of
        # returning fewer rows.
        self._listed = set(found)
        self._partitions = sorted(self._listed | written_partitions(self.timeline))
        return self._partitions
