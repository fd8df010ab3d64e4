"""Read-ahead: work on the next items while the caller consumes the current one."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any, Literal, TypeVar, overload

from hudi_ray.core.util.pools import pipeline_workers

T = TypeVar("T")
R = TypeVar("R")


@overload
def read_ahead(
    items: Iterable[T], work: Callable[[T], R], depth: int, *, started: Literal[False] = ...
) -> Iterator[R]: ...


@overload
def read_ahead(
    items: Iterable[T], work: Callable[[T], Future[R]], depth: int, *, started: Literal[True]
) -> Iterator[R]: ...


def read_ahead(items: Iterable[T], work: Callable[[T], Any], depth: int, *, started: bool = False) -> Iterator[Any]:
    """``work(item)``'s result for each item, in order, later items' work
    running while the caller consumes earlier results: when an item's result
    is handed out, the work of up to ``depth + 1`` following items has started.

    By default ``work`` runs on ``depth`` worker threads; ``depth`` 0 runs
    everything on the caller's thread, nothing ahead. With ``started``,
    ``work`` only starts the item's work elsewhere (an event loop, a pool of
    the caller's) and returns its future: it is called on the caller's thread
    and no thread is made here.

    Memory stays bounded by ``depth + 2`` results; a closed or abandoned
    iterator cancels the work not yet started and waits only for the work
    already running."""
    if started:
        yield from _in_order(items, work, depth)
    elif depth <= 0:
        for item in items:
            yield work(item)
    else:
        with pipeline_workers(depth) as pool:
            yield from _in_order(items, lambda item: pool.submit(work, item), depth)


def _in_order(items: Iterable[T], start: Callable[[T], Future[R]], depth: int) -> Iterator[R]:
    """The one read-ahead window: ``start`` the current item and up to
    ``depth`` later ones, hand results back in order, start one more per result."""
    upcoming = iter(items)
    pending: deque[Future[R]] = deque()
    try:
        for item in upcoming:
            pending.append(start(item))
            if len(pending) > max(0, depth):
                break
        while pending:
            result = pending.popleft().result()
            nxt = next(upcoming, _END)
            if nxt is not _END:
                pending.append(start(nxt))  # type: ignore[arg-type]
            yield result
    finally:
        for f in pending:
            f.cancel()


_END = object()
