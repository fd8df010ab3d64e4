"""Collection helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def split_into_chunks(items: Sequence[T], num_splits: int) -> list[list[T]]:
    """Split ``items`` into at most ``num_splits`` contiguous chunks of nearly
    equal size (ceil division, so the last chunk may be shorter).

    ``num_splits`` below 1 is treated as 1; empty input gives no chunks.
    """
    seq = list(items)
    if not seq:
        return []
    n = max(1, int(num_splits))
    size = -(-len(seq) // n)
    return [seq[i : i + size] for i in range(0, len(seq), size)]
