"""Read Parquet base files through pyarrow, mapping failures to errors that name the file."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from hudi_ray.core.exceptions import HudiCoreError, HudiCorruptFileError, HudiFileNotFoundError, HudiStorageError
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.storage import StorageLike
from hudi_ray.core.storage.prefetch import PREFETCH_TUNABLES, FetchedParquet, fetch_parquet, parquet_footer_length
from hudi_ray.core.util import compiled
from hudi_ray.core.util.arrow_pool import reader_pool
from hudi_ray.core.util.pools import cpu_map

if TYPE_CHECKING:
    import asyncio

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
else:
    asyncio = lazy_module("asyncio")
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")
    pq = lazy_module("pyarrow.parquet")


@contextmanager
def _errors(storage: StorageLike, rel: str) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        # The URI is made only when a read fails: making it costs more than a small file's footer.
        mapped = _mapped(storage.uri(rel), exc)
        if mapped is None:
            raise
        raise mapped from exc


def _mapped(uri: str, exc: Exception) -> Exception | None:
    """The error naming ``uri`` that a failure reading it is; None for any other failure."""
    if isinstance(exc, FileNotFoundError):
        return HudiFileNotFoundError(f"Base file not found: {uri}")
    if isinstance(exc, HudiCoreError):
        return None  # the storage's own error, naming the file already
    if isinstance(exc, (pa.ArrowInvalid, pa.ArrowIOError, OSError)):
        msg = str(exc)
        if "No such file" in msg or "does not exist" in msg:
            return HudiFileNotFoundError(f"Base file not found: {uri}")
        if isinstance(exc, pa.ArrowInvalid) or any(w in msg.lower() for w in ("parquet", "magic", "thrift")):
            return HudiCorruptFileError(f"Cannot decode Parquet base file {uri}: {msg}")
        return HudiStorageError(f"Cannot read base file {uri}: {msg}")
    if isinstance(exc, UnicodeDecodeError):
        # pyarrow decodes column names and key-value metadata as UTF-8 when opening a file.
        return HudiCorruptFileError(
            f"Cannot decode Parquet base file {uri}: text at byte {exc.start} of {exc.object[:64]!r} is not UTF-8"
        )
    if isinstance(exc, (pa.ArrowException, MemoryError)):
        # Other Arrow failures (unsupported encodings, oversized allocations) come from the file's content.
        return HudiCorruptFileError(f"Cannot decode Parquet base file {uri}: {type(exc).__name__}: {exc}")
    return None


# Decoding threads start per read call; below this many values (rows times
# columns) a file decodes faster on the calling thread than the threads take
# to start, and callers reading many small files already run them in parallel.
_THREADED_VALUES = 1 << 20


def _threaded(num_rows: int, num_columns: int) -> bool:
    return num_rows * max(1, num_columns) >= _THREADED_VALUES


# A text column chunk at most this many bytes per value, uncompressed and
# dictionary page included, is a small dictionary with short indices (a
# commit time, file name or partition path repeated on every row). Such
# chunks decode faster as a dictionary expanded by one take than value by
# value; chunks of many distinct values (plain pages once the
# writer's dictionary overflowed) decode faster value by value.
_DICTIONARY_BYTES_PER_VALUE = 1


def _dictionary_columns(reader: pq.ParquetReader) -> list[str]:
    """Top-level text columns worth reading as dictionaries, in every row group.
    Only files big enough to decode on several threads are considered: for a
    small file, opening it a second time costs more than the decode saves."""
    md = reader.metadata
    if md.num_row_groups == 0 or not _threaded(md.num_rows, md.num_columns):
        return []
    paths = [md.schema.column(i).path for i in range(md.num_columns)]
    chosen = []
    for field in reader.schema_arrow:
        text = pa.types.is_string(field.type) or pa.types.is_binary(field.type)
        if not text or paths.count(field.name) != 1:
            continue
        j = paths.index(field.name)
        chunks = [md.row_group(g).column(j) for g in range(md.num_row_groups)]
        if all(
            c.has_dictionary_page and c.total_uncompressed_size <= _DICTIONARY_BYTES_PER_VALUE * max(1, c.num_values)
            for c in chunks
        ):
            chosen.append(field.name)
    return chosen


def _plain_field(field: pa.Field) -> pa.Field:
    return field.with_type(field.type.value_type)


def _plain_schema(schema: pa.Schema, names: frozenset[str]) -> pa.Schema:
    fields = [_plain_field(f) if f.name in names else f for f in schema]
    return pa.schema(fields, metadata=schema.metadata)


def _decoded(array: pa.DictionaryArray) -> pa.Array:
    # ``dictionary_decode`` takes no pool; a take of the dictionary is the same array.
    return pc.take(array.dictionary, array.indices, memory_pool=reader_pool())


def _plain(data: pa.Table, names: frozenset[str]) -> pa.Table:
    """``data`` with the columns ``names`` (read as dictionaries) expanded to their values."""
    for i, field in enumerate(data.schema):
        if field.name in names:
            chunks = [_decoded(c) for c in data.column(i).chunks]
            data = data.set_column(i, _plain_field(field), pa.chunked_array(chunks, field.type.value_type))
    return data


def _plain_batch(batch: pa.RecordBatch, names: frozenset[str]) -> pa.RecordBatch:
    if not names:
        return batch
    columns = [_decoded(c) if f.name in names else c for f, c in zip(batch.schema, batch.columns)]
    return pa.RecordBatch.from_arrays(columns, schema=_plain_schema(batch.schema, names))


def _column_indices(reader: pq.ParquetReader, columns: Sequence[str] | None) -> list[int] | None:
    """The leaves of the top-level ``columns`` the file has, in the order
    asked; None for every column in the file's order (no projection)."""
    if columns is None:
        return None
    names = reader.schema_arrow.names
    if len(names) == len(columns) and names == list(columns):
        return None
    leaves: dict[str, list[int]] = {}
    for i, path in enumerate(reader.column_paths):
        leaves.setdefault(path[0], []).append(i)
    return [i for c in dict.fromkeys(columns) for i in leaves.get(c, ())]


