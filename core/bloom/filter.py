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
from typing import TYPE_CHECKING

from hudi_ray.core.exceptions import HudiCorruptFileError
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.util import compiled

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
else:
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")

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
    """A filter as its Base64 text and where each row's bits lie in what the text encodes.

    The bits are not decoded up front: a filter at Hudi's default sizing is 431 KB of
    text, and a lookup tests a few dozen of its bits.
    """

    rows: np.ndarray  # int64 (n, 4): hashes, bits, hash type, first byte of the row's bits
    text: np.ndarray  # uint8: the Base64 characters
    where: str

    def might_contain(self, keys: BloomKeys | pa.Array | Sequence[str]) -> np.ndarray:
        """Per key, False where the filter proves the key absent; True where it may be
        present (and for null and empty keys). A character the test meets that is not
        Base64 is ``HudiCorruptFileError``."""
        probe = keys if isinstance(keys, BloomKeys) else BloomKeys(keys)
        found = probe.unhashable.copy()
        kernels = compiled.load(_KERNELS)
        for hashes, bits, kind, at in self.rows.tolist():
            if kernels.test_bits(probe.positions(hashes, bits, kind), at, self.text, found):
                raise HudiCorruptFileError(f"The bloom filter of {self.where} holds characters that are not Base64")
        return found


