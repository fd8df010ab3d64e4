"""Decoding of an Avro data block's records into Arrow.

Hudi prefixes every record of an Avro block with its length. One compiled
walk (``avro_kernels.walk``) reads the records one after the other, driven by
the schema's program (``avro_program``): each field the read asks for is
written straight into the buffers of its Arrow array (values, validity,
positions of its bytes), the others are only stepped over. Logical types are
those buffers under another Arrow type (dates, times, timestamps) or are
converted as they are written (decimals). Strings are checked to be UTF-8.

Nested fields (records, arrays, maps) are stepped over by the walk too; those
the read asks for are decoded by fastavro from the records' bytes, with their
logical types, then given to Arrow as Python values.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file import avro_program as prog
from hudi_ray.core.log_file.avro_program import FieldPlan, SchemaProgram, UnsupportedSchema, build_program
from hudi_ray.core.schema import avro_to_arrow_schema
from hudi_ray.core.util.arrow_pool import reader_pool
from hudi_ray.core.util.compiled import load

if TYPE_CHECKING:
    import fastavro
    import numpy as np
    import pyarrow as pa
else:
    fastavro = lazy_module("fastavro")
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")

_SYNC = os.urandom(16)
# Records decoded in one walk span at most this many bytes of the block, so
# that a column's values are addressed by 32-bit Arrow offsets.
_MAX_CHUNK_BYTES = 2**31 - 1
# Records the walk decodes side by side (see ``avro_kernels.walk``).
_GROUP = 16
# Records of a large block decoded first, to size its bytes fields' outputs.
_SAMPLE = 512
# Eight bytes whose high bits are set (0x8080808080808080 as an int64): any byte past ASCII.
_HIGH_BITS = -0x7F7F7F7F7F7F7F80


def kernels() -> ModuleType:
    """The compiled functions; numba is imported (and the code loaded or compiled) on the first call."""
    return load("hudi_ray.core.log_file.avro_kernels")


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


_MESSAGES = {
    prog.NEGATIVE_LENGTH: "a negative length",
    prog.VARINT_TOO_LONG: "a varint longer than 10 bytes",
    prog.BAD_BRANCH: "a union branch out of range",
    prog.BAD_COUNT: "an array or map block whose size runs past the record",
    prog.INT_RANGE: "an int outside 32 bits",
    prog.ENUM_RANGE: "an enum index out of range",
    prog.DECIMAL_RANGE: "a decimal wider than its Arrow type",
}


@dataclass(frozen=True)
class _Output:
    """Where the walk writes one wanted field's values."""

    plan: FieldPlan
    slot: int  # row of its output array (by kind)
    valid: int  # row of the validity bitmaps, or -1
    fixed_at: int  # bytes per record before its own in the fixed-width output


