"""Column-at-a-time decoding of Avro data blocks with flat schemas, in numpy.

Hudi prefixes every record of an Avro block with its length, so every record's
start is known. A cursor per record then walks the schema one field at a time:
each field is decoded for all records at once (union branch, zigzag varints in
a few vectorized passes, gathers of fixed-width and length-prefixed bytes).
Schemas with nested records, arrays, maps or wider unions are not handled here;
the caller falls back to fastavro for them.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pyarrow as pa

_I32 = struct.Struct(">i")
_PRIMITIVE = {"boolean", "int", "long", "float", "double", "bytes", "string"}
# A varint has at most 10 bytes for 64 bits, 7 payload bits each.
_VARINT_SHIFTS = np.arange(0, 70, 7, dtype=np.uint64)


class UnsupportedSchema(Exception):
    """The schema has a shape this decoder leaves to fastavro."""


def _field_plan(avro_type: Any, named: dict[str, Any]) -> tuple[int | None, Any]:
    """(index of the non-null branch, or None when not a union; the value type)."""
    if isinstance(avro_type, list):
        branches = [b for b in avro_type if b != "null"]
        if len(branches) != 1 or len(avro_type) > 2:
            raise UnsupportedSchema("union")
        return avro_type.index(branches[0]), _resolve(branches[0], named)
    return None, _resolve(avro_type, named)


def _resolve(t: Any, named: dict[str, Any]) -> Any:
    if isinstance(t, str) and t not in _PRIMITIVE:
        if t not in named:
            raise UnsupportedSchema(f"named type {t}")
        return named[t]
    if isinstance(t, dict):
        kind = t.get("type")
        if kind in ("fixed", "enum"):
            named[t["name"]] = t
            if "namespace" in t:
                named[f"{t['namespace']}.{t['name']}"] = t
            return t
        if kind in _PRIMITIVE:
            return kind
        raise UnsupportedSchema(str(kind))
    return t


def plan_fields(record: dict[str, Any]) -> list[tuple[str, int | None, Any]]:
    named: dict[str, Any] = {}
    return [(f["name"], *_field_plan(f["type"], named)) for f in record.get("fields", [])]


class _Cursor:
    def __init__(self, content: bytes, count: int) -> None:
        self.buf = np.frombuffer(content, dtype=np.uint8)
        self.last = len(content) - 1
        # The length prefixes chain record to record, so this walk is sequential;
        # a plain list keeps it to one C call per record.
        starts: list[int] = []
        append = starts.append
        pos = 8
        unpack = _I32.unpack_from
        try:
            for _ in range(count):
                append(pos + 4)
                pos += 4 + unpack(content, pos)[0]
        except struct.error:
            raise ValueError("record lengths run past the end of the block") from None
        starts_arr = np.array(starts, dtype=np.int64)
        # Checked once after the loop: each record's length is where the
        # next one starts (less its length prefix) minus where it starts.
        if count:
            lengths = np.append(starts_arr[1:] - 4, pos) - starts_arr
            negative = np.flatnonzero(lengths < 0)
            if len(negative):
                i = int(negative[0])
                raise ValueError(
                    f"record {i} has negative length {int(lengths[i])} at content offset {int(starts_arr[i]) - 4}"
                )
        if pos > len(content):
            raise ValueError("record lengths run past the end of the block")
        self.pos = starts_arr

    def byte(self, rows: np.ndarray) -> np.ndarray:
        return self.buf[np.minimum(self.pos[rows], self.last)]

    def varint(self, rows: np.ndarray) -> np.ndarray:
        """Zigzag varint (int64) at the cursor of ``rows``; advances them.

        Byte k of every row at once, for as many k as the longest varint has:
        one gather of all rows per byte, no per-row index bookkeeping."""
        pos = self.pos[rows]
        value = np.zeros(len(rows), dtype=np.uint64)
        going = np.ones(len(rows), dtype=bool)
        length = np.zeros(len(rows), dtype=np.int64)
        for k in range(10):
            b = self.buf[np.minimum(pos + k, self.last)]
            value |= ((b & 0x7F).astype(np.uint64) * going) << _VARINT_SHIFTS[k]
            length += going
            going &= b >= 0x80
            if not going.any():
                break
        else:
            raise ValueError("varint longer than 10 bytes")
        self.pos[rows] = pos + length
        return (value >> np.uint64(1)).astype(np.int64) ^ -(value & np.uint64(1)).astype(np.int64)

    def fixed(self, rows: np.ndarray, width: int) -> np.ndarray:
        """``width`` bytes at the cursor of ``rows`` as an (n, width) array; advances them."""
        idx = self.pos[rows][:, None] + np.arange(width)
        if len(rows) and idx.max() > self.last:
            raise ValueError("value runs past the end of the block")
        self.pos[rows] += width
        return self.buf[idx]

    def lengths_and_bytes(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lengths = self.varint(rows)
        if len(lengths) and lengths.min() < 0:
            raise ValueError("negative length")
        starts = self.pos[rows]
        # Check against the block before sizing the gather by the lengths: a
        # corrupt length would otherwise allocate its full claimed size.
        if len(lengths) and int((starts + lengths).max()) > self.last + 1:
            raise ValueError(f"a value length of up to {int(lengths.max())} bytes runs past the end of the block")
        total = int(lengths.sum())
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        self.pos[rows] += lengths
        return offsets, self.buf[_segments(starts, lengths, offsets, total)]


def _segments(starts: np.ndarray, lengths: np.ndarray, offsets: np.ndarray, total: int) -> np.ndarray:
    """The byte positions of every segment ``[start, start + length)``, in order.

    One running sum: each position is the previous plus one, except at a
    segment's first byte, which jumps from the previous segment's last byte."""
    step = np.ones(total, dtype=np.int64)
    nonempty = lengths > 0
    firsts = offsets[:-1][nonempty]
    seg_starts = starts[nonempty]
    if len(firsts):
        step[firsts[0]] = seg_starts[0]
        step[firsts[1:]] = seg_starts[1:] - (seg_starts[:-1] + lengths[nonempty][:-1] - 1)
    return np.cumsum(step, out=step)


def _validity(valid: np.ndarray | None) -> pa.Buffer | None:
    if valid is None or valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little").tobytes())


def _scatter(values: np.ndarray, rows: np.ndarray, n: int, dtype: np.dtype) -> np.ndarray:
    out = np.zeros(n, dtype=dtype)
    out[rows] = values
    return out


def _column(cur: _Cursor, n: int, branch: int | None, t: Any, raw: pa.DataType) -> pa.Array:
    every = np.arange(n)
    valid = None
    rows = every
    if branch is not None:
        index = cur.varint(every)
        valid = index == branch
        if not np.all((index == branch) | (index == 1 - branch)):
            raise ValueError("union branch out of range")
        rows = every[valid]
    mask = _validity(valid)
    kind = t["type"] if isinstance(t, dict) else t
    if kind in ("int", "long"):
        values = _scatter(cur.varint(rows), rows, n, np.int64)
        arr = pa.Array.from_buffers(pa.int64(), n, [mask, pa.py_buffer(values.tobytes())])
        return arr.cast(raw) if raw != pa.int64() else arr
    if kind == "boolean":
        values = _scatter(cur.fixed(rows, 1)[:, 0] != 0, rows, n, np.bool_)
        data = pa.py_buffer(np.packbits(values, bitorder="little").tobytes())
        return pa.Array.from_buffers(pa.bool_(), n, [mask, data])
    if kind in ("float", "double"):
        width = 4 if kind == "float" else 8
        np_type = np.dtype("<f4" if kind == "float" else "<f8")
        raw_bytes = cur.fixed(rows, width).copy().view(np_type).reshape(-1)
        values = _scatter(raw_bytes, rows, n, np_type)
        return pa.Array.from_buffers(
            pa.float32() if width == 4 else pa.float64(), n, [mask, pa.py_buffer(values.tobytes())]
        )
    if kind in ("string", "bytes"):
        offsets, data = cur.lengths_and_bytes(rows)
        full = np.zeros(n + 1, dtype=np.int64)
        lengths = np.zeros(n, dtype=np.int64)
        lengths[rows] = np.diff(offsets)
        np.cumsum(lengths, out=full[1:])
        arrow_type = pa.large_string() if kind == "string" else pa.large_binary()
        arr = pa.Array.from_buffers(arrow_type, n, [mask, pa.py_buffer(full.tobytes()), pa.py_buffer(data.tobytes())])
        if kind == "string":
            # from_buffers trusts the bytes: invalid UTF-8 would only fail in
            # whatever consumes the batch later, far from the file at fault.
            try:
                arr.validate(full=True)
            except pa.ArrowInvalid as exc:
                raise ValueError(f"invalid UTF-8 in a string value ({exc})") from exc
        return arr.cast(raw)
    if kind == "fixed":
        width = int(t["size"])
        values = np.zeros((n, width), dtype=np.uint8)
        values[rows] = cur.fixed(rows, width)
        return pa.Array.from_buffers(pa.binary(width), n, [mask, pa.py_buffer(values.tobytes())])
    if kind == "enum":
        codes = _scatter(cur.varint(rows), rows, n, np.int32)
        symbols = pa.array(t["symbols"], pa.string())
        indices = pa.Array.from_buffers(pa.int32(), n, [mask, pa.py_buffer(codes.tobytes())])
        return pa.DictionaryArray.from_arrays(indices, symbols).cast(pa.string())
    raise UnsupportedSchema(str(kind))


def decode_columnar(
    content: bytes, count: int, fields: list[tuple[str, int | None, Any]], raw_schema: pa.Schema
) -> pa.Table:
    """Records of a block whose content starts with version and count ints."""
    cur = _Cursor(content, count)
    columns = []
    for name, branch, t in fields:
        try:
            columns.append(_column(cur, count, branch, t, raw_schema.field(name).type))
        except ValueError as exc:
            if isinstance(exc, pa.ArrowException):
                raise
            raise ValueError(f"column {name!r}: {exc}") from exc
    return pa.Table.from_arrays(columns, schema=raw_schema)