# Footers fetched at once by ``metadata_many``: a small file is fetched whole, so this
# bounds the bytes in flight.
_FOOTER_BATCH = 64
_FOOTER_SLACK = 4096  # bytes read beyond the last footer's length, for the next file's
_FOOTER_GUESS_CAP = 16 << 20  # a damaged length must not make every later read a whole file


def _rest_of_footer(tail: bytes, start: int) -> tuple[int, int] | None:
    """The byte range before ``tail`` (a file's bytes from ``start`` to its end) that
    its footer also spans, or None when ``tail`` holds it all (or is not Parquet).
    Hudi's default bloom filter alone is 431 KB of a footer."""
    length, ok = parquet_footer_length(tail)
    if not ok or start == 0 or length + 8 <= len(tail):
        return None
    return max(0, start - (length + 8 - len(tail))), start


def footer_key_values(tail: bytes) -> dict[bytes, memoryview] | None:
    """The key-value metadata of the Parquet footer ``tail`` (a file's last bytes) ends
    with, found by a compiled walk of the footer (``footer_kernels``), not pyarrow's parse
    of all of it; None when ``tail`` does not hold a whole plain footer that walks."""
    length, ok = parquet_footer_length(tail)
    if not ok or length + 8 > len(tail):
        return None
    footer = np.frombuffer(tail, np.uint8)[len(tail) - 8 - length : len(tail) - 8]
    walked, spans = compiled.load(_FOOTER_KERNELS).key_value_spans(footer, 0)
    if not walked:
        return None
    base = len(tail) - 8 - length
    view = memoryview(tail)  # values are views: a bloom filter is tens of KB and is read once
    return {
        tail[base + k : base + k + kn]: view[base + v : base + v + vn] if v >= 0 else view[:0]
        for k, kn, v, vn in spans.tolist()
    }


_FOOTER_KERNELS = "hudi_ray.core.base_file.footer_kernels"


def _parts(items: list[int]) -> list[list[int]]:
    """``items`` in a few runs per CPU, for ``cpu_map``."""
    count = max(1, min(len(items), 4 * (os.cpu_count() or 1)))
    return [items[k::count] for k in range(count)] if items else []


