"""Bytes fetched ahead, served from memory.

A reader that knows which files it reads next fetches them concurrently
(``fetch_parquet`` for a Parquet file's footer and the column chunks a read
decodes, or the whole file when it is small; ``read_bytes_async`` for whole
files) while it decodes the current ones, then installs them in a
:class:`PrefetchingStorage`. That storage wraps the table's own: it serves
installed whole files and Parquet byte ranges from memory and hands everything
else, and any read outside the fetched ranges, to the inner storage. Several
fetches can be installed at once (one per file slice being decoded); each is
discarded when its slice is read.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.storage.fetch import IOTunables
from hudi_ray.core.storage.files import FileInfo, StorageLike
from hudi_ray.core.storage.storage import Storage

if TYPE_CHECKING:
    import asyncio

    import pyarrow as pa
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq
else:
    asyncio = lazy_module("asyncio")
    pa = lazy_module("pyarrow")
    pafs = lazy_module("pyarrow.fs")
    pq = lazy_module("pyarrow.parquet")

T = TypeVar("T")


@dataclass(frozen=True)
class PrefetchTunables:
    # Byte ranges closer than this are fetched as one request (object stores
    # charge per request; a small over-read is cheaper than another round trip).
    range_hole_bytes: int = 1 << 20
    # The first read of a Parquet file's tail; most footers fit, larger ones cost a second read.
    footer_guess_bytes: int = 64 << 10
    # A Parquet file needing more than this is read directly rather than held in memory.
    max_prefetch_bytes: int = 512 << 20
    # A Parquet file no larger than this is fetched whole, in one request: a
    # footer first and its column chunks after cost two round trips.
    whole_file_bytes: int = 1 << 20


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
    """What was fetched for one unit of reading: Parquet files in ranges and
    whole files (e.g. log files), by relative path."""

    parquet: dict[str, FetchedParquet] = field(default_factory=dict)
    whole_files: dict[str, bytes] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        fetched = sum(p.nbytes for p in self.parquet.values())
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


def parquet_footer_length(tail: bytes) -> tuple[int, bool]:
    """The footer's length, and whether ``tail`` (a file's last bytes) ends like Parquet."""
    if len(tail) < 8 or tail[-4:] != b"PAR1":
        return 0, False
    return int.from_bytes(tail[-8:-4], "little"), True


async def fetch_parquet(
    storage: StorageLike,
    rel: str,
    size: int | None,
    columns: set[str] | None,
    max_bytes: int = PREFETCH_TUNABLES.max_prefetch_bytes,
) -> FetchedParquet | None:
    """The footer of Parquet file ``rel`` and the column chunks of ``columns``
    (None: all), or the whole file when it is small; None when the file does
    not end like Parquet (the read reports it) or would need more than ``max_bytes``.
    Runs on the storage's I/O loop."""
    t = PREFETCH_TUNABLES
    if not size:
        size = await storage.size_async(rel)
    if size <= t.whole_file_bytes:
        whole = await storage.read_bytes_async(rel)
        footer_len, ok = parquet_footer_length(whole)
        if not ok or footer_len + 8 > len(whole):
            return None
        metadata = pq.ParquetFile(pa.BufferReader(whole[-(footer_len + 8) :])).metadata
        return FetchedParquet(rel=rel, size=len(whole), metadata=metadata, starts=[0], blobs=[whole])
    tail_start = max(0, size - t.footer_guess_bytes)
    tail = await storage.read_range_async(rel, tail_start, size)
    footer_len, ok = parquet_footer_length(tail)
    if not ok:
        return None
    if footer_len + 8 > len(tail):
        tail_start = max(0, size - footer_len - 8)
        tail = await storage.read_range_async(rel, tail_start, size)
    metadata = pq.ParquetFile(pa.BufferReader(tail[-(footer_len + 8) :])).metadata
    # Chunks that start inside the tail already fetched need no request of their own.
    ranges = [r for r in coalesce_ranges(parquet_chunk_ranges(metadata, columns)) if r[0] < tail_start]
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
        self._lock = threading.Lock()
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
        """Serve ``fetched`` besides what is installed already; None installs nothing."""
        if fetched is None:
            return
        with self._lock:
            self._whole.update(fetched.whole_files)
            for rel, parquet in fetched.parquet.items():
                self._parquet[self._inner.arrow_path(rel)] = parquet
            self.prefetched_bytes += fetched.nbytes

    def discard(self, fetched: FetchedFiles | None) -> None:
        """Stop serving ``fetched`` once its read is done: memory holds only what reads in progress need."""
        if fetched is None:
            return
        with self._lock:
            for rel in fetched.whole_files:
                self._whole.pop(rel, None)
            for rel in fetched.parquet:
                self._parquet.pop(self._inner.arrow_path(rel), None)

    def clear(self) -> None:
        """Drop every installed byte."""
        with self._lock:
            self._whole = {}
            self._parquet = {}

    def _open_fetched(self, path: str) -> pa.NativeFile | None:
        fetched = self._parquet.get(path)
        if fetched is None:
            return None

        def fallback(start: int, end: int) -> bytes:
            self.fallback_reads += 1
            return self._inner.read_range(fetched.rel, start, end)

        from hudi_ray.core.storage.arrow_files import RangeFile

        return pa.PythonFile(RangeFile(fetched.size, fetched.starts, fetched.blobs, fallback), mode="r")

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
            from hudi_ray.core.storage.arrow_files import OverlayHandler

            self._overlay = pafs.PyFileSystem(OverlayHandler(self._open_fetched, self._inner.arrow_fs))
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

    def list_dir(self, rel: str = "", *, sizes: bool = True) -> list[FileInfo]:
        return self._inner.list_dir(rel, sizes=sizes)

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

    async def size_async(self, rel: str) -> int:
        return await self._inner.size_async(rel)

    def read_many(self, rels: Sequence[str]) -> list[bytes]:
        return self._inner.read_many(rels)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return self._inner.submit(coro)

    @property
    def io(self) -> IOTunables:
        return self._inner.io

    def arrow_path(self, rel: str) -> str:
        return self._inner.arrow_path(rel)
