"""Key hashing of the metadata table: xxHash64 / MD5 ids for column stats keys,
and Java's String.hashCode for routing keys to file groups."""

from __future__ import annotations

import base64
import struct
from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import hashlib
else:
    hashlib = lazy_module("hashlib")  # OpenSSL's load, for tables whose metadata table is read

_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5
_M = 0xFFFFFFFFFFFFFFFF
# Hudi seeds with the Java int 0xdabadaba, sign-extended to a long.
HUDI_SEED = 0xFFFFFFFFDABADABA


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    acc = (acc + lane * _P2) & _M
    return (_rotl(acc, 31) * _P1) & _M


def _merge(acc: int, val: int) -> int:
    acc ^= _round(0, val)
    return (acc * _P1 + _P4) & _M


def xxh64(data: bytes, seed: int = HUDI_SEED) -> int:
    n = len(data)
    pos = 0
    if n >= 32:
        v1 = (seed + _P1 + _P2) & _M
        v2 = (seed + _P2) & _M
        v3 = seed & _M
        v4 = (seed - _P1) & _M
        while pos + 32 <= n:
            a, b, c, d = struct.unpack_from("<4Q", data, pos)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            pos += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M
        for v in (v1, v2, v3, v4):
            h = _merge(h, v)
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while pos + 8 <= n:
        (k,) = struct.unpack_from("<Q", data, pos)
        h ^= _round(0, k)
        h = (_rotl(h, 27) * _P1 + _P4) & _M
        pos += 8
    if pos + 4 <= n:
        (k,) = struct.unpack_from("<I", data, pos)
        h ^= (k * _P1) & _M
        h = (_rotl(h, 23) * _P2 + _P3) & _M
        pos += 4
    while pos < n:
        h ^= (data[pos] * _P5) & _M
        h = (_rotl(h, 11) * _P1) & _M
        pos += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    h ^= h >> 32
    return h


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def column_id(column: str) -> str:
    return _b64(struct.pack(">Q", xxh64(column.encode("utf-8"))))


def partition_id(partition: str) -> str:
    return _b64(struct.pack(">Q", xxh64((partition or ".").encode("utf-8"))))


def file_id(file_name: str) -> str:
    return _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def column_stats_key(column: str, partition: str, file_name: str) -> str:
    return column_id(column) + partition_id(partition) + file_id(file_name)


def bloom_filter_key(partition: str, file_name: str) -> str:
    """The key of a base file's record in the ``bloom_filters`` partition."""
    return partition_id(partition) + file_id(file_name)


def partition_stats_key(column: str, partition: str) -> str:
    return column_id(column) + partition_id(partition)


def java_string_hash(s: str) -> int:
    """Java's String.hashCode over UTF-16 code units, as a signed int."""
    h = 0
    raw = s.encode("utf-16-be")
    for i in range(0, len(raw), 2):
        h = (31 * h + ((raw[i] << 8) | raw[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def file_group_index(key: str, num_file_groups: int) -> int:
    return abs(abs(java_string_hash(key)) % num_file_groups)