class FooterCache:
    """Parquet footers read during planning, reused by the read that follows, and facts
    derived from a base file's footer (such as its decoded bloom filter), by kind.

    Bounded by count and by bytes: a footer Hudi wrote holds its bloom filter, 431 KB
    of text at Hudi's default sizing, so thousands of them would hold gigabytes."""

    def __init__(self, capacity: int = 4096, max_bytes: int = 256 << 20) -> None:
        self.capacity = capacity
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, str], tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, rel: str) -> pq.FileMetaData | None:
        return self.derived(rel, "")

    def put(self, rel: str, metadata: pq.FileMetaData) -> None:
        self.put_derived(rel, "", metadata, int(metadata.serialized_size))

    def derived(self, rel: str, kind: str) -> Any:
        """What was put for ``rel`` under ``kind``, or None."""
        with self._lock:
            item = self._items.get((rel, kind))
            if item is None:
                return None
            self._items.move_to_end((rel, kind))
            return item[0]

    def put_derived(self, rel: str, kind: str, value: Any, size: int) -> None:
        with self._lock:
            old = self._items.pop((rel, kind), None)
            if old is not None:
                self._bytes -= old[1]
            self._items[(rel, kind)] = (value, size)
            self._bytes += size
            while self._items and (len(self._items) > self.capacity or self._bytes > self.max_bytes):
                self._bytes -= self._items.popitem(last=False)[1][1]

    def __getstate__(self) -> dict:
        return {"capacity": self.capacity, "max_bytes": self.max_bytes}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, state["capacity"], state.get("max_bytes", 256 << 20))


