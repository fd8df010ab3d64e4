"""The HFile encodings a reader decodes: varints (protobuf's and Hadoop's),
protobuf fields, cells of a data block and gzip-compressed block payloads."""

from __future__ import annotations

import struct
import zlib

from hudi_ray.core.exceptions import HudiCorruptFileError


def varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Protobuf base-128 varint."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ValueError("varint too long")


def hadoop_vlong(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Hadoop WritableUtils variable-length long."""
    first = struct.unpack_from(">b", buf, pos)[0]
    pos += 1
    if first >= -112:
        return first, pos
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)
    value = 0
    for _ in range(size - 1):
        value = (value << 8) | buf[pos]
        pos += 1
    return (~value if negative else value), pos


def protobuf_fields(buf: bytes | memoryview) -> dict[int, list[int | bytes]]:
    out: dict[int, list[int | bytes]] = {}
    pos = 0
    while pos < len(buf):
        tag, pos = varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = varint(buf, pos)
            out.setdefault(number, []).append(value)
        elif wire == 2:
            length, pos = varint(buf, pos)
            out.setdefault(number, []).append(bytes(buf[pos : pos + length]))
            pos += length
        elif wire == 1:
            out.setdefault(number, []).append(struct.unpack_from("<q", buf, pos)[0])
            pos += 8
        elif wire == 5:
            out.setdefault(number, []).append(struct.unpack_from("<i", buf, pos)[0])
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    return out


def row_of_key(key: bytes) -> bytes:
    """The row of an index key: full KeyValue keys and bare ``short len | row`` alike."""
    if len(key) < 2:
        return key
    (n,) = struct.unpack_from(">H", key, 0)
    return key[2 : 2 + n]


# A cell: key length, value length, then the key, whose first field is the row's length.
CELL_HEAD = struct.Struct(">iiH")
CELL_LENGTHS = struct.Struct(">ii")


def next_cell(
    payload: bytes, pos: int, target: bytes, where: str, block_offset: int
) -> tuple[int, bytes, bytes, int] | None:
    """The first cell at or after byte ``pos`` of a data block's payload whose row is at
    least ``target``: (its position, row, value, the position after it); None past the
    block's last cell. The one place cells are parsed, for scans and lookups alike."""
    n = len(payload)
    head = CELL_HEAD.unpack_from
    while pos < n:
        if pos + 10 <= n:
            key_len, value_len, row_len = head(payload, pos)
        else:
            key_len, value_len = CELL_LENGTHS.unpack_from(payload, pos)
            row_len = 0
        end = pos + 8 + key_len + value_len
        # A negative length would move the cursor backwards and loop forever.
        if key_len < 2 or value_len < 0 or end > n:
            raise HudiCorruptFileError(
                f"HFile {where}: cell at byte {pos} of the data block at offset {block_offset} "
                f"has key length {key_len} and value length {value_len}, outside its {n}-byte block"
            )
        row = payload[pos + 10 : pos + 10 + row_len]
        # The MVCC timestamp (always present in Hudi files) is a Hadoop vlong: one
        # byte unless its first byte, read signed, is below -112.
        first = payload[end]
        after = end + 1 if first < 0x80 or first >= 0x90 else hadoop_vlong(payload, end)[1]
        if row >= target:
            return pos, row, payload[end - value_len : end], after
        pos = after
    return None


# Deflate cannot expand data by more than about 1032:1, so a block header
# declaring more than this per compressed byte is lying.
MAX_INFLATE_RATIO = 1032


def inflate(payload: bytes, declared: int, where: str, offset: int) -> bytes:
    """Gunzip a block payload, never producing more than the header's declared size.

    A corrupt or hostile block may inflate to gigabytes; stopping at the
    declared size bounds memory by what the file claims, which itself is
    bounded by the deflate ratio of the bytes on disk.
    """
    if declared < 0 or declared > len(payload) * MAX_INFLATE_RATIO + 64:
        raise HudiCorruptFileError(
            f"HFile {where}: block at offset {offset} declares {declared} uncompressed bytes "
            f"for {len(payload)} compressed bytes"
        )
    inflater = zlib.decompressobj(31)
    out = inflater.decompress(payload, declared + 1)
    if not inflater.eof and len(out) <= declared and inflater.unconsumed_tail:
        # Output may stop exactly at the limit before the gzip trailer is read.
        out += inflater.decompress(inflater.unconsumed_tail, 1)
    if len(out) > declared:
        raise HudiCorruptFileError(
            f"HFile {where}: block at offset {offset} inflates past its declared {declared} bytes"
        )
    if not inflater.eof:
        raise HudiCorruptFileError(f"HFile {where}: gzip data of the block at offset {offset} is truncated")
    return out
