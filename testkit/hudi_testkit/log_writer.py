"""Writing Hudi log blocks: framing, Avro and Parquet data blocks, delete blocks.

Byte layouts are those :mod:`hudi_ray.core.log_file` reads (log format version
1, block content version 3). Avro records are encoded column by column with
Arrow compute kernels, not record by record: every field becomes one binary
array of per-row encodings (zigzag varints, little-endian floats, length
prefixed bytes, big-endian fixed decimals, union branch bytes), and the fields
are joined element-wise into records. The bytes are exactly what
``fastavro.schemaless_writer`` writes for the same values; nested types
(arrays, maps, records) fall back to fastavro, value by value.
"""

from __future__ import annotations

import io
import struct
import sys
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ray.core.log_file import MAGIC, BlockType, HeaderKey
from hudi_testkit.errors import InvalidRowsError, UnsupportedTypeError

LOG_FORMAT_VERSION = 1
BLOCK_CONTENT_VERSION = 3

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_EMPTY = pa.scalar(b"", pa.binary())
_NULL_BINARY = pa.scalar(None, pa.binary())
_U64 = pa.uint64()
_U32 = pa.uint32()
_LITTLE_ENDIAN = sys.byteorder == "little"

Chunk = bytes | pa.Buffer

# -- framing -----------------------------------------------------------------------------------


def _metadata_bytes(entries: Mapping[int, str]) -> bytes:
    """Header or footer map: int32 count, then (int32 key ordinal, int32 length, UTF-8 bytes) per entry."""
    out = [_I32.pack(len(entries))]
    for key, value in entries.items():
        data = value.encode("utf-8")
        out += [_I32.pack(int(key)), _I32.pack(len(data)), data]
    return b"".join(out)


def _size(chunks: Iterable[Chunk]) -> int:
    return sum(c.size if isinstance(c, pa.Buffer) else len(c) for c in chunks)


def frame_block(block_type: BlockType, header: Mapping[int, str], content: Sequence[Chunk]) -> list[Chunk]:
    """One block, as the pieces to write in order (content chunks are not copied).

    ``#HUDI#``, int64 block size (everything after this field), int32 log
    format version, int32 block type, header, int64 content length, content,
    empty footer, int64 trailing length (block size + 6).
    """
    head = _I32.pack(LOG_FORMAT_VERSION) + _I32.pack(int(block_type)) + _metadata_bytes(header)
    content_length = _size(content)
    head += _I64.pack(content_length)
    footer = _metadata_bytes({})
    block_size = len(head) + content_length + len(footer) + 8
    return [MAGIC + _I64.pack(block_size) + head, *content, footer + _I64.pack(block_size + len(MAGIC))]


def block_header(instant_time: str, schema_json: str | None) -> dict[int, str]:
    header = {HeaderKey.INSTANT_TIME: instant_time}
    if schema_json is not None:
        header[HeaderKey.SCHEMA] = schema_json
    return header


# -- vectorized Avro encoding --------------------------------------------------------------------


def _bytes_of(fixed: pa.Array) -> pa.Array:
    """A fixed-size binary array as a plain binary array (nulls kept)."""
    return fixed.cast(pa.binary())


def _uint64(values: pa.Array) -> pa.Array:
    return values.view(_U64)


def _zigzag(values: pa.Array) -> pa.Array:
    """int64 → zigzag-encoded uint64 (``(n << 1) ^ (n >> 63)``); nulls become 0."""
    values = pc.fill_null(values, 0)
    doubled = _uint64(pc.shift_left(values, 1))
    sign = _uint64(pc.if_else(pc.less(values, 0), pa.scalar(-1, pa.int64()), pa.scalar(0, pa.int64())))
    return pc.bit_wise_xor(doubled, sign)


