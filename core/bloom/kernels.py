"""Compiled membership tests of Hudi's bloom filters (numba), many keys at once.

Imported on first use (``util.compiled.load``). The hashes are Hadoop's, as Hudi
ports them: its MurmurHash2 variant (tail bytes in reverse order, sign-extended) and
Jenkins' lookup3 ``hashlittle``; a key's k bit positions chain the hash, each result
the seed of the next, and take its absolute value modulo the filter's bits.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types as nt

from hudi_ray.core.util.compiled import JIT_OPTIONS as _OPTIONS

_U32 = 0xFFFFFFFF
JENKINS = 0
MURMUR = 1


@nb.njit(inline="always", **_OPTIONS)
def _signed(h):  # type: ignore[no-untyped-def]
    return h - 0x100000000 if h >= 0x80000000 else h


@nb.njit(inline="always", **_OPTIONS)
def _sbyte(b):  # type: ignore[no-untyped-def]
    """A byte as Java's signed ``byte``, widened to an int and masked to 32 bits."""
    v = np.int64(b)
    return (v - 256 if v >= 128 else v) & _U32


@nb.njit(**_OPTIONS)
def murmur(data, start, length, seed):  # type: ignore[no-untyped-def]
    """Hadoop's MurmurHash of ``length`` bytes at ``start``, as a signed 32-bit value."""
    m = np.int64(0x5BD1E995)
    h = (np.int64(seed) & _U32) ^ length
    blocks = length >> 2
    for i in range(blocks):
        p = start + 4 * i
        k = np.int64(data[p]) | (np.int64(data[p + 1]) << 8) | (np.int64(data[p + 2]) << 16)
        k |= np.int64(data[p + 3]) << 24
        k = (k * m) & _U32
        k ^= k >> 24
        k = (k * m) & _U32
        h = (h * m) & _U32
        h ^= k
    left = length & 3
    if left != 0:
        end = start + length
        if left >= 3:
            h ^= (_sbyte(data[end - 3]) << 16) & _U32
        if left >= 2:
            h ^= (_sbyte(data[end - 2]) << 8) & _U32
        h ^= _sbyte(data[end - 1])
        h = (h * m) & _U32
    h ^= h >> 13
    h = (h * m) & _U32
    h ^= h >> 15
    return _signed(h)


@nb.njit(inline="always", **_OPTIONS)
def _rot(x, k):  # type: ignore[no-untyped-def]
    return ((x << k) | (x >> (32 - k))) & _U32


@nb.njit(**_OPTIONS)
def jenkins(data, start, length, seed):  # type: ignore[no-untyped-def]
    """Jenkins' lookup3 ``hashlittle`` of ``length`` bytes at ``start`` (Hadoop's
    JenkinsHash), as a signed 32-bit value."""
    a = (np.int64(0xDEADBEEF) + length + (np.int64(seed) & _U32)) & _U32
    b = a
    c = a
    p = start
    n = length
    while n > 12:
        a = (a + (np.int64(data[p]) | (np.int64(data[p + 1]) << 8))) & _U32
        a = (a + ((np.int64(data[p + 2]) << 16) | (np.int64(data[p + 3]) << 24))) & _U32
        b = (b + (np.int64(data[p + 4]) | (np.int64(data[p + 5]) << 8))) & _U32
        b = (b + ((np.int64(data[p + 6]) << 16) | (np.int64(data[p + 7]) << 24))) & _U32
        c = (c + (np.int64(data[p + 8]) | (np.int64(data[p + 9]) << 8))) & _U32
        c = (c + ((np.int64(data[p + 10]) << 16) | (np.int64(data[p + 11]) << 24))) & _U32
        a = (a - c) & _U32
        a ^= _rot(c, 4)
        c = (c + b) & _U32
        b = (b - a) & _U32
        b ^= _rot(a, 6)
        a = (a + c) & _U32
        c = (c - b) & _U32
        c ^= _rot(b, 8)
        b = (b + a) & _U32
        a = (a - c) & _U32
        a ^= _rot(c, 16)
        c = (c + b) & _U32
        b = (b - a) & _U32
        b ^= _rot(a, 19)
        a = (a + c) & _U32
        c = (c - b) & _U32
        c ^= _rot(b, 4)
        b = (b + a) & _U32
        p += 12
        n -= 12
    if n == 0:
        return _signed(c)
    # The last 1..12 bytes, little-endian into a, b, c.
    for i in range(n):
        v = np.int64(data[p + i]) << (8 * (i % 4))
        if i < 4:
            a = (a + v) & _U32
        elif i < 8:
            b = (b + v) & _U32
        else:
            c = (c + v) & _U32
    c ^= b
    c = (c - _rot(b, 14)) & _U32
    a ^= c
    a = (a - _rot(c, 11)) & _U32
    b ^= a
    b = (b - _rot(a, 25)) & _U32
    c ^= b
    c = (c - _rot(b, 16)) & _U32
    a ^= c
    a = (a - _rot(c, 4)) & _U32
    b ^= a
    b = (b - _rot(a, 14)) & _U32
    c ^= b
    c = (c - _rot(b, 24)) & _U32
    return _signed(c)