@dataclass(frozen=True, eq=False)
class _Layout:
    """The walk's program and outputs for one set of wanted columns."""

    program: np.ndarray
    outputs: tuple[_Output, ...]  # wanted compiled fields, in schema order
    nested: tuple[str, ...]  # wanted fields fastavro decodes
    wanted: tuple[str, ...]  # every wanted field, in schema order
    counts: dict[str, int]  # rows of each output array
    fixed_width: int  # bytes per record of the fixed-width output

    @staticmethod
    def of(fields: tuple[FieldPlan, ...], columns: Collection[str] | None) -> _Layout:
        rows = np.zeros((len(fields), prog.P_COLUMNS), dtype=np.int64)
        counts = {"ints": 0, "longs": 0, "bools": 0, "bytes": 0, "valid": 0}
        kinds = {
            prog.OP_INT: "ints",
            prog.OP_FLOAT: "ints",
            prog.OP_ENUM: "ints",
            prog.OP_LONG: "longs",
            prog.OP_DOUBLE: "longs",
            prog.OP_BOOLEAN: "bools",
            prog.OP_BYTES: "bytes",
        }
        outputs: list[_Output] = []
        nested: list[str] = []
        wanted: list[str] = []
        fixed_width = 0
        for i, f in enumerate(fields):
            row = rows[i]
            row[prog.P_OP] = f.op
            row[prog.P_BRANCHES] = f.branches
            row[prog.P_VALUE_BRANCH] = f.value_branch
            row[prog.P_ARG] = f.arg
            row[prog.P_WIDTH] = f.width
            row[prog.P_NODE] = f.node
            row[prog.P_SLOT] = row[prog.P_VALID] = -1
            if columns is not None and f.name not in columns:
                continue
            wanted.append(f.name)
            if not f.compiled:
                nested.append(f.name)
                continue
            slot, fixed_at = 0, fixed_width
            if f.op in kinds:
                slot = counts[kinds[f.op]]
                counts[kinds[f.op]] += 1
            elif f.op in (prog.OP_FIXED, prog.OP_FIXED_DECIMAL, prog.OP_BYTES_DECIMAL):
                fixed_width += f.width if f.op != prog.OP_FIXED else f.arg
            valid = -1
            if f.branches:
                valid = counts["valid"]
                counts["valid"] += 1
            row[prog.P_SLOT] = slot
            row[prog.P_VALID] = valid
            row[prog.P_FIXED_AT] = fixed_at
            outputs.append(_Output(f, slot, valid, fixed_at))
        return _Layout(rows, tuple(outputs), tuple(nested), tuple(wanted), counts, fixed_width)