def _varint(unsigned: pa.Array) -> pa.Array:
    """Avro's base-128 varint of each (already zigzagged) uint64: one binary value per row, never null."""
    seven, low_bits, high_bit = pa.scalar(7, _U64), pa.scalar(0x7F, _U64), pa.scalar(0x80, _U64)
    zero = pa.scalar(0, _U64)
    pieces: list[pa.Array] = []
    rest = unsigned
    present: pa.Array | None = None  # does row i have a k-th byte at all
    while True:
        low = pc.bit_wise_and(rest, low_bits)
        rest = pc.shift_right(rest, seven)
        more = pc.not_equal(rest, zero)
        byte = pc.if_else(more, pc.bit_wise_or(low, high_bit), low).cast(pa.uint8())
        piece = _bytes_of(byte.view(pa.binary(1)))
        if present is not None:
            piece = pc.if_else(present, piece, _NULL_BINARY)
        pieces.append(piece)
        if not pc.any(more).as_py():
            break
        present = more  # a (k+1)-th byte exists only where the k-th had more to come
    if len(pieces) == 1:
        return pieces[0]
    return pc.binary_join_element_wise(*pieces, _EMPTY, null_handling="skip")


def _join(*parts: pa.Array | pa.Scalar) -> pa.Array:
    return pc.binary_join_element_wise(*parts, _EMPTY)


def _int64_of(col: pa.Array) -> pa.Array:
    t = col.type
    if pa.types.is_int64(t):
        return col
    if pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_duration(t):
        return col.view(pa.int64())
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return col.view(pa.int32()).cast(pa.int64())
    return col.cast(pa.int64())


def _fixed_decimal(col: pa.Array, size: int) -> pa.Array:
    """Two's complement, big-endian, ``size`` bytes: the Avro ``fixed`` form of a decimal."""
    width = col.type.byte_width
    little = _bytes_of(col.view(pa.binary(width)))
    return pc.binary_slice(pc.binary_reverse(little), width - size, width)


