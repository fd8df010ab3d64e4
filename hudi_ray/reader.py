"""Reader tasks: a chunk of file slices in, Arrow tables out.

``read_chunk`` reads one chunk of a planned read slice by slice through the
core's file group reader, so its rows are exactly those ``HudiTable.read``
returns for the same slices. While one slice decodes, the files of the next
ones are fetched on an asyncio loop (concurrent range reads: the footer, the
column chunks the read decodes, whole log files), so the task does not sit
idle on storage. Memory stays bounded by the slice being merged plus the
bytes fetched ahead (``prefetch_depth`` slices), never by the whole chunk.

Ray runs these functions inside read tasks; nothing here needs Ray (only the
trace test hook asks it for the node id).
"""

from __future__ import annotations

import asyncio
import bisect
import concurrent.futures
import json
import logging
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.storage import Storage
from hudi_ray.core.table import HudiFileGroupReader, HudiReadPlan

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 131_072
DEFAULT_PREFETCH_DEPTH = 1
# Byte ranges closer than this are fetched as one request (object stores
# charge per request; a small over-read is cheaper than another round trip).
RANGE_HOLE_BYTES = 1 << 20
FOOTER_GUESS_BYTES = 64 << 10
# A base file needing more than this is read directly rather than held in memory.
MAX_PREFETCH_BYTES = 512 << 20

# Test hooks, read from the environment of the task (set them per dataset
# through ``runtime_env={"env_vars": ...}``):
#  - FAULT_PAUSE_FILE: the first task to get here after producing output
#    creates this file holding its pid and waits to be killed.
#  - TRACE_DIR: every task writes a small JSON file there naming its node.
FAULT_PAUSE_FILE_ENV = "HUDI_RAY_FAULT_PAUSE_FILE"
TRACE_DIR_ENV = "HUDI_RAY_TRACE_DIR"


@dataclass(frozen=True)
class ChunkRead:
    """What one reader task needs: the shared plan parts and its slices.

    ``plan.slices`` is unused (tasks get their own ``slices``). ``predicate``
    is the caller's full row predicate, applied after the Hudi filters;
    ``columns`` the columns to return (None: all the plan reads).
    """

    plan: HudiReadPlan
    slices: list[HudiFileSlice]
    predicate: pc.Expression | None = None
    columns: list[str] | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    prefetch: bool = False
    prefetch_depth: int = DEFAULT_PREFETCH_DEPTH


def read_chunk(task: ChunkRead) -> Iterator[pa.Table]:
    """Tables of the chunk's rows, slice after slice; empty tables are skipped."""
    _trace(task)
    storage = PrefetchingStorage(task.plan.context.storage) if task.prefetch else None
    reader = task.plan.file_group_reader(storage)
    prefetcher = SlicePrefetcher(storage, reader, task.plan) if storage is not None else None
    produced = False
    try:
        pending: deque[concurrent.futures.Future[FetchedSlice | None]] = deque()
        upcoming = iter(task.slices)
        if prefetcher is not None:
            for s in upcoming:
                pending.append(prefetcher.fetch(s))
                if len(pending) > max(0, task.prefetch_depth):
                    break
        for s in task.slices:
            if prefetcher is not None and storage is not None:
                fetched = pending.popleft().result()
                nxt = next(upcoming, None)
                if nxt is not None:
                    pending.append(prefetcher.fetch(nxt))
                storage.install(fetched, reader)
            try:
                for batch in task.plan.read_slice_stream(reader, s, task.batch_size):
                    out = _finish(batch, task.predicate, task.columns)
                    if out.num_rows:
                        produced = True
                        yield out
            finally:
                if storage is not None:
                    storage.clear()
            if produced:
                _pause_for_fault_test()
    finally:
        if prefetcher is not None:
            prefetcher.close()


def _finish(batch: pa.RecordBatch, predicate: pc.Expression | None, columns: list[str] | None) -> pa.Table:
    table = pa.Table.from_batches([batch])
    if predicate is not None and table.num_rows:
        table = table.filter(predicate)
    if columns is not None:
        table = table.select(columns)
    return table


