"""Bytes fetched ahead, served from memory.

A reader that knows which files it reads next fetches them concurrently
(``fetch_parquet`` for a Parquet file's footer and the column chunks a read
decodes, ``read_bytes_async`` for whole files) while it decodes the current
ones, then installs them in a :class:`PrefetchingStorage`. That storage wraps
the table's own: it serves installed whole files and Parquet byte ranges from
memory and hands everything else, and any read outside the fetched ranges, to
the inner storage.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hudi_ray.core.storage.storage import FileInfo, Storage, StorageLike


@dataclass(frozen=True)
class PrefetchTunables:
    # Byte ranges closer than this are fetched as one request (object stores
    # charge per request; a small over-read is cheaper than another round trip).
    range_hole_bytes: int = 1 << 20
    # The first read of a Parquet file's tail; most footers fit, larger ones cost a second read.
    footer_guess_bytes: int = 64 << 10
    # A Parquet file needing more than this is read directly rather than held in memory.
    max_prefetch_bytes: int = 512 << 20


PREFETCH_TUNABLES = PrefetchTunables()


@dataclass
class FetchedParquet:
    """Byte ranges of one Parquet file fetched ahead: its footer and the column
    chunks a read decodes, as sorted ``starts`` and the ``blobs`` beginning there."""

    rel: str
    size: int
    metadata: pq.FileMetaData
    starts: list[int] = field(default_factory=list)
    blobs: list[bytes] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        return sum(len(b) for b in self.blobs)


@dataclass
class FetchedFiles:
    """What was fetched for one unit of reading: at most one Parquet file in
    ranges, and whole files (e.g. log files) by relative path."""

    parquet: FetchedParquet | None = None
    whole_files: dict[str, bytes] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        fetched = self.parquet.nbytes if self.parquet is not None else 0
        return fetched + sum(len(b) for b in self.whole_files.values())


def parquet_chunk_ranges(metadata: pq.FileMetaData, columns: set[str] | None) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of the column chunks of top-level ``columns`` (None: all)."""
    ranges: list[tuple[int, int]] = []
    for i in range(metadata.num_row_groups):
        rg = metadata.row_group(i)
        for j in range(rg.num_columns):
            chunk = rg.column(j)
            if columns is not None and chunk.path_in_schema.split(".", 1)[0] not in columns:
                continue
            start = chunk.data_page_offset
            if chunk.has_dictionary_page and chunk.dictionary_page_offset:
                start = min(start, chunk.dictionary_page_offset)
            ranges.append((start, start + chunk.total_compressed_size))
    return ranges


