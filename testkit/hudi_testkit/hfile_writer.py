"""Write HFile v3 files the way Hudi's native HFile writer (table version 9) does.

Cells are HBase KeyValues with an empty family and qualifier, timestamp
``Long.MAX_VALUE``, type Put and a one-byte MVCC version; blocks have the
33-byte header, a gzip (or uncompressed) payload and NULL checksums (zero
bytes); index keys are ``short rowLen | row``. Unlike Hudi's writer, which
keeps one level of index, a file with more data blocks than
``max_root_entries`` gets a multi-level index as HBase lays it out: leaf
index blocks inline after the data blocks they cover, intermediate index
blocks after the data section, the root in the load-on-open section.
"""

from __future__ import annotations

import math
import struct
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hudi_ray.core.hfile import HEADER_SIZE, TRAILER_SIZE
from hudi_testkit.errors import HFileWriteError

CODEC_GZ = 1
CODEC_NONE = 2
BYTES_PER_CHECKSUM = 16384
COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
DEFAULT_BLOCK_SIZE = 64 * 1024
DEFAULT_MAX_ROOT_ENTRIES = 1 << 20  # effectively one level, as Hudi's own writer
DEFAULT_INDEX_FANOUT = 128

_MAGIC_DATA = b"DATABLK*"
_MAGIC_LEAF = b"IDXLEAF2"
_MAGIC_INTERMEDIATE = b"IDXINTE2"
_MAGIC_ROOT = b"IDXROOT2"
_MAGIC_FILE_INFO = b"FILEINF2"
_MAGIC_TRAILER = b'TRABLK"$'
_LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF
_TYPE_PUT = 4
_NO_PREVIOUS_BLOCK = -1
_CHECKSUM_NULL = 0
# Java's GZIPOutputStream header: no flags, no mtime, OS 0.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"
_GZIP_FEXTRA = 0x04
_UINT64 = (1 << 64) - 1


# -- encodings ------------------------------------------------------------------------------------


def protobuf_varint(value: int) -> bytes:
    """Protobuf base-128 varint of a non-negative value (negative int64s as their uint64)."""
    value &= _UINT64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def hadoop_vlong(value: int) -> bytes:
    """Hadoop ``WritableUtils.writeVLong``."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    length = -112
    if value < 0:
        value = ~value
        length = -120
    tmp = value
    while tmp:
        tmp >>= 8
        length -= 1
    n = -(length + 120) if length < -120 else -(length + 112)
    return struct.pack(">b", length) + value.to_bytes(n, "big")


def _pb_field_varint(number: int, value: int) -> bytes:
    return protobuf_varint(number << 3) + protobuf_varint(value)


def _pb_field_bytes(number: int, value: bytes) -> bytes:
    return protobuf_varint((number << 3) | 2) + protobuf_varint(len(value)) + value


def index_key(row: bytes) -> bytes:
    """An index key as Hudi's native writer stores it: ``short rowLen | row``."""
    return struct.pack(">H", len(row)) + row


def key_value(row: bytes, value: bytes) -> bytes:
    """One cell: lengths, key (row, empty family and qualifier, latest timestamp, Put), value, MVCC 0."""
    key = index_key(row) + b"\x00" + struct.pack(">qB", _LATEST_TIMESTAMP, _TYPE_PUT)
    return struct.pack(">ii", len(key), len(value)) + key + value + b"\x00"


def _checksum_bytes(on_disk_data_with_header: int) -> int:
    return 4 * math.ceil(on_disk_data_with_header / BYTES_PER_CHECKSUM)


def _gzip(data: bytes, level: int, pad: int = 0) -> bytes:
    """One gzip member; ``pad`` > 0 adds an FEXTRA field of that many bytes (at least 6)."""
    comp = zlib.compressobj(level, zlib.DEFLATED, -15)
    body = comp.compress(data) + comp.flush()
    tail = struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    if not pad:
        return _GZIP_HEADER + body + tail
    sub = b"HR" + struct.pack("<H", pad - 6) + b"\x00" * (pad - 6)  # one subfield, of zeros
    header = bytearray(_GZIP_HEADER)
    header[3] |= _GZIP_FEXTRA
    return bytes(header) + struct.pack("<H", len(sub)) + sub + body + tail


def _consistent_checksum_count(on_disk_data_with_header: int) -> bool:
    """Whether the checksum count comes out the same from the data size (Java, this module's
    reader) and from the size with checksums (hudi-rs, which would cut the payload short)."""
    n = _checksum_bytes(on_disk_data_with_header)
    return n == _checksum_bytes(on_disk_data_with_header + n)


