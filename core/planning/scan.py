"""Scans: which file slices a read covers, one class per query type.

A scan lists partitions (from the metadata table when it may plan the read,
else from storage), prunes them, lists their latest file slices and prunes
those, in the order of the data-skipping design: partition values, partition
stats, then per file the record index, secondary indexes and column stats from
the metadata table (or Parquet footers without one). The row mask stays authoritative.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_ray.core.config import HudiReadConfig as R
from hudi_ray.core.config import PlanningTunables
from hudi_ray.core.config.table_config import BLOOM_FILTERS, INDEX_DEFS_KEY, RECORD_INDEX, SECONDARY_INDEX_PREFIX
from hudi_ray.core.exceptions import HudiFileNotFoundError, HudiHistoryError
from hudi_ray.core.expr import Filter
from hudi_ray.core.file_group import FileSystemView, HudiFileSlice, Visibility
from hudi_ray.core.incremental.ranges import archive_gone, cleaned_gap, fallback_enabled, with_history
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.meta_client.context import TableContext
from hudi_ray.core.partition import Partitioner
from hudi_ray.core.planning.explain import PlanExplain
from hudi_ray.core.planning.pruning import PartitionStatsPruner, PartitionValuePruner, Pruner
from hudi_ray.core.query.read_options import HudiQueryType
from hudi_ray.core.query.request import ReadRequest
from hudi_ray.core.timeline.timestamps import START_OF_TIME

# The metadata table's reader and the index guards load when a table has them.
if TYPE_CHECKING:
    import pyarrow as pa

    from hudi_ray.core.metadata import MetadataTable
    from hudi_ray.core.planning.record_index import RecordIndexGuard
    from hudi_ray.core.planning.secondary_index import SecondaryIndexes
else:
    pa = lazy_module("pyarrow")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScanFiles:
    """A scan's outcome: the slices to read, for incremental reads the instant
    times whose rows the read returns, and which instants' log blocks it sees."""

    slices: list[HudiFileSlice]
    commit_times: frozenset[str] | None
    visibility: Visibility | None
    # Why an incremental read whose history is gone read the full snapshot at its end instead.
    fallback: str | None = None


class TableSources:
    """What scans of one table share, loaded once: its context, file system
    view, metadata table and record-index guard."""

    def __init__(self, context: TableContext) -> None:
        self.context = context
        # Planning configs are table options: checked once, here, so a bad
        # value fails when the table is built.
        self.tunables = PlanningTunables.from_options(context.config.options)
        self.view = FileSystemView(
            context.storage, context.config, context.timeline, self._partitioner, tunables=self.tunables
        )
        self._lock = threading.Lock()
        self._mdt_loaded = False
        self._mdt: MetadataTable | None = None
        self._guard: RecordIndexGuard | None = None
        self._secondary: SecondaryIndexes | None = None

    def _partitioner(self) -> Partitioner:
        if not self.context.timeline.has_schema():
            return Partitioner(self.context.config, lambda: pa.schema([]))  # nothing written, nothing to partition
        return self.context.partitioner

    def metadata_table(self) -> MetadataTable | None:
        """The table's metadata table, opened once; None when absent or disabled."""
        with self._lock:
            if not self._mdt_loaded:
                ctx = self.context
                if ctx.config.table_version >= 8 and ctx.config.metadata_lists_files:
                    from hudi_ray.core.metadata import MetadataTable

                    self._mdt = MetadataTable.open(ctx.storage, ctx.config, ctx.timeline)
                self._mdt_loaded = True
            return self._mdt

    def record_index_guard(self, mdt: MetadataTable) -> RecordIndexGuard:
        with self._lock:
            if self._guard is None:
                from hudi_ray.core.planning.record_index import RecordIndexGuard

                ctx = self.context
                self._guard = RecordIndexGuard(
                    ctx.storage, ctx.config, ctx.timeline, mdt, self.tunables.duplicate_check_max_keys
                )
            return self._guard

    def secondary_indexes(self, mdt: MetadataTable) -> SecondaryIndexes:
        guard = self.record_index_guard(mdt)
        with self._lock:
            if self._secondary is None:
                from hudi_ray.core.planning.secondary_index import SecondaryIndexes

                ctx = self.context
                self._secondary = SecondaryIndexes(ctx.storage, ctx.config, ctx.timeline, mdt, guard)
            return self._secondary

    def validate_filters(self, filters: list[Filter]) -> None:
        self.context.check_filters(filters)

    def data_filters(self, filters: list[Filter]) -> list[Filter]:
        """Filters on data columns (partition fields are pruned by partition values)."""
        if not filters:
            return []
        partition_fields = set(self.context.partitioner.schema.names)
        return [f for f in filters if f.field not in partition_fields]


