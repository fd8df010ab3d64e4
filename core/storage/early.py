"""Answers asked early on an object store, kept until the question is asked."""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable
from typing import Any


class EarlyAnswers:
    """Answers asked early (``Storage.ask_early``), by (kind, root, path); shared by a
    storage and its children. Their futures run on this process's I/O loop: a forked
    child, whose loop is another, finds none."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._answers: dict[tuple[str, str, str], concurrent.futures.Future[Any]] = {}

    def _own(self) -> dict[tuple[str, str, str], concurrent.futures.Future[Any]]:
        if self._pid != os.getpid():
            self._pid, self._answers = os.getpid(), {}
        return self._answers

    def put(self, key: tuple[str, str, str], answer: concurrent.futures.Future[Any]) -> None:
        self._own()[key] = answer

    def put_new(
        self, key: tuple[str, str, str], ask: Callable[[], concurrent.futures.Future[Any]]
    ) -> concurrent.futures.Future[Any]:
        """The answer for ``key``, asked with ``ask`` when there is none (the loop's
        thread is the only one that asks early, so there is no race to ask twice)."""
        answers = self._own()
        found = answers.get(key)
        if found is None:
            found = answers[key] = ask()
        return found

    def peek(self, key: tuple[str, str, str]) -> concurrent.futures.Future[Any] | None:
        return self._own().get(key)

    def take(self, key: tuple[str, str, str]) -> concurrent.futures.Future[Any] | None:
        return self._own().pop(key, None)

    def clear(self) -> None:
        self._own().clear()

    def __len__(self) -> int:
        return len(self._own())
