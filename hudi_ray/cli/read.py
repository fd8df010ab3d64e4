"""``hudi-ray read``: rows of a table as an aligned table, CSV, JSON lines or a
Parquet file, read here (the core's plan and file group reader) or through
``read_hudi`` on Ray (``--ray``)."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from hudi_ray.cli.output import aligned, cell, human_bytes, human_count, plain
from hudi_ray.cli.progress import Progress
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.table import HudiReadOptions, HudiTable

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hudi_ray.core.table import SliceReader
else:
    pa = lazy_module("pyarrow")
    pq = lazy_module("pyarrow.parquet")

FORMATS = ("table", "csv", "json", "parquet")
META_PREFIX = "_hoodie_"
# Rows an aligned table shows when no --limit is given: it is for looking, not exporting.
TABLE_DEFAULT_LIMIT = 20
# File slices read ahead of the one being written out.
READ_AHEAD = 4


@dataclass(frozen=True)
class ReadCommand:
    options: HudiReadOptions  # filters, columns and every per-read config
    table_options: dict[str, str]  # the table's hoodie.* configs (the table read here was built with them)
    limit: int | None
    fmt: str
    out: str | None
    progress: bool | None  # None: decide from the terminal


def output_format(fmt: str | None, out: str | None) -> str:
    """The format asked for, or the one the output file's extension names."""
    if fmt is not None:
        if fmt == "parquet" and out is None:
            raise HudiConfigError("--format parquet writes a file: give it with --out PATH")
        return fmt
    if out is None:
        return "table"
    ext = os.path.splitext(out)[1].lower()
    by_ext = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json", ".txt": "table"}
    if ext not in by_ext:
        raise HudiConfigError(f"Cannot tell the format of --out {out!r} from its extension; give --format")
    return by_ext[ext]


# -- sinks: where the rows go ----------------------------------------------------


class Sink:
    """Where rows go. ``set_schema`` comes first when the read's schema is
    known before any row (so an empty read still has its header)."""

    rows = 0

    def set_schema(self, schema: pa.Schema | None) -> None:
        pass

    def write(self, batch: pa.RecordBatch) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class TableSink(Sink):
    """Keeps the rows and prints them aligned at the end (so column widths fit every row)."""

    def __init__(self, stream: TextIO, shown_limit: int | None, default_limit: bool) -> None:
        self._stream = stream
        self._batches: list[pa.RecordBatch] = []
        self._schema: pa.Schema | None = None
        self._limit = shown_limit
        self._default_limit = default_limit
        self.more = False  # a row beyond the limit exists (read one extra to know)
        # Hudi's five meta columns fill a screen before the first data column;
        # the aligned table leaves them out unless --columns names them.
        self.hide_meta = False

    def write(self, batch: pa.RecordBatch) -> None:
        self._schema = batch.schema
        if self._limit is not None and self.rows + batch.num_rows > self._limit:
            self.more = True
            batch = batch.slice(0, self._limit - self.rows)
        if batch.num_rows:
            self._batches.append(batch)
            self.rows += batch.num_rows

    def set_schema(self, schema: pa.Schema | None) -> None:
        self._schema = self._schema or schema

    def close(self) -> None:
        names = self._schema.names if self._schema is not None else []
        if self.hide_meta:
            names = [n for n in names if not n.startswith(META_PREFIX)] or names
        records = [r for b in self._batches for r in b.to_pylist()]
        body = [[r[n] for n in names] for r in records]
        if names:
            schema = self._schema
            assert schema is not None
            numeric = [
                i
                for i, n in enumerate(names)
                if pa.types.is_integer(schema.field(n).type) or pa.types.is_floating(schema.field(n).type)
            ]
            self._stream.write(
                aligned(names, [[cell(v) if v is not None else "null" for v in r] for r in body], right=numeric) + "\n"
            )
        note = f"({human_count(self.rows)} row{'s' * (self.rows != 1)}"
        if self.more:
            note += "; more not shown: --limit N" + (" or --format csv/json" if self._default_limit else "")
        self._stream.write(note + ")\n")


