"""``HudiFileGroupReader``: physical reads of file slices.

A slice is read in a short line of named stages, the same for every output
shape: its selection (``selection.ReadSelection``: columns, row mask), the
**decode** of its base file (``_decode``: the selection's columns, checked against
the table schema), the **merge** with its log records when it has logs
(``slice_merge.merge_slice``), **conform** to the table schema and **apply**
the selection (mask, projection). The shape is chosen at the edge: a batch per
slice (``read_file_slice``), batches of a stream (``read_file_slice_stream``),
or runs of small base files finished together (``read_file_slices``, through
``base_runs``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence

import pyarrow as pa

from hudi_ray.core.base_file import BaseFileReader, base_file_format, base_file_reader
from hudi_ray.core.config import io_tunables
from hudi_ray.core.config.keys import is_read_config
from hudi_ray.core.file_group import HudiFileSlice, Visibility, parse_base_file_name, snapshot_visibility
from hudi_ray.core.schema import conform_table, encoded_target, parse_avro_schema
from hudi_ray.core.schema.arrow import check_missing_columns
from hudi_ray.core.schema.required import RequiredColumns
from hudi_ray.core.storage import Storage
from hudi_ray.core.storage.paths import move_credentials
from hudi_ray.core.table import base_runs
from hudi_ray.core.table.base_runs import BaseRead, finish_run, one_batch
from hudi_ray.core.table.context import TableContext
from hudi_ray.core.table.read_options import DEFAULT_BATCH_SIZE, HudiReadOptions, options_key
from hudi_ray.core.table.selection import COMMIT_TIME, ReadSelection, instant_of
from hudi_ray.core.table.slice_merge import merge_slice
from hudi_ray.core.table.stream import HudiRecordBatchStream
from hudi_ray.core.timeline import HudiTimeline
from hudi_ray.core.timeline.timestamps import parse_timestamp

__all__ = ["COMMIT_TIME", "HudiFileGroupReader", "ReadSelection", "split_options"]

log = logging.getLogger(__name__)


def split_options(options: Mapping[str, str] | None) -> tuple[dict[str, str], dict[str, str]]:
    """Route generic options: ``hoodie.*`` keys are Hudi configs, the rest storage options."""
    hudi: dict[str, str] = {}
    storage: dict[str, str] = {}
    for k, v in (options or {}).items():
        key = k.value if hasattr(k, "value") else str(k)
        (hudi if key.startswith("hoodie.") else storage)[key] = str(v)
    return hudi, storage


def _commit_schemas(timeline: HudiTimeline) -> list[tuple[str, str | None]]:
    """(instant time, writer schema) of the completed data commits, oldest first."""
    return [
        (i.timestamp, (timeline.get_instant_metadata(i).get("extraMetadata") or {}).get("schema"))
        for i in timeline.data_instants
    ]


# Read selections a file group reader keeps (one per distinct read it serves).
_SELECTION_CACHE_SIZE = 64


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
        self._selections: dict[tuple, ReadSelection] = {}
        self._fills_partitions: bool | None = None
        self._ranges: dict[tuple, tuple[str | None, str | None]] = {}
        self._readers: dict[str, BaseFileReader] = {}

    def __getstate__(self) -> dict:
        # Selections and readers are cheap to rebuild (selections hold compute expressions): not shipped.
        state = self.__dict__.copy()
        state["_selections"], state["_ranges"], state["_readers"] = {}, {}, {}
        return state

    @classmethod
    def from_context(
        cls, base_uri: str, context: TableContext, options: Mapping[str, str] | None = None
    ) -> HudiFileGroupReader:
        """A reader over an already loaded table state (its storage, configs,
        timeline and schema), as tables and read selections build theirs."""
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

    def _selection(
        self,
        options: HudiReadOptions,
        where: str | Callable[[], str],
        commit_times: frozenset[str] | None,
        merging: bool,
        base_rel: str | None,
        okey: tuple | None = None,
    ) -> ReadSelection:
        """The selection of a slice; ``where`` (or what it gives, only called
        when a selection is made) names the slice in errors. ``okey`` is
        ``options_key(options)`` when the caller has it already."""
        # The selection depends on the slice only through whether its base file is
        # older than the range's end, so one selection per read serves every slice
        # (building it per slice cost more than reading a small file). Keyed by
        # the options' values: options are mutable, and equal ones select alike.
        if okey is None:
            okey = options_key(options)
        commit_range = self._ranges.get(okey)
        if commit_range is None:
            commit_range = self._ranges[okey] = self._range(options)
        hi = commit_range[1]
        base_instant = instant_of(base_rel) if hi is not None and base_rel else None
        key = (okey, commit_times, merging, base_instant is not None and base_instant <= hi)
        selection = self._selections.get(key)
        if selection is None:
            ctx = self.context
            merge_columns = ctx.merge_columns() if merging else ()
            where = where() if callable(where) else where
            selection = ReadSelection(
                ctx.read_schema, options, commit_times, commit_range, where, merge_columns, base_instant
            )
            if len(self._selections) >= _SELECTION_CACHE_SIZE:
                self._selections.clear()  # a long-lived reader of ever new options stays small
            self._selections[key] = selection
        return selection

    def base_selection(self, options: HudiReadOptions, commit_times: frozenset[str] | None) -> ReadSelection:
        """The selection of a read of base files alone, whatever their instants (the
        range's upper bound kept: it drops nothing from a file older than it)."""
        options = self._options(options)
        return self._selection(options, self.context.storage.base_url, commit_times, False, None)

    def decoded_columns(
        self, options: HudiReadOptions, base_rel: str, commit_times: frozenset[str] | None, merging: bool
    ) -> list[str]:
        """Top-level columns a read of ``base_rel`` with ``options`` decodes from the
        file (the projection plus filter and merge columns), for readers fetching ahead."""
        selection = self._selection(options, self.context.storage.uri(base_rel), commit_times, merging, base_rel)
        return selection.read_schema.names

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

    # -- the stages -------------------------------------------------------------------

    def _base_reader(self, base_rel: str) -> BaseFileReader:
        # One reader per format, asked for once per file read.
        fmt = base_file_format(base_rel)
        reader = self._readers.get(fmt)
        if reader is None:
            reader = base_file_reader(self.context.storage, base_rel, self.context.footers)
            self._readers[fmt] = reader
        return reader

    def _decode(self, selection: ReadSelection, base_rel: str, partition_path: str) -> BaseRead:
        """Decode: the selection's columns of a base file, as the file has them,
        checked against the table schema (conformed later, alone or in a run)."""
        reader = self._base_reader(base_rel)
        data = reader.read(base_rel, selection.read_schema.names)
        constants = self._constants(partition_path)
        self._check_base_columns(reader, base_rel, data, selection.read_schema, constants)
        return BaseRead(selection, data, constants, partition_path if constants else "", base_rel)

    def _finished(self, item: BaseRead) -> pa.Table:
        """Conform and apply: one decoded piece in the table schema, masked and projected."""
        uri = self.context.storage.uri(item.base_rel)
        return item.selection.apply(conform_table(item.data, item.selection.read_schema, item.constants, uri))

    def _read_base(
        self, base_rel: str, partition_path: str, schema: pa.Schema, plain: frozenset[str] | None = None
    ) -> pa.Table:
        """The base file's rows in ``schema``, for the merge stage. Given
        ``plain``, text columns other than those may stay dictionary arrays
        (see ``encoded_target``): the merge expands only the rows it keeps."""
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
        selection = self._selection(options, where, commit_times, merging, base_rel)
        if not merging:
            if not base_rel:
                return selection.output_schema.empty_table()
            return self._finished(self._decode(selection, base_rel, partition_path))
        data = merge_slice(self, base_rel, log_rels, partition_path, selection, self._visibility(options, visibility))
        return selection.apply(data)

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
        selection = self._selection(options, where, None, False, base_rel)
        reader = self._base_reader(base_rel)
        constants = self._constants(partition_path)
        key = partition_path if constants else ""
        # Piece by piece (a Parquet row group, decoded by all cores at once, or
        # a batch of a Lance file): memory stays one piece.
        for group in reader.iter_tables(base_rel, selection.read_schema.names, batch_size):
            self._check_base_columns(reader, base_rel, group, selection.read_schema, constants)
            data = self._finished(BaseRead(selection, group, constants, key, base_rel))
            yield from (b for b in data.to_batches(max_chunksize=batch_size) if b.num_rows)

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
        """The slice's rows as one batch. A read selection passes ``commit_times``
        (incremental reads: the instants whose rows to return) and
        ``visibility`` (which instants' log blocks the read sees)."""
        return one_batch(self._slice_rows(file_slice, self._options(options), commit_times, visibility))

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
        uri = self.context.storage.uri
        out: list[pa.RecordBatch] = []
        run: list[BaseRead] = []
        held = 0
        okey = options_key(opts)
        for s in file_slices:
            base_rel = s.base_file_relative_path()
            if not base_rel or (s.log_file_names and not read_optimized):
                out.extend(finish_run(run, uri, not coalesce))
                run, held = [], 0
                rows = self._slice_rows(s, opts, commit_times, visibility)
                out.extend([one_batch(rows)] if contiguous else rows.to_batches())
                continue
            selection = self._selection(opts, functools.partial(uri, base_rel), commit_times, False, base_rel, okey)
            item = self._decode(selection, base_rel, s.partition_path)
            rows = item.data.num_rows
            full = held + rows > base_runs.RUN_ROWS or (not coalesce and len(run) >= base_runs.RUN_FILES)
            if run and (full or not run[-1].joins(item)):
                out.extend(finish_run(run, uri, not coalesce))
                run, held = [], 0
            run.append(item)
            held += rows
        out.extend(finish_run(run, uri, not coalesce))
        return out

    def read_file_slice_from_paths(
        self, base_file_path: str, log_file_paths: Sequence[str], options: HudiReadOptions | None = None
    ) -> pa.RecordBatch:
        opts = self._options(options)
        base_rel = self._relative(base_file_path) if base_file_path else None
        log_rels = [self._relative(p) for p in log_file_paths]
        partition = self._partition_of(base_rel or (log_rels[0] if log_rels else ""))
        return one_batch(self._rows(base_rel, log_rels, partition, opts, None, None))

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
