"""Collection helpers."""

from __future__ import annotations

import bisect
import itertools
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


def split_by_size(items: Sequence[T], sizes: Sequence[int], max_bytes: int, min_splits: int = 1) -> list[list[T]]:
    """Split ``items`` into contiguous chunks of at most ``max_bytes`` by their ``sizes``.

    Chunks are filled in order and closed before an item would carry them past
    the cap, which is ``max_bytes`` or, when that gives fewer than
    ``min_splits`` chunks, an equal share of the total; an item larger than the
    cap is a chunk of its own. Items without sizes (all zero) are split by count.
    """
    seq = list(items)
    if len(sizes) != len(seq):
        raise ValueError(f"split_by_size: {len(seq)} items but {len(sizes)} sizes")
    weights = [max(0, int(s)) for s in sizes]
    total = sum(weights)
    if not total:
        return split_into_chunks(seq, min_splits)
    cap = min(max(1, int(max_bytes)), total / max(1, int(min_splits)))
    chunks: list[list[T]] = []
    current: list[T] = []
    filled = 0
    for item, w in zip(seq, weights):
        if current and filled + w > cap:
            chunks.append(current)
            current, filled = [], 0
        current.append(item)
        filled += w
    chunks.append(current)
    return chunks


def split_balanced(items: Sequence[T], sizes: Sequence[int], num_splits: int) -> list[list[T]]:
    """Split ``items`` into at most ``num_splits`` contiguous chunks of nearly
    equal total size: each cut falls at the item boundary nearest to an equal
    share of the running total. Without sizes (all zero) it splits by count,
    as ``split_into_chunks`` does."""
    seq = list(items)
    if len(sizes) != len(seq):
        raise ValueError(f"split_balanced: {len(seq)} items but {len(sizes)} sizes")
    n = max(1, int(num_splits))
    weights = [max(0, int(s)) for s in sizes]
    total = sum(weights)
    if not seq:
        return []
    if not total or n == 1:
        return split_into_chunks(seq, n)
    prefix = list(itertools.accumulate(weights, initial=0))
    cuts: list[int] = []
    for k in range(1, n):
        target = total * k / n
        i = bisect.bisect_left(prefix, target)
        if i > 0 and (i >= len(prefix) or target - prefix[i - 1] <= prefix[i] - target):
            i -= 1
        i = min(max(i, (cuts[-1] + 1) if cuts else 1), len(seq) - 1)
        if (not cuts or i > cuts[-1]) and 0 < i < len(seq):
            cuts.append(i)
    bounds = [0, *cuts, len(seq)]
    return [seq[a:b] for a, b in itertools.pairwise(bounds) if b > a]


# On-disk bytes of a group of small file slices read together (``group_small``):
# small enough that a group is a small share of a read, so groups still spread
# over the reading threads; large enough to hold hundreds of small files.
SMALL_GROUP_BYTES = 4 << 20
SMALL_GROUP_ITEMS = 256


def group_small(
    items: Sequence[T], sizes: Sequence[int], max_bytes: int, max_items: int = SMALL_GROUP_ITEMS
) -> list[list[T]]:
    """``items`` in order, in contiguous groups of at most ``max_items`` items
    and ``max_bytes`` by their ``sizes``; an item of ``max_bytes`` or more is
    a group of its own."""
    if len(sizes) != len(items):
        raise ValueError(f"group_small: {len(items)} items but {len(sizes)} sizes")
    groups: list[list[T]] = []
    current: list[T] = []
    filled = 0
    for item, size in zip(items, sizes):
        size = max(0, int(size))
        if current and (filled + size > max_bytes or len(current) >= max_items):
            groups.append(current)
            current, filled = [], 0
        current.append(item)
        filled += size
    if current:
        groups.append(current)
    return groups
