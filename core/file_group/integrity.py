"""Damage checks: a read fails, rather than return fewer rows, when storage
lacks a partition, partition metafile or file that a completed commit wrote
and that no clean removed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hudi_ray.core.base_file import parse_base_file_name
from hudi_ray.core.exceptions import HudiFileNotFoundError
from hudi_ray.core.file_group.builder import FileGroup, in_latest_slice, log_slice_time, owning_base
from hudi_ray.core.file_group.listing import PARTITION_METAFILE, FileLister
from hudi_ray.core.file_group.visibility import Visibility
from hudi_ray.core.log_file import parse_log_file_name
from hudi_ray.core.storage import Storage
from hudi_ray.core.timeline import HudiInstant, HudiTimeline
from hudi_ray.core.timeline.instant import CLEAN

# A visible instant and one of its write stats.
Write = tuple[HudiInstant, dict[str, Any]]


@dataclass(frozen=True)
class CleanedFiles:
    """What cleans on the active timeline removed."""

    files: frozenset[tuple[str, str]]  # (partition, file name); (partition, "") for a partition deleted whole
    earliest_retained: str  # the latest clean's earliestCommitToRetain, "" when unknown


def cleaned_files(timeline: HudiTimeline) -> CleanedFiles:
    """What the completed cleans on the active timeline removed."""
    files: set[tuple[str, str]] = set()
    earliest_retained = ""
    for instant in timeline.instants:
        if instant.action != CLEAN:
            continue
        meta = timeline.get_instant_metadata(instant)
        for partition, part in (meta.get("partitionMetadata") or {}).items():
            part = part or {}
            for path in part.get("successDeleteFiles") or []:
                files.add((partition, str(path).rsplit("/", 1)[-1]))
            if part.get("isPartitionDeleted"):
                files.add((partition, ""))
        retained = meta.get("earliestCommitToRetain")
        if isinstance(retained, str) and retained:
            earliest_retained = retained  # instants are oldest first: the latest clean's wins
    return CleanedFiles(frozenset(files), earliest_retained)


class _GroupTimes:
    """Base-file times per file group, needed only once a file is missing."""

    def __init__(self, timeline: HudiTimeline, groups: list[FileGroup], visibility: Visibility) -> None:
        self.visible: dict[tuple[str, str], list[str]] = {}
        self.completed: dict[tuple[str, str], list[str]] = {}
        for g in groups:
            key = (g.partition_path, g.file_id)
            times = [t for t, _, _ in g.base_files]
            self.visible[key] = sorted(t for t in times if visibility.sees(t))
            # Files of pending or failed writes supersede nothing.
            self.completed[key] = sorted(t for t in times if timeline.is_completed_data_instant(t))
        # Groups a later replace commit (one this read may not see) replaced:
        # a clean may remove those files as well.
        self.replaced_later = {
            (partition, file_id)
            for instant in timeline.get_completed_replacecommits()
            for partition, ids in timeline.replaced_file_ids(instant).items()
            for file_id in ids
        }


class IntegrityChecks:
    """Checks of the files a read needs against what visible commits wrote."""

    def __init__(self, storage: Storage, timeline: HudiTimeline, lister: FileLister, table_version: int) -> None:
        self.storage = storage
        self.timeline = timeline
        self.table_version = table_version
        self._lister = lister
        self._cleaned: CleanedFiles | None = None
        self._lock = threading.Lock()

    def present_partitions(
        self, partitions: list[str], visibility: Visibility, replaced: set[tuple[str, str]]
    ) -> list[str]:
        """``partitions`` without the unlisted ones this read needs nothing from;
        an error when it needs one storage lacks.

        An unlisted partition that exists lacks its metafile (the listing looks
        for it): it stays, for ``_check_metafiles`` to report.
        """
        listed = self._lister.listed
        if listed is None:
            return partitions
        unlisted = set(partitions) - listed
        if not unlisted:
            return partitions
        cleaned = self.cleaned_files()
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

    def check_committed_files_exist(
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
        times = _GroupTimes(self.timeline, groups, visibility)  # built only once a file is missing
        for instant, stat in missing:
            self._check_missing_file(instant, stat, times)

    def cleaned_files(self) -> CleanedFiles:
        with self._lock:
            if self._cleaned is not None:
                return self._cleaned
        cleaned = cleaned_files(self.timeline)
        with self._lock:
            self._cleaned = cleaned
        return cleaned

    def _expected_writes(
        self, partitions: set[str], visibility: Visibility, replaced: set[tuple[str, str]]
    ) -> Iterator[Write]:
        """Write stats of visible instants into ``partitions``, for file groups not replaced."""
        for instant in [*visibility.archived, *self.timeline.data_instants]:
            if instant.timestamp not in visibility.instants:
                continue
            for stat in self.timeline.write_stats(instant):
                partition = stat["partitionPath"]
                if partition in partitions and (partition, stat["fileId"]) not in replaced:
                    yield instant, stat

    def _check_metafiles(self, expected: list[Write]) -> None:
        """Every partition a visible commit wrote into holds its metafile."""
        wrote_into: dict[str, HudiInstant] = {}
        for instant, stat in expected:
            wrote_into.setdefault(stat["partitionPath"], instant)
        for partition, instant in sorted(wrote_into.items()):
            if self._lister.lacks_metafile(partition):
                path = f"{partition}/{PARTITION_METAFILE}" if partition else PARTITION_METAFILE
                raise HudiFileNotFoundError(
                    f"Partition metafile {self.storage.uri(path)} of partition {partition!r}, written to by "
                    f"completed instant {instant.timestamp} ({instant.action}), is missing from storage"
                )

    @staticmethod
    def _missing_files(groups: list[FileGroup], expected: list[Write]) -> list[Write]:
        """The expected writes whose file the listing lacks."""
        present = {(g.partition_path, name) for g in groups for _, name, _ in g.base_files}
        present.update((g.partition_path, lf.name) for g in groups for lf in g.log_files)
        return [(i, st) for i, st in expected if (st["partitionPath"], st["path"].rsplit("/", 1)[-1]) not in present]

    def _check_missing_file(self, instant: HudiInstant, stat: dict[str, Any], times: _GroupTimes) -> None:
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
            placed = log_slice_time(lf, self.timeline, self.table_version)
            what, slice_key = "Log file", lf.base_instant if placed is None else placed
        if not in_latest_slice(slice_key, times.visible.get(key, [])):
            return  # a slice this read sees supersedes it
        # Time travel may need a file a later slice supersedes (or of a group
        # replaced later); a clean may have removed it, and then fewer rows
        # are what the read gives.
        superseded = not in_latest_slice(slice_key, times.completed.get(key, []))
        cleanable = superseded or key in times.replaced_later
        cleaned = self.cleaned_files()
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

    @staticmethod
    def _cleaned_by_retention(slice_key: str, completed: list[str], cleaned: CleanedFiles) -> bool:
        """Whether the latest clean's ``earliestCommitToRetain`` removed the slice
        holding a file placed at ``slice_key``: as Hudi's cleaner keeps the
        commits it retains, that is a slice older than the earliest retained
        commit and not the last one before it."""
        retain = cleaned.earliest_retained
        if not retain:
            return False
        own = owning_base(slice_key, completed)
        if own is None:
            own = slice_key
        return own < retain and any(own < b < retain for b in completed)
