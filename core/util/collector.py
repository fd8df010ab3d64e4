"""Pausing CPython's cyclic garbage collector while planning builds long-lived objects.

Planning a table of many files builds tens of thousands of objects that live
as long as the read (listings, commit metadata, file slices). CPython's
collector runs a full pass whenever the objects that survived since its last
one grow by a quarter, and each pass walks every tracked object of the
process: a burst of long-lived objects pays for several such passes (two
passes cost 0.2 s of a 0.7 s plan of 20,000 files). Reference counting still
frees everything that is not in a cycle while the collector is paused; what a
plan leaves in cycles (pyarrow's footers, which pruning holds all at once
anyway) is collected once it resumes.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_resume = False  # whether the collector was enabled when the first holder paused it


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector disabled for the block, then restored as it was.
    Re-entrant and shared by threads: it resumes when the last holder leaves,
    and only if it was enabled when the first one came."""
    global _holders, _resume
    with _lock:
        if _holders == 0:
            _resume = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _resume:
                gc.enable()


def _reset_in_child() -> None:
    # A child forked while a thread of its parent held the pause has no such
    # thread to release it: it starts with the collector as it was before.
    global _holders, _lock
    _lock = threading.Lock()
    if _holders:
        _holders = 0
        if _resume:
            gc.enable()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_in_child)
