"""Fetching the files of upcoming file slices while the current one decodes.

A reader of many slices (an engine's task) gives a :class:`SlicePrefetcher`
the slices it reads next; the prefetcher fetches their files on a private
asyncio loop, concurrently: a Parquet base file's footer and the column chunks
the read decodes (``HudiFileGroupReader.decoded_columns``), and whole log
files. Other base files (Lance) are read directly by their own client.
The caller keeps a window of fetches running (``hudi_ray.core.util.read_ahead``
with ``started=True`` takes ``fetch`` as is); before a slice is read,
``install`` hands what was fetched for it to the reader's
``PrefetchingStorage``, which serves it from memory. A failed fetch only
costs the prefetch: the read then goes to storage and reports any failure
with the core's usual error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from types import TracebackType
from typing import TYPE_CHECKING

import pyarrow as pa

from hudi_ray.core.base_file import is_parquet
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.storage import FetchedFiles, FetchedParquet, PrefetchingStorage, fetch_parquet
from hudi_ray.core.util.pools import event_loop_thread

if TYPE_CHECKING:
    from hudi_ray.core.table.file_group_reader import HudiFileGroupReader
    from hudi_ray.core.table.read_plan import HudiReadPlan

log = logging.getLogger(__name__)


class SlicePrefetcher:
    """Fetches the files of a plan's slices for ``reader``, which reads through ``storage``.

    ``reader`` must be ``plan.file_group_reader(storage)``; fetches go to the
    storage ``storage`` wraps. Close it (or use it as a context manager) to
    stop its loop.
    """

    def __init__(self, storage: PrefetchingStorage, reader: HudiFileGroupReader, plan: HudiReadPlan) -> None:
        self._storage = storage
        self._reader = reader
        self._plan = plan
        self._loop, self._thread = event_loop_thread("hudi-prefetch")

    def __enter__(self) -> SlicePrefetcher:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def fetch(self, file_slice: HudiFileSlice) -> concurrent.futures.Future[FetchedFiles | None]:
        """Start fetching the slice's files; the future holds None when fetching failed."""
        return asyncio.run_coroutine_threadsafe(self._fetch(file_slice), self._loop)

    def install(self, fetched: FetchedFiles | None) -> None:
        """Serve ``fetched`` for the next read: its bytes from the storage, its footer from the reader's cache."""
        self._storage.install(fetched)
        if fetched is not None and fetched.parquet is not None:
            # The footer is parsed already: the Parquet reader must not fetch it again.
            self._reader.context.footers.put(fetched.parquet.rel, fetched.parquet.metadata)

    def clear(self) -> None:
        """Drop the installed bytes once their slice is read."""
        self._storage.clear()

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

    async def _fetch(self, s: HudiFileSlice) -> FetchedFiles | None:
        try:
            inner = self._storage.inner
            logs = s.log_files_relative_paths() if not self._plan.options.use_read_optimized() else []
            base_rel = s.base_file_relative_path()
            blobs = [inner.read_bytes_async(rel) for rel in logs]
            parquet_job = (
                fetch_parquet(inner, base_rel, int(s.base_file_size), self._columns(s, base_rel))
                if base_rel and is_parquet(base_rel)
                else _nothing()
            )
            parquet, *whole = await asyncio.gather(parquet_job, *blobs)
            return FetchedFiles(parquet=parquet, whole_files=dict(zip(logs, whole)))
        except (HudiCoreError, OSError, ValueError, pa.ArrowException) as exc:
            log.debug("Prefetch of %s failed, reading directly: %s", s, exc)
            return None

    def _columns(self, s: HudiFileSlice, rel: str) -> set[str] | None:
        """Top-level columns the file group reader will decode from this base file."""
        plan = self._plan
        merging = s.has_log_files() and not plan.options.use_read_optimized()
        try:
            return set(self._reader.decoded_columns(plan.options, rel, plan.commit_times, merging))
        except HudiCoreError:
            return None  # the read will report it; fetch every column meanwhile


async def _nothing() -> FetchedParquet | None:
    return None
