"""The thread policy of the core: every thread it starts is started here.

- Fan-out (listings, footers, slice reads) runs on one shared, lazily created
  pool (``io_map``) instead of a pool per call: threads are reused across
  reads, and the total stays bounded however many reads run at once. Each call
  still caps its own width (``limit``). A call made from a pool thread runs
  inline, so nested fan-out never waits on the threads it occupies.
- Pipelines (the read pipeline) get ``pipeline_workers``: a few threads owned by one
  stream, so a slow consumer never holds shared threads, and closing the
  stream ends them.
- Asynchronous fetching is the storage layer's: one I/O event loop per
  process (``hudi_ray.core.storage.fetch``), no thread of its own here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from hudi_ray.core.config.tunables import POOL_TUNABLES

T = TypeVar("T")
R = TypeVar("R")

_pool: ThreadPoolExecutor | None = None
_pool_pid: int | None = None
_lock = threading.Lock()
_local = threading.local()


def _shared() -> ThreadPoolExecutor:
    global _pool, _pool_pid
    with _lock:
        # A forked child inherits a pool whose threads do not exist there.
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(
                max_workers=POOL_TUNABLES.io_threads, thread_name_prefix="hudi-io", initializer=_mark_pool_thread
            )
            _pool_pid = os.getpid()
        return _pool


def _mark_pool_thread() -> None:
    _local.in_pool = True


def io_map(fn: Callable[[T], R], items: Iterable[T], limit: int | None = None) -> list[R]:
    """``[fn(x) for x in items]`` on the shared pool, at most ``limit`` (default:
    the pool size) at a time, results in order; the first error is raised."""
    items = list(items)
    if len(items) <= 1 or getattr(_local, "in_pool", False):
        return [fn(x) for x in items]
    width = min(limit or POOL_TUNABLES.io_threads, len(items))
    if width <= 1:
        return [fn(x) for x in items]
    pool = _shared()
    results: list[Future[R]] = []
    # A place frees as soon as any item finishes: waiting for the oldest left
    # a thread idle behind every long item. A semaphore released by each
    # item's callback costs less per item than ``wait`` on the running set.
    places = threading.Semaphore(width)
    failed = threading.Event()

    def finished(f: Future[R]) -> None:
        if not f.cancelled() and f.exception() is not None:
            failed.set()
        places.release()

    try:
        for x in items:
            places.acquire()
            if failed.is_set():
                break  # raised below, in order; nothing more is started
            f = pool.submit(fn, x)
            results.append(f)
            f.add_done_callback(finished)
        return [f.result() for f in results]
    finally:
        for f in results:
            f.cancel()


def cpu_map(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``io_map`` for work that lets go of the GIL (inflating, decoding), one item per CPU at a time."""
    return io_map(fn, items, limit=os.cpu_count() or 1)


def pipeline_workers(depth: int) -> ThreadPoolExecutor:
    """A stream's own ``depth`` worker threads (use as a context manager)."""
    return ThreadPoolExecutor(max_workers=max(1, depth), thread_name_prefix="hudi-read-ahead")