# -- fetching ahead ------------------------------------------------------------------


@dataclass
class FetchedParquet:
    """Byte ranges of one Parquet file fetched ahead: its footer and the column chunks a read decodes."""

    rel: str
    size: int
    metadata: pq.FileMetaData
    starts: list[int] = field(default_factory=list)
    blobs: list[bytes] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        return sum(len(b) for b in self.blobs)


@dataclass
class FetchedSlice:
    parquet: FetchedParquet | None
    whole_files: dict[str, bytes]  # log files by relative path


class _RangeFile:
    """A read-only file over fetched byte ranges; reads outside them go to storage."""

    def __init__(self, fetched: FetchedParquet, fallback: Callable[[int, int], bytes]) -> None:
        self._f = fetched
        self._views = [memoryview(b) for b in fetched.blobs]
        self._fallback = fallback
        self._pos = 0
        self.closed = False
        self.fallback_reads = 0

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
        self.fallback_reads += 1
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
    """An Arrow filesystem that opens fetched Parquet files from memory and
    passes every other call to the real one."""

    def __init__(self, owner: PrefetchingStorage, inner: pafs.FileSystem) -> None:
        self._owner = owner
        self._inner = inner

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def get_type_name(self) -> str:
        return f"hudi-prefetch+{self._inner.type_name}"

    def normalize_path(self, path: str) -> str:
        return self._inner.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self._inner.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self._inner.get_file_info(selector)

    def open_input_file(self, path: str) -> pa.NativeFile:
        opened = self._owner._open_fetched(path)
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


class PrefetchingStorage(Storage):
    """The plan's storage, serving the current slice's fetched bytes from memory."""

    def __init__(self, inner: Storage) -> None:
        # Shares the inner storage's client rather than opening another.
        self.options = inner.options
        self.protocol = inner.protocol
        self.root = inner.root
        self.fs = inner.fs
        self._inner = inner
        self._whole: dict[str, bytes] = {}
        self._parquet: dict[str, FetchedParquet] = {}
        self._overlay: pafs.FileSystem | None = None
        self.fallback_reads = 0
        self.prefetched_bytes = 0

    @property
    def arrow_fs(self) -> pafs.FileSystem:  # type: ignore[override]
        if self._overlay is None:
            self._overlay = pafs.PyFileSystem(_OverlayHandler(self, self._inner.arrow_fs))
        return self._overlay

    def install(self, fetched: FetchedSlice | None, reader: HudiFileGroupReader) -> None:
        self.clear()
        if fetched is None:
            return
        self._whole = dict(fetched.whole_files)
        if fetched.parquet is not None:
            p = fetched.parquet
            self._parquet[self.arrow_path(p.rel)] = p
            # The footer is known: the Parquet reader must not fetch it again.
            reader.context.footers.put(p.rel, p.metadata)
            self.prefetched_bytes += p.nbytes
        self.prefetched_bytes += sum(len(b) for b in self._whole.values())

    def clear(self) -> None:
        self._whole = {}
        self._parquet = {}

    def read_bytes(self, rel: str) -> bytes:
        data = self._whole.get(rel)
        return data if data is not None else self._inner.read_bytes(rel)

    def _open_fetched(self, path: str) -> pa.NativeFile | None:
        fetched = self._parquet.get(path)
        if fetched is None:
            return None

        def fallback(start: int, end: int) -> bytes:
            self.fallback_reads += 1
            return self._inner.read_range(fetched.rel, start, end)

        return pa.PythonFile(_RangeFile(fetched, fallback), mode="r")


