"""Compiled matching of record keys (numba), imported on first use.

Keys are hashed once into an open-addressing table of the log's keys, then
the base file's keys are looked up in it: the same codes as Arrow's
``dictionary_encode`` of the log's keys and ``index_in`` of the base's, in one
pass over each instead of three hash tables.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types as nt

from hudi_ray.core.log_file.memory import address, byte, load64, prefetch
from hudi_ray.core.util.compiled import JIT_OPTIONS as _OPTIONS

_OFFSETS = nt.Array(nt.int64, 1, "C", readonly=True)
_BYTES = nt.Array(nt.uint8, 1, "C", readonly=True)
_CODES = nt.Array(nt.int64, 1, "C")

_M1 = np.int64(-4658895280553007687)  # 0xBF58476D1CE4E5B9, splitmix64's multipliers
_M2 = np.int64(-7723592293110705685)  # 0x94D049BB133111EB
# Base keys hashed ahead of their lookups, whose table slots are fetched meanwhile.
_BATCH = 16


@nb.njit(inline="always", **_OPTIONS)
def _word(addr, size, p, n):  # type: ignore[no-untyped-def]
    """The ``n`` (1 to 8) bytes at ``p`` as an int64, higher bytes zero; a
    whole word is read when the buffer of ``size`` bytes has it."""
    if p + 8 <= size:
        w = load64(addr, p)
        return w if n == 8 else w & ((np.int64(1) << (8 * n)) - 1)
    w = np.int64(0)
    for k in range(n):
        w |= byte(addr, p + k) << (8 * k)
    return w


@nb.njit(inline="always", **_OPTIONS)
def _hash(addr, size, start, end):  # type: ignore[no-untyped-def]
    n = end - start
    h = n * _M2
    p = start
    while p + 8 <= end:
        h = (h ^ load64(addr, p)) * _M1
        h ^= (h >> 31) & 0x1FFFFFFFF
        p += 8
    if p < end:
        h = (h ^ _word(addr, size, p, end - p)) * _M1
    h ^= (h >> 29) & 0x7FFFFFFFF
    h *= _M2
    h ^= (h >> 32) & 0xFFFFFFFF
    return h


@nb.njit(inline="always", **_OPTIONS)
def _equal(a, a_size, a_start, a_end, b, b_size, b_start, b_end):  # type: ignore[no-untyped-def]
    n = a_end - a_start
    if n != b_end - b_start:
        return False
    k = np.int64(0)
    while k + 8 <= n:
        if load64(a, a_start + k) != load64(b, b_start + k):
            return False
        k += 8
    return k == n or _word(a, a_size, a_start + k, n - k) == _word(b, b_size, b_start + k, n - k)


@nb.njit(inline="always", **_OPTIONS)
def _hash_batch(addr, size, offsets, i0, g, hashes, slots, mask):  # type: ignore[no-untyped-def]
    """Hash keys ``i0`` to ``i0 + g`` into ``hashes``, prefetching each one's
    first slot so the probes that follow find it in cache."""
    for k in range(g):
        h = _hash(addr, size, offsets[i0 + k], offsets[i0 + k + 1])
        hashes[k] = h
        prefetch(slots + 8 * (h & mask))


@nb.njit(
    nt.int64(_OFFSETS, _BYTES, _BYTES, _OFFSETS, _BYTES, _BYTES, _CODES, _CODES),
    **_OPTIONS,
)
def match_keys(log_offsets, log_data, log_valid, base_offsets, base_data, base_valid, log_codes, base_codes):  # type: ignore[no-untyped-def]
    """Code every log key (0, 1, ... in order of first appearance; nulls share
    one code) into ``log_codes``, and every base key into ``base_codes``: the
    code of the equal log key, or -1. An empty validity array means no nulls.
    Returns the number of codes."""
    n = len(log_offsets) - 1
    size = 16
    while size < 2 * n:
        size *= 2
    mask = size - 1
    # A slot holds 31 bits of its key's hash above its code + 1 (0: empty).
    table = np.zeros(size, dtype=np.int64)
    slots = address(table)
    first = np.empty(max(n, 1), dtype=np.int64)  # each code's first log row
    log = address(log_data)
    log_size = len(log_data)
    count = 0
    null_code = -1
    hashes = np.empty(_BATCH, dtype=np.int64)
    for i0 in range(0, n, _BATCH):
        g = min(_BATCH, n - i0)
        _hash_batch(log, log_size, log_offsets, i0, g, hashes, slots, mask)
        for k in range(g):
            i = i0 + k
            if len(log_valid) and log_valid[i] == 0:
                if null_code < 0:
                    null_code = count
                    first[count] = -1
                    count += 1
                log_codes[i] = null_code
                continue
            s = log_offsets[i]
            e = log_offsets[i + 1]
            h = hashes[k]
            tag = (h >> 33) & 0x7FFFFFFF
            slot = h & mask
            while True:
                v = table[slot]
                if v == 0:
                    table[slot] = (tag << 32) | (count + 1)
                    first[count] = i
                    log_codes[i] = count
                    count += 1
                    break
                if (v >> 32) == tag:
                    c = (v & 0xFFFFFFFF) - 1
                    j = first[c]
                    if _equal(log, log_size, s, e, log, log_size, log_offsets[j], log_offsets[j + 1]):
                        log_codes[i] = c
                        break
                slot = (slot + 1) & mask
    base = address(base_data)
    base_size = len(base_data)
    rows = len(base_offsets) - 1
    for b0 in range(0, rows, _BATCH):
        g = min(_BATCH, rows - b0)
        _hash_batch(base, base_size, base_offsets, b0, g, hashes, slots, mask)
        for k in range(g):
            i = b0 + k
            if len(base_valid) and base_valid[i] == 0:
                base_codes[i] = null_code
                continue
            s = base_offsets[i]
            e = base_offsets[i + 1]
            h = hashes[k]
            tag = (h >> 33) & 0x7FFFFFFF
            slot = h & mask
            found = -1
            while True:
                v = table[slot]
                if v == 0:
                    break
                if (v >> 32) == tag:
                    c = (v & 0xFFFFFFFF) - 1
                    j = first[c]
                    if _equal(base, base_size, s, e, log, log_size, log_offsets[j], log_offsets[j + 1]):
                        found = c
                        break
                slot = (slot + 1) & mask
            base_codes[i] = found
    return count