def _is_plain_int(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_date32(t) or pa.types.is_time32(t)


def _primitive(col: pa.Array, avro_type: Any) -> pa.Array | None:
    """Per-row encodings of a non-union value, or None when only fastavro can encode it.

    Rows that are null in ``col`` may hold anything (they are masked by the caller).
    """
    name = avro_type if isinstance(avro_type, str) else avro_type.get("type")
    logical = avro_type.get("logicalType") if isinstance(avro_type, dict) else None
    t = col.type
    if name in ("int", "long") and (_is_plain_int(t) or pa.types.is_temporal(t)):
        if logical is None and not pa.types.is_integer(t):
            return None
        return _varint(_zigzag(_int64_of(col)))
    if not _LITTLE_ENDIAN:
        return None
    if name == "boolean" and pa.types.is_boolean(t):
        return _bytes_of(col.cast(pa.uint8()).view(pa.binary(1)))
    if name == "float" and pa.types.is_float32(t):
        return _bytes_of(col.view(pa.binary(4)))
    if name == "double" and pa.types.is_float64(t):
        return _bytes_of(col.view(pa.binary(8)))
    if name in ("string", "bytes") and logical is None and (pa.types.is_string(t) or pa.types.is_binary(t)):
        raw = col.view(pa.binary())
        lengths = pc.fill_null(pc.binary_length(raw), 0).cast(pa.int64())
        return _join(_varint(_zigzag(lengths)), raw)
    if name == "fixed" and logical == "decimal" and pa.types.is_decimal(t) and t.scale == avro_type.get("scale"):
        return _fixed_decimal(col, int(avro_type["size"]))
    return None


def _branch(index: int) -> pa.Scalar:
    """The union branch marker: a zigzag varint of the branch index."""
    return pa.scalar(bytes(_varint(_zigzag(pa.array([index], pa.int64())))[0].as_py()), pa.binary())


def encode_column(col: pa.Array | pa.ChunkedArray, avro_type: Any) -> pa.Array:
    """The Avro binary encoding of every value of ``col`` (one binary value per row)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if isinstance(avro_type, list):
        branches = [t for t in avro_type if t != "null"]
        if len(branches) == 1 and len(avro_type) <= 2:
            value_index = avro_type.index(branches[0])
            inner = _primitive(col, branches[0])
            if inner is not None:
                encoded = _join(_branch(value_index), inner)
                if "null" not in avro_type or col.null_count == 0:
                    return encoded
                return pc.if_else(col.is_valid(), encoded, _branch(avro_type.index("null")))
        return _with_fastavro(col, avro_type)
    if col.null_count:
        raise InvalidRowsError(f"Null values for the non-nullable Avro type {avro_type}")
    inner = _primitive(col, avro_type)
    return inner if inner is not None else _with_fastavro(col, avro_type)


def _python_value(value: Any, dtype: pa.DataType) -> Any:
    """``to_pylist`` output in the form fastavro takes: maps as dicts, recursively."""
    if value is None:
        return None
    if pa.types.is_map(dtype):
        return {k: _python_value(v, dtype.item_type) for k, v in value}
    if pa.types.is_struct(dtype):
        return {f.name: _python_value(value[f.name], f.type) for f in dtype}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype):
        return [_python_value(v, dtype.value_type) for v in value]
    return value


def _with_fastavro(col: pa.Array, avro_type: Any) -> pa.Array:
    """Value-by-value encoding with fastavro: a one-field record encodes exactly as its field."""
    schema = fastavro.parse_schema(
        {"type": "record", "name": "HudiRayValue", "fields": [{"name": "v", "type": avro_type}]}
    )
    out: list[bytes] = []
    buf = io.BytesIO()
    write = fastavro.schemaless_writer
    for value in col.to_pylist():
        buf.seek(0)
        buf.truncate()
        write(buf, schema, {"v": _python_value(value, col.type)})
        out.append(buf.getvalue())
    return pa.array(out, pa.binary())


class AvroRecordEncoder:
    """Encodes Arrow rows as Avro binary datums of one record schema (no container framing)."""

    def __init__(self, record_schema: Mapping[str, Any]) -> None:
        self.fields = [(f["name"], f["type"]) for f in record_schema["fields"]]

    def encode(self, table: pa.Table) -> pa.Array:
        """One binary datum per row; the table has (at least) the schema's fields."""
        if table.num_rows == 0:
            return pa.array([], pa.binary())
        columns = [encode_column(table.column(name), avro_type) for name, avro_type in self.fields]
        return columns[0] if len(columns) == 1 else _join(*columns)


def _big_endian_int32(values: pa.Array) -> pa.Array:
    """4-byte big-endian encodings of non-negative int32 values."""
    v = values.cast(_U32)
    mask, out = pa.scalar(0xFF, _U32), None
    for shift_in, shift_out in ((24, 0), (16, 8), (8, 16), (0, 24)):
        byte = pc.bit_wise_and(pc.shift_right(v, pa.scalar(shift_in, _U32)), mask)
        moved = pc.shift_left(byte, pa.scalar(shift_out, _U32))
        out = moved if out is None else pc.bit_wise_or(out, moved)
    assert out is not None
    return _bytes_of(out.view(pa.binary(4)))


def _data_buffer(values: pa.Array) -> pa.Buffer:
    """The concatenated bytes of a binary array's values, without copying."""
    if len(values) == 0:
        return pa.py_buffer(b"")
    _, offsets, data = values.buffers()
    bounds = pa.Array.from_buffers(pa.int32(), len(values) + 1, [None, offsets], offset=values.offset)
    start, end = bounds[0].as_py(), bounds[len(values)].as_py()
    return data.slice(start, end - start)


def avro_block_content(encoder: AvroRecordEncoder, table: pa.Table) -> list[Chunk]:
    """Avro data block content: int32 version, int32 count, then per record int32 length + datum."""
    datums = encoder.encode(table)
    if len(datums) == 0:
        return [_I32.pack(BLOCK_CONTENT_VERSION) + _I32.pack(0)]
    framed = _join(_big_endian_int32(pc.binary_length(datums)), datums)
    return [_I32.pack(BLOCK_CONTENT_VERSION) + _I32.pack(len(datums)), _data_buffer(framed)]


def parquet_block_content(
    table: pa.Table, key_value_metadata: Mapping[bytes, bytes], compression: str = "snappy"
) -> list[Chunk]:
    """Parquet data block content: one whole Parquet file, with no version prefix."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, compression=compression, store_schema=False) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(dict(key_value_metadata))
    return [sink.getvalue()]


# -- delete blocks ------------------------------------------------------------------------------

# Branch indexes of HoodieDeleteRecord.orderingVal (index 0 is null), and each wrapper's value type.
INT_WRAPPER = 2
_DECIMAL_WRAPPER = 9
_WRAPPER_TYPES: dict[int, Any] = {
    1: "boolean",
    INT_WRAPPER: "int",
    3: "long",
    4: "float",
    5: "double",
    6: "bytes",
    7: "string",
    8: "int",  # DateWrapper: days
}
_COMMIT_TIME_ORDERING = b"\x04\x00"  # IntWrapper(0): the "no ordering value" default of Hudi writers


def ordering_wrapper(dtype: pa.DataType) -> int:
    """The wrapper Hudi puts an ordering value of this type in (its branch index in the union).

    Timestamps, like Spark's internal rows, are longs (LongWrapper) in their own unit.
    """
    t = pa.types
    if t.is_boolean(dtype):
        return 1
    if t.is_int8(dtype) or t.is_int16(dtype) or t.is_int32(dtype) or t.is_uint8(dtype) or t.is_uint16(dtype):
        return INT_WRAPPER
    if t.is_integer(dtype) or t.is_timestamp(dtype) or t.is_time64(dtype):
        return 3
    if t.is_float32(dtype):
        return 4
    if t.is_float64(dtype):
        return 5
    if t.is_binary(dtype) or t.is_large_binary(dtype):
        return 6
    if t.is_string(dtype) or t.is_large_string(dtype):
        return 7
    if t.is_date32(dtype):
        return 8
    if t.is_decimal(dtype):
        return _DECIMAL_WRAPPER
    raise UnsupportedTypeError(f"Ordering values of type {dtype} have no Hudi wrapper type")


def _decimal_wrapper_values(col: pa.Array) -> pa.Array:
    """DecimalWrapper values: bytes of the unscaled value at scale 15 (decimal(30,15)), minimal two's complement."""
    out: list[bytes | None] = []
    for value in col.to_pylist():
        if value is None:
            out.append(None)
            continue
        unscaled = int(Decimal(value).scaleb(15).to_integral_value())
        size = max(1, (unscaled.bit_length() + 8) // 8)
        out.append(unscaled.to_bytes(size, "big", signed=True))
    return _join(_varint(_zigzag(pa.array([len(b or b"") for b in out], pa.int64()))), pa.array(out, pa.binary()))


def _ordering_encodings(ordering: pa.Array | None, n: int) -> pa.Array:
    if ordering is None or ordering.null_count == n:
        return pa.repeat(pa.scalar(_COMMIT_TIME_ORDERING, pa.binary()), n)
    wrapper = ordering_wrapper(ordering.type)
    if wrapper == _DECIMAL_WRAPPER:
        values = _decimal_wrapper_values(ordering)
    else:
        cast_to = {INT_WRAPPER: pa.int32(), 3: pa.int64(), 6: pa.binary(), 7: pa.string(), 8: pa.int32()}
        source = ordering.cast(cast_to[wrapper]) if wrapper in cast_to else ordering
        values = _primitive(source, _WRAPPER_TYPES[wrapper])
        if values is None:
            raise UnsupportedTypeError(f"Cannot encode ordering values of type {ordering.type}")
    encoded = _join(_branch(wrapper), values)
    if ordering.null_count:
        encoded = pc.if_else(ordering.is_valid(), encoded, pa.scalar(_COMMIT_TIME_ORDERING, pa.binary()))
    return encoded


def delete_block_content(keys: pa.Array, partitions: pa.Array, ordering: pa.Array | None = None) -> list[Chunk]:
    """Delete block content (version 3): int32 version, int32 length, Avro ``HoodieDeleteRecordList``.

    Rows whose ordering value is null (or every row, without ``ordering``)
    are commit-time deletes: ``orderingVal`` is IntWrapper(0).
    """
    n = len(keys)
    if n == 0:
        payload = b"\x00"  # an empty array
        return [_I32.pack(BLOCK_CONTENT_VERSION) + _I32.pack(len(payload)) + payload]
    nullable_string = ["null", "string"]
    records = _join(
        encode_column(keys.cast(pa.string()), nullable_string),
        encode_column(partitions.cast(pa.string()), nullable_string),
        _ordering_encodings(ordering, n),
    )
    items = _data_buffer(records)
    count = bytes(_varint(_zigzag(pa.array([n], pa.int64())))[0].as_py())
    length = len(count) + items.size + 1
    return [_I32.pack(BLOCK_CONTENT_VERSION) + _I32.pack(length) + count, items, b"\x00"]
