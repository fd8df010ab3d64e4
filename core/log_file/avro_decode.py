"""Fast decoding of an Avro data block's records into Arrow.

fastavro spends most of its time building Python datetimes and Decimals for
logical types. Records are decoded with logical types stripped (plain longs,
ints and bytes) through fastavro's container reader, and the logical types
are then applied column-wise in Arrow: timestamps and dates by a zero-copy
cast, fixed-size decimals by reinterpreting their big-endian bytes. Schemas
with logical types nested inside records, arrays or maps take the plain path.
"""

from __future__ import annotations

import io
import json
import os
import struct
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa

from hudi_ray.core.log_file.avro_columnar import UnsupportedSchema, decode_columnar, plan_fields
from hudi_ray.core.schema import avro_to_arrow_schema, one_array

try:  # numpy ships with pyarrow installs in practice; without it decimals take a slower path
    import numpy as np
except ImportError:  # pragma: no cover
    np = None  # type: ignore[assignment]

_SYNC = os.urandom(16)
_I32 = struct.Struct(">i")


def _strip(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_strip(s) for s in schema]
    return schema


def _has_logical(schema: Any) -> bool:
    if isinstance(schema, dict):
        return "logicalType" in schema or any(_has_logical(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_logical(s) for s in schema)
    return False


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


@dataclass(frozen=True)
class BlockDecoder:
    """Decoding plan for one writer schema."""

    raw_schema: Any  # parsed, logical types stripped
    header: bytes  # an Avro container header for raw_schema
    raw_arrow: pa.Schema  # what the stripped records look like in Arrow
    arrow: pa.Schema  # the logical Arrow schema
    fast: bool  # logical types only on top-level fields
    columnar: list[tuple[str, int | None, Any]] | None  # field plan when the schema is flat

    def decode(self, content: bytes | memoryview, count: int, columns: Collection[str] | None = None) -> pa.Table:
        """The block's records; only the fields in ``columns`` (None: all) when
        the schema is flat, else every field (the caller selects)."""
        if self.columnar is not None:
            raw = decode_columnar(content, count, self.columnar, self.raw_arrow, columns)
            if raw.num_columns == 0:
                return raw
            arrow = self.arrow if columns is None else pa.schema([self.arrow.field(n) for n in raw.column_names])
            # Chunk by chunk, as decoded: joining them would copy every column.
            columns = [
                pa.chunked_array([_logical(c, f.type) for c in raw.column(i).chunks], f.type)
                for i, f in enumerate(arrow)
            ]
            return pa.Table.from_arrays(columns, schema=arrow)
        datums = bytearray()
        view = memoryview(content)
        pos = 8
        for _ in range(count):
            (length,) = _I32.unpack_from(content, pos)
            if length < 0 or pos + 4 + length > len(content):
                raise ValueError(f"record length {length} at content offset {pos} runs outside the block")
            pos += 4
            datums += view[pos : pos + length]
            pos += length
        container = self.header + _zigzag(count) + _zigzag(len(datums)) + bytes(datums) + _SYNC
        records = fastavro.reader(io.BytesIO(container))
        return self._to_arrow(records)

    def _to_arrow(self, records: Iterator[Any]) -> pa.Table:
        raw = pa.Table.from_pylist(list(records), schema=self.raw_arrow)
        if not self.fast:
            return raw.cast(self.arrow)
        columns = [_logical(one_array(raw.column(i)), field.type) for i, field in enumerate(self.arrow)]
        return pa.Table.from_arrays(columns, schema=self.arrow)


def _logical(raw: pa.Array, target: pa.DataType) -> pa.Array:
    if raw.type.equals(target):
        return raw
    if pa.types.is_decimal(target):
        return _decimal(raw, target)
    return raw.cast(target)


def _decimal(raw: pa.Array, target: pa.DataType) -> pa.Array:
    """Big-endian two's-complement unscaled bytes to decimal128/256."""
    width = 16 if pa.types.is_decimal128(target) else 32
    if np is not None and pa.types.is_fixed_size_binary(raw.type) and raw.type.byte_width <= width:
        n = raw.type.byte_width
        validity, data = raw.buffers()
        be = np.frombuffer(data, dtype=np.uint8, count=len(raw) * n, offset=raw.offset * n).reshape(len(raw), n)
        wide = np.where(be[:, :1] >= 128, np.uint8(255), np.uint8(0)).repeat(width, axis=1)
        wide[:, width - n :] = be
        little = np.ascontiguousarray(wide[:, ::-1])
        return pa.Array.from_buffers(target, len(raw), [validity, pa.py_buffer(little.tobytes())], offset=0)
    from decimal import Decimal

    scale = target.scale
    values = [
        None if v is None else Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-scale) for v in raw.to_pylist()
    ]
    return pa.array(values, target)


@lru_cache(maxsize=256)
def decoder_for(schema_json: str) -> BlockDecoder:
    record = json.loads(schema_json)
    stripped = _strip(record)
    parsed = fastavro.parse_schema(stripped)
    head = io.BytesIO()
    writer = fastavro.write.Writer(head, parsed, sync_marker=_SYNC)
    writer.flush()
    nested_logical = any(
        _has_logical(f["type"]) and not _top_level_logical(f["type"]) for f in record.get("fields", [])
    )
    try:
        columnar = plan_fields(stripped) if np is not None else None
    except UnsupportedSchema:
        columnar = None
    return BlockDecoder(
        raw_schema=parsed,
        header=head.getvalue(),
        raw_arrow=avro_to_arrow_schema(stripped, "log block schema"),
        arrow=avro_to_arrow_schema(record, "log block schema"),
        fast=not nested_logical,
        columnar=columnar,
    )


def _top_level_logical(t: Any) -> bool:
    """A field whose only logical type is on the field itself (maybe in a nullable union)."""
    branches = t if isinstance(t, list) else [t]
    for b in branches:
        if isinstance(b, dict) and b.get("type") in ("record", "array", "map") and _has_logical(b):
            return False
    return True
