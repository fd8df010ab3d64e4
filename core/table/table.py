"""``HudiTable``: logical reads of a table (snapshot, time travel, incremental)."""

from __future__ import annotations

import json
import logging
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import pyarrow as pa

from hudi_ray.core.base_file import ParquetReader, footer_column_stats
from hudi_ray.core.config.keys import HudiReadConfig as R
from hudi_ray.core.config.keys import is_read_config, warn_unknown_keys
from hudi_ray.core.exceptions import (
    HudiConfigError,
    HudiCoreError,
    HudiCorruptFileError,
    HudiFileNotFoundError,
    HudiFilterError,
    HudiSchemaError,
    HudiUnsupportedError,
)
from hudi_ray.core.expr import Filter
from hudi_ray.core.expr.arrow import prune_partitions
from hudi_ray.core.expr.stats import may_match
from hudi_ray.core.file_group import FileSystemView, HudiFileSlice, Visibility, parse_base_file_name
from hudi_ray.core.metadata import COLUMN_STATS, RECORD_INDEX, MetadataTable
from hudi_ray.core.partition import Partitioner
from hudi_ray.core.schema.avro import avro_schema_with_meta_fields, avro_schema_without_meta_fields, parse_avro_schema
from hudi_ray.core.storage import Storage
from hudi_ray.core.storage.paths import move_credentials
from hudi_ray.core.table.context import TableContext
from hudi_ray.core.table.explain import PlanExplain
from hudi_ray.core.table.file_group_reader import HudiFileGroupReader, split_options
from hudi_ray.core.table.read_options import HudiQueryType, HudiReadOptions
from hudi_ray.core.table.record_index import RecordIndexGuard
from hudi_ray.core.table.stream import HudiRecordBatchStream
from hudi_ray.core.timeline import HudiInstant, HudiTimeline
from hudi_ray.core.timeline.timestamps import START_OF_TIME, parse_timestamp

log = logging.getLogger(__name__)

T = TypeVar("T")

READ_PARALLELISM = max(2, min(8, os.cpu_count() or 2))
_UNSET = object()
# Slices decoded ahead of the consumer by read_stream: enough to keep the cores
# busy, few enough that memory stays a couple of slices.
STREAM_PREFETCH = 2


def _prefetched(
    items: list[HudiFileSlice], work: Callable[[HudiFileSlice], list[pa.RecordBatch]], depth: int
) -> Iterator[pa.RecordBatch]:
    """Yield each item's batches in order while the next ``depth`` items decode."""
    if not items:
        return
    with ThreadPoolExecutor(max_workers=depth) as pool:
        pending: deque[Future[list[pa.RecordBatch]]] = deque()
        upcoming = iter(items)
        for item in upcoming:
            pending.append(pool.submit(work, item))
            if len(pending) > depth:
                break
        while pending:
            batches = pending.popleft().result()
            nxt = next(upcoming, None)
            if nxt is not None:
                pending.append(pool.submit(work, nxt))
            yield from batches


