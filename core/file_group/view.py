"""File system view: partitions and file groups listed from storage, and the
latest file slice of each group as of an instant."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from hudi_ray.core.config import TableConfig
from hudi_ray.core.config.tunables import PLANNING_TUNABLES, PlanningTunables
from hudi_ray.core.file_group.builder import FileGroup, SliceBuilder, build_file_groups, replaced_file_groups
from hudi_ray.core.file_group.file_slice import HudiFileSlice
from hudi_ray.core.file_group.integrity import IntegrityChecks
from hudi_ray.core.file_group.listing import FileLister
from hudi_ray.core.file_group.visibility import Visibility, snapshot_visibility, visibility_of
from hudi_ray.core.partition import Partitioner
from hudi_ray.core.storage import FileInfo, Storage
from hudi_ray.core.timeline import HudiInstant, HudiTimeline


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
        self.tunables = tunables
        self.config = config
        self.timeline = timeline
        self._lister = FileLister(storage, timeline, partitioner, tunables)
        self._slices = SliceBuilder(storage, timeline, config.table_version)
        self._checks = IntegrityChecks(storage, timeline, self._lister, config.table_version)

    # -- visibility ----------------------------------------------------------

    def snapshot_visibility(self, as_of: str | None) -> Visibility:
        return snapshot_visibility(self.timeline, as_of)

    def visibility_of(self, instants: Iterable[HudiInstant], hidden: Iterable[HudiInstant] = ()) -> Visibility:
        return visibility_of(self.timeline, instants, hidden)

    # -- listing -------------------------------------------------------------

    def use_partitions(self, partitions: list[str]) -> None:
        """Take the partition list from elsewhere (the metadata table)."""
        self._lister.use_partitions(partitions)

    def use_listings(self, listings: dict[str, list[FileInfo]]) -> None:
        """Take partitions' file listings from elsewhere (the metadata table)."""
        self._lister.use_listings(listings)

    def partition_paths(self) -> list[str]:
        """Every partition path of the table, listed from storage."""
        return self._lister.partition_paths()

    def file_groups(self, partitions: list[str]) -> list[FileGroup]:
        """Every file group of ``partitions``, in the order the listing first names them."""
        return build_file_groups(zip(partitions, self._lister.list_many(partitions)))

    # -- slices --------------------------------------------------------------

    def replaced_file_groups(self, visibility: Visibility) -> set[tuple[str, str]]:
        return replaced_file_groups(self.timeline, visibility)

    def latest_file_slices(
        self,
        partitions: list[str],
        visibility: Visibility,
        keep_group: Callable[[str, str], bool] | None = None,
    ) -> list[HudiFileSlice]:
        """The latest visible slice of each file group of ``partitions`` (those
        ``keep_group`` keeps), after checking that storage holds every file
        of theirs that a visible commit wrote."""
        replaced = self.replaced_file_groups(visibility)
        partitions = self._checks.present_partitions(partitions, visibility, replaced)
        groups = self.file_groups(partitions)
        self._checks.check_committed_files_exist(groups, set(partitions), visibility, replaced)

        def skip(g: FileGroup) -> bool:
            key = (g.partition_path, g.file_id)
            return key in replaced or (keep_group is not None and not keep_group(*key))

        return self._slices.latest_file_slices(groups, visibility, skip)
