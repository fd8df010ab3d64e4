"""The read pipeline: fetch file slices' files ahead, decode them on a few threads.

Every reader of many slices (``HudiTable.read`` and ``read_stream``, an
engine's reader task) goes through :func:`read_pipelined`. It hands units of
work (a slice, or a group of small slices) to ``read`` in order, on ``threads``
decoding threads. On an object store, a :class:`SlicePrefetcher` first fetches
each unit's files on the process's I/O loop, many requests in flight: a
Parquet base file's footer and the column chunks the read decodes (the whole
file when it is small), and whole log files. Units are fetched ahead of their
decoding while the bytes fetched and not yet decoded stay under the storage's
``max_bytes_in_flight``; a decoding thread installs its unit's files in the
reader's ``PrefetchingStorage``, which serves them from memory, and discards
them when done. On local disk there is nothing to fetch: ``read`` reads the files.

A failed fetch only costs the prefetch: the read then goes to storage and
reports any failure with the core's usual error.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections import deque
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, TypeVar

from hudi_ray.core.base_file import is_parquet
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.reading.slice_reader import SliceReader
from hudi_ray.core.storage import FetchedFiles, FetchedParquet, PrefetchingStorage, StorageLike, fetch_parquet
from hudi_ray.core.util.pools import pipeline_workers

if TYPE_CHECKING:
    import asyncio

    import pyarrow as pa
else:
    asyncio = lazy_module("asyncio")
    pa = lazy_module("pyarrow")

log = logging.getLogger(__name__)

R = TypeVar("R")
Unit = Sequence[HudiFileSlice]


class SlicePrefetcher:
    """Fetches the files of file slices for ``reader``, which reads through ``storage``.

    ``reader`` must read through ``storage`` (``plan.slice_reader(storage)``);
    fetches go to the storage ``storage`` wraps, on its I/O loop.
    """

    def __init__(self, storage: PrefetchingStorage, reader: SliceReader) -> None:
        self._storage = storage
        self._reader = reader

    def fetch(self, unit: Unit) -> concurrent.futures.Future[FetchedFiles | None]:
        """Start fetching the unit's files; the future holds None when fetching failed."""
        return self._storage.submit(self._fetch(unit))

    def install(self, fetched: FetchedFiles | None) -> None:
        """Serve ``fetched``: its bytes from the storage, its footers from the reader's cache."""
        self._storage.install(fetched)
        if fetched is not None:
            footers = self._reader.files.context.footers
            for rel, parquet in fetched.parquet.items():
                # The footer is parsed already: the Parquet reader must not fetch it again.
                footers.put(rel, parquet.metadata)

    def discard(self, fetched: FetchedFiles | None) -> None:
        """Drop the installed bytes once their unit is read."""
        self._storage.discard(fetched)

    async def _fetch(self, unit: Unit) -> FetchedFiles | None:
        try:
            inner = self._storage.inner
            logs = [rel for s in unit if self._reader.merges(s) for rel in s.log_files_relative_paths()]
            bases = [(s, s.base_file_relative_path()) for s in unit]
            bases = [(s, rel) for s, rel in bases if rel and is_parquet(rel)]
            parquet_jobs = [fetch_parquet(inner, rel, int(s.base_file_size), self._columns(s, rel)) for s, rel in bases]
            results = await asyncio.gather(*parquet_jobs, *(inner.read_bytes_async(rel) for rel in logs))
            parquet: list[FetchedParquet | None] = list(results[: len(bases)])
            return FetchedFiles(
                parquet={rel: p for (_, rel), p in zip(bases, parquet) if p is not None},
                whole_files=dict(zip(logs, results[len(bases) :])),
            )
        except (HudiCoreError, OSError, ValueError, pa.ArrowException) as exc:
            log.debug("Prefetch of %d slices failed, reading directly: %s", len(unit), exc)
            return None

    def _columns(self, s: HudiFileSlice, rel: str) -> set[str] | None:
        """Top-level columns the file group reader will decode from this base file."""
        try:
            return set(self._reader.decoded_columns(s))
        except HudiCoreError:
            return None  # the read will report it; fetch every column meanwhile


def pipeline_reader(
    storage: StorageLike, make_reader: Callable[[StorageLike | None], SliceReader]
) -> tuple[SliceReader, SlicePrefetcher | None]:
    """A reader for ``read_pipelined`` (``make_reader(storage)``, None for the
    table's own) and, on an object store, the prefetcher that feeds it."""
    if storage.is_local:
        return make_reader(None), None
    wrapped = PrefetchingStorage(storage)
    reader = make_reader(wrapped)
    return reader, SlicePrefetcher(wrapped, reader)


def unit_bytes(unit: Unit) -> int:
    return sum(s.total_size_bytes() for s in unit)


def read_pipelined(
    units: Sequence[Unit],
    read: Callable[[Unit], R],
    *,
    prefetcher: SlicePrefetcher | None,
    threads: int,
    window: int,
    max_bytes_ahead: int,
    max_ahead: int | None = None,
) -> Generator[R, None, None]:
    """``read(unit)`` of each unit, in order, on ``threads`` threads, up to
    ``window`` units decoded ahead of the consumer. With a ``prefetcher``,
    units' files are fetched ahead while at most ``max_bytes_ahead`` bytes
    (by file sizes) are fetched and not yet consumed; the units being decoded
    always are, and at most ``max_ahead`` units beyond those (None: no count
    limit). A closed or abandoned iterator cancels what has not started."""
    fetches: dict[int, concurrent.futures.Future[FetchedFiles | None]] = {}
    fetched_upto = 0
    held = 0

    def fetch_more(decoding_upto: int) -> None:
        nonlocal fetched_upto, held
        if prefetcher is None:
            return
        limit = len(units) if max_ahead is None else min(len(units), decoding_upto + max_ahead)
        while fetched_upto < limit and (held < max_bytes_ahead or fetched_upto < decoding_upto):
            fetches[fetched_upto] = prefetcher.fetch(units[fetched_upto])
            held += unit_bytes(units[fetched_upto])
            fetched_upto += 1

    def work(i: int) -> R:
        if prefetcher is None:
            return read(units[i])
        fetched = fetches[i].result()
        prefetcher.install(fetched)
        try:
            return read(units[i])
        finally:
            prefetcher.discard(fetched)

    if prefetcher is None and threads <= 1:
        # Nothing to fetch and one thread to decode on: the caller's own, with no hand-offs.
        for unit in units:
            yield read(unit)
        return
    window = max(1, window)
    pending: deque[tuple[int, concurrent.futures.Future[R]]] = deque()
    started = 0
    with pipeline_workers(max(1, threads)) as pool:
        try:
            fetch_more(min(window, len(units)))
            while started < len(units) and len(pending) < window:
                pending.append((started, pool.submit(work, started)))
                started += 1
            while pending:
                i, future = pending.popleft()
                result = future.result()
                fetches.pop(i, None)
                held -= unit_bytes(units[i]) if prefetcher is not None else 0
                if started < len(units):
                    fetch_more(started + 1)
                    pending.append((started, pool.submit(work, started)))
                    started += 1
                yield result
        finally:
            for _, f in pending:
                f.cancel()
            for fetch in fetches.values():
                fetch.cancel()
