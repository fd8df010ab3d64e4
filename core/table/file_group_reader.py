"""``HudiFileGroupReader``: physical reads of one file slice."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ray.core.base_file import BaseFileReader, base_file_format, base_file_instant, base_file_reader
from hudi_ray.core.config import io_tunables
from hudi_ray.core.config.keys import is_read_config
from hudi_ray.core.exceptions import HudiCorruptFileError, HudiFilterError, HudiSchemaError, HudiUnsupportedError
from hudi_ray.core.expr import Filter, filters_to_expression
from hudi_ray.core.file_group import HudiFileSlice, Visibility, parse_base_file_name, snapshot_visibility
from hudi_ray.core.log_file import BlockType, LogBlock, LogScanner, read_log_blocks
from hudi_ray.core.log_file.content import DATA_DECODERS, data_block_columns, decode_delete_columns_of
from hudi_ray.core.merge import (
    LogRecords,
    MergeConfig,
    MergeMode,
    apply_merge,
    compared_columns,
    decide_merge,
)
from hudi_ray.core.schema import conform_table, encoded_target, parse_avro_schema
from hudi_ray.core.schema.arrow import check_missing_columns
from hudi_ray.core.schema.required import RequiredColumns
from hudi_ray.core.storage import Storage
from hudi_ray.core.storage.paths import move_credentials
from hudi_ray.core.table.context import TableContext
from hudi_ray.core.table.read_options import DEFAULT_BATCH_SIZE, HudiReadOptions, options_key
from hudi_ray.core.table.stream import HudiRecordBatchStream
from hudi_ray.core.timeline import HudiTimeline
from hudi_ray.core.timeline.timestamps import parse_timestamp

COMMIT_TIME = "_hoodie_commit_time"

log = logging.getLogger(__name__)


def split_options(options: Mapping[str, str] | None) -> tuple[dict[str, str], dict[str, str]]:
    """Route generic options: ``hoodie.*`` keys are Hudi configs, the rest storage options."""
    hudi: dict[str, str] = {}
    storage: dict[str, str] = {}
    for k, v in (options or {}).items():
        key = k.value if hasattr(k, "value") else str(k)
        (hudi if key.startswith("hoodie.") else storage)[key] = str(v)
    return hudi, storage


@functools.lru_cache(maxsize=64)
def _warn_missing_ordering(missing: tuple[str, ...]) -> None:
    # Cached: one warning per set of fields, not one per file slice.
    log.warning("Ordering fields %s are not in the table schema; merging treats them as unset", list(missing))


def _ordering_in(cfg: MergeConfig, schema: pa.Schema) -> MergeConfig:
    """The merge config restricted to ordering fields the data has.

    hudi-rs reads a record without its ordering field as having no ordering
    value: all such records tie, and ties go to the newer record. With no
    ordering field left that is commit-time ordering.
    """
    present = tuple(f for f in cfg.ordering_fields if f in schema.names)
    if present == cfg.ordering_fields:
        return cfg
    _warn_missing_ordering(tuple(f for f in cfg.ordering_fields if f not in present))
    mode = cfg.mode if present else MergeMode.COMMIT_TIME_ORDERING
    return dataclasses.replace(cfg, ordering_fields=present, mode=mode)


def _commit_schemas(timeline: HudiTimeline) -> list[tuple[str, str | None]]:
    """(instant time, writer schema) of the completed data commits, oldest first."""
    return [
        (i.timestamp, (timeline.get_instant_metadata(i).get("extraMetadata") or {}).get("schema"))
        for i in timeline.data_instants
    ]


# Read plans a file group reader keeps (one per distinct read it serves).
_PLAN_CACHE_SIZE = 64


def _instant_of(base_rel: str) -> str | None:
    """The instant that wrote a base file, from its name."""
    return base_file_instant(base_rel.rsplit("/", 1)[-1])


class ReadPlan:
    """Columns to read, the row mask and the columns to hand back, for one read."""

    def __init__(
        self,
        schema: pa.Schema,
        options: HudiReadOptions,
        commit_times: frozenset[str] | None,
        commit_range: tuple[str | None, str | None],
        where: str,
        merge_columns: Sequence[str] = (),
        base_instant: str | None = None,
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
        if hi is not None and base_instant is not None and base_instant <= hi:
            # Rows of a base file are no newer than the file, and log blocks are
            # bounded by visibility: the upper bound cannot drop anything.
            hi = None
        self.commit_times = commit_times if has_commit_time else None
        self.commit_range = (lo, hi) if has_commit_time and (lo or hi) else None
        extra = [f.field for f in filters] + [c for c in merge_columns if c in names]
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


# Rows of small base files conformed and cut into batches together by
# ``read_file_slices``; a larger file goes alone (joining would only copy it).
_RUN_ROWS = 1 << 16
# Files of a run, when each keeps a batch of its own: a run's tables live
# until it is conformed, and the more files that holds, the slower every later
# file's read allocates (20,000 files of 20 rows, serial CPU: runs of 256
# files 6.6 s, of 16 about 5.5 s). One file alone pays the run's fixed cost.
_RUN_FILES = 16


class _BaseRead:
    """A base file's data as read, before it is conformed to the table schema.
    A plain class: made once per file read, where a frozen dataclass's
    ``__init__`` costs as much as a small file's conforming."""

    __slots__ = ("base_rel", "constants", "constants_key", "data", "plan")

    def __init__(
        self,
        plan: ReadPlan,
        data: pa.Table,
        constants: Mapping[str, pa.Scalar],
        constants_key: str,  # the partition whose values ``constants`` are ("" without constants)
        base_rel: str,
    ) -> None:
        self.plan = plan
        self.data = data
        self.constants = constants
        self.constants_key = constants_key
        self.base_rel = base_rel

    def joins(self, other: _BaseRead) -> bool:
        """Whether ``other`` can be conformed together with this file's data
        when their file schemas agree, which joining the run checks: comparing
        schemas here, file by file, costs a switch of threads each."""
        return other.plan is self.plan and other.constants_key == self.constants_key