def coalesce_ranges(
    ranges: list[tuple[int, int]], hole: int = PREFETCH_TUNABLES.range_hole_bytes
) -> list[tuple[int, int]]:
    """``ranges`` sorted, overlapping ones and ones at most ``hole`` bytes apart merged."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if merged and a - merged[-1][1] <= hole:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


async def fetch_parquet(
    storage: StorageLike,
    rel: str,
    size: int | None,
    columns: set[str] | None,
    max_bytes: int = PREFETCH_TUNABLES.max_prefetch_bytes,
) -> FetchedParquet | None:
    """The footer of Parquet file ``rel`` and the column chunks of ``columns``
    (None: all), fetched concurrently; None when the file does not end like
    Parquet (the read reports it) or would need more than ``max_bytes``."""
    if not size:
        size = await asyncio.to_thread(storage.size, rel)
    tail_start = max(0, size - PREFETCH_TUNABLES.footer_guess_bytes)
    tail = await storage.read_range_async(rel, tail_start, size)
    if len(tail) < 8 or tail[-4:] != b"PAR1":
        return None
    footer_len = int.from_bytes(tail[-8:-4], "little")
    if footer_len + 8 > len(tail):
        tail_start = max(0, size - footer_len - 8)
        tail = await storage.read_range_async(rel, tail_start, size)
    metadata = pq.ParquetFile(pa.BufferReader(tail[-(footer_len + 8) :])).metadata
    ranges = coalesce_ranges(parquet_chunk_ranges(metadata, columns))
    if sum(b - a for a, b in ranges) > max_bytes:
        return None
    blobs = await asyncio.gather(*(storage.read_range_async(rel, a, b) for a, b in ranges))
    fetched = FetchedParquet(rel=rel, size=size, metadata=metadata)
    pieces = sorted([*zip((a for a, _ in ranges), blobs), (tail_start, tail)], key=lambda p: p[0])
    for start, blob in pieces:
        fetched.starts.append(start)
        fetched.blobs.append(blob)
    return fetched


class PrefetchingStorage:
    """A :class:`StorageLike` around ``inner`` serving installed bytes from memory.

    Whole files answer ``read_bytes``; Parquet ranges answer reads through
    ``arrow_fs`` (what the Parquet reader opens files with). Everything else
    goes to ``inner``, whose client this storage shares rather than opening another.
    ``fallback_reads`` counts reads of installed Parquet files outside their
    fetched ranges; ``prefetched_bytes`` the bytes installed so far.
    """

    def __init__(self, inner: StorageLike) -> None:
        self._inner = inner
        self._whole: dict[str, bytes] = {}
        self._parquet: dict[str, FetchedParquet] = {}  # by arrow path
        self._overlay: pafs.FileSystem | None = None
        self.fallback_reads = 0
        self.prefetched_bytes = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inner!r})"

    @property
    def inner(self) -> StorageLike:
        return self._inner

    # -- what was fetched ------------------------------------------------------

    def install(self, fetched: FetchedFiles | None) -> None:
        """Serve ``fetched`` (replacing what was installed before); None installs nothing."""
        self.clear()
        if fetched is None:
            return
        self._whole = dict(fetched.whole_files)
        if fetched.parquet is not None:
            self._parquet = {self._inner.arrow_path(fetched.parquet.rel): fetched.parquet}
        self.prefetched_bytes += fetched.nbytes

    def clear(self) -> None:
        """Drop the installed bytes: memory holds only what the current read needs."""
        self._whole = {}
        self._parquet = {}

    def _open_fetched(self, path: str) -> pa.NativeFile | None:
        fetched = self._parquet.get(path)
        if fetched is None:
            return None

        def fallback(start: int, end: int) -> bytes:
            self.fallback_reads += 1
            return self._inner.read_range(fetched.rel, start, end)

        return pa.PythonFile(_RangeFile(fetched, fallback), mode="r")

    # -- served here -----------------------------------------------------------

    def read_bytes(self, rel: str) -> bytes:
        data = self._whole.get(rel)
        return data if data is not None else self._inner.read_bytes(rel)

    async def read_bytes_async(self, rel: str) -> bytes:
        data = self._whole.get(rel)
        return data if data is not None else await self._inner.read_bytes_async(rel)

    @property
    def arrow_fs(self) -> pafs.FileSystem:
        if self._overlay is None:
            self._overlay = pafs.PyFileSystem(_OverlayHandler(self._open_fetched, self._inner.arrow_fs))
        return self._overlay

    # -- handed to the inner storage -------------------------------------------

    @property
    def options(self) -> Mapping[str, str]:
        return self._inner.options

    @property
    def protocol(self) -> str:
        return self._inner.protocol

    @property
    def root(self) -> str:
        return self._inner.root

    @property
    def base_url(self) -> str:
        return self._inner.base_url

    @property
    def is_local(self) -> bool:
        return self._inner.is_local

    def child(self, rel: str) -> Storage:
        return self._inner.child(rel)

    def relative(self, rel: str) -> str:
        return self._inner.relative(rel)

    def full_path(self, rel: str) -> str:
        return self._inner.full_path(rel)

    def uri(self, rel: str) -> str:
        return self._inner.uri(rel)

    def list_dir(self, rel: str = "") -> list[FileInfo]:
        return self._inner.list_dir(rel)

    async def list_dir_async(self, rel: str = "") -> list[FileInfo]:
        return await self._inner.list_dir_async(rel)

    def exists(self, rel: str) -> bool:
        return self._inner.exists(rel)

    def size(self, rel: str) -> int:
        return self._inner.size(rel)

    def read_range(self, rel: str, start: int, end: int) -> bytes:
        return self._inner.read_range(rel, start, end)

    async def read_range_async(self, rel: str, start: int, end: int) -> bytes:
        return await self._inner.read_range_async(rel, start, end)

    def arrow_path(self, rel: str) -> str:
        return self._inner.arrow_path(rel)


class _RangeFile:
    """A read-only file over fetched byte ranges; reads outside them go to ``fallback``."""

    def __init__(self, fetched: FetchedParquet, fallback: Callable[[int, int], bytes]) -> None:
        self._f = fetched
        self._views = [memoryview(b) for b in fetched.blobs]
        self._fallback = fallback
        self._pos = 0
        self.closed = False

    def read(self, nbytes: int = -1) -> bytes | memoryview:
        start = self._pos
        end = self._f.size if nbytes is None or nbytes < 0 else min(self._f.size, start + nbytes)
        self._pos = end
        if end <= start:
            return b""
        i = bisect.bisect_right(self._f.starts, start) - 1
        if i >= 0:
            offset = start - self._f.starts[i]
            view = self._views[i]
            if offset + (end - start) <= len(view):
                return view[offset : offset + (end - start)]
        return self._fallback(start, end)

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._f.size}[whence]
        self._pos = base + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def size(self) -> int:
        return self._f.size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


class _OverlayHandler(pafs.FileSystemHandler):
    """An Arrow filesystem opening fetched Parquet files from memory and
    passing every other call to the real one."""

    def __init__(self, open_fetched: Callable[[str], pa.NativeFile | None], inner: pafs.FileSystem) -> None:
        self._open_fetched = open_fetched
        self._inner = inner

    # Arrow compares filesystems when datasets mix them: only this very one is equal.
    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return id(self)

    def get_type_name(self) -> str:
        return f"hudi-prefetch+{self._inner.type_name}"

    def normalize_path(self, path: str) -> str:
        return self._inner.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self._inner.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self._inner.get_file_info(selector)

    def open_input_file(self, path: str) -> pa.NativeFile:
        opened = self._open_fetched(path)
        return opened if opened is not None else self._inner.open_input_file(path)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self._inner.open_input_stream(path)

    # Readers never write; these exist because the handler interface requires them.
    def create_dir(self, path: str, recursive: bool) -> None:
        self._inner.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self._inner.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self._inner.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        self._inner.delete_dir_contents("/", accept_root_dir=True)

    def delete_file(self, path: str) -> None:
        self._inner.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self._inner.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self._inner.copy_file(src, dest)

    def open_output_stream(self, path: str, metadata: dict | None = None) -> pa.NativeFile:
        return self._inner.open_output_stream(path, metadata=metadata)

    def open_append_stream(self, path: str, metadata: dict | None = None) -> pa.NativeFile:
        return self._inner.open_append_stream(path, metadata=metadata)
