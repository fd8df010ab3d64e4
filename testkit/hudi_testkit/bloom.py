"""Hudi's record-key bloom filters, written as Hudi's writers put them in base file footers.

A filter is Hadoop's ``Writable`` layout, Base64 text: SIMPLE is one row (version -1, hash
count, hash type 1 = Murmur, bit count, then the bits, bit i in byte i >> 3 under
1 << (i & 7)); DYNAMIC_V0 is that header, the row capacity, the record count, the row
count, then each row as a SIMPLE filter. A key sets, per row, the bits of its k chained
hashes: Hadoop's MurmurHash of the key's UTF-8 bytes, each hash the seed of the next,
its absolute value modulo the bit count.

The hashes are numpy over all keys of a file at once (keys padded to one width), so a
benchmark table of thousands of files is written in seconds.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

FOOTER_KEY = b"org.apache.hudi.bloomfilter"
TYPE_CODE_KEY = b"hoodie_bloom_filter_type_code"
MIN_KEY = b"hoodie_min_record_key"
MAX_KEY = b"hoodie_max_record_key"

SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"
_MURMUR = 1
_M = np.uint64(0x5BD1E995)
_U32 = np.uint64(0xFFFFFFFF)


@dataclass(frozen=True)
class BloomFilterSpec:
    """Hudi's bloom filter write configs; the defaults are Hudi's
    (``hoodie.bloom.index.filter.type``, ``hoodie.index.bloom.num_entries``,
    ``hoodie.index.bloom.fpp``, ``hoodie.bloom.index.filter.dynamic.max.entries``)."""

    filter_type: str = DYNAMIC_V0
    num_entries: int = 60_000
    fpp: float = 1e-9
    max_entries: int = 100_000

    def __post_init__(self) -> None:
        if self.filter_type not in (SIMPLE, DYNAMIC_V0):
            raise ValueError(f"Unknown bloom filter type {self.filter_type!r}")
        if self.num_entries < 1 or not 0 < self.fpp < 1 or self.max_entries < self.num_entries:
            raise ValueError(f"Bad bloom filter sizing: {self}")

    @property
    def bits(self) -> int:
        return math.ceil(self.num_entries * (-math.log(self.fpp) / (math.log(2) ** 2)))

    @property
    def hashes(self) -> int:
        return math.ceil(math.log(2) * self.bits / self.num_entries)


def _murmur(data: np.ndarray, lengths: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Hadoop's MurmurHash (unsigned 32-bit results) of each row of ``data`` (uint8, keys
    left-aligned), ``lengths`` bytes long, with per-key ``seeds`` (unsigned 32-bit)."""
    lengths = lengths.astype(np.uint64)
    h = (seeds ^ lengths) & _U32
    blocks = lengths >> np.uint64(2)
    for i in range(data.shape[1] // 4):
        word = data[:, 4 * i : 4 * i + 4].astype(np.uint64)
        k = word[:, 0] | (word[:, 1] << np.uint64(8)) | (word[:, 2] << np.uint64(16)) | (word[:, 3] << np.uint64(24))
        k = (k * _M) & _U32
        k ^= k >> np.uint64(24)
        k = (k * _M) & _U32
        mixed = ((h * _M) & _U32) ^ k
        h = np.where(blocks > i, mixed, h)
    left = lengths & np.uint64(3)
    rows = np.arange(len(lengths))
    ends = lengths.astype(np.int64)

    def signed_byte(back: int) -> np.ndarray:
        # Java widens a (signed) byte to an int: bytes >= 0x80 come in as 0xFFFFFFxx.
        at = np.maximum(ends - back, 0)
        b = data[rows, at].astype(np.uint64)
        return np.where(b >= 128, (b | np.uint64(0xFFFFFF00)) & _U32, b)

    h = np.where(left >= 3, h ^ ((signed_byte(3) << np.uint64(16)) & _U32), h)
    h = np.where(left >= 2, h ^ ((signed_byte(2) << np.uint64(8)) & _U32), h)
    h = np.where(left >= 1, h ^ signed_byte(1), h)
    h = np.where(left != 0, (h * _M) & _U32, h)
    h ^= h >> np.uint64(13)
    h = (h * _M) & _U32
    h ^= h >> np.uint64(15)
    return h


def bit_positions(keys: Sequence[str], hashes: int, bits: int) -> np.ndarray:
    """(len(keys), hashes) bit positions of each key, as Hadoop's ``HashFunction`` gives them."""
    encoded = [k.encode("utf-8") for k in keys]
    if any(not e for e in encoded):
        raise ValueError("Hudi refuses empty record keys in a bloom filter")
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    width = max(4, int(-(-lengths.max() // 4) * 4)) if len(encoded) else 4
    data = np.zeros((len(encoded), width), dtype=np.uint8)
    flat = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(encoded) else np.zeros(0, np.int64)
    row = np.repeat(np.arange(len(encoded)), lengths)
    col = np.arange(len(flat)) - np.repeat(starts, lengths)
    data[row, col] = flat
    out = np.zeros((len(encoded), hashes), dtype=np.int64)
    seed = np.zeros(len(encoded), dtype=np.uint64)
    for i in range(hashes):
        h = _murmur(data, lengths, seed)
        signed = h.astype(np.int64) - np.where(h >= np.uint64(0x80000000), 1 << 32, 0)
        out[:, i] = np.abs(signed) % bits
        seed = h
    return out


def _row_bytes(positions: np.ndarray, hashes: int, bits: int) -> bytes:
    vector = np.zeros((bits + 7) // 8, dtype=np.uint8)
    flat = positions.reshape(-1)
    np.bitwise_or.at(vector, flat >> 3, (1 << (flat & 7)).astype(np.uint8))
    return struct.pack(">iibi", -1, hashes, _MURMUR, bits) + vector.tobytes()


def bloom_filter_text(keys: Sequence[str], spec: BloomFilterSpec) -> str:
    """The Base64 text Hudi stores for a file holding ``keys`` (each added once, in order).

    DYNAMIC_V0 fills a row with ``num_entries`` keys, then opens another while the rows
    hold fewer than ``max_entries`` keys; past that, keys go to the rows in turn, the
    first row twice.
    """
    bits, hashes = spec.bits, spec.hashes
    positions = bit_positions(list(keys), hashes, bits)
    if spec.filter_type == SIMPLE:
        return base64.b64encode(_row_bytes(positions, hashes, bits)).decode("ascii")
    nr = spec.num_entries
    rows = 1
    while rows * nr < min(len(keys), spec.max_entries):
        rows += 1
    row_of = np.minimum(np.arange(len(keys)) // nr, rows - 1)
    full = rows * nr
    if len(keys) > full:
        # The key that finds every row full goes to the first; the rest go round from it.
        row_of[full:] = np.maximum(np.arange(len(keys) - full) - 1, 0) % rows
    body = b"".join(_row_bytes(positions[row_of == r], hashes, bits) for r in range(rows))
    # The record count restarts with each new row and keeps counting once keys go round.
    current = len(keys) - (rows - 1) * nr
    header = struct.pack(">iibi", -1, hashes, _MURMUR, bits) + struct.pack(">iii", nr, current, rows)
    return base64.b64encode(header + body).decode("ascii")


def footer_metadata(keys: pa.Array | pa.ChunkedArray, spec: BloomFilterSpec) -> dict[bytes, bytes]:
    """The footer entries Hudi writes with a base file of ``keys``: the filter, its type
    code (written for dynamic filters only) and the smallest and largest key."""
    values = [k for k in keys.to_pylist() if k is not None]
    out = {FOOTER_KEY: bloom_filter_text(values, spec).encode("ascii")}
    if spec.filter_type.startswith("DYNAMIC"):
        out[TYPE_CODE_KEY] = spec.filter_type.encode("ascii")
    if values:
        out[MIN_KEY] = min(values).encode("utf-8")
        out[MAX_KEY] = max(values).encode("utf-8")
    return out
