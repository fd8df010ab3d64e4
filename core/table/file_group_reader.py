"""``HudiFileGroupReader``: physical reads of one file slice."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ray.core.base_file import ParquetReader
from hudi_ray.core.config.keys import is_read_config
from hudi_ray.core.exceptions import HudiFilterError, HudiSchemaError, HudiUnsupportedError
from hudi_ray.core.expr import Filter, filters_to_expression
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.schema import conform_table
from hudi_ray.core.storage import Storage
from hudi_ray.core.table.context import TableContext
from hudi_ray.core.table.read_options import DEFAULT_BATCH_SIZE, HudiReadOptions
from hudi_ray.core.table.stream import HudiRecordBatchStream
from hudi_ray.core.timeline.timestamps import parse_timestamp

COMMIT_TIME = "_hoodie_commit_time"


def split_options(options: Mapping[str, str] | None) -> tuple[dict[str, str], dict[str, str]]:
    """Route generic options: ``hoodie.*`` keys are Hudi configs, the rest storage options."""
    hudi: dict[str, str] = {}
    storage: dict[str, str] = {}
    for k, v in (options or {}).items():
        key = k.value if hasattr(k, "value") else str(k)
        (hudi if key.startswith("hoodie.") else storage)[key] = str(v)
    return hudi, storage


class ReadPlan:
    """Columns to read, the row mask and the columns to hand back, for one read."""

    def __init__(
        self,
        schema: pa.Schema,
        options: HudiReadOptions,
        commit_times: frozenset[str] | None,
        commit_range: tuple[str | None, str | None],
        where: str,
    ) -> None:
        filters: list[Filter] = options.parsed_filters
        names = schema.names
        for f in filters:
            if f.field not in names:
                raise HudiFilterError(f"Filter field {f.field!r} not found in the schema of {where}")
        if options.projection is not None:
            unknown = [c for c in options.projection if c not in names]
            if unknown:
                raise HudiSchemaError(f"Projected columns {unknown} not found in the schema of {where}")
            output = list(dict.fromkeys(options.projection))
        else:
            output = names
        has_commit_time = COMMIT_TIME in names
        lo, hi = commit_range
        self.commit_times = commit_times if has_commit_time else None
        self.commit_range = (lo, hi) if has_commit_time and (lo or hi) else None
        extra = [f.field for f in filters]
        if self.commit_times is not None or self.commit_range is not None:
            extra.append(COMMIT_TIME)
        read = list(dict.fromkeys(output + [c for c in extra if c not in output]))
        self.read_schema = pa.schema([schema.field(c) for c in read])
        self.output = output
        self.narrow = len(read) != len(output)
        self.output_schema = pa.schema([schema.field(c) for c in output])
        expr = filters_to_expression(filters, self.read_schema, where)
        if self.commit_times is not None:
            e = pc.field(COMMIT_TIME).isin(pa.array(sorted(self.commit_times), pa.string()))
            expr = e if expr is None else expr & e
        if self.commit_range is not None:
            if lo:
                e = pc.field(COMMIT_TIME) > lo
                expr = e if expr is None else expr & e
            if hi:
                e = pc.field(COMMIT_TIME) <= hi
                expr = e if expr is None else expr & e
        self.mask = expr

    def apply(self, data: pa.Table) -> pa.Table:
        if self.mask is not None:
            data = data.filter(self.mask)
        if self.narrow:
            data = data.select(self.output)
        return data


class HudiFileGroupReader:
    """Reads file slices of one table: a base file, merged with its log files."""

    def __init__(
        self, base_uri: str, options: Mapping[str, str] | None = None, *, _context: TableContext | None = None
    ):
        hudi, storage_opts = split_options(options)
        self.base_uri = base_uri
        self._hudi_options = {k: v for k, v in hudi.items() if not is_read_config(k)}
        self._read_defaults = {k: v for k, v in hudi.items() if is_read_config(k)}
        self._storage_options = storage_opts
        self._context = _context

    @property
    def is_metadata_table(self) -> bool:
        return self.base_uri.rstrip("/").endswith(".hoodie/metadata")

    @property
    def context(self) -> TableContext:
        if self._context is None:
            storage = Storage(self.base_uri, self._storage_options)
            self._context = TableContext.load(storage, self._hudi_options)
        return self._context

    # -- option handling -----------------------------------------------------------

    def _options(self, options: HudiReadOptions | None) -> HudiReadOptions:
        base = HudiReadOptions(hudi_options=self._read_defaults)
        if options is None:
            return base
        return options.with_hudi_options({**self._read_defaults, **options.hudi_options})

    def _plan(
        self,
        options: HudiReadOptions,
        where: str,
        commit_times: frozenset[str] | None,
    ) -> ReadPlan:
        ctx = self.context
        tz = ctx.config.timezone
        start = options.start_timestamp()
        end = options.end_timestamp()
        lo = parse_timestamp(start, tz, option="start timestamp") if start else None
        hi = parse_timestamp(end, tz, option="end timestamp") if end else None
        return ReadPlan(ctx.read_schema, options, commit_times, (lo, hi), where)

    def _partition_of(self, rel: str) -> str:
        return rel.rsplit("/", 1)[0] if "/" in rel else ""

    def _relative(self, path: str) -> str:
        storage = self.context.storage
        for prefix in (storage.base_url + "/", storage.root + "/"):
            if path.startswith(prefix):
                return path[len(prefix) :]
        return path.lstrip("/")

    def _constants(self, partition_path: str) -> dict[str, pa.Scalar]:
        ctx = self.context
        if ctx.config.drops_partition_fields and ctx.partitioner.is_partitioned:
            return ctx.partitioner.constants(partition_path)
        return {}

    def _check_logs(self, log_paths: Sequence[str], where: str) -> None:
        if log_paths:
            raise HudiUnsupportedError(
                f"Merging log files is not supported yet (file slice {where} has {len(log_paths)} log files); "
                "read it with hoodie.read.use.read_optimized.mode=true to read base files only"
            )

    # -- eager ---------------------------------------------------------------

    def _read_table(self, base_rel: str, partition_path: str, plan: ReadPlan) -> pa.Table:
        reader = ParquetReader(self.context.storage, self.context.footers)
        data = reader.read(base_rel, plan.read_schema.names)
        data = conform_table(
            data, plan.read_schema, self._constants(partition_path), self.context.storage.uri(base_rel)
        )
        return plan.apply(data)

    @staticmethod
    def _one_batch(data: pa.Table, schema: pa.Schema) -> pa.RecordBatch:
        if data.num_rows == 0:
            return pa.RecordBatch.from_pylist([], schema=schema)
        # One contiguous batch per slice, as the spec's eager per-slice read returns.
        return data.combine_chunks().to_batches()[0]

    def read_file_slice(self, file_slice: HudiFileSlice, options: HudiReadOptions | None = None) -> pa.RecordBatch:
        return self._read_slice(file_slice, self._options(options), None)

    def _read_slice(
        self, file_slice: HudiFileSlice, options: HudiReadOptions, commit_times: frozenset[str] | None
    ) -> pa.RecordBatch:
        table = self._read_slice_table(file_slice, options, commit_times)
        return self._one_batch(table, table.schema)

    def _read_slice_table(
        self, file_slice: HudiFileSlice, options: HudiReadOptions, commit_times: frozenset[str] | None
    ) -> pa.Table:
        where = self.context.storage.uri(file_slice.base_file_relative_path())
        if not options.use_read_optimized():
            self._check_logs(file_slice.log_files_relative_paths(), where)
        plan = self._plan(options, where, commit_times)
        return self._read_table(file_slice.base_file_relative_path(), file_slice.partition_path, plan)

    def read_file_slice_from_paths(
        self, base_file_path: str, log_file_paths: Sequence[str], options: HudiReadOptions | None = None
    ) -> pa.RecordBatch:
        opts = self._options(options)
        rel = self._relative(base_file_path)
        where = self.context.storage.uri(rel)
        if not opts.use_read_optimized():
            self._check_logs(list(log_file_paths), where)
        plan = self._plan(opts, where, None)
        table = self._read_table(rel, self._partition_of(rel), plan)
        return self._one_batch(table, plan.output_schema)

    # -- streaming ---------------------------------------------------------------

    def _stream(
        self, base_rel: str, partition_path: str, options: HudiReadOptions, commit_times: frozenset[str] | None
    ) -> Iterator[pa.RecordBatch]:
        where = self.context.storage.uri(base_rel)
        plan = self._plan(options, where, commit_times)
        batch_size = options.batch_size() or DEFAULT_BATCH_SIZE
        reader = ParquetReader(self.context.storage, self.context.footers)
        constants = self._constants(partition_path)
        for batch in reader.iter_batches(base_rel, plan.read_schema.names, batch_size):
            data = conform_table(pa.Table.from_batches([batch]), plan.read_schema, constants, where)
            data = plan.apply(data)
            if data.num_rows:
                yield from data.to_batches()

    def read_file_slice_stream(
        self, file_slice: HudiFileSlice, options: HudiReadOptions | None = None
    ) -> HudiRecordBatchStream:
        opts = self._options(options)
        rel = file_slice.base_file_relative_path()
        if not opts.use_read_optimized():
            self._check_logs(file_slice.log_files_relative_paths(), self.context.storage.uri(rel))
        return HudiRecordBatchStream(self._stream(rel, file_slice.partition_path, opts, None))

    def read_file_slice_from_paths_stream(
        self, base_file_path: str, log_file_paths: Sequence[str], options: HudiReadOptions | None = None
    ) -> HudiRecordBatchStream:
        opts = self._options(options)
        rel = self._relative(base_file_path)
        if not opts.use_read_optimized():
            self._check_logs(list(log_file_paths), self.context.storage.uri(rel))
        return HudiRecordBatchStream(self._stream(rel, self._partition_of(rel), opts, None))