class ParquetReader:
    """Reads one table's Parquet files by path relative to the base URI."""

    def __init__(self, storage: StorageLike, footers: FooterCache | None = None) -> None:
        self.storage = storage
        self.footers = footers

    def _cached(self, rel: str) -> pq.FileMetaData | None:
        return self.footers.get(rel) if self.footers is not None else None

    def _reader(
        self, src: pa.NativeFile, metadata: pq.FileMetaData | None, dictionaries: list[str] | None = None
    ) -> pq.ParquetReader:
        """pyarrow's bare reader (``ParquetFile`` takes no memory pool) on ``src``."""
        reader = pq.ParquetReader(memory_pool=reader_pool())
        reader.open(
            src,
            # Pre-buffering coalesces an object store's range requests; on a
            # local disk it only adds its setup, a large share of a small file's read.
            pre_buffer=not self.storage.is_local,
            metadata=metadata,
            read_dictionary=dictionaries,
            # Extension types as ``ParquetFile`` reads them (its default, not the bare reader's).
            arrow_extensions_enabled=True,
        )
        return reader

    @contextmanager
    def _opened(
        self, rel: str, metadata: pq.FileMetaData | None = None, *, dictionaries: bool = False
    ) -> Iterator[tuple[pq.ParquetReader, frozenset[str]]]:
        """The file opened, its footer cached; with ``dictionaries``, opened for
        a read of its rows with the text columns ``_dictionary_columns`` picks
        read as dictionaries (named second), which ``_plain`` expands."""
        metadata = metadata if metadata is not None else self._cached(rel)
        with self.storage.arrow_fs.open_input_file(self.storage.arrow_path(rel)) as src:
            reader = self._reader(src, metadata)
            if metadata is None and self.footers is not None:
                self.footers.put(rel, reader.metadata)
            small = _dictionary_columns(reader) if dictionaries else []
            if small:
                reader = self._reader(src, reader.metadata, small)
            yield reader, frozenset(small)

    def schema(self, rel: str) -> pa.Schema:
        with _errors(self.storage, rel), self._opened(rel) as (reader, _):
            return reader.schema_arrow

    @property
    def fanout(self) -> int | None:
        """How many footers to read at once (None: the shared pool's width).
        Local footers come from the page cache and parse holding the GIL, so
        threads only contend for it; remote ones wait on the network."""
        return 1 if self.storage.is_local else None

    def metadata(self, rel: str) -> pq.FileMetaData:
        cached = self._cached(rel)
        if cached is not None:
            return cached  # opening the file again would cost as much as parsing its footer
        with _errors(self.storage, rel), self.storage.arrow_fs.open_input_file(self.storage.arrow_path(rel)) as src:
            # The footer alone: no pool, as no rows are decoded.
            reader = pq.ParquetReader()
            reader.open(src)
            md = reader.metadata
        if self.footers is not None:
            self.footers.put(rel, md)
        return md

    def metadata_many(self, rels: Sequence[str], sizes: Sequence[int] | None = None) -> list[pq.FileMetaData]:
        """The footers of ``rels`` (``sizes``: their sizes when known, sparing a request
        each). On an object store the uncached ones are fetched together on the storage's
        I/O loop, a file's last bytes in one request; a file that fails there is read again
        on its own, which reports what is wrong with it."""
        out: list[pq.FileMetaData | None] = [self._cached(rel) for rel in rels]
        missing = [i for i, md in enumerate(out) if md is None]
        if len(missing) > 1 and not self.storage.is_local:

            async def fetch(batch: list[int]) -> list[pq.FileMetaData | None]:
                got = await asyncio.gather(
                    *(fetch_parquet(self.storage, rels[i], sizes[i] if sizes else None, set(), 0) for i in batch),
                    return_exceptions=True,
                )
                # The footers alone are kept: a small file comes whole, and its bytes go now.
                return [g.metadata if isinstance(g, FetchedParquet) else None for g in got]

            for start in range(0, len(missing), _FOOTER_BATCH):
                batch = missing[start : start + _FOOTER_BATCH]
                for i, md in zip(batch, self.storage.submit(fetch(batch)).result()):
                    out[i] = md
                    if md is not None and self.footers is not None:
                        self.footers.put(rels[i], md)
        return [md if md is not None else self.metadata(rel) for md, rel in zip(out, rels)]

    def key_values_many(
        self, rels: Sequence[str], sizes: Sequence[int | None]
    ) -> list[dict[bytes, bytes | memoryview]]:
        """The footers' key-value metadata of ``rels`` (of ``sizes`` bytes), without parsing
        the rest of the footers: each file's last bytes, its key-value list found by
        ``footer_key_values``. A file read or parsed that way only when its footer is not
        cached; one that fails goes through ``metadata``, which reports what is wrong with it."""
        out: list[dict[bytes, Any] | None] = []
        for rel in rels:
            cached = self._cached(rel)
            out.append(None if cached is None else (cached.metadata or {}))
        missing = [i for i, kv in enumerate(out) if kv is None and sizes[i]]
        tail_of = [max(0, (size or 0) - PREFETCH_TUNABLES.footer_guess_bytes) for size in sizes]
        if self.storage.is_local:

            def walked(part: list[int]) -> list[dict[bytes, memoryview] | None]:
                got: list[dict[bytes, memoryview] | None] = []
                guess = PREFETCH_TUNABLES.footer_guess_bytes
                for i in part:
                    try:
                        start = max(0, (sizes[i] or 0) - guess)
                        tail = self.storage.read_range(rels[i], start, sizes[i] or 0)
                        length, ok = parquet_footer_length(tail)
                        if ok:
                            # The files of one table have footers of about one size: read
                            # the next as much as this one needed, not the first guess.
                            guess = min(length + 8 + _FOOTER_SLACK, _FOOTER_GUESS_CAP)
                        rest = _rest_of_footer(tail, start)
                        got.append(
                            footer_key_values(tail if rest is None else self.storage.read_range(rels[i], *rest) + tail)
                        )
                    except HudiCoreError:  # reported by ``metadata`` below
                        got.append(None)
                return got

            # Reads from the page cache let go of the GIL, as the walk does: split over the CPUs.
            for part, found in zip(parts := _parts(missing), cpu_map(walked, parts)):
                for i, kv in zip(part, found):
                    out[i] = kv
        else:

            async def tail(i: int) -> bytes:
                got = await self.storage.read_range_async(rels[i], tail_of[i], sizes[i] or 0)
                rest = _rest_of_footer(got, tail_of[i])
                return got if rest is None else await self.storage.read_range_async(rels[i], *rest) + got

            async def batch(part: list[int]) -> list[bytes | BaseException]:
                return list(await asyncio.gather(*(tail(i) for i in part), return_exceptions=True))

            for start in range(0, len(missing), _FOOTER_BATCH):
                part = missing[start : start + _FOOTER_BATCH]
                for i, got in zip(part, self.storage.submit(batch(part)).result()):
                    out[i] = footer_key_values(got) if isinstance(got, bytes) else None
        return [kv if kv is not None else (self.metadata(rel).metadata or {}) for kv, rel in zip(out, rels)]

    def num_rows(self, rel: str) -> int:
        return self.metadata(rel).num_rows

    def _read_small(self, rel: str, columns: Sequence[str] | None) -> tuple[pa.Table | None, pq.FileMetaData]:
        """A small file's ``columns`` (as ``read`` gives them), read inline, or
        None and the file's footer when ``_opened`` must read it: a file that
        decodes on several threads or with dictionaries, or columns that are
        not plain top-level leaves. For a file of a few rows, the generator
        context and the leaf mapping cost a third of its read."""
        cached = self._cached(rel)
        with self.storage.arrow_fs.open_input_file(self.storage.arrow_path(rel)) as src:
            reader = self._reader(src, cached)
            md = reader.metadata
            if _threaded(md.num_rows, md.num_columns):
                return None, md
            schema = reader.schema_arrow
            names = schema.names  # decodes the column names: a name that is not UTF-8 fails here
            if columns is None:
                return reader.read_all(use_threads=False), md
            present = set(names)
            wanted = [c for c in columns if c in present]
            if wanted == names:
                return reader.read_all(use_threads=False), md
            if len(present) != len(names) or any(pa.types.is_nested(schema.field(c).type) for c in wanted):
                return None, md  # a name twice in the file, or a nested column (several leaves)
            try:
                indices = [reader.column_name_idx(c) for c in wanted]
            except KeyError:
                return None, md
            data = reader.read_all(column_indices=indices, use_threads=False)
        if data.column_names != wanted:
            return None, md  # names a leaf path would not resolve alike (dots): left to the leaf mapping
        return data, md

    def read(self, rel: str, columns: Sequence[str] | None = None, *, encoded: bool = False) -> pa.Table:
        """With ``encoded``, text columns of small dictionaries stay dictionary
        arrays: a caller that drops rows before casting to plain text
        (``conform_table``) expands only the rows it keeps."""
        # Not ``_errors``: a generator context per small file costs more than its checks.
        try:
            data, md = self._read_small(rel, columns)
            if data is not None:
                return data
            with self._opened(rel, md, dictionaries=True) as (reader, small):
                indices = _column_indices(reader, columns)
                threaded = _threaded(md.num_rows, md.num_columns if indices is None else len(indices))
                data = reader.read_all(column_indices=indices, use_threads=threaded)
            return data if encoded else _plain(data, small)
        except Exception as exc:
            mapped = _mapped(self.storage.uri(rel), exc)
            if mapped is None:
                raise
            raise mapped from exc

    def iter_row_groups(self, rel: str, columns: Sequence[str] | None) -> Iterator[pa.Table]:
        """Each row group as a table (an empty table for a file without rows)."""
        with _errors(self.storage, rel), self._opened(rel, dictionaries=True) as (reader, small):
            indices = _column_indices(reader, columns)
            md = reader.metadata
            if md.num_row_groups == 0:
                yield _plain(reader.read_all(column_indices=indices, use_threads=False), small)
            width = md.num_columns if indices is None else len(indices)
            for i in range(md.num_row_groups):
                threaded = _threaded(md.row_group(i).num_rows, width)
                yield _plain(reader.read_row_group(i, column_indices=indices, use_threads=threaded), small)

    def iter_tables(self, rel: str, columns: Sequence[str] | None, batch_size: int) -> Iterator[pa.Table]:
        """Row group by row group, whatever ``batch_size``: a row group is the unit
        Parquet decodes with all cores at once, and bounds the memory a piece takes."""
        return self.iter_row_groups(rel, columns)

    def iter_batches(self, rel: str, columns: Sequence[str] | None, batch_size: int) -> Iterator[pa.RecordBatch]:
        with _errors(self.storage, rel), self._opened(rel, dictionaries=True) as (reader, small):
            indices = _column_indices(reader, columns)
            groups = list(range(reader.metadata.num_row_groups))
            produced = False
            for batch in reader.iter_batches(batch_size, groups, column_indices=indices, use_threads=True):
                produced = True
                yield _plain_batch(batch, small)
            if not produced:
                empty = _plain(reader.read_row_groups([], column_indices=indices, use_threads=False), small)
                yield pa.RecordBatch.from_pylist([], schema=empty.schema)