def encode_block(magic: bytes, payload: bytes, codec: int, level: int = 6) -> bytes:
    """Header, payload (compressed when GZ) and zeroed NULL checksums."""
    if codec == CODEC_GZ:
        packed = _gzip(payload, level)
        size = HEADER_SIZE + len(packed)
        if not _consistent_checksum_count(size):
            # Grow the gzip header (an FEXTRA field, which readers skip) past the checksum chunk boundary.
            boundary = math.ceil(size / BYTES_PER_CHECKSUM) * BYTES_PER_CHECKSUM
            packed = _gzip(payload, level, pad=max(6, boundary - size + 1))
            assert _consistent_checksum_count(HEADER_SIZE + len(packed))
    elif codec == CODEC_NONE:
        packed = payload
    else:
        raise HFileWriteError(f"Unsupported HFile codec {codec}; use CODEC_GZ or CODEC_NONE")
    data_with_header = HEADER_SIZE + len(packed)
    checksums = _checksum_bytes(data_with_header)
    header = magic + struct.pack(
        ">iiqBii",
        len(packed) + checksums,
        len(payload),
        _NO_PREVIOUS_BLOCK,
        _CHECKSUM_NULL,
        BYTES_PER_CHECKSUM,
        data_with_header,
    )
    assert len(header) == HEADER_SIZE
    return header + packed + b"\x00" * checksums


# -- the writer -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _IndexEntry:
    offset: int
    size: int  # on disk, header and checksums included
    first_row: bytes