class CsvSink(Sink):
    def __init__(self, stream: TextIO) -> None:
        self._writer = csv.writer(stream, lineterminator="\n")
        self._stream = stream
        self._header = False

    def _head(self, names: list[str]) -> None:
        if not self._header:
            self._writer.writerow(names)
            self._header = True

    def set_schema(self, schema: pa.Schema | None) -> None:
        if schema is not None:
            self._head(schema.names)

    def write(self, batch: pa.RecordBatch) -> None:
        self._head(batch.schema.names)
        names = batch.schema.names
        for r in batch.to_pylist():
            self._writer.writerow([cell(r[n]) for n in names])
        self.rows += batch.num_rows

    def close(self) -> None:
        self._stream.flush()


class JsonSink(Sink):
    """JSON lines: one object per row."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, batch: pa.RecordBatch) -> None:
        for r in batch.to_pylist():
            self._stream.write(json.dumps(plain(r), ensure_ascii=False) + "\n")
        self.rows += batch.num_rows

    def close(self) -> None:
        self._stream.flush()


class ParquetSink(Sink):
    def __init__(self, path: str) -> None:
        self._path = path
        self._writer: pq.ParquetWriter | None = None
        self._schema: pa.Schema | None = None

    def set_schema(self, schema: pa.Schema | None) -> None:
        self._schema = self._schema or schema

    def write(self, batch: pa.RecordBatch) -> None:
        if self._writer is None:
            self._schema = self._schema or batch.schema
            self._writer = pq.ParquetWriter(self._path, self._schema)
        if batch.schema != self._schema:
            batch = pa.Table.from_batches([batch]).cast(self._schema).combine_chunks().to_batches()[0]
        self._writer.write_batch(batch)
        self.rows += batch.num_rows

    def close(self) -> None:
        if self._writer is None:
            # No rows: still a valid file, with the read's columns when known.
            pq.write_table(pa.table({}) if self._schema is None else self._schema.empty_table(), self._path)
        else:
            self._writer.close()


def make_sink(fmt: str, out: str | None, stream: TextIO, limit: int | None, default_limit: bool) -> Sink:
    """A sink writing ``fmt`` to ``stream`` (Parquet: to the file ``out``)."""
    if fmt == "parquet":
        assert out is not None
        return ParquetSink(out)
    if fmt == "table":
        return TableSink(stream, limit, default_limit)
    if fmt == "csv":
        return CsvSink(stream)
    return JsonSink(stream)


# -- readers: where the rows come from --------------------------------------------


def _local_batches(
    table: HudiTable, options: HudiReadOptions, progress_of: Callable[[int, int, pa.Schema | None], Progress]
) -> Iterator[pa.RecordBatch]:
    """The planned slices read here, a few ahead of the one being written out."""
    plan = table.plan(options)
    progress: Progress = progress_of(len(plan.slices), sum(s.total_size_bytes() for s in plan.slices), plan.schema)

    def one(reader: SliceReader, unit: Sequence[HudiFileSlice]) -> tuple[HudiFileSlice, pa.RecordBatch]:
        return unit[0], plan.read_slice(reader, unit[0])

    # The core's read pipeline: on an object store the next slices' files are fetched meanwhile.
    units = [[s] for s in plan.slices]
    results = plan.read_units(units, one, threads=READ_AHEAD, window=READ_AHEAD + 1)
    try:
        for s, batch in results:
            progress.advance(files=1, rows=batch.num_rows, nbytes=s.total_size_bytes())
            if batch.num_rows:
                yield batch
    finally:
        results.close()  # a --limit reached early cancels the slices not started


def _ray_batches(
    uri: str,
    table: HudiTable,
    request: ReadCommand,
    limit: int | None,
    show_progress: bool,
    stderr: TextIO,
) -> Iterator[pa.RecordBatch]:
    """The same read through ``read_hudi`` on Ray: a local Ray instance unless
    RAY_ADDRESS names a cluster, Ray Data's own progress bars on a terminal."""
    from hudi_ray.cli.quiet import ray_progress_bars, start_ray  # Ray only when asked for

    ray = start_ray()
    import hudi_ray

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = show_progress and ray_progress_bars(stderr)
    options = request.options
    ds = hudi_ray.read_hudi(
        uri,
        # read_hudi applies its query type over the options' own.
        query_type=options.query_type().value,
        filters=options.filters or None,
        columns=options.projection,
        # Every config as given: the table's, and the read's (timestamps among them).
        hudi_options={**request.table_options, **options.hudi_options} or None,
        storage_options=table.storage_options() or None,
    )
    if limit is not None:
        ds = ds.limit(limit)
    for t in ds.iter_batches(batch_format="pyarrow", batch_size=None):
        assert isinstance(t, pa.Table)  # the batch format asked for
        yield from t.to_batches()


