"""Hudi's bloom filters of record keys: decoded from the Base64 text Hudi stores (a base
file's footer, a metadata-table ``bloom_filters`` record), tested for many keys at once.

Two layouts, both Hadoop's ``Writable`` bytes, big-endian:

* SIMPLE: version (-1), hash count k, hash type (a byte: 0 Jenkins, 1 Murmur), bit
  count m, then ceil(m / 8) bytes of bits (bit i in byte i >> 3, under 1 << (i & 7)).
  An older header without a version starts with k and hashes with Jenkins.
* DYNAMIC_V0: that header, then the row capacity, the record count and the row count,
  then each row as a whole SIMPLE filter. A key may be present when some row says so.

The hashed bytes are the record key's UTF-8 bytes, without its partition.
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hudi_ray.core.exceptions import HudiCorruptFileError
from hudi_ray.core.log_file import compiled

# Keys of a Parquet base file's footer metadata.
FOOTER_KEY = "org.apache.hudi.bloomfilter"
LEGACY_FOOTER_KEY = "com.uber.hoodie.bloomfilter"
TYPE_CODE_KEY = "hoodie_bloom_filter_type_code"
MIN_KEY = "hoodie_min_record_key"
MAX_KEY = "hoodie_max_record_key"

SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"

_KERNELS = "hudi_ray.core.bloom.kernels"
_HEADER = struct.Struct(">iibi")
_LEGACY_HEADER = struct.Struct(">ii")
_DYNAMIC = struct.Struct(">iii")
_HASH_TYPES = (0, 1)  # Jenkins, Murmur


@dataclass(frozen=True, eq=False)
class BloomFilter:
    """A decoded filter: rows of bits, each with its hash count, bit count and hash type."""

    rows: np.ndarray  # int64 (n, 4): hashes, bits, hash type, first byte of the row in ``bits``
    bits: np.ndarray  # uint8

    def might_contain(self, keys: pa.Array | Sequence[str]) -> np.ndarray:
        """Per key, False where the filter proves the key absent; True where it may be
        present (and for null keys)."""
        array = keys if isinstance(keys, pa.Array) else pa.array(list(keys), pa.string())
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        array = array.cast(pa.large_string())
        out = np.zeros(len(array), dtype=np.bool_)
        if len(array) == 0:
            return out
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        array = array.fill_null("")
        _, offset_buffer, data_buffer = array.buffers()
        offsets = np.frombuffer(offset_buffer, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
        data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(1, np.uint8)
        compiled.load(_KERNELS).might_contain(data, np.ascontiguousarray(offsets), self.rows, self.bits, out)
        return out | ~valid


def decode_bloom_filter(text: str | bytes, type_code: str | None, where: str) -> BloomFilter:
    """The filter of ``text`` (Base64), of type ``type_code`` (None: SIMPLE, as Hudi reads
    a footer without one). Anything that does not decode is ``HudiCorruptFileError``
    naming ``where``."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise HudiCorruptFileError(f"The bloom filter of {where} is not Base64: {exc}") from exc
    code = (type_code or SIMPLE).strip()
    rows: list[tuple[int, int, int, int]] = []
    chunks: list[bytes] = []
    try:
        if code == SIMPLE:
            end = _row(raw, 0, rows, chunks, where)
        elif code == DYNAMIC_V0:
            _, _, _, _, pos = _header(raw, 0, where)
            _, _, count = _DYNAMIC.unpack_from(raw, pos)
            pos += _DYNAMIC.size
            if count < 1 or count > len(raw):
                raise HudiCorruptFileError(f"The bloom filter of {where} declares {count} rows")
            for _ in range(count):
                pos = _row(raw, pos, rows, chunks, where)
            end = pos
        else:
            raise HudiCorruptFileError(f"The bloom filter of {where} has the unknown type {code!r}")
    except struct.error as exc:
        raise HudiCorruptFileError(f"The bloom filter of {where} is truncated: {exc}") from exc
    if end != len(raw):
        raise HudiCorruptFileError(
            f"The bloom filter of {where} ({code}) holds {len(raw) - end} bytes after its last row"
        )
    return BloomFilter(np.array(rows, dtype=np.int64).reshape(-1, 4), np.frombuffer(b"".join(chunks), np.uint8))


def _header(raw: bytes, pos: int, where: str) -> tuple[int, int, int, int, int]:
    """(version, hashes, hash type, bits, position after) of a Hadoop filter header."""
    first = _LEGACY_HEADER.unpack_from(raw, pos)[0]
    if first > 0:  # a header from before versions: k, then m, hashed with Jenkins
        hashes, bits = _LEGACY_HEADER.unpack_from(raw, pos)
        version, kind, pos = 0, 0, pos + _LEGACY_HEADER.size
    else:
        version, hashes, kind, bits = _HEADER.unpack_from(raw, pos)
        pos += _HEADER.size
        if version != -1:
            raise HudiCorruptFileError(f"The bloom filter of {where} has the unsupported version {version}")
    if kind not in _HASH_TYPES:
        raise HudiCorruptFileError(f"The bloom filter of {where} uses the unknown hash type {kind}")
    if hashes < 1 or hashes > 1000 or bits < 1:
        raise HudiCorruptFileError(f"The bloom filter of {where} declares {hashes} hashes over {bits} bits")
    return version, hashes, kind, bits, pos


def _row(raw: bytes, pos: int, rows: list[tuple[int, int, int, int]], chunks: list[bytes], where: str) -> int:
    """Read one SIMPLE filter at ``pos`` into ``rows`` and ``chunks``; the position after it."""
    _, hashes, kind, bits, pos = _header(raw, pos, where)
    size = (bits + 7) // 8
    if pos + size > len(raw):
        raise HudiCorruptFileError(
            f"The bloom filter of {where} declares {bits} bits, but {len(raw) - pos} bytes follow its header"
        )
    rows.append((hashes, bits, kind, sum(len(c) for c in chunks)))
    chunks.append(raw[pos : pos + size])
    return pos + size