@dataclass
class HFileWriter:
    """Collects cells in row order and lays out one HFile.

    ``block_size`` is the uncompressed payload size at which a data block is
    closed (each block holds at least one cell). When there are more data
    blocks than ``max_root_entries``, leaf index blocks of at most
    ``index_fanout`` entries are written inline, and intermediate levels are
    added until the root has at most ``max_root_entries`` entries.
    """

    block_size: int = DEFAULT_BLOCK_SIZE
    codec: int = CODEC_GZ
    compression_level: int = 6
    max_root_entries: int = DEFAULT_MAX_ROOT_ENTRIES
    index_fanout: int = DEFAULT_INDEX_FANOUT
    create_time_ms: int | None = None
    _blocks: list[tuple[bytes, bytes]] = field(default_factory=list, init=False)  # (first row, encoded block)
    _pending: list[bytes] = field(default_factory=list, init=False)
    _pending_size: int = field(default=0, init=False)
    _pending_first: bytes = field(default=b"", init=False)
    _last_row: bytes | None = field(default=None, init=False)
    _entries: int = field(default=0, init=False)
    _row_bytes: int = field(default=0, init=False)
    _value_bytes: int = field(default=0, init=False)
    _data_bytes: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.block_size < 1:
            raise HFileWriteError("block_size must be positive")
        if self.max_root_entries < 1 or self.index_fanout < 2:
            raise HFileWriteError("max_root_entries must be >= 1 and index_fanout >= 2")
        if self.codec not in (CODEC_GZ, CODEC_NONE):
            raise HFileWriteError(f"Unsupported HFile codec {self.codec}")

    def append(self, row: bytes, value: bytes) -> None:
        """Add one cell; rows must be strictly increasing (unsigned byte order)."""
        if self._last_row is not None and row <= self._last_row:
            raise HFileWriteError(f"HFile rows must be strictly increasing: {row!r} after {self._last_row!r}")
        if len(row) > 0x7FFF:
            raise HFileWriteError(f"HFile row of {len(row)} bytes is longer than 32767")
        if self._pending_size >= self.block_size:
            self._finish_block()
        if not self._pending:
            self._pending_first = row
        cell = key_value(row, value)
        self._pending.append(cell)
        self._pending_size += len(cell)
        self._last_row = row
        self._entries += 1
        self._row_bytes += len(row)
        self._value_bytes += len(value)

    def extend(self, cells: Iterable[tuple[bytes, bytes]]) -> None:
        for row, value in cells:
            self.append(row, value)

    def _finish_block(self) -> None:
        if not self._pending:
            return
        payload = b"".join(self._pending)
        self._data_bytes += len(payload)
        self._blocks.append((self._pending_first, self._encode(_MAGIC_DATA, payload)))
        self._pending, self._pending_size = [], 0

    def _encode(self, magic: bytes, payload: bytes) -> bytes:
        return encode_block(magic, payload, self.codec, self.compression_level)

    @staticmethod
    def _non_root_payload(entries: list[_IndexEntry]) -> bytes:
        """Leaf / intermediate index block: count, offsets of each entry, then the entries."""
        bodies = [struct.pack(">qi", e.offset, e.size) + index_key(e.first_row) for e in entries]
        positions = [0]
        for b in bodies:
            positions.append(positions[-1] + len(b))
        return struct.pack(f">i{len(positions)}i", len(entries), *positions) + b"".join(bodies)

    @staticmethod
    def _root_payload(entries: list[_IndexEntry]) -> bytes:
        out = bytearray()
        for e in entries:
            key = index_key(e.first_row)
            out += struct.pack(">qi", e.offset, e.size) + hadoop_vlong(len(key)) + key
        return bytes(out)

    def finish(self, file_info: Mapping[bytes, bytes] | None = None) -> bytes:
        """The whole file; ``file_info`` entries (e.g. ``schema``) go before the computed ones."""
        self._finish_block()
        chunks: list[bytes] = []
        pos = 0
        index_bytes = 0  # uncompressed size of every index block, as HBase records it

        def put(block: bytes) -> int:
            nonlocal pos
            chunks.append(block)
            start = pos
            pos += len(block)
            return start

        data_entries: list[_IndexEntry] = []
        multi_level = len(self._blocks) > self.max_root_entries
        leaf_entries: list[_IndexEntry] = []  # entries of the leaf blocks written so far
        chunk: list[_IndexEntry] = []
        for i, (first, block) in enumerate(self._blocks):
            entry = _IndexEntry(put(block), len(block), first)
            data_entries.append(entry)
            chunk.append(entry)
            last = i == len(self._blocks) - 1
            if multi_level and (len(chunk) == self.index_fanout or last):
                payload = self._non_root_payload(chunk)
                index_bytes += len(payload)
                leaf = self._encode(_MAGIC_LEAF, payload)
                leaf_entries.append(_IndexEntry(put(leaf), len(leaf), chunk[0].first_row))
                chunk = []
        levels = 1
        level = data_entries
        if multi_level:
            levels, level = 2, leaf_entries
            while len(level) > self.max_root_entries:
                upper: list[_IndexEntry] = []
                for start in range(0, len(level), self.index_fanout):
                    group = level[start : start + self.index_fanout]
                    payload = self._non_root_payload(group)
                    index_bytes += len(payload)
                    block = self._encode(_MAGIC_INTERMEDIATE, payload)
                    upper.append(_IndexEntry(put(block), len(block), group[0].first_row))
                levels, level = levels + 1, upper

        root_payload = self._root_payload(level)
        if levels > 1:
            # Mid-key metadata of multi-level roots: the leaf holding the middle data block.
            mid = (len(data_entries) - 1) // 2
            leaf = leaf_entries[mid // self.index_fanout]
            root_payload += struct.pack(">qii", leaf.offset, leaf.size, mid % self.index_fanout)
        index_bytes += len(root_payload)
        load_on_open = put(self._encode(_MAGIC_ROOT, root_payload))
        put(self._encode(_MAGIC_ROOT, b""))  # meta index: no meta blocks
        info = dict(file_info or {})
        n = self._entries
        info.update(
            {
                b"hfile.LASTKEY": index_key(self._last_row) if self._last_row is not None else b"",
                b"hfile.AVG_KEY_LEN": struct.pack(">i", self._row_bytes // n if n else 0),
                b"hfile.AVG_VALUE_LEN": struct.pack(">i", self._value_bytes // n if n else 0),
                b"hfile.CREATE_TIME_TS": struct.pack(">q", self._create_time()),
                b"KEY_VALUE_VERSION": struct.pack(">i", 1),
                b"MAX_MEMSTORE_TS_KEY": struct.pack(">q", 0),
            }
        )
        pairs = b"".join(_pb_field_bytes(1, _pb_field_bytes(1, k) + _pb_field_bytes(2, v)) for k, v in info.items())
        file_info_offset = put(self._encode(_MAGIC_FILE_INFO, b"PBUF" + protobuf_varint(len(pairs)) + pairs))

        first_data = data_entries[0].offset if data_entries else _UINT64
        last_data = data_entries[-1].offset if data_entries else 0
        trailer = b"".join(
            [
                _pb_field_varint(1, file_info_offset),
                _pb_field_varint(2, load_on_open),
                _pb_field_varint(3, index_bytes),
                _pb_field_varint(5, len(level)),
                _pb_field_varint(6, 0),
                _pb_field_varint(7, n),
                _pb_field_varint(8, levels),
                _pb_field_varint(9, first_data),
                _pb_field_varint(10, last_data),
                _pb_field_bytes(11, COMPARATOR.encode()),
                _pb_field_varint(12, self.codec),
            ]
        )
        body = _MAGIC_TRAILER + protobuf_varint(len(trailer)) + trailer
        put(body + b"\x00" * (TRAILER_SIZE - 4 - len(body)) + struct.pack(">I", 3))  # major 3, minor 0
        return b"".join(chunks)

    def _create_time(self) -> int:
        return self.create_time_ms if self.create_time_ms is not None else int(time.time() * 1000)


def write_hfile(
    cells: Iterable[tuple[bytes, bytes]],
    file_info: Mapping[bytes, bytes] | None = None,
    **options: int,
) -> bytes:
    """An HFile holding ``cells`` (sorted, unique rows); ``options`` are :class:`HFileWriter`'s."""
    writer = HFileWriter(**options)
    writer.extend(cells)
    return writer.finish(file_info)