class SlicePrefetcher:
    """Fetches the files of upcoming slices on a private asyncio loop."""

    def __init__(self, storage: Storage, reader: HudiFileGroupReader, plan: HudiReadPlan) -> None:
        self._storage = storage
        self._reader = reader
        self._plan = plan
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="hudi-ray-prefetch", daemon=True)
        self._thread.start()

    def fetch(self, file_slice: HudiFileSlice) -> concurrent.futures.Future[FetchedSlice | None]:
        return asyncio.run_coroutine_threadsafe(self._fetch(file_slice), self._loop)

    def close(self) -> None:
        if self._loop.is_closed():
            return

        def stop() -> None:
            for t in asyncio.all_tasks(self._loop):
                t.cancel()
            self._loop.stop()

        self._loop.call_soon_threadsafe(stop)
        self._thread.join(timeout=30)
        if not self._thread.is_alive():
            self._loop.close()

    async def _fetch(self, s: HudiFileSlice) -> FetchedSlice | None:
        """The slice's files, or None when fetching failed: the read then goes
        to storage directly and reports the failure with the core's error."""
        try:
            logs = s.log_files_relative_paths() if not self._plan.options.use_read_optimized() else []
            base_rel = s.base_file_relative_path()
            jobs = [self._storage.read_bytes_async(rel) for rel in logs]
            parquet_job = self._fetch_parquet(s, base_rel) if base_rel and base_rel.endswith(".parquet") else _none()
            parquet, *blobs = await asyncio.gather(parquet_job, *jobs)
            return FetchedSlice(parquet=parquet, whole_files=dict(zip(logs, blobs)))
        except (HudiCoreError, OSError, ValueError, pa.ArrowException) as exc:
            log.debug("Prefetch of %s failed, reading directly: %s", s, exc)
            return None

    async def _fetch_parquet(self, s: HudiFileSlice, rel: str) -> FetchedParquet | None:
        storage = self._storage
        size = int(s.base_file_size) or await asyncio.to_thread(storage.size, rel)
        tail_start = max(0, size - FOOTER_GUESS_BYTES)
        tail = await storage.read_range_async(rel, tail_start, size)
        if len(tail) < 8 or tail[-4:] != b"PAR1":
            return None  # not Parquet after all: let the reader report it
        footer_len = int.from_bytes(tail[-8:-4], "little")
        if footer_len + 8 > len(tail):
            tail_start = max(0, size - footer_len - 8)
            tail = await storage.read_range_async(rel, tail_start, size)
        metadata = pq.ParquetFile(pa.BufferReader(tail[-(footer_len + 8) :])).metadata
        ranges = _coalesce(_chunk_ranges(metadata, self._columns(s, rel)))
        if sum(b - a for a, b in ranges) > MAX_PREFETCH_BYTES:
            return None
        blobs = await asyncio.gather(*(storage.read_range_async(rel, a, b) for a, b in ranges))
        fetched = FetchedParquet(rel=rel, size=size, metadata=metadata)
        pieces = sorted([*zip((a for a, _ in ranges), blobs), (tail_start, tail)], key=lambda p: p[0])
        for start, blob in pieces:
            fetched.starts.append(start)
            fetched.blobs.append(blob)
        return fetched

    def _columns(self, s: HudiFileSlice, rel: str) -> set[str] | None:
        """Top-level columns the file group reader will decode from this base file."""
        plan = self._plan
        merging = s.has_log_files() and not plan.options.use_read_optimized()
        try:
            return set(self._reader.decoded_columns(plan.options, rel, plan.commit_times, merging))
        except HudiCoreError:
            return None  # the read will report it; fetch everything meanwhile


async def _none() -> None:
    return None


def _chunk_ranges(metadata: pq.FileMetaData, columns: set[str] | None) -> list[tuple[int, int]]:
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


def _coalesce(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if merged and a - merged[-1][1] <= RANGE_HOLE_BYTES:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


# -- test hooks ----------------------------------------------------------------------


def _trace(task: ChunkRead) -> None:
    trace_dir = os.environ.get(TRACE_DIR_ENV)
    if not trace_dir:
        return
    import ray

    node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else None
    record = {"node_id": node, "pid": os.getpid(), "slices": len(task.slices)}
    with open(os.path.join(trace_dir, f"{uuid.uuid4().hex}.json"), "w") as f:
        json.dump(record, f)


def _pause_for_fault_test() -> None:
    path = os.environ.get(FAULT_PAUSE_FILE_ENV)
    if not path:
        return
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # another attempt already paused: read on
    with os.fdopen(fd, "w") as f:
        f.write(str(os.getpid()))
    # Wait for the test to kill this process; never finish normally from here.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.05)
    os._exit(1)