@dataclass(frozen=True, eq=False)
class BlockDecoder:
    """Decoding plan for one writer schema."""

    record: dict[str, Any]  # the schema, parsed from JSON
    arrow: pa.Schema  # its Arrow form, logical types included
    program: SchemaProgram | None  # None: a schema the program cannot express, decoded by fastavro alone
    _layouts: dict[frozenset[str] | None, _Layout] = field(default_factory=dict, repr=False)

    @property
    def fallback_columns(self) -> tuple[str, ...]:
        """The fields fastavro decodes (nested ones), not the compiled walk."""
        if self.program is None:
            return tuple(self.arrow.names)
        return tuple(f.name for f in self.program.fields if not f.compiled)

    def _layout(self, columns: Collection[str] | None) -> _Layout:
        key = None if columns is None else frozenset(columns)
        layout = self._layouts.get(key)
        if layout is None:
            assert self.program is not None
            layout = self._layouts[key] = _Layout.of(self.program.fields, key)
        return layout

    def decode(self, content: bytes | memoryview, count: int, columns: Collection[str] | None = None) -> pa.Table:
        """The block's records (after the content's version and count, each
        with its length prefix): the fields in ``columns`` (None: all), in the
        schema's order. Raises ValueError naming the record on bytes that do not decode."""
        k = kernels()
        buf = np.frombuffer(content, dtype=np.uint8)
        if self.program is None:
            names = [n for n in self.arrow.names if columns is None or n in columns]
            return self._fastavro(k, buf, count, names) if names else _no_columns(count)
        layout = self._layout(columns)
        chunks: list[list[pa.Array]] = [[] for _ in layout.outputs]
        done, at = 0, 8
        while done < count or not done:
            arrays, decoded, at = self._walk(k, layout, buf, at, count - done, done)
            for out, array in zip(chunks, arrays):
                out.append(array)
            done += decoded
            if not count:
                break
        if not layout.wanted:
            return _no_columns(count)
        by_name: dict[str, pa.ChunkedArray] = {
            o.plan.name: pa.chunked_array(c, o.plan.arrow) for o, c in zip(layout.outputs, chunks)
        }
        if layout.nested:
            nested = self._fastavro(k, buf, count, layout.nested)
            by_name.update(zip(nested.column_names, nested.columns))
        schema = pa.schema([self.arrow.field(n) for n in layout.wanted], self.arrow.metadata)
        return pa.Table.from_arrays([by_name[n] for n in layout.wanted], schema=schema)

    def _walk(
        self, k: ModuleType, layout: _Layout, buf: np.ndarray, at: int, n: int, first: int
    ) -> tuple[list[pa.Array], int, int]:
        """(arrays of the wanted compiled fields, records decoded, the position
        after them) of up to ``n`` records from content offset ``at`` on, record
        ``first`` of the block the first of them: those that fit in ``_MAX_CHUNK_BYTES``."""
        program = self.program
        assert program is not None
        c = layout.counts
        ints = _Rows(c["ints"], n, np.int32)
        longs = _Rows(c["longs"], n, np.int64)
        bools = np.empty((c["bools"], n), dtype=np.uint8)
        fixed = _Rows(1, layout.fixed_width * n, np.uint8)
        offsets = _Rows(c["bytes"], n + 1, np.int32)
        offsets.array[:, 0] = 0
        valid = _Rows(c["valid"], (n + 7) // 8, np.uint8, zero=True)
        present = np.zeros(c["valid"], dtype=np.int64)
        tables = (layout.program, program.nodes, program.children, np.zeros((program.depth + 1, 2), np.int64))
        capacity = self._capacity(k, layout, buf, at, n, tables)
        while True:
            text = _Text(capacity)
            outputs: tuple[Any, ...] = (ints.array, longs.array, bools, fixed.array[0], offsets.array, *text.outputs)
            outputs += (valid.array, present)
            status, m, f, pos = k.walk(buf, at, n, _MAX_CHUNK_BYTES, *_group(_GROUP), *tables, *outputs)
            if status == prog.OK:
                break
            valid.array[:] = 0
            present[:] = 0
            if status == prog.OVERFLOW:
                # The sample's estimate fell short for this field: it gets room for all the bytes left.
                capacity = capacity.copy()
                capacity[layout.program[f, prog.P_SLOT]] = len(buf) - at + 8
                continue
            # Decoded again a record at a time, to name the first record that fails.
            status, m, f, pos = k.walk(buf, at, n, _MAX_CHUNK_BYTES, *_group(1), *tables, *outputs)
            _raise(status, first + m, program.fields[f].name if f >= 0 else "", pos, buf)
        arrays = []
        for out in layout.outputs:
            plan = out.plan
            mask = None
            if out.valid >= 0 and present[out.valid] < m:
                mask = valid.buffer(out.valid)
            op = plan.op
            if op == prog.OP_ENUM:
                indices = pa.Array.from_buffers(pa.int32(), m, [mask, ints.buffer(out.slot)])
                symbols = pa.array(plan.symbols, pa.string())
                array = pa.DictionaryArray.from_arrays(indices, symbols).cast(plan.arrow)
            elif op in (prog.OP_INT, prog.OP_FLOAT):
                array = _typed(op, plan.arrow, m, mask, ints.buffer(out.slot))
            elif op in (prog.OP_LONG, prog.OP_DOUBLE):
                array = _typed(op, plan.arrow, m, mask, longs.buffer(out.slot))
            elif op == prog.OP_BOOLEAN:
                data = pa.py_buffer(np.packbits(bools[out.slot, :m], bitorder="little"))
                array = pa.Array.from_buffers(pa.bool_(), m, [mask, data])
            elif op == prog.OP_BYTES:
                is_text = pa.types.is_string(plan.arrow)
                data = text.buffer(out.slot)
                if is_text and text.high[out.slot] & _HIGH_BITS:
                    # Bytes past ASCII: the values are checked one by one, to name the first that is not UTF-8.
                    bad = k.first_invalid_utf8_of(np.frombuffer(data, np.uint8), offsets.array[out.slot, : m + 1])
                    if bad >= 0:
                        raise ValueError(f"record {first + bad}, column {plan.name!r}: invalid UTF-8 in a string value")
                dtype = pa.string() if is_text else pa.binary()
                array = pa.Array.from_buffers(dtype, m, [mask, offsets.buffer(out.slot), data])
            elif op == prog.OP_NULL:
                array = pa.nulls(m, plan.arrow)
            else:
                width = plan.arg if op == prog.OP_FIXED else plan.width
                data = fixed.buffer(0).slice(out.fixed_at * n, width * m)
                array = _fixed(plan, m, mask, data)
            arrays.append(array)
        return arrays, m, pos

    def _capacity(
        self, k: ModuleType, layout: _Layout, buf: np.ndarray, at: int, n: int, tables: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """Bytes to set aside for each wanted bytes field: all the bytes left for
        small blocks, else what a sample of the records holds, scaled."""
        fields = layout.counts["bytes"]
        left = len(buf) - at
        if n <= _SAMPLE or fields == 0:
            return np.full(fields, left + 8, dtype=np.int64)
        c = layout.counts
        m = _SAMPLE
        text = _Text(np.full(fields, left + 8, dtype=np.int64))
        outputs = (
            np.empty((c["ints"], m), np.int32),
            np.empty((c["longs"], m), np.int64),
            np.empty((c["bools"], m), np.uint8),
            np.empty(layout.fixed_width * m, np.uint8),
            np.empty((fields, m + 1), np.int32),
            *text.outputs,
            np.zeros((c["valid"], (m + 7) // 8), np.uint8),
            np.zeros(c["valid"], np.int64),
        )
        status, _, _, pos = k.walk(buf, at, m, _MAX_CHUNK_BYTES, *_group(_GROUP), *tables, *outputs)
        if status != prog.OK:
            return np.full(fields, left + 8, dtype=np.int64)  # the whole walk reports it
        scale = left / max(pos - at, 1)
        # A fifth more than the sample's share, and a little more for blocks of few values.
        return (text.used * scale * 1.2).astype(np.int64) + 4096

    def _bounds(self, k: ModuleType, buf: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Where each record's bytes start and end."""
        starts = np.empty(count, dtype=np.int64)
        ends = np.empty(count, dtype=np.int64)
        status, record, pos = k.record_bounds(buf, count, starts, ends)
        if status != prog.OK:
            _raise(status, record, "", pos, buf)
        return starts, ends

    def _fastavro(self, k: ModuleType, buf: np.ndarray, count: int, names: Collection[str]) -> pa.Table:
        """Fields ``names`` of every record, decoded by fastavro record by record."""
        starts, ends = self._bounds(k, buf, count)
        content = memoryview(buf.data)
        datums = b"".join(content[s:e] for s, e in zip(starts.tolist(), ends.tolist()))
        container = _header(json.dumps(self.record)) + _zigzag(len(starts)) + _zigzag(len(datums)) + datums + _SYNC
        records = list(fastavro.reader(io.BytesIO(container)))
        schema = pa.schema([f for f in self.arrow if f.name in names], self.arrow.metadata)
        return pa.Table.from_pylist(records, schema=schema)


class _Text:
    """The bytes of the walk's bytes fields: a region each, in one buffer of the reader's Arrow pool."""

    def __init__(self, capacity: np.ndarray) -> None:
        self.capacity = capacity
        self.region = np.zeros(len(capacity), dtype=np.int64)
        if len(capacity):
            self.region[1:] = np.cumsum(capacity[:-1])
        self._whole = pa.allocate_buffer(int(capacity.sum()), memory_pool=reader_pool())
        self.data = np.frombuffer(self._whole, dtype=np.uint8)
        self.used = np.zeros(len(capacity), dtype=np.int64)
        self.high = np.zeros(len(capacity), dtype=np.int64)
        self.outputs = (self.data, self.region, self.capacity, self.used, self.high)

    def buffer(self, field: int) -> pa.Buffer:
        return self._whole.slice(int(self.region[field]), int(self.used[field]))


def _raise(status: int, record: int, name: str, pos: int, buf: np.ndarray) -> NoReturn:
    where = f"record {record}"
    if status == prog.NEGATIVE_RECORD_LENGTH:
        length = int.from_bytes(bytes(buf[pos : pos + 4]), "big", signed=True)
        raise ValueError(f"{where} has negative length {length} at content offset {pos}")
    if status == prog.PAST_BLOCK:
        raise ValueError(f"{where}'s length at content offset {pos} runs past the end of the block")
    if status == prog.PAST_RECORD:
        raise ValueError(
            f"{where} decodes past its length: column {name!r} runs past the end of the record at content offset {pos}"
        )
    raise ValueError(f"{where}, column {name!r}: {_MESSAGES[status]} at content offset {pos}")


def _group(size: int) -> tuple[int, np.ndarray, np.ndarray]:
    """The walk's group size and its scratch arrays (positions and ends)."""
    return size, np.empty(size, np.int64), np.empty(size, np.int64)


class _Rows:
    """A 2-D output of the walk in memory of the reader's Arrow pool
    (``arrow_pool``), each row a buffer for Arrow."""

    def __init__(self, rows: int, n: int, dtype: type, *, zero: bool = False) -> None:
        width = np.dtype(dtype).itemsize * n
        self._whole = pa.allocate_buffer(rows * width, memory_pool=reader_pool())
        self._width = width
        self.array: np.ndarray = np.frombuffer(self._whole, dtype=dtype).reshape(rows, n)
        if zero:
            self.array[:] = 0

    def buffer(self, row: int) -> pa.Buffer:
        return self._whole.slice(row * self._width, self._width)


def _no_columns(count: int) -> pa.Table:
    """A table of ``count`` rows and no columns (it keeps its rows this way only)."""
    return pa.table([pa.nulls(count)], names=["_"]).drop_columns(["_"])


def _typed(op: int, target: pa.DataType, n: int, mask: pa.Buffer | None, values: pa.Buffer) -> pa.Array:
    """Fixed-width values under their Arrow type: ints, dates and times of
    the same width, longs and timestamps, floats' and doubles' bits."""
    if op == prog.OP_FLOAT:
        return pa.Array.from_buffers(pa.float32(), n, [mask, values]).cast(target)
    if op == prog.OP_DOUBLE:
        return pa.Array.from_buffers(pa.float64(), n, [mask, values]).cast(target)
    return pa.Array.from_buffers(target, n, [mask, values])


def _fixed(plan: FieldPlan, n: int, mask: pa.Buffer | None, data: pa.Buffer) -> pa.Array:
    if plan.op != prog.OP_FIXED:
        return pa.Array.from_buffers(plan.arrow, n, [mask, data])  # decimals, converted by the walk
    raw = pa.Array.from_buffers(pa.binary(plan.arg), n, [mask, data])
    if pa.types.is_interval(plan.arrow) and plan.arg == 12:
        # Avro's duration: months, days and milliseconds, little-endian unsigned 32-bit each.
        parts = np.frombuffer(data, dtype="<u4", count=3 * n).reshape(n, 3).astype(np.int64)
        values = [(int(m), int(d), int(ms) * 1_000_000) for m, d, ms in parts]
        return pa.array(values, plan.arrow, mask=None if mask is None else ~_flags(mask, n))
    return raw if raw.type.equals(plan.arrow) else raw.cast(plan.arrow)


def _flags(mask: pa.Buffer, n: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(mask, dtype=np.uint8), count=n, bitorder="little").astype(bool)


@lru_cache(maxsize=256)
def _header(schema_json: str) -> bytes:
    """An Avro container header for the schema, to feed fastavro records' bytes."""
    head = io.BytesIO()
    writer = fastavro.write.Writer(head, fastavro.parse_schema(json.loads(schema_json)), sync_marker=_SYNC)
    writer.flush()
    return head.getvalue()


@lru_cache(maxsize=256)
def decoder_for(schema_json: str) -> BlockDecoder:
    record = json.loads(schema_json)
    arrow = avro_to_arrow_schema(record, "log block schema")
    try:
        program: SchemaProgram | None = build_program(record, arrow)
    except UnsupportedSchema:
        program = None
    return BlockDecoder(record=record, arrow=arrow, program=program)