class BloomKeys:
    """Keys to test against many filters. A key's bit positions depend only on a filter's
    shape (hashes, bits, hash type), so they are computed once per shape, not per filter:
    thousands of base files' filters of one table share a shape."""

    def __init__(self, keys: pa.Array | Sequence[str]) -> None:
        array = keys if isinstance(keys, (pa.Array, pa.ChunkedArray)) else pa.array(list(keys), pa.string())
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        array = array.cast(pa.large_string())
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        array = array.fill_null("")
        _, offset_buffer, data_buffer = array.buffers()
        offsets = np.frombuffer(offset_buffer, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
        self._offsets = np.ascontiguousarray(offsets)
        self._data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(1, np.uint8)
        # Null and empty keys cannot be hashed: any filter may hold them.
        self.unhashable = ~valid | (np.diff(self._offsets) == 0)
        self._positions: dict[tuple[int, int, int], np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.unhashable)

    def positions(self, hashes: int, bits: int, kind: int) -> np.ndarray:
        shape = (hashes, bits, kind)
        found = self._positions.get(shape)
        if found is None:
            found = np.zeros((len(self), hashes), dtype=np.int64)
            compiled.load(_KERNELS).bit_positions(self._data, self._offsets, hashes, bits, kind, found)
            self._positions[shape] = found
        return found


def _decoded_size(text: bytes | memoryview, where: str) -> int:
    """How many bytes the Base64 ``text`` encodes, from its length and padding."""
    pad = 0
    while pad < min(3, len(text)) and text[len(text) - 1 - pad] == 0x3D:  # "="
        pad += 1
    if not text or len(text) % 4 or pad > 2:
        raise HudiCorruptFileError(f"The bloom filter of {where} is not Base64: {len(text)} characters, {pad} padding")
    return len(text) // 4 * 3 - pad


def _decode_span(text: bytes | memoryview, start: int, size: int, decoded: int, where: str) -> bytes:
    """Bytes ``start`` to ``start + size`` (clipped to ``decoded``) of what ``text`` encodes."""
    end = min(start + size, decoded)
    if start >= end:
        return b""
    first, last = start // 3, (end + 2) // 3
    try:
        raw = base64.b64decode(text[first * 4 : last * 4], validate=True)
    except (binascii.Error, ValueError) as exc:
        raise HudiCorruptFileError(f"The bloom filter of {where} is not Base64: {exc}") from exc
    return raw[start - first * 3 : end - first * 3]


def decode_bloom_filter(text: str | bytes | memoryview, type_code: str | None, where: str) -> BloomFilter:
    """The filter of ``text`` (Base64), of type ``type_code`` (None: SIMPLE, as Hudi reads
    a footer without one). Its headers and length are checked here; anything that does not
    decode is ``HudiCorruptFileError`` naming ``where``."""
    data = text.encode("ascii", "replace") if isinstance(text, str) else text
    size = _decoded_size(data, where)
    code = (type_code or SIMPLE).strip()
    head = _decode_span(data, 0, _HEAD, size, where)
    shape = (code, _shape_of(code, head), size) if head.startswith(_VERSION) else None
    layout = _LAYOUTS.get(shape) if shape else None
    if layout is None:
        layout = _layout(data, size, code, where)
        if shape and len(layout) == 1:
            if len(_LAYOUTS) >= 64:
                _LAYOUTS.clear()
            _LAYOUTS[shape] = layout
    return BloomFilter(layout, _checked_text(data, size, where), where)


def _layout(data: bytes | memoryview, size: int, code: str, where: str) -> np.ndarray:
    """(hashes, bits, hash type, first byte of bits) of each row of the filter ``data``."""
    rows: list[tuple[int, int, int, int]] = []
    try:
        if code == SIMPLE:
            end = _row(data, size, 0, rows, where)
        elif code == DYNAMIC_V0:
            head = _decode_span(data, 0, _HEADER.size + _DYNAMIC.size, size, where)
            _, _, _, _, pos = _header(head, 0, where)
            _, _, count = _DYNAMIC.unpack_from(head, pos)
            pos += _DYNAMIC.size
            if count < 1 or count > size:
                raise HudiCorruptFileError(f"The bloom filter of {where} declares {count} rows")
            for _ in range(count):
                pos = _row(data, size, pos, rows, where)
            end = pos
        else:
            raise HudiCorruptFileError(f"The bloom filter of {where} has the unknown type {code!r}")
    except struct.error as exc:
        raise HudiCorruptFileError(f"The bloom filter of {where} is truncated: {exc}") from exc
    if end != size:
        raise HudiCorruptFileError(f"The bloom filter of {where} ({code}) holds {size - end} bytes after its last row")
    layout = np.array(rows, dtype=np.int64).reshape(-1, 4)
    layout.flags.writeable = False
    return layout


# A one-row filter's layout follows from its headers and its decoded size, so the filters
# of one table, sharing a shape, share it. The headers are its first bytes: a SIMPLE
# filter's own, or a DYNAMIC_V0 filter's, its capacity and row count and its first row's;
# not the record count, which differs from file to file. Headers from before versions
# are parsed each time.
_VERSION = struct.pack(">i", -1)
_HEAD = _HEADER.size + _DYNAMIC.size + _HEADER.size
_LAYOUTS: dict[tuple[str, bytes, int] | None, np.ndarray] = {}


def _shape_of(code: str, head: bytes) -> bytes:
    if code != DYNAMIC_V0:
        return head[: _HEADER.size]
    records = _HEADER.size + 4
    return head[:records] + head[records + 4 :]


def _checked_text(data: bytes | memoryview, size: int, where: str) -> np.ndarray:
    chars = np.frombuffer(data, np.uint8)
    # Every character, not only those a lookup reads: damage elsewhere means the file is
    # not what its writer left, and a wrong bit would drop a file holding the key.
    if not compiled.load(_KERNELS).is_base64(chars, len(data) - (len(data) // 4 * 3 - size)):
        raise HudiCorruptFileError(f"The bloom filter of {where} holds characters that are not Base64")
    return chars


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


def _row(text: bytes | memoryview, size: int, pos: int, rows: list[tuple[int, int, int, int]], where: str) -> int:
    """Note the SIMPLE filter at decoded byte ``pos`` of ``text`` in ``rows``; the position after it."""
    head = _decode_span(text, pos, _HEADER.size, size, where)
    _, hashes, kind, bits, after = _header(head, 0, where)
    start = pos + after
    length = (bits + 7) // 8
    if start + length > size:
        raise HudiCorruptFileError(
            f"The bloom filter of {where} declares {bits} bits, but {size - start} bytes follow its header"
        )
    rows.append((hashes, bits, kind, start))
    return start + length