class ResolvedRead:
    """A read's options with timestamps resolved for its query type."""

    def __init__(self, table: HudiTable, options: HudiReadOptions | None) -> None:
        if options is not None and not isinstance(options, HudiReadOptions):
            raise HudiConfigError(
                f"read_options must be a HudiReadOptions, got {type(options).__name__} {options!r}; "
                "wrap hoodie options as HudiReadOptions(hudi_options=...)"
            )
        opts = options or HudiReadOptions()
        self.query_type = opts.query_type()
        tz = table.timezone
        timeline = table.get_timeline()
        hudi = dict(opts.hudi_options)
        self.as_of: str | None = None
        self.start: str | None = None
        self.end: str | None = None
        if self.query_type is HudiQueryType.Snapshot:
            hudi.pop(R.START_TIMESTAMP.value, None)
            hudi.pop(R.END_TIMESTAMP.value, None)
            raw = opts.as_of_timestamp()
            if raw is not None:
                self.as_of = parse_timestamp(raw, tz, option="as-of timestamp")
            hudi.pop(R.AS_OF_TIMESTAMP.value, None)
            latest = timeline.latest_data_instant()
            # The visibility of the plan bounds what the read sees; the end is
            # kept for file group readers built from these options.
            self.end = self.as_of or (latest.timestamp if latest else None)
        else:
            hudi.pop(R.AS_OF_TIMESTAMP.value, None)
            raw_start = opts.start_timestamp()
            raw_end = opts.end_timestamp()
            self.start = parse_timestamp(raw_start, tz, option="start timestamp") if raw_start else START_OF_TIME
            if raw_end:
                self.end = parse_timestamp(raw_end, tz, option="end timestamp")
            else:
                latest = timeline.latest_data_instant()
                self.end = latest.completed_at if latest else None
            if raw_start and raw_end and self.end is not None and self.start > self.end:
                raise HudiConfigError(
                    f"Incremental read of {table.base_url}: {R.START_TIMESTAMP.value}={raw_start!r} "
                    f"is after {R.END_TIMESTAMP.value}={raw_end!r}"
                )
            # Row-level commit filtering uses the instants' set, not this range.
            hudi.pop(R.START_TIMESTAMP.value, None)
            hudi.pop(R.END_TIMESTAMP.value, None)
        self.options = HudiReadOptions(filters=opts.parsed_filters, projection=opts.projection, hudi_options=hudi)
        self.filters: list[Filter] = opts.parsed_filters


