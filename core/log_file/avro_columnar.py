"""Column-at-a-time decoding of Avro data blocks with flat schemas, in numpy.

Hudi prefixes every record of an Avro block with its length, so every record's
start is known. A cursor per record then walks the schema one field at a time:
each field is decoded for all records at once (union branch, zigzag varints in
a few vectorized passes, gathers of fixed-width and length-prefixed bytes).
Schemas with nested records, arrays, maps or wider unions are not handled here;
the caller falls back to fastavro for them.
"""

from __future__ import annotations

import copy
import itertools
import struct
from collections.abc import Collection
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

_I32 = struct.Struct(">i")
_PRIMITIVE = {"boolean", "int", "long", "float", "double", "bytes", "string"}
# A varint has at most 10 bytes for 64 bits, 7 payload bits each.
_VARINT_SHIFTS = np.arange(0, 70, 7, dtype=np.uint64)
# Eight varint bytes in a little-endian word: their continuation bits, their
# payload bits, and the steps that pack the payload's 7-bit groups together
# (pairs into 14 bits, then 28, then 56; each step shifts every odd group down).
_CONTINUATION_BITS = np.uint64(0x8080808080808080)
_PAYLOAD_BITS = np.uint64(0x7F7F7F7F7F7F7F7F)
_PACK_STEPS = (
    (np.uint64(0x00FF00FF00FF00FF), np.uint64(1)),
    (np.uint64(0x0000FFFF0000FFFF), np.uint64(2)),
    (np.uint64(0x00000000FFFFFFFF), np.uint64(4)),
)
# Zero bytes after a block's content (see _Cursor._items).
_PAD = 16
# Data windows of binary views: int32 offsets reach 2 GiB; windows start every
# 1 GiB so that any value of up to 1 GiB lies whole in the one it starts in.
_WINDOW = 2**31 - 1
_WINDOW_STEP = 2**30  # a power of two: a position splits into window and offset by bits
# Records decoded together, field after field: a chunk's bytes and position
# arrays stay in cache from one field's passes to the next, and numpy's
# temporaries stay small enough to reuse memory instead of mapping fresh pages
# (a block of 100,000 records decodes in about half the time in chunks).
_CHUNK_RECORDS = 16_384
_CHUNK_BYTES = 4 << 20


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
    """A position per record in a block's content, advanced field by field for all records at once."""

    def __init__(self, content: bytes | memoryview, starts: np.ndarray, ends: np.ndarray) -> None:
        # Padded so that a gather of up to _PAD bytes at any position within
        # the block stays in bounds; what it reads past the end is never used.
        # The one copy of the content: string values point into it.
        self.buf = np.empty(len(content) + _PAD, dtype=np.uint8)
        self.buf[: len(content)] = np.frombuffer(content, dtype=np.uint8)
        self.buf[len(content) :] = 0
        self.last = len(content) - 1
        self.pos = starts
        self.ends = ends
        self.first = 0  # the index of the cursor's first record in the block, for messages
        # The content bytes alone, for gathers that clamp to its last byte.
        self.data = self.buf[: len(content)]
        # Eight bytes at every position as one opaque item (unaligned), so that
        # a gather of up to 8 bytes is one fixed-width gather; positions reach
        # 8 bytes into the padding (a view's tail starts 4 bytes after a value
        # that may start at the content's end). Items, not integers: numpy
        # gathers a misaligned integer array about five times slower.
        self._words = np.ndarray((len(content) + _PAD - 7,), dtype="V8", buffer=self.buf, strides=(1,))

    @classmethod
    def of_data_block(cls, content: bytes | memoryview, count: int) -> _Cursor:
        """A cursor at each of the ``count`` length-prefixed records after the content's version and count."""
        # The length prefixes chain record to record, so this walk is sequential:
        # one C call per record, in a comprehension (a quarter faster than a
        # loop appending to a list), giving where each record's successor starts.
        pos = first = 8  # after the content's version and count
        unpack = _I32.unpack_from
        try:
            after = [pos := pos + 4 + unpack(content, pos)[0] for _ in itertools.repeat(None, count)]
        except struct.error:
            raise ValueError("record lengths run past the end of the block") from None
        ends = np.fromiter(after, dtype=np.int64, count=count)
        starts_arr = np.empty(count, dtype=np.int64)
        if count:
            starts_arr[0] = first + 4
            starts_arr[1:] = ends[:-1] + 4
        # Checked once after the walk: each record's length is where the
        # next one starts (less its length prefix) minus where it starts.
        if count:
            negative = np.flatnonzero(ends < starts_arr)
            if len(negative):
                i = int(negative[0])
                raise ValueError(
                    f"record {i} has negative length {int(ends[i] - starts_arr[i])} "
                    f"at content offset {int(starts_arr[i]) - 4}"
                )
        if pos > len(content):
            raise ValueError("record lengths run past the end of the block")
        return cls(content, starts_arr, ends)

    def chunk(self, lo: int, hi: int) -> _Cursor:
        """A cursor over records ``lo`` to ``hi`` of this one, sharing its bytes."""
        part = copy.copy(self)
        part.pos = self.pos[lo:hi].copy()
        part.ends = self.ends[lo:hi]
        part.first = self.first + lo
        return part

    def chunk_bounds(self) -> list[tuple[int, int]]:
        """Record ranges to decode one after the other (one, empty, without records)."""
        n = len(self.pos)
        if n == 0:
            return [(0, 0)]
        average = max(1, int(self.ends[-1] - self.pos[0]) // n)
        size = min(_CHUNK_RECORDS, max(1024, _CHUNK_BYTES // average))
        return [(lo, min(n, lo + size)) for lo in range(0, n, size)]

    def words(self, pos: np.ndarray) -> np.ndarray:
        """The eight bytes at each of ``pos`` as a little-endian uint64."""
        return self._words[pos].view("<u8")

    def _at(self, rows: np.ndarray | None) -> np.ndarray:
        return self.pos if rows is None else self.pos[rows]

    def _advance(self, rows: np.ndarray | None, new: np.ndarray) -> None:
        if rows is None:
            self.pos = new
        else:
            self.pos[rows] = new

    def check_ends(self) -> None:
        """Every record decoded within its length: a schema that does not fit
        the bytes would otherwise read on into the next record."""
        over = np.flatnonzero(self.pos > self.ends)
        if len(over):
            i = int(over[0])
            raise ValueError(f"record {self.first + i} decodes past its length, at content offset {int(self.ends[i])}")

    def _varints(self, pos: np.ndarray, values: bool) -> tuple[np.ndarray, np.ndarray]:
        """(each varint's index of its last byte, its unsigned value before
        zigzag decoding; the values only when asked) at each of ``pos``."""
        first = self.first_bytes(pos)
        if len(first) == 0 or int(first.max()) < 0x80:
            # One byte each, as union branches and small values are.
            return np.zeros(len(pos), dtype=np.int64), first.astype(np.uint64)
        if int(pos.max()) > self.last:
            raise ValueError("varint runs past the end of the block")
        # Up to 8 bytes as one little-endian word per row: a varint ends at its
        # first byte without the continuation bit, the lowest such bit here.
        word = self.words(pos)
        stop = ~word & _CONTINUATION_BITS
        lowest = stop & (~stop + np.uint64(1))
        # ``lowest`` is 2 ** (8 * end + 7), exact as a double: its exponent field
        # gives the end (rows without a stop bit are 0 here, and fixed below).
        ends = ((lowest.astype(np.float64).view(np.int64) >> 52) - (1023 + 7)) >> 3
        wide = np.flatnonzero(stop == 0)  # 9 or 10 bytes: values of 56 bits or more
        raw = np.zeros(0, dtype=np.uint64)
        if values:
            # Bytes past the varint cleared, continuation bits dropped, and the
            # 7-bit groups packed together in three steps of halving shifts.
            raw = word & ((lowest << np.uint64(1)) - np.uint64(1)) & _PAYLOAD_BITS
            for mask, shift in _PACK_STEPS:
                raw = (raw & mask) | ((raw & ~mask) >> shift)
        if len(wide):
            wide_ends, wide_raw = self._wide_varints(pos[wide])
            ends[wide] = wide_ends
            if values:
                raw[wide] = wide_raw
        return ends, raw

    def _wide_varints(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``_varints`` of varints longer than 8 bytes, from 10-byte gathers."""
        window = self._items(pos, 10).view(np.uint8).reshape(len(pos), 10)
        more = window >= 0x80
        if more.all(axis=1).any():
            raise ValueError("varint longer than 10 bytes")
        ends = np.argmin(more, axis=1)
        raw = np.zeros(len(pos), dtype=np.uint64)
        for k in range(int(ends.max()) + 1):
            raw |= ((window[:, k] & 0x7F).astype(np.uint64) * (ends >= k)) << _VARINT_SHIFTS[k]
        return ends, raw

    def first_bytes(self, pos: np.ndarray) -> np.ndarray:
        """The byte at each of ``pos``; a position past the content reads its last byte."""
        return np.take(self.data, pos, mode="clip")

    def varint(self, rows: np.ndarray | None) -> np.ndarray:
        """Zigzag varint (int64) at the cursor of ``rows`` (None: every record); advances them."""
        pos = self._at(rows)
        ends, raw = self._varints(pos, values=True)
        self._advance(rows, pos + ends + 1)
        return (raw >> np.uint64(1)).astype(np.int64) ^ -(raw & np.uint64(1)).astype(np.int64)

    def skip_varint(self, rows: np.ndarray | None) -> None:
        """Advance ``rows`` past a varint each, without assembling its value."""
        pos = self._at(rows)
        ends, _ = self._varints(pos, values=False)
        self._advance(rows, pos + ends + 1)

    def skip(self, rows: np.ndarray | None, width: int | np.ndarray) -> None:
        """Advance ``rows`` by ``width`` bytes each (one width, or one per row)."""
        pos = self._at(rows)
        if len(pos):
            if int(np.min(width)) < 0:
                raise ValueError("negative length")
            if int((pos + width).max()) > self.last + 1:
                raise ValueError("value runs past the end of the block")
        self._advance(rows, pos + width)

    def fixed(self, rows: np.ndarray | None, width: int) -> np.ndarray:
        """``width`` bytes at the cursor of ``rows`` as an (n, width) array; advances them."""
        pos = self._at(rows)
        if len(pos) and int(pos.max()) + width - 1 > self.last:
            raise ValueError("value runs past the end of the block")
        self._advance(rows, pos + width)
        return self._items(pos, width).view(np.uint8).reshape(len(pos), width)

    def _items(self, pos: np.ndarray, width: int) -> np.ndarray:
        """The ``width`` bytes at each of ``pos`` (all within the block) as
        one opaque item each: a gather of items, not of bytes."""
        if width > _PAD:
            return self.buf[pos[:, None] + np.arange(width)].view(f"V{width}").reshape(-1)
        items = np.ndarray((len(self.data) + 1,), dtype=f"V{width}", buffer=self.buf, strides=(1,))
        return items[pos]

    def views(self, rows: np.ndarray | None, n: int) -> pa.Array:
        """Length-prefixed values at the cursor of ``rows`` as a binary_view
        array of ``n`` rows (rows not in ``rows`` empty) over the block's bytes,
        without copying them; advances the rows."""
        lengths = self.varint(rows)
        starts = self._at(rows)
        if len(lengths):
            if int(lengths.min()) < 0:
                raise ValueError("negative length")
            if int((starts + lengths).max()) > self.last + 1:
                raise ValueError(f"a value length of up to {int(lengths.max())} bytes runs past the end of the block")
        self._advance(rows, starts + lengths)
        # A view is 16 bytes, two little-endian words here: the length and the
        # value's first 4 bytes, then its next 8 bytes when it has at most 12,
        # else a buffer index and an offset. Inline bytes past a value's length
        # are not zeroed: the array only lives to be cast, which copies each
        # value's own bytes.
        head = (self.words(starts) << np.uint64(32)) | lengths.astype(np.uint64)
        tail = self.words(starts + 4)
        long = np.flatnonzero(lengths > 12)
        if len(long):
            # Offsets are int32: a block past 2 GiB is cut into overlapping
            # windows, each value addressed in the window it starts in.
            at = starts[long]
            offset = at & (_WINDOW_STEP - 1)
            if int((offset + lengths[long]).max()) > _WINDOW:
                raise ValueError("a value too long to address in the block")
            tail[long] = (offset << 32 | at >> (_WINDOW_STEP.bit_length() - 1)).astype(np.uint64)
        if rows is None:
            views = np.stack((head, tail), axis=1)
        else:
            views = np.zeros((n, 2), dtype=np.uint64)
            views[rows, 0] = head
            views[rows, 1] = tail
        content = pa.py_buffer(self.data)
        size = len(self.data)
        windows = [content.slice(i, min(_WINDOW, size - i)) for i in range(0, max(size, 1), _WINDOW_STEP)]
        return pa.Array.from_buffers(pa.binary_view(), n, [None, pa.py_buffer(views), *windows])


def _copied_text(views: pa.Array, raw: pa.DataType) -> pa.Array:
    """``views`` copied out of the block as ``raw``. Strings are checked to be
    UTF-8, as invalid bytes would otherwise only fail in whatever consumes the
    batch later, far from the file at fault. Arrow's cast from binary views
    checks value by value; copying them as string views and checking the
    copy's bytes at once, in full only when some are not ASCII, costs less."""
    if not (pa.types.is_string(raw) or pa.types.is_large_string(raw)):
        return views.cast(raw)
    text = views.view(pa.string_view()).cast(raw)
    offsets, data = text.buffers()[1:]
    width = np.dtype(np.int32 if pa.types.is_string(raw) else np.int64)
    ends = np.frombuffer(offsets, dtype=width, count=len(text) + 1, offset=text.offset * width.itemsize)
    if data is not None and ends[-1] > ends[0]:
        values = np.frombuffer(data, dtype=np.uint8, count=int(ends[-1] - ends[0]), offset=int(ends[0]))
        if values.max() >= 0x80:
            text.validate(full=True)
    return text


def _validity(valid: np.ndarray | None) -> pa.Buffer | None:
    if valid is None or valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little").tobytes())


def _scatter(values: np.ndarray, rows: np.ndarray | None, n: int, dtype: npt.DTypeLike) -> np.ndarray:
    """``values`` of ``rows`` (None: every row) spread over ``n`` rows, zeros elsewhere."""
    if rows is None:
        return values.astype(dtype, copy=False)
    out = np.zeros((n, *values.shape[1:]), dtype=dtype)
    out[rows] = values
    return out


def _present_rows(cur: _Cursor, branch: int | None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(which records hold a value, or None when all may; the rows that do,
    or None for every row), reading the union branch of a nullable field."""
    if branch is None:
        return None, None
    # A branch of a two-branch union is the one-byte zigzag varint 0 or 2.
    index = cur.first_bytes(cur.pos)
    if np.any(index & 0xFD):
        raise ValueError("union branch out of range")
    cur.pos = cur.pos + 1
    valid = index == 2 * branch
    return valid, (None if valid.all() else np.flatnonzero(valid))


def _skip_column(cur: _Cursor, branch: int | None, t: Any) -> None:
    """Advance every record past one field it is not asked for."""
    _, rows = _present_rows(cur, branch)
    kind = t["type"] if isinstance(t, dict) else t
    if kind in ("int", "long", "enum"):
        cur.skip_varint(rows)
    elif kind in ("string", "bytes"):
        cur.skip(rows, cur.varint(rows))
    elif kind in _WIDTHS:
        cur.skip(rows, _WIDTHS[kind])
    elif kind == "fixed":
        cur.skip(rows, int(t["size"]))
    else:
        raise UnsupportedSchema(str(kind))


_WIDTHS = {"boolean": 1, "float": 4, "double": 8}


def _column(cur: _Cursor, n: int, branch: int | None, t: Any, raw: pa.DataType) -> pa.Array:
    valid, rows = _present_rows(cur, branch)  # rows None: every record holds a value
    mask = _validity(valid)
    kind = t["type"] if isinstance(t, dict) else t
    if kind in ("int", "long"):
        values = _scatter(cur.varint(rows), rows, n, np.int64)
        arr = pa.Array.from_buffers(pa.int64(), n, [mask, pa.py_buffer(values)])
        return arr.cast(raw) if raw != pa.int64() else arr
    if kind == "boolean":
        values = _scatter(cur.fixed(rows, 1)[:, 0] != 0, rows, n, np.bool_)
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), n, [mask, data])
    if kind in ("float", "double"):
        width = 4 if kind == "float" else 8
        np_type = np.dtype("<f4" if kind == "float" else "<f8")
        values = _scatter(cur.fixed(rows, width).view(np_type).reshape(-1), rows, n, np_type)
        return pa.Array.from_buffers(pa.float32() if width == 4 else pa.float64(), n, [mask, pa.py_buffer(values)])
    if kind in ("string", "bytes"):
        views = cur.views(rows, n)
        if mask is not None:
            views = pa.Array.from_buffers(views.type, n, [mask, *views.buffers()[1:]])
        try:
            return _copied_text(views, raw)
        except pa.ArrowInvalid as exc:
            raise ValueError(f"invalid UTF-8 in a string value ({exc})") from exc
    if kind == "fixed":
        width = int(t["size"])
        values = cur.fixed(rows, width)
        values = _scatter(values, rows, n, np.uint8)
        return pa.Array.from_buffers(pa.binary(width), n, [mask, pa.py_buffer(np.ascontiguousarray(values))])
    if kind == "enum":
        codes = _scatter(cur.varint(rows), rows, n, np.int32)
        symbols = pa.array(t["symbols"], pa.string())
        indices = pa.Array.from_buffers(pa.int32(), n, [mask, pa.py_buffer(codes)])
        return pa.DictionaryArray.from_arrays(indices, symbols).cast(pa.string())
    raise UnsupportedSchema(str(kind))


def decode_columnar(
    content: bytes | memoryview,
    count: int,
    fields: list[tuple[str, int | None, Any]],
    raw_schema: pa.Schema,
    keep: Collection[str] | None = None,
) -> pa.Table:
    """Records of a block whose content starts with version and count ints:
    the fields in ``keep`` (None: all), in the schema's order. The others are
    only stepped over: no values are built or checked for them."""
    block = _Cursor.of_data_block(content, count)
    kept = [raw_schema.field(name) for name, _, _ in fields if keep is None or name in keep]
    chunks: list[list[pa.Array]] = [[] for _ in kept]
    for lo, hi in block.chunk_bounds():
        cur = block if (lo, hi) == (0, count) else block.chunk(lo, hi)
        out = iter(chunks)
        for name, branch, t in fields:
            try:
                if keep is None or name in keep:
                    next(out).append(_column(cur, hi - lo, branch, t, raw_schema.field(name).type))
                else:
                    _skip_column(cur, branch, t)
            except ValueError as exc:
                if isinstance(exc, pa.ArrowException):
                    raise
                raise ValueError(f"column {name!r}: {exc}") from exc
        cur.check_ends()
    if not kept:
        # No field asked for: the records still count (a table of no columns keeps its rows this way only).
        return pa.table([pa.nulls(count)], names=["_"]).drop_columns(["_"])
    columns = [pa.chunked_array(c, type=f.type) for c, f in zip(chunks, kept)]
    return pa.Table.from_arrays(columns, schema=raw_schema if keep is None else pa.schema(kept, raw_schema.metadata))