class Scan:
    """The planning steps every query type shares."""

    def __init__(self, sources: TableSources, request: ReadRequest, explain: PlanExplain) -> None:
        self.sources = sources
        self.request = request
        self.explain = explain

    def files(self) -> ScanFiles:
        ctx = self.sources.context
        if ctx.timeline.is_empty:
            return ScanFiles([], None, None)
        self.sources.validate_filters(self.request.filters)
        mdt = self._metadata_table()
        if mdt is not None:
            self.explain.listed_from("metadata table")
        partitions = self._partitions(mdt)
        if mdt is not None:
            self.sources.view.use_listings(mdt.files(partitions))
        found = self._latest_slices(partitions)
        if found is None:
            return ScanFiles([], frozenset(), None)
        slices = found.slices
        if self.request.read_optimized:
            # Base files only: log-only file groups have nothing to show.
            slices = [dataclasses.replace(s, log_file_names=[], log_file_sizes=[]) for s in slices if s.base_file_name]
        self.explain.add("file slices", len(partitions), len(slices))
        if self.request.filters:  # every file pruner keeps all without filters
            for pruner in self._file_pruners(mdt):
                slices = pruner.prune(slices, self.explain)
        return dataclasses.replace(found, slices=slices)

    def _partitions(self, mdt: MetadataTable | None) -> list[str]:
        view = self.sources.view
        if mdt is not None:
            partitions = mdt.partition_paths()
            view.use_partitions(partitions)
        else:
            partitions = view.partition_paths()
        self.explain.add("listed", len(partitions))
        ctx = self.sources.context
        pruners: list[Pruner[str]] = [PartitionValuePruner(ctx.partitioner, self.request.filters)]
        if mdt is not None and ctx.partitioner.is_partitioned:
            data_filters = self.sources.data_filters(self.request.filters)
            pruners.append(PartitionStatsPruner(mdt, data_filters, lambda: ctx.read_schema))
        for pruner in pruners:
            partitions = pruner.prune(partitions, self.explain)
        return partitions

    def _metadata_table(self) -> MetadataTable | None:
        return None

    def _latest_slices(self, partitions: list[str]) -> ScanFiles | None:
        raise NotImplementedError

    def _file_pruners(self, mdt: MetadataTable | None) -> list[Pruner[HudiFileSlice]]:
        return []

    def _listed_times(self, partitions: list[str]) -> list[str]:
        groups = self.sources.view.file_groups(partitions)
        return [t for g in groups for t in (*(b[0] for b in g.base_files), *(lf.base_instant for lf in g.log_files))]


class SnapshotScan(Scan):
    """The latest file slices as of a point in time (the latest commit by default)."""

    def _metadata_table(self) -> MetadataTable | None:
        """The metadata table when it may plan this read: reads of the latest
        state, and only while it has caught up with the data timeline."""
        mdt = self.sources.metadata_table()
        if mdt is None:
            return None
        latest = self.sources.context.timeline.latest_data_instant()
        as_of = self.request.as_of
        if as_of is not None and latest is not None and as_of < latest.timestamp:
            self.explain.note("time travel: planned from storage listing and file footers")
            return None
        if mdt.lags_data_table():
            log.warning(
                "Metadata table of %s lags the data timeline; listing storage instead",
                self.sources.context.storage.base_url,
            )
            self.explain.note("metadata table lags the data table: planned from storage listing")
            return None
        return mdt

    def _latest_slices(self, partitions: list[str]) -> ScanFiles:
        view = self.sources.view
        as_of = self.request.as_of
        if as_of is not None:
            gone = archive_gone(self.sources.context.timeline, as_of, lambda: self._listed_times(partitions))
            if gone is not None:
                where = f"Time travel to {as_of} in {self.sources.context.storage.base_url}"
                raise HudiHistoryError(f"{where} cannot be answered: {gone}")
        visibility = view.snapshot_visibility(as_of)
        return ScanFiles(view.latest_file_slices(partitions, visibility), None, visibility)

    def _file_pruners(self, mdt: MetadataTable | None) -> list[Pruner[HudiFileSlice]]:
        from hudi_ray.core.planning.file_pruning import (
            BloomFilterPruner,
            ColumnStatsPruner,
            FooterStatsPruner,
            RecordIndexPruner,
            SecondaryIndexPruner,
        )

        ctx = self.sources.context
        schema = ctx.read_schema
        filters = self.request.filters
        data_filters = self.sources.data_filters(filters)
        footers = FooterStatsPruner(ctx.storage, ctx.footers, data_filters, schema)
        # Bloom filters live in footers: without a metadata table they go first, so footer
        # stats read only the footers they keep (a footer Hudi wrote may not stay cached);
        # with one, last, after the index stages that spare reading footers at all, unless
        # its bloom_filters partition holds them: then before column stats, which look up
        # only the files they keep. The slices kept are the same in any order.
        if mdt is None:
            return [BloomFilterPruner(ctx.storage, ctx.footers, ctx.config, filters, schema), footers]
        pruners: list[Pruner[HudiFileSlice]] = []
        decided: Callable[[], bool] = bool  # bool() is False: no record index decides
        if mdt.has(RECORD_INDEX):
            record_index = RecordIndexPruner(self.sources.record_index_guard(mdt), filters, schema)
            pruners.append(record_index)
            decided = record_index.decided
        column_stats: Callable[[], Sequence[Filter]] = tuple
        if any(p.startswith(SECONDARY_INDEX_PREFIX) for p in mdt.partitions_enabled) or ctx.config.get(INDEX_DEFS_KEY):
            secondary = SecondaryIndexPruner(self.sources.secondary_indexes(mdt), filters, schema)
            pruners.append(secondary)
            column_stats = secondary.decided
        bloom = BloomFilterPruner(ctx.storage, ctx.footers, ctx.config, filters, schema, decided=decided, mdt=mdt)
        stats = ColumnStatsPruner(mdt, data_filters, schema, fallback=footers, decided=column_stats)
        pruners.extend([bloom, stats] if mdt.has(BLOOM_FILTERS) else [stats, bloom])
        return pruners