def run(
    uri: str,
    table: HudiTable,
    request: ReadCommand,
    *,
    use_ray: bool,
    stdout: TextIO,
    stderr: TextIO,
    is_terminal: Callable[[TextIO], bool],
) -> dict[str, Any]:
    """Read and write out; returns what was done (rows, files, where)."""
    fmt = request.fmt
    default_limit = fmt == "table" and request.limit is None
    limit = TABLE_DEFAULT_LIMIT if default_limit else request.limit
    # The table sink reads one row more than it shows, to say whether there are more.
    read_limit = None if limit is None else limit + (1 if fmt == "table" else 0)
    # A bar on stderr only where it cannot garble the answer: the rows go to a
    # file, or the aligned table is printed after the bar is erased.
    to_file = request.out is not None or not is_terminal(stdout)
    show = request.progress if request.progress is not None else is_terminal(stderr) and (to_file or fmt == "table")
    text_file = None
    if request.out is not None and fmt != "parquet":
        text_file = open(request.out, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed below, also on errors
    sink = make_sink(fmt, request.out, text_file or stdout, limit, default_limit)
    if isinstance(sink, TableSink):
        sink.hide_meta = request.options.projection is None
    info: dict[str, Any] = {"files": None, "bytes": None}
    progress = Progress(0, 0, stderr, enabled=False)

    def progress_of(files: int, nbytes: int, schema: pa.Schema | None) -> Progress:
        nonlocal progress
        info["files"], info["bytes"] = files, nbytes
        sink.set_schema(schema)
        # Asked for (--progress): drawn from the start; otherwise only once the read takes a while.
        progress = Progress(files, nbytes, stderr, enabled=bool(show), delay=0.0 if request.progress else 0.5)
        return progress

    batches = (
        _ray_batches(uri, table, request, read_limit, bool(show), stderr)
        if use_ray
        else _local_batches(table, request.options, progress_of)
    )
    written = 0
    try:
        for batch in batches:
            if read_limit is not None and written + batch.num_rows > read_limit:
                batch = batch.slice(0, read_limit - written)
            sink.write(batch)
            written += batch.num_rows
            if read_limit is not None and written >= read_limit:
                break
        close = getattr(batches, "close", None)
        if close is not None:
            close()  # a limit reached early: stop the reads still under way
        progress.close()
        sink.close()
    except BaseException:
        progress.close()
        if text_file is not None:
            text_file.close()
        if request.out is not None and os.path.exists(request.out):
            os.remove(request.out)  # a failed read leaves no half-written file behind
        raise
    if text_file is not None:
        text_file.close()
    return {"rows": sink.rows, "format": fmt, "out": request.out, "files": info["files"], "bytes": info["bytes"]}


def summary(done: dict[str, Any]) -> str:
    """The line printed on stderr after writing rows to a file."""
    what = f"{human_count(done['rows'])} rows"
    if done["files"] is not None:
        what += f" from {done['files']} file slices ({human_bytes(done['bytes'])})"
    return f"wrote {what} to {done['out']} ({done['format']})"
