"""Answers asked early on an object store, kept until the question is asked."""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Callable
from typing import Any


class EarlyAnswers:
    """Answers asked early (``Storage.ask_early``), by (kind, root, path); shared by a
    storage and its children. Their futures run on this process's I/O loop: a forked
    child, whose loop is another, finds none.

    ``clear`` starts a new generation. Questions queued on the loop for an earlier one
    (a walk, answers followed) are dropped instead of kept: a table loaded again must
    not take a listing asked before its own timeline listing."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._answers: dict[tuple[str, str, str], concurrent.futures.Future[Any]] = {}
        self._lock = threading.Lock()
        self.generation = 0

    def __reduce__(self) -> tuple[type[EarlyAnswers], tuple[()]]:
        return EarlyAnswers, ()  # answers in flight belong to this process's loop: a copy has none

    def _own(self) -> dict[tuple[str, str, str], concurrent.futures.Future[Any]]:
        if self._pid != os.getpid():
            self._pid, self._answers = os.getpid(), {}
        return self._answers

    def put(self, key: tuple[str, str, str], answer: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._own()[key] = answer

    def put_asked(
        self,
        key: tuple[str, str, str],
        ask: Callable[[], concurrent.futures.Future[Any]],
        generation: int,
        replace: bool = False,
    ) -> concurrent.futures.Future[Any] | None:
        """The answer for ``key`` if still of ``generation`` (else None, nothing asked):
        asked with ``ask`` when there is none, or always with ``replace``."""
        with self._lock:
            if generation != self.generation:
                return None
            answers = self._own()
            found = None if replace else answers.get(key)
            if found is None:
                found = answers[key] = ask()
            return found

    def peek(self, key: tuple[str, str, str]) -> concurrent.futures.Future[Any] | None:
        with self._lock:
            return self._own().get(key)

    def take(self, key: tuple[str, str, str]) -> concurrent.futures.Future[Any] | None:
        with self._lock:
            return self._own().pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._own().clear()
            self.generation += 1

    def __len__(self) -> int:
        with self._lock:
            return len(self._own())
