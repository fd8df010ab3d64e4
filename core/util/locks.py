"""Locks for objects that travel between processes."""

from __future__ import annotations

import threading
from typing import Any


class FreshLock:
    """A lock that pickles as a new, unlocked one: objects guarding caches with it
    stay picklable, and a copy never inherits a lock held at pickling time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> bool:
        return self._lock.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._lock.__exit__(*exc)

    def __reduce__(self) -> tuple[type[FreshLock], tuple[()]]:
        return (FreshLock, ())