_FALLBACK_HINT = (
    f"Set {R.INCR_FALLBACK_FULL_TABLE_SCAN.value}=true to read the full snapshot at the range's end instead"
)


class IncrementalScan(Scan):
    """File groups written in (start, end], each as its latest slice up to the
    end; the rows returned are those of the instants in range. Incremental
    planning does not stats-prune (as the reader spec says).

    When the range's history is gone (``incremental.with_history``, ``archive_gone`` and
    ``cleaned_gap``) the read fails, naming what is missing, or with
    ``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` reads every
    row of the latest snapshot instead (Apache Hudi's full table scan keeps
    only rows whose commit time is in range; this reader returns the whole
    latest state, and consumers moving a position extend the range to the
    latest instant when they fall back: ``HudiTable.next_incremental_range``).
    """

    def _latest_slices(self, partitions: list[str]) -> ScanFiles | None:
        ctx = self.sources.context
        timeline = ctx.timeline
        start, end = self.request.start or START_OF_TIME, self.request.end
        if end is None:
            return None
        fallback = fallback_enabled(self.request.options.hudi_options)
        view = self.sources.view
        history, gap = with_history(timeline, start)
        # By completion time on table version 8+, by instant time before.
        upto = [i for i in history if i.completed_at <= end]
        visibility = view.visibility_of(upto, [i for i in history if i.archived and i.completed_at > end])
        instants = [i for i in history if start < i.completed_at <= end]
        gap = gap or archive_gone(timeline, start, lambda: self._listed_times(partitions))
        if gap is None and not instants:
            return None
        if gap is None:
            touched: set[tuple[str, str]] = set()
            for instant in instants:
                for stat in timeline.write_stats(instant):
                    touched.add((stat.get("partitionPath") or "", stat.get("fileId") or ""))
            try:
                slices = view.latest_file_slices(partitions, visibility, lambda p, f: (p, f) in touched)
            except HudiFileNotFoundError as exc:
                # A file the range's slices need is gone: a clean removed it (and
                # the clean was archived), or storage lost it.
                if not fallback:
                    raise HudiHistoryError(f"{exc}. {_FALLBACK_HINT}") from exc
                gap = str(exc)
            else:
                replaced = view.replaced_file_groups(visibility)
                gap = cleaned_gap(timeline, instants, slices, partitions, replaced, self.request.read_optimized)
                if gap is None:
                    return ScanFiles(slices, frozenset(i.timestamp for i in instants), visibility)
        where = f"Incremental read of {ctx.storage.base_url} over ({start}, {end}]"
        if not fallback:
            raise HudiHistoryError(f"{where} cannot be answered: {gap}. {_FALLBACK_HINT}")
        latest = view.snapshot_visibility(None)
        newest = timeline.latest_data_instant()
        at = newest.completed_at if newest is not None else end
        reason = f"{where}: {gap}; read the full snapshot of the latest state (as of {at}) instead"
        log.warning("%s", reason)
        self.explain.note(f"history gone: full snapshot as of {at}")
        return ScanFiles(view.latest_file_slices(partitions, latest), None, latest, fallback=reason)


def scan_for(sources: TableSources, request: ReadRequest, explain: PlanExplain) -> Scan:
    if request.query_type is HudiQueryType.Snapshot:
        return SnapshotScan(sources, request, explain)
    return IncrementalScan(sources, request, explain)