def _same_schema_stretches(run: Sequence[_BaseRead]) -> list[list[_BaseRead]]:
    stretches: list[list[_BaseRead]] = []
    for r in run:
        if stretches and stretches[-1][-1].data.schema.equals(r.data.schema):
            stretches[-1].append(r)
        else:
            stretches.append([r])
    return stretches


class HudiFileGroupReader:
    """Reads file slices of one table: a base file merged with its log files."""

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None) -> None:
        hudi, storage_opts = split_options(options)
        # Credentials in the URI move to the options so the URI is safe to show.
        base_uri, storage_opts = move_credentials(base_uri, storage_opts)
        self.base_uri = base_uri
        self._hudi_options = {k: v for k, v in hudi.items() if not is_read_config(k)}
        self._read_defaults = {k: v for k, v in hudi.items() if is_read_config(k)}
        self._storage_options = storage_opts
        self._context: TableContext | None = None
        self._required: RequiredColumns | None = None
        self._plans: dict[tuple, ReadPlan] = {}
        self._fills_partitions: bool | None = None
        self._ranges: dict[tuple, tuple[str | None, str | None]] = {}
        self._readers: dict[str, BaseFileReader] = {}

    def __getstate__(self) -> dict:
        # Plans and readers are cheap to rebuild (plans hold compute expressions): not shipped.
        state = self.__dict__.copy()
        state["_plans"], state["_ranges"], state["_readers"] = {}, {}, {}
        return state

    @classmethod
    def from_context(
        cls, base_uri: str, context: TableContext, options: Mapping[str, str] | None = None
    ) -> HudiFileGroupReader:
        """A reader over an already loaded table state (its storage, configs,
        timeline and schema), as tables and read plans build theirs."""
        reader = cls(base_uri, options)
        reader._context = context
        return reader

    @property
    def is_metadata_table(self) -> bool:
        return self.base_uri.rstrip("/").endswith(".hoodie/metadata")

    @property
    def context(self) -> TableContext:
        if self._context is None:
            storage = Storage(self.base_uri, self._storage_options, io_tunables(self._hudi_options))
            self._context = TableContext.load(storage, self._hudi_options)
        return self._context

    # -- option handling -------------------------------------------------------

    def _options(self, options: HudiReadOptions | None) -> HudiReadOptions:
        if options is None:
            return HudiReadOptions(hudi_options=self._read_defaults)
        hudi = options.hudi_options
        if all(k in hudi for k in self._read_defaults):
            # The options override every default (usually there is none): they
            # are the merged options as they are, with no copy per slice.
            return options
        return options.with_hudi_options({**self._read_defaults, **hudi})

    def _range(self, options: HudiReadOptions) -> tuple[str | None, str | None]:
        tz = self.context.config.timezone
        start, end = options.start_timestamp(), options.end_timestamp()
        return (
            parse_timestamp(start, tz, option="start timestamp") if start else None,
            parse_timestamp(end, tz, option="end timestamp") if end else None,
        )

    def _plan(
        self,
        options: HudiReadOptions,
        where: str | Callable[[], str],
        commit_times: frozenset[str] | None,
        merging: bool,
        base_rel: str | None,
        okey: tuple | None = None,
    ) -> ReadPlan:
        """The read plan of a slice; ``where`` (or what it gives, only called
        when a plan is made) names the slice in errors. ``okey`` is
        ``options_key(options)`` when the caller has it already."""
        # The plan depends on the slice only through whether its base file is
        # older than the range's end, so one plan per read serves every slice
        # (building it per slice cost more than reading a small file). Keyed by
        # the options' values: options are mutable, and equal ones plan alike.
        if okey is None:
            okey = options_key(options)
        commit_range = self._ranges.get(okey)
        if commit_range is None:
            commit_range = self._ranges[okey] = self._range(options)
        hi = commit_range[1]
        base_instant = _instant_of(base_rel) if hi is not None and base_rel else None
        key = (okey, commit_times, merging, base_instant is not None and base_instant <= hi)
        plan = self._plans.get(key)
        if plan is None:
            ctx = self.context
            merge_columns = ctx.merge_columns() if merging else ()
            where = where() if callable(where) else where
            plan = ReadPlan(ctx.read_schema, options, commit_times, commit_range, where, merge_columns, base_instant)
            if len(self._plans) >= _PLAN_CACHE_SIZE:
                self._plans.clear()  # a long-lived reader of ever new options stays small
            self._plans[key] = plan
        return plan

    def decoded_columns(
        self, options: HudiReadOptions, base_rel: str, commit_times: frozenset[str] | None, merging: bool
    ) -> list[str]:
        """Top-level columns a read of ``base_rel`` with ``options`` decodes from the
        file (the projection plus filter and merge columns), for readers fetching ahead."""
        plan = self._plan(options, self.context.storage.uri(base_rel), commit_times, merging, base_rel)
        return plan.read_schema.names

    def _partition_of(self, rel: str) -> str:
        return rel.rsplit("/", 1)[0] if "/" in rel else ""

    def _relative(self, path: str) -> str:
        storage = self.context.storage
        for prefix in (storage.base_url + "/", storage.root + "/"):
            if path.startswith(prefix):
                return path[len(prefix) :]
        return path.lstrip("/")

    def _constants(self, partition_path: str) -> dict[str, pa.Scalar]:
        if self._fills_partitions is None:
            # Asked once per slice; the answer parses table configs.
            ctx = self.context
            self._fills_partitions = bool(ctx.config.drops_partition_fields and ctx.partitioner.is_partitioned)
        if self._fills_partitions:
            return self.context.partitioner.constants(partition_path)
        return {}

    # -- the read pipeline ---------------------------------------------------------

    def _base_reader(self, base_rel: str) -> BaseFileReader:
        # One reader per format, asked for once per file read.
        fmt = base_file_format(base_rel)
        reader = self._readers.get(fmt)
        if reader is None:
            reader = base_file_reader(self.context.storage, base_rel, self.context.footers)
            self._readers[fmt] = reader
        return reader

    def _read_base(
        self, base_rel: str, partition_path: str, schema: pa.Schema, plain: frozenset[str] | None = None
    ) -> pa.Table:
        """The base file's rows in ``schema``. Given ``plain``, text columns
        other than those may stay dictionary arrays (see ``encoded_target``)."""
        reader = self._base_reader(base_rel)
        data = reader.read(base_rel, schema.names, encoded=plain is not None)
        constants = self._constants(partition_path)
        self._check_base_columns(reader, base_rel, data, schema, constants)
        if plain is not None:
            schema = encoded_target(schema, data.schema, plain)
        return conform_table(data, schema, constants, self.context.storage.uri(base_rel))

    def _required_columns(self) -> RequiredColumns:
        if self._required is None:
            ctx = self.context
            self._required = RequiredColumns(
                parse_avro_schema(ctx.avro_schema_str, "table schema"),
                meta_fields=ctx.config.populates_meta_fields,
                # A partial, not a closure: readers are pickled to workers.
                history=functools.partial(_commit_schemas, ctx.timeline),
                create_schema=ctx.config.get("hoodie.table.create.schema"),
            )
        return self._required

    def _unknown_columns(self, names: Sequence[str]) -> list[str]:
        known = set(self.context.schema_with_meta_fields.names)
        return [n for n in names if n not in known]

    def _check_base_columns(
        self, reader: BaseFileReader, base_rel: str, data: pa.Table, schema: pa.Schema, constants: Mapping
    ) -> None:
        if data.num_columns >= len(schema):
            # Readers return only the asked columns the file has: a file with
            # as many has them all, and nothing can be missing.
            return
        parsed = parse_base_file_name(base_rel.rsplit("/", 1)[-1])
        written_at = parsed.instant_time if parsed else None
        check_missing_columns(
            schema,
            data.column_names,
            self.context.storage.uri(base_rel),
            required=lambda name: self._required_columns().reason(name, written_at),
            unknown=lambda: self._unknown_columns(reader.schema(base_rel).names),
            filled=constants.keys(),
        )

    def _log_blocks(self, log_rels: Sequence[str], visibility: Visibility) -> list[LogBlock]:
        """Data and delete blocks that survive visibility and rollbacks, oldest first."""
        storage = self.context.storage
        # Lazy: each log file is read when the scan reaches it.
        files = (read_log_blocks(storage.read_bytes(rel), storage.uri(rel)) for rel in log_rels)
        return LogScanner(visibility.sees).scan(files)

    def _merged(
        self,
        base_rel: str | None,
        log_rels: Sequence[str],
        partition_path: str,
        plan: ReadPlan,
        visibility: Visibility,
    ) -> pa.Table:
        ctx = self.context
        schema = plan.read_schema
        cfg = _ordering_in(ctx.merge_config(), schema)
        compared = compared_columns(cfg)
        decided_on = pa.schema([f for f in schema if f.name in compared])
        records = LogRecords(schema, cfg)
        # Only the columns the merge uses are decoded: a projection skips the rest of every block.
        needed = records.data_columns()
        constants = self._constants(partition_path)
        for block in self._log_blocks(log_rels, visibility):
            if block.block_type is BlockType.DELETE:
                deletes = decode_delete_columns_of(block)
                records.add_deletes(deletes.keys, deletes.ordering, deletes.commit_time_delete)
            elif block.block_type in DATA_DECODERS:
                raw = DATA_DECODERS[block.block_type](block, needed)
                for name, value in constants.items():
                    if name not in raw.column_names:
                        raw = raw.append_column(name, pa.repeat(value, raw.num_rows))
                check_missing_columns(
                    schema,
                    raw.column_names,
                    f"the schema of {block.where()}",
                    required=lambda name, at=block.instant_time: self._required_columns().reason(name, at),
                    unknown=lambda block=block: self._unknown_columns(data_block_columns(block)),
                )
                records.add_data(raw, block.where())
            else:
                raise HudiUnsupportedError(f"{block.where()}: {block.block_type.name} blocks in a data table")
        base = None
        if base_rel and len(decided_on):
            # The merge decides on the keys and ordering values alone. With
            # fewer log records than base rows some base row stays, so the file
            # is read whole, at once; else its other columns are read after the
            # decision, and only when a base row stays.
            stays = len(records) < self._base_reader(base_rel).num_rows(base_rel)
            base = self._read_base(base_rel, partition_path, schema if stays else decided_on, compared)
        elif base_rel:
            # Nothing to decide on (no key column in the read): the whole file, as it is.
            base = self._read_base(base_rel, partition_path, schema, compared)
        decision = decide_merge(base, records, cfg)
        if base is not None and decision.keeps_base() and len(base.schema) < len(schema):
            base = self._with_other_columns(base, base_rel, partition_path, schema, compared)
        return apply_merge(base, decision, records)

    def _with_other_columns(
        self, base: pa.Table, base_rel: str, partition_path: str, schema: pa.Schema, compared: frozenset[str]
    ) -> pa.Table:
        """``base`` (the compared columns) completed with the file's other
        columns of ``schema``. Text columns of small dictionaries stay encoded:
        the merge drops the replaced rows before it casts the rest, so only kept
        rows expand."""
        others = pa.schema([f for f in schema if f.name not in base.schema.names])
        rest = self._read_base(base_rel, partition_path, others, compared)
        if rest.num_rows != base.num_rows:
            raise HudiCorruptFileError(
                f"Base file {self.context.storage.uri(base_rel)} gave {base.num_rows} rows of its key columns "
                f"and {rest.num_rows} of the others"
            )
        joined = pa.Table.from_arrays([*base.columns, *rest.columns], schema=pa.schema([*base.schema, *rest.schema]))
        return joined.select(schema.names)

    def _visibility(self, options: HudiReadOptions, visibility: Visibility | None) -> Visibility:
        if visibility is not None:
            return visibility
        _, end = self._range(options)
        return snapshot_visibility(self.context.timeline, end)

    def _rows(
        self,
        base_rel: str | None,
        log_rels: Sequence[str],
        partition_path: str,
        options: HudiReadOptions,
        commit_times: frozenset[str] | None,
        visibility: Visibility | None,
    ) -> pa.Table:
        """All rows of one slice: base merged with logs, masked and projected."""
        storage = self.context.storage
        where = storage.uri(base_rel or (log_rels[0] if log_rels else partition_path))
        if options.use_read_optimized():
            log_rels = []
        merging = bool(log_rels)
        plan = self._plan(options, where, commit_times, merging, base_rel)
        if not merging:
            if not base_rel:
                return plan.output_schema.empty_table()
            return plan.apply(self._read_base(base_rel, partition_path, plan.read_schema))
        data = self._merged(base_rel, log_rels, partition_path, plan, self._visibility(options, visibility))
        return plan.apply(data)

    def _stream_rows(
        self,
        base_rel: str | None,
        log_rels: Sequence[str],
        partition_path: str,
        options: HudiReadOptions,
        visibility: Visibility | None,
    ) -> Iterator[pa.RecordBatch]:
        batch_size = options.batch_size() or DEFAULT_BATCH_SIZE
        if options.use_read_optimized():
            log_rels = []
        if log_rels or not base_rel:
            # Merging needs the whole slice; memory stays bounded by one slice.
            # Its pieces (kept base rows, log rows) stream as they are, uncopied.
            data = self._rows(base_rel, log_rels, partition_path, options, None, visibility)
            yield from (b for b in data.to_batches(max_chunksize=batch_size) if b.num_rows)
            return
        where = self.context.storage.uri(base_rel)
        plan = self._plan(options, where, None, False, base_rel)
        reader = self._base_reader(base_rel)
        constants = self._constants(partition_path)
        # Piece by piece (a Parquet row group, decoded by all cores at once, or
        # a batch of a Lance file): memory stays one piece.
        for group in reader.iter_tables(base_rel, plan.read_schema.names, batch_size):
            self._check_base_columns(reader, base_rel, group, plan.read_schema, constants)
            data = plan.apply(conform_table(group, plan.read_schema, constants, where))
            yield from (b for b in data.to_batches(max_chunksize=batch_size) if b.num_rows)

    @staticmethod
    def _one_batch(data: pa.Table) -> pa.RecordBatch:
        if data.num_rows == 0:
            return pa.RecordBatch.from_pylist([], schema=data.schema)
        # One contiguous batch per slice, as the spec's eager per-slice read returns.
        return data.combine_chunks().to_batches()[0]

    # -- public API --------------------------------------------------------------

    def _slice_rows(
        self,
        file_slice: HudiFileSlice,
        options: HudiReadOptions,
        commit_times: frozenset[str] | None = None,
        visibility: Visibility | None = None,
    ) -> pa.Table:
        return self._rows(
            file_slice.base_file_relative_path() or None,
            file_slice.log_files_relative_paths(),
            file_slice.partition_path,
            options,
            commit_times,
            visibility,
        )

    def read_file_slice(
        self,
        file_slice: HudiFileSlice,
        options: HudiReadOptions | None = None,
        *,
        commit_times: frozenset[str] | None = None,
        visibility: Visibility | None = None,
    ) -> pa.RecordBatch:
        """The slice's rows as one batch. A read plan passes ``commit_times``
        (incremental reads: the instants whose rows to return) and
        ``visibility`` (which instants' log blocks the read sees)."""
        return self._one_batch(self._slice_rows(file_slice, self._options(options), commit_times, visibility))

    def read_file_slices(
        self,
        file_slices: Sequence[HudiFileSlice],
        options: HudiReadOptions | None = None,
        *,
        commit_times: frozenset[str] | None = None,
        visibility: Visibility | None = None,
        contiguous: bool = True,
        coalesce: bool = False,
    ) -> list[pa.RecordBatch]:
        """``read_file_slice`` of each slice, in order, with the same arguments.

        Slices that read only their base file are decoded file by file, but
        consecutive small ones of one file schema are conformed, masked and cut
        into batches together: for files of a few rows that work costs more
        per slice than decoding the file. Errors still name the file.

        Without ``contiguous``, a merged slice gives its rows as the merge
        left them (the kept base rows, then the log's), in a batch each,
        instead of one batch: joining them would copy the whole slice once more.

        With ``coalesce``, batches no longer follow slices at all: a run of
        consecutive small base-only slices comes as one batch, made contiguous
        once, instead of a batch per file (for callers that only want the
        rows, such as a reader task building blocks; a batch per file of a few
        rows costs more to make and to consume than its rows)."""
        opts = self._options(options)
        read_optimized = opts.use_read_optimized()
        out: list[pa.RecordBatch] = []
        run: list[_BaseRead] = []
        held = 0
        okey = options_key(opts)
        for s in file_slices:
            base_rel = s.base_file_relative_path()
            if not base_rel or (s.log_file_names and not read_optimized):
                out.extend(self._conformed_run(run, not coalesce))
                run, held = [], 0
                rows = self._slice_rows(s, opts, commit_times, visibility)
                out.extend([self._one_batch(rows)] if contiguous else rows.to_batches())
                continue
            plan = self._plan(
                opts, functools.partial(self.context.storage.uri, base_rel), commit_times, False, base_rel, okey
            )
            reader = self._base_reader(base_rel)
            data = reader.read(base_rel, plan.read_schema.names)
            constants = self._constants(s.partition_path)
            self._check_base_columns(reader, base_rel, data, plan.read_schema, constants)
            item = _BaseRead(plan, data, constants, s.partition_path if constants else "", base_rel)
            full = held + data.num_rows > _RUN_ROWS or (not coalesce and len(run) >= _RUN_FILES)
            if run and (full or not run[-1].joins(item)):
                out.extend(self._conformed_run(run, not coalesce))
                run, held = [], 0
            run.append(item)
            held += data.num_rows
        out.extend(self._conformed_run(run, not coalesce))
        return out

    def _conformed_run(self, run: Sequence[_BaseRead], per_file: bool = True) -> list[pa.RecordBatch]:
        """One batch per file of ``run`` (base files read alike), as
        ``read_file_slice`` gives them; or, not ``per_file``, one batch of
        them all (joined first: masking thousands of chunks, and cutting them
        into batches, costs more than copying their few rows)."""
        if not run:
            return []
        first = run[0]
        plan = first.plan
        try:
            raw = pa.concat_tables([r.data for r in run]) if len(run) > 1 else first.data
        except pa.ArrowInvalid:
            # Files of several schemas (an evolved table): each stretch of one schema joins alone.
            stretches = _same_schema_stretches(run)
            if len(stretches) == 1:
                raise
            return [b for stretch in stretches for b in self._conformed_run(stretch, per_file)]
        uri = self.context.storage.uri
        if not per_file and len(run) > 1:
            raw = raw.combine_chunks()
        try:
            data = conform_table(raw, plan.read_schema, first.constants, uri(first.base_rel))
        except HudiSchemaError:
            for r in run:  # the file that cannot be conformed raises, naming itself
                conform_table(r.data, plan.read_schema, r.constants, uri(r.base_rel))
            raise
        if not per_file:
            data = plan.apply(data)
            return [self._one_batch(data)] if data.num_rows else []
        if plan.mask is None:
            out = self._per_file_batches(plan.apply(data), [r.data.num_rows for r in run])
        else:
            out = []
            offset = 0
            for r in run:
                out.append(self._one_batch(plan.apply(data.slice(offset, r.data.num_rows))))
                offset += r.data.num_rows
        if data is raw and len(run) > 1:
            # Data already in the table schema passes as read, with its file's
            # schema metadata: each batch keeps its own file's, as one read alone does.
            out = [b.replace_schema_metadata(r.data.schema.metadata) for b, r in zip(out, run)]
        return out

    @classmethod
    def _per_file_batches(cls, data: pa.Table, rows: Sequence[int]) -> list[pa.RecordBatch]:
        """``data``, the rows of files of ``rows`` rows each, as a batch per file.
        Each file's rows are already a chunk of their own (as concatenated):
        those are taken as they are, without the copy of making all contiguous."""
        chunks = iter(data.to_batches())
        out: list[pa.RecordBatch] = []
        for n in rows:
            parts: list[pa.RecordBatch] = []
            held = 0
            while held < n:
                part = next(chunks, None)
                if part is None:
                    break
                parts.append(part)
                held += part.num_rows
            if held != n:
                # Chunks that straddle files: made contiguous once, each file a zero-copy slice.
                batch = cls._one_batch(data)
                offsets = itertools.accumulate(rows, initial=0)
                return [batch.slice(offset, count) for offset, count in zip(offsets, rows)]
            if len(parts) == 1:
                out.append(parts[0])
            else:  # no rows, or a file of several row groups
                out.append(cls._one_batch(pa.Table.from_batches(parts, schema=data.schema)))
        return out

    def read_file_slice_from_paths(
        self, base_file_path: str, log_file_paths: Sequence[str], options: HudiReadOptions | None = None
    ) -> pa.RecordBatch:
        opts = self._options(options)
        base_rel = self._relative(base_file_path) if base_file_path else None
        log_rels = [self._relative(p) for p in log_file_paths]
        partition = self._partition_of(base_rel or (log_rels[0] if log_rels else ""))
        return self._one_batch(self._rows(base_rel, log_rels, partition, opts, None, None))

    def _slice_stream(
        self, file_slice: HudiFileSlice, options: HudiReadOptions, visibility: Visibility | None = None
    ) -> Iterator[pa.RecordBatch]:
        return self._stream_rows(
            file_slice.base_file_relative_path() or None,
            file_slice.log_files_relative_paths(),
            file_slice.partition_path,
            options,
            visibility,
        )

    def read_file_slice_stream(
        self, file_slice: HudiFileSlice, options: HudiReadOptions | None = None, *, visibility: Visibility | None = None
    ) -> HudiRecordBatchStream:
        """The slice's rows in batches of the options' batch size; ``visibility`` as for ``read_file_slice``."""
        return HudiRecordBatchStream(self._slice_stream(file_slice, self._options(options), visibility))

    def read_file_slice_from_paths_stream(
        self, base_file_path: str, log_file_paths: Sequence[str], options: HudiReadOptions | None = None
    ) -> HudiRecordBatchStream:
        opts = self._options(options)
        base_rel = self._relative(base_file_path) if base_file_path else None
        log_rels = [self._relative(p) for p in log_file_paths]
        partition = self._partition_of(base_rel or (log_rels[0] if log_rels else ""))
        return HudiRecordBatchStream(self._stream_rows(base_rel, log_rels, partition, opts, None))