@dataclass(frozen=True)
class HudiReadPlan:
    """A read planned against one state of the timeline, picklable, so that
    readers elsewhere (other processes, other machines) return exactly what
    ``HudiTable.read`` returns for the same slices.

    ``options`` are the resolved per-read options (timestamps already turned
    into ``commit_times`` and ``visibility``); ``schema`` is the schema of the
    batches the read returns (None when the table has no schema yet);
    ``instant`` is the newest instant the read sees (as-of time, or the
    incremental end) and ``context`` the table's configs, instants and schema
    at planning time, without cached commit metadata.
    """

    # Kept out of the repr: an http(s) URI may carry credentials the reader needs.
    base_uri: str = field(repr=False)
    query_type: HudiQueryType
    options: HudiReadOptions
    slices: list[HudiFileSlice]
    commit_times: frozenset[str] | None
    visibility: Visibility | None
    schema: pa.Schema | None
    instant: str | None
    context: TableContext = field(repr=False, compare=False)

    def file_group_reader(self, storage: Storage | None = None) -> HudiFileGroupReader:
        """A reader bound to the planned table state; ``storage`` replaces how files are fetched."""
        ctx = self.context
        if storage is not None:
            ctx = TableContext(storage=storage, config=ctx.config, timeline=ctx.timeline, _schema=ctx.data_schema)
        return HudiFileGroupReader(self.base_uri, {}, _context=ctx)

    def read_slice(self, reader: HudiFileGroupReader, file_slice: HudiFileSlice) -> pa.RecordBatch:
        """One slice, exactly as ``HudiTable.read`` returns it (possibly empty)."""
        return reader._read_slice(file_slice, self.options, self.commit_times, self.visibility)

    def read_slice_stream(
        self, reader: HudiFileGroupReader, file_slice: HudiFileSlice, batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        """The rows of ``read_slice`` in batches of at most ``batch_size`` rows.

        Snapshot reads of slices without logs stream from the base file;
        merging and incremental reads hold one slice in memory.
        """
        if self.query_type is HudiQueryType.Snapshot:
            yield from reader._slice_stream(file_slice, self.options.with_batch_size(batch_size), self.visibility)
            return
        batch = self.read_slice(reader, file_slice)
        for offset in range(0, batch.num_rows, batch_size):
            yield batch.slice(offset, batch_size)


class HudiTable:
    """A Hudi table; the timeline is loaded once, at construction."""

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None) -> None:
        hudi, storage = split_options(options)
        self._init(base_uri, hudi, storage)

    @classmethod
    def _build(cls, base_uri: str, hudi_options: Mapping[str, str], storage_options: Mapping[str, str]) -> HudiTable:
        table = cls.__new__(cls)
        table._init(base_uri, dict(hudi_options), dict(storage_options))
        return table

    def _init(self, base_uri: str, hudi: dict[str, str], storage: dict[str, str]) -> None:
        if isinstance(base_uri, os.PathLike):
            base_uri = os.fspath(base_uri)
        if not isinstance(base_uri, str) or not base_uri.strip():
            raise HudiConfigError(f"base_uri must be a non-empty path or URI string, got {base_uri!r}")
        warn_unknown_keys(hudi)
        # Credentials in the URI move to the storage options: the URI is shown
        # in reprs, errors and logs, and shipped with every read plan.
        base_uri, storage = move_credentials(base_uri, storage)
        self._base_uri = base_uri
        # Read configs belong to each read, never to the table.
        self._user_hudi = {k: v for k, v in hudi.items() if not is_read_config(k)}
        self._storage_options = dict(storage)
        self._storage = Storage(base_uri, self._storage_options)
        self._context = TableContext.load(self._storage, self._user_hudi)
        self._view = FileSystemView(self._storage, self._context.config, self._context.timeline, self._partitioner)
        self._mdt: MetadataTable | object | None = _UNSET
        self._ri_guard: RecordIndexGuard | None = None

    def _partitioner(self) -> Partitioner:
        try:
            return self._context.partitioner
        except HudiSchemaError:
            # An empty table may have no schema at all; nothing to partition then.
            if self._context.timeline.is_empty:
                return Partitioner(self._context.config, pa.schema([]))
            raise

    # -- configs and metadata ------------------------------------------------------

    def hudi_options(self) -> dict[str, str]:
        opts = dict(self._context.config.options)
        opts["hoodie.base.path"] = self._base_uri
        return opts

    def storage_options(self) -> dict[str, str]:
        return dict(self._storage_options)

    @property
    def base_url(self) -> str:
        return self._storage.base_url

    @property
    def table_name(self) -> str:
        return self._context.config.table_name

    @property
    def table_type(self) -> str:
        return self._context.config.table_type

    @property
    def is_mor(self) -> bool:
        return self._context.config.is_mor

    @property
    def timezone(self) -> str:
        return self._context.config.timezone.lower()

    @property
    def table_version(self) -> int:
        return self._context.config.table_version

    def get_timeline(self) -> HudiTimeline:
        return self._context.timeline

    # -- schema --------------------------------------------------------------

    def get_schema(self) -> pa.Schema:
        return self._context.data_schema

    def get_schema_with_meta_fields(self) -> pa.Schema:
        return self._context.schema_with_meta_fields

    def get_partition_schema(self) -> pa.Schema:
        return self._context.partitioner.schema

    def get_schema_in_avro_str(self) -> str:
        record = parse_avro_schema(self._context.avro_schema_str, "table schema")
        return json.dumps(avro_schema_without_meta_fields(record), separators=(",", ":"))

    def get_schema_in_avro_str_with_meta_fields(self) -> str:
        record = parse_avro_schema(self._context.avro_schema_str, "table schema")
        return json.dumps(avro_schema_with_meta_fields(record), separators=(",", ":"))

    # -- planning --------------------------------------------------------------

    def _validate_filters(self, filters: list[Filter]) -> None:
        if not filters:
            return
        known = set(self._context.read_schema.names) | set(self.get_schema_with_meta_fields().names)
        known |= set(self.get_partition_schema().names)
        for f in filters:
            if f.field not in known:
                raise HudiFilterError(f"Filter field {f.field!r} not found in the schema of table {self.base_url}")

    def _validate_projection(self, projection: list[str] | None) -> None:
        if projection is None:
            return
        names = set(self._context.read_schema.names)
        unknown = [c for c in projection if c not in names]
        if unknown:
            raise HudiSchemaError(f"Projected columns {unknown} not found in the schema of table {self.base_url}")

    def _metadata_table(self) -> MetadataTable | None:
        """The table's metadata table, opened once; None when absent or disabled."""
        if self._mdt is _UNSET:
            ctx = self._context
            self._mdt = (
                MetadataTable.open(ctx.storage, ctx.config, ctx.timeline) if ctx.config.table_version >= 8 else None
            )
        return self._mdt  # type: ignore[return-value]

    def _usable_metadata_table(self, read: ResolvedRead, explain: PlanExplain | None) -> MetadataTable | None:
        """The metadata table when it may plan this read: snapshot reads of the
        latest state, and only while it has caught up with the data timeline."""
        if read.query_type is not HudiQueryType.Snapshot:
            return None
        mdt = self._metadata_table()
        if mdt is None:
            return None
        latest = self.get_timeline().latest_data_instant()
        if read.as_of is not None and latest is not None and read.as_of < latest.timestamp:
            if explain is not None:
                explain.notes.append("time travel: planned from storage listing and file footers")
            return None
        if mdt.lags_data_table():
            log.warning("Metadata table of %s lags the data timeline; listing storage instead", self.base_url)
            if explain is not None:
                explain.notes.append("metadata table lags the data table: planned from storage listing")
            return None
        return mdt

    def _pruned_partitions(
        self, filters: list[Filter], mdt: MetadataTable | None, explain: PlanExplain | None
    ) -> list[str]:
        if mdt is not None:
            partitions = mdt.partition_paths()
            self._view.use_partitions(partitions)
        else:
            partitions = self._view.partition_paths()
        if explain is not None:
            explain.add("listed", len(partitions))
        partitioner = self._context.partitioner
        if partitioner.is_partitioned and filters:
            values, unparsed = partitioner.values_table(partitions)
            keep = prune_partitions(values, unparsed, filters, partitioner.schema)
            partitions = [p for p, k in zip(partitions, keep) if k]
        if explain is not None:
            explain.add("partition values", len(partitions))
        if mdt is not None and partitioner.is_partitioned:
            data_filters = self._data_filters(filters)
            if data_filters:
                schema = self._context.read_schema
                stats = _index_or_none(
                    "partition stats", lambda: mdt.partition_stats({f.field for f in data_filters}, schema)
                )
                # A partition without stats is kept: absence proves nothing.
                if stats is not None:
                    partitions = [p for p in partitions if p not in stats or may_match(data_filters, stats[p], schema)]
            if explain is not None:
                explain.add("partition stats", len(partitions))
        return partitions

    def _data_filters(self, filters: list[Filter]) -> list[Filter]:
        partition_fields = set(self.get_partition_schema().names)
        return [f for f in filters if f.field not in partition_fields]

    def _prune_by_record_index(
        self, slices: list[HudiFileSlice], filters: list[Filter], mdt: MetadataTable
    ) -> list[HudiFileSlice] | None:
        """Only the file groups holding the keys of ``key = x`` / ``key IN (...)``
        filters; None when the record index may not decide (see ``record_index``)."""
        if not mdt.has(RECORD_INDEX):
            return None
        if self._ri_guard is None:
            self._ri_guard = RecordIndexGuard(self._storage, self._context.config, self.get_timeline(), mdt)
        return self._ri_guard.prune(slices, filters, self._context.read_schema)

    def _prune_by_column_stats(
        self, slices: list[HudiFileSlice], filters: list[Filter], mdt: MetadataTable
    ) -> list[HudiFileSlice] | None:
        """Drop slices none of whose files (base and logs) can hold a match;
        None when the metadata table has no column stats for these filters."""
        data_filters = self._data_filters(filters)
        if not data_filters or not mdt.has(COLUMN_STATS) or not slices:
            return None
        schema = self._context.read_schema
        columns = {f.field for f in data_filters}
        stats = mdt.column_stats(columns, {s.partition_path for s in slices}, schema)

        def keep(s: HudiFileSlice) -> bool:
            names = ([s.base_file_name] if s.base_file_name else []) + list(s.log_file_names)
            for name in names:
                file_stats = stats.get((s.partition_path, name))
                # A file the index does not cover, or a column it lacks, may hold anything.
                if file_stats is None or not columns <= file_stats.keys():
                    return True
                if may_match(data_filters, file_stats, schema):
                    return True
            return False

        return [s for s in slices if keep(s)]

    def _incremental_instants(self, read: ResolvedRead) -> list[HudiInstant]:
        """Instants that took effect in (start, end]: by completion time on
        table version 8+, by instant time before."""
        timeline = self.get_timeline()
        if read.end is None:
            return []
        return [i for i in timeline.data_instants if read.start < i.completed_at <= read.end]

    def _plan(
        self, read: ResolvedRead, explain: PlanExplain | None = None
    ) -> tuple[list[HudiFileSlice], frozenset[str] | None, Visibility | None]:
        """File slices for a read, for incremental reads the instant times whose
        rows it returns, and which instants' log blocks it may see.

        Pruning runs in the order of the data-skipping design: partition
        values, partition stats, then per file the record index and column
        stats from the metadata table (or Parquet footers without one); the
        row mask stays authoritative.
        """
        if self.get_timeline().is_empty:
            return [], None, None
        self._validate_filters(read.filters)
        mdt = self._usable_metadata_table(read, explain)
        if explain is not None and mdt is not None:
            explain.listing = "metadata table"
        partitions = self._pruned_partitions(read.filters, mdt, explain)
        if mdt is not None:
            self._view.use_listings(mdt.files(partitions))
        read_optimized = read.options.use_read_optimized()
        if read.query_type is HudiQueryType.Snapshot:
            visibility = self._view.snapshot_visibility(read.as_of)
            slices = self._view.latest_file_slices(partitions, visibility)
            commit_times = None
        else:
            instants = self._incremental_instants(read)
            if not instants:
                return [], frozenset(), None
            touched: set[tuple[str, str]] = set()
            for instant in instants:
                for stat in self.get_timeline().write_stats(instant):
                    touched.add((stat.get("partitionPath") or "", stat.get("fileId") or ""))
            # Latest slice as of the newest instant in range, among groups the range touched.
            timeline = self.get_timeline()
            upper = [i for i in timeline.data_instants if i.completed_at <= read.end]
            visibility = self._view.visibility_of(upper)
            slices = self._view.latest_file_slices(partitions, visibility, lambda p, f: (p, f) in touched)
            commit_times = frozenset(i.timestamp for i in instants)
        if read_optimized:
            # Base files only: log-only file groups have nothing to show.
            slices = [s for s in slices if s.base_file_name]
            for s in slices:
                s.log_file_names, s.log_file_sizes = [], []
        if explain is not None:
            explain.add("file slices", len(partitions), len(slices))
        if read.query_type is HudiQueryType.Snapshot:
            stats_pruned = False
            if mdt is not None:
                by_key = _index_or_none("record index", lambda: self._prune_by_record_index(slices, read.filters, mdt))
                if by_key is not None:
                    slices = by_key
                    if explain is not None:
                        explain.add("record index", len({s.partition_path for s in slices}), len(slices))
                by_stats = _index_or_none(
                    "column stats", lambda: self._prune_by_column_stats(slices, read.filters, mdt)
                )
                if by_stats is not None:
                    slices, stats_pruned = by_stats, True
                    if explain is not None:
                        explain.add("column stats", len({s.partition_path for s in slices}), len(slices))
            if not stats_pruned:
                slices = self._prune_by_footer_stats(slices, read.filters)
                if explain is not None and self._data_filters(read.filters):
                    explain.add("footer stats", len({s.partition_path for s in slices}), len(slices))
        return slices, commit_times, visibility

    def explain(self, options: HudiReadOptions | None = None) -> PlanExplain:
        """How many partitions and file slices each planning stage kept for this read."""
        read = ResolvedRead(self, options)
        explain = PlanExplain(query_type=read.query_type.value)
        self._plan(read, explain)
        return explain

    def _prune_by_footer_stats(self, slices: list[HudiFileSlice], filters: list[Filter]) -> list[HudiFileSlice]:
        """Drop base-file-only slices whose Parquet footer proves no row matches.

        Slices with log files are kept: their logs may change any value.
        """
        partition_fields = set(self.get_partition_schema().names)
        data_filters = [f for f in filters if f.field not in partition_fields]
        candidates = [s for s in slices if not s.has_log_files() and s.base_file_name]
        if not data_filters or not candidates:
            return slices
        schema = self._context.read_schema
        columns = {f.field for f in data_filters}
        reader = ParquetReader(self._storage, self._context.footers)

        def keep(s: HudiFileSlice) -> bool:
            md = reader.metadata(s.base_file_relative_path())
            stats = footer_column_stats(md, schema, columns)
            s.num_records = md.num_rows
            s.base_file_byte_size = sum(md.row_group(i).total_byte_size for i in range(md.num_row_groups))
            return may_match(data_filters, stats, schema)

        with ThreadPoolExecutor(max_workers=min(READ_PARALLELISM * 2, len(candidates))) as pool:
            verdict = dict(zip((id(s) for s in candidates), pool.map(keep, candidates)))
        return [s for s in slices if verdict.get(id(s), True)]

    def plan(self, options: HudiReadOptions | None = None) -> HudiReadPlan:
        """Plan a read as ``read`` does, for readers that run elsewhere."""
        read = ResolvedRead(self, options)
        self._validate_projection(read.options.projection)
        slices, commit_times, visibility = self._plan(read)
        ctx = self._context
        try:
            schema: pa.Schema | None = ctx.read_schema
            data_schema: pa.Schema | None = ctx.data_schema
        except HudiSchemaError:
            if slices:
                raise
            schema = data_schema = None  # an empty table without a schema: nothing to read
        if schema is not None and read.options.projection is not None:
            schema = pa.schema([schema.field(c) for c in dict.fromkeys(read.options.projection)])
        # Instants only: the commit metadata cached while planning stays here.
        timeline = HudiTimeline(ctx.storage, ctx.config, list(ctx.timeline.instants), list(ctx.timeline.pending))
        slim = TableContext(storage=ctx.storage, config=ctx.config, timeline=timeline, _schema=data_schema)
        return HudiReadPlan(
            base_uri=self._base_uri,
            query_type=read.query_type,
            options=read.options,
            slices=slices,
            commit_times=commit_times,
            visibility=visibility,
            schema=schema,
            instant=read.end,
            context=slim,
        )

    def get_file_slices(self, options: HudiReadOptions | None = None) -> list[HudiFileSlice]:
        read = ResolvedRead(self, options)
        return self._plan(read)[0]

    def create_file_group_reader_with_options(
        self,
        read_options: HudiReadOptions | None = None,
        extra_storage_overrides: Mapping[str, str] | None = None,
    ) -> HudiFileGroupReader:
        read = ResolvedRead(self, read_options)
        hudi = {**self._user_hudi, **read.options.hudi_options}
        if read.query_type is HudiQueryType.Snapshot and read.end:
            hudi[R.END_TIMESTAMP.value] = read.end
        if read.query_type is HudiQueryType.Incremental:
            hudi[R.START_TIMESTAMP.value] = read.start or START_OF_TIME
            if read.end:
                hudi[R.END_TIMESTAMP.value] = read.end
        context = self._context
        if extra_storage_overrides:
            storage = Storage(self._base_uri, {**self._storage_options, **extra_storage_overrides})
            context = TableContext(storage=storage, config=context.config, timeline=context.timeline)
        return HudiFileGroupReader(
            self._base_uri, {**hudi, **self._storage_options, **(extra_storage_overrides or {})}, _context=context
        )

    def _reader(self) -> HudiFileGroupReader:
        return HudiFileGroupReader(self._base_uri, self._user_hudi, _context=self._context)

    # -- reads ---------------------------------------------------------------

    def read(self, options: HudiReadOptions | None = None) -> list[pa.RecordBatch]:
        read = ResolvedRead(self, options)
        self._validate_projection(read.options.projection)
        slices, commit_times, visibility = self._plan(read)
        if not slices:
            return []
        reader = self._reader()
        opts = read.options

        def one(s: HudiFileSlice) -> pa.RecordBatch:
            return reader._read_slice(s, opts, commit_times, visibility)

        if len(slices) == 1:
            batches = [one(slices[0])]
        else:
            with ThreadPoolExecutor(max_workers=min(READ_PARALLELISM, len(slices))) as pool:
                batches = list(pool.map(one, slices))
        return [b for b in batches if b.num_rows]

    def read_stream(self, options: HudiReadOptions | None = None) -> HudiRecordBatchStream:
        read = ResolvedRead(self, options)
        if read.query_type is HudiQueryType.Incremental:
            raise HudiUnsupportedError("read_stream does not support incremental queries yet; use read()")
        self._validate_projection(read.options.projection)
        slices, _, visibility = self._plan(read)
        reader = self._reader()
        opts = read.options

        def slice_batches(s: HudiFileSlice) -> list[pa.RecordBatch]:
            return list(reader._slice_stream(s, opts, visibility))

        return HudiRecordBatchStream(_prefetched(slices, slice_batches, STREAM_PREFETCH))

    def compute_table_stats(self, options: HudiReadOptions | None = None) -> tuple[int, int] | None:
        """Estimated (rows, bytes) of a snapshot read, from the metadata table.

        The on-disk size of every live Parquet base file the metadata table
        lists is scaled by the compression ratio and row size of one sampled
        footer (the smallest path among the newest commit that wrote base
        files). None for incremental reads, without a metadata table, or when
        the base files are not Parquet.
        """
        read = ResolvedRead(self, options)
        if read.query_type is HudiQueryType.Incremental:
            return None
        mdt = self._metadata_table()
        if mdt is None or self._context.config.base_file_format != "PARQUET":
            return None
        listings = mdt.files(mdt.partition_paths())
        total = sum(f.size for files in listings.values() for f in files if f.name.endswith(".parquet"))
        if total == 0:
            return None
        sample = self._sample_base_file()
        if sample is None:
            return None
        try:
            md = ParquetReader(self._storage, self._context.footers).metadata(sample)
        except HudiCoreError as exc:
            log.warning("Cannot sample %s for table stats: %s", sample, exc)
            return None
        groups = [md.row_group(i) for i in range(md.num_row_groups)]
        on_disk = sum(g.column(j).total_compressed_size for g in groups for j in range(g.num_columns))
        uncompressed = sum(g.total_byte_size for g in groups)
        ratio = uncompressed / on_disk if on_disk > 0 else 1.0
        row_size = on_disk / md.num_rows if md.num_rows > 0 else 0.0
        rows = int(total / row_size) if row_size > 0 else 0
        return max(rows, 0), max(int(total * ratio), 0)

    def _sample_base_file(self) -> str | None:
        for instant in reversed(self.get_timeline().data_instants):
            paths = [
                st.get("path") or ""
                for st in self.get_timeline().write_stats(instant)
                if parse_base_file_name((st.get("path") or "").rsplit("/", 1)[-1])
            ]
            if paths:
                return min(paths)
        return None

    def __repr__(self) -> str:
        return f"HudiTable({self.base_url!r}, type={self.table_type}, version={self.table_version})"


def _index_or_none(index: str, prune: Callable[[], T]) -> T | None:
    """An index's pruning, or None when its files are damaged or missing: pruning
    is an optimisation, so the read goes on without it (as Apache Hudi falls
    back to a full scan) and stays right."""
    try:
        return prune()
    except (HudiCorruptFileError, HudiFileNotFoundError) as exc:
        log.warning("Not pruning by the metadata table's %s: %s", index, exc)
        return None