@nb.njit(inline="always", **_OPTIONS)
def _sextet(c):  # type: ignore[no-untyped-def]
    """The 6-bit value of a Base64 character (RFC 4648 alphabet), or -1."""
    if 65 <= c <= 90:
        return np.int64(c) - 65
    if 97 <= c <= 122:
        return np.int64(c) - 71
    if 48 <= c <= 57:
        return np.int64(c) + 4
    if c == 43:
        return np.int64(62)
    if c == 47:
        return np.int64(63)
    return np.int64(-1)


@nb.njit(inline="always", **_OPTIONS)
def _decoded_byte(text, b):  # type: ignore[no-untyped-def]
    """Byte ``b`` of what the Base64 ``text`` encodes, from the two characters that
    carry it; -1 when one of them is not Base64."""
    g = (b // 3) * 4
    r = b % 3
    hi = _sextet(text[g + r])
    lo = _sextet(text[g + r + 1])
    if hi < 0 or lo < 0:
        return np.int64(-1)
    if r == 0:
        return ((hi << 2) | (lo >> 4)) & 0xFF
    if r == 1:
        return ((hi & 0xF) << 4) | (lo >> 2)
    return ((hi & 0x3) << 6) | lo


@nb.njit(
    nt.void(
        nt.Array(nt.uint8, 1, "C", readonly=True),  # the keys' UTF-8 bytes
        nt.Array(nt.int64, 1, "C", readonly=True),  # offsets of the keys (n + 1)
        nt.int64,  # hashes per key
        nt.int64,  # the filter's bits
        nt.int64,  # hash type
        nt.Array(nt.int64, 2, "C"),  # out (n, hashes): the bit positions of each key
    ),
    **_OPTIONS,
)
def bit_positions(data, offsets, hashes, bits, kind, out):  # type: ignore[no-untyped-def]
    """Each key's bit positions in a filter of this shape, the same in every filter of it.
    An empty key (which cannot be hashed) gets none: its row stays 0, and the caller
    treats it as present."""
    for i in range(len(offsets) - 1):
        start = offsets[i]
        length = offsets[i + 1] - start
        if length == 0:
            continue
        h = np.int64(0)
        for j in range(hashes):
            h = murmur(data, start, length, h) if kind == MURMUR else jenkins(data, start, length, h)
            out[i, j] = abs(h) % bits


@nb.njit(
    nt.int64(
        nt.Array(nt.int64, 2, "C", readonly=True),  # the keys' bit positions (``bit_positions``)
        nt.int64,  # the decoded byte where the row's bits begin
        nt.Array(nt.uint8, 1, "C", readonly=True),  # the filter's Base64 text
        nt.Array(nt.bool_, 1, "C"),  # found: per key, whether a row may hold it (in and out)
    ),
    **_OPTIONS,
)
def test_bits(positions, at, text, found):  # type: ignore[no-untyped-def]
    """Marks in ``found`` the keys all of whose positions are set in the row of bits at
    ``at``. Only the characters that carry a tested bit are decoded, so a test costs the
    same whatever the filter's size. Returns 1 when one of them is not Base64, else 0."""
    for i in range(positions.shape[0]):
        if found[i]:
            continue
        hit = True
        for j in range(positions.shape[1]):
            bit = positions[i, j]
            byte = _decoded_byte(text, at + (bit >> 3))
            if byte < 0:
                return 1
            if (byte >> (bit & 7)) & 1 == 0:
                hit = False
                break
        found[i] = hit
    return 0


@nb.njit(nt.boolean(nt.Array(nt.uint8, 1, "C", readonly=True), nt.int64), **_OPTIONS)
def is_base64(text, data_chars):  # type: ignore[no-untyped-def]
    """Whether the first ``data_chars`` characters of ``text`` are all in the Base64 alphabet
    (RFC 4648). Ranges, not a table: the loop has no loads to gather and no early exit,
    so the compiler vectorises it."""
    ok = True
    for i in range(data_chars):
        c = text[i]
        ok &= (
            (np.uint8(c - 65) < 26)  # A-Z
            | (np.uint8(c - 97) < 26)  # a-z
            | (np.uint8(c - 48) < 10)  # 0-9
            | (c == 43)  # +
            | (c == 47)  # /
        )
    return ok
