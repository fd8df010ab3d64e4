"""Compiled loops of the Avro block decoder (numba).

Imported on first use (``compiled.load``): importing it imports numba and
loads, or compiles once and caches, the functions below. Every read of the
block's bytes is checked against the end of the record it belongs to (never
past the buffer); a function that meets bytes that do not decode returns a
status code, the record and the position instead of raising, and the caller
raises the project's error naming them.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types as nt

from hudi_ray.core.log_file.avro_program import (
    BAD_BRANCH,
    BAD_COUNT,
    DECIMAL_RANGE,
    ENUM_RANGE,
    INT_RANGE,
    N_ARG,
    N_CHILD,
    N_KIND,
    N_ZERO,
    NEGATIVE_LENGTH,
    NEGATIVE_RECORD_LENGTH,
    NODE_ARRAY,
    NODE_MAP,
    NODE_RECORD,
    NODE_UNION,
    OK,
    OP_BOOLEAN,
    OP_BYTES,
    OP_BYTES_DECIMAL,
    OP_DOUBLE,
    OP_ENUM,
    OP_FIXED,
    OP_FIXED_DECIMAL,
    OP_FLOAT,
    OP_INT,
    OP_LONG,
    OP_NESTED,
    OP_NULL,
    OVERFLOW,
    P_ARG,
    P_BRANCHES,
    P_FIXED_AT,
    P_NODE,
    P_OP,
    P_SLOT,
    P_VALID,
    P_VALUE_BRANCH,
    P_WIDTH,
    PAST_BLOCK,
    PAST_RECORD,
    VARINT_TOO_LONG,
)
from hudi_ray.core.log_file.memory import address as _address
from hudi_ray.core.log_file.memory import byte as _byte
from hudi_ray.core.log_file.memory import load32 as _load32
from hudi_ray.core.log_file.memory import load64 as _load64
from hudi_ray.core.log_file.memory import prefetch as _prefetch
from hudi_ray.core.log_file.memory import store8 as _store8
from hudi_ray.core.log_file.memory import store64 as _store64
from hudi_ray.core.util.compiled import JIT_OPTIONS as _OPTIONS

_BYTES_IN = nt.Array(nt.uint8, 1, "C", readonly=True)
_I64 = nt.Array(nt.int64, 1, "C")
_I32 = nt.Array(nt.int32, 1, "C")
_U8 = nt.Array(nt.uint8, 1, "C")
_I64_2D = nt.Array(nt.int64, 2, "C")
_I32_2D = nt.Array(nt.int32, 2, "C")
_U8_2D = nt.Array(nt.uint8, 2, "C")
_I64_2D_IN = nt.Array(nt.int64, 2, "C", readonly=True)
_I64_IN = nt.Array(nt.int64, 1, "C", readonly=True)
_I32_IN = nt.Array(nt.int32, 1, "C", readonly=True)


# Positions below 0 returned by the readers are failures: -1 past the record's end, -2 a varint over 10 bytes.
_PAST = -1
_LONG_VARINT = -2


@nb.njit(inline="always", **_OPTIONS)
def _varint(addr, p, end):  # type: ignore[no-untyped-def]
    """(raw value, position after it) of the varint at ``p``; a negative position on failure."""
    if p >= end:
        return np.int64(0), np.int64(_PAST)
    b = _byte(addr, p)
    if b < 0x80:
        return b, p + 1
    raw = b & 0x7F
    shift = np.int64(7)
    p += 1
    while True:
        if p >= end:
            return np.int64(0), np.int64(_PAST)
        b = _byte(addr, p)
        p += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            return raw, p
        shift += 7
        if shift > 63:
            return np.int64(0), np.int64(_LONG_VARINT)


@nb.njit(inline="always", **_OPTIONS)
def _zigzag(raw):  # type: ignore[no-untyped-def]
    return ((raw >> 1) & 0x7FFFFFFFFFFFFFFF) ^ -(raw & 1)


@nb.njit(inline="always", **_OPTIONS)
def _failed(p):  # type: ignore[no-untyped-def]
    return PAST_RECORD if p == _PAST else VARINT_TOO_LONG


@nb.njit(inline="always", **_OPTIONS)
def _le(addr, p, n):  # type: ignore[no-untyped-def]
    """``n`` (at most 8) little-endian bytes at ``p`` as an int64."""
    v = np.int64(0)
    for k in range(n):
        v |= _byte(addr, p + k) << (8 * k)
    return v


@nb.njit(inline="always", **_OPTIONS)
def _decimal(addr, p, n, out, at, width):  # type: ignore[no-untyped-def]
    """``n`` big-endian two's-complement bytes at ``p`` as ``width`` (16 or 32)
    little-endian bytes at ``out + at``; False when the value does not fit."""
    if n <= 8:
        v = np.int64(0)
        for k in range(n):
            v = (v << 8) | _byte(addr, p + k)
        if 0 < n < 8 and _byte(addr, p) >= 0x80:
            v |= np.int64(-1) << (8 * n)  # the sign, extended
        _store64(out, at, v)
        fill = np.int64(-1) if v < 0 else np.int64(0)
        for k in range(8, width, 8):
            _store64(out, at + k, fill)
        return True
    fill = np.int64(0xFF) if _byte(addr, p) >= 0x80 else np.int64(0)
    if n > width:
        # Bytes beyond the width must only extend the sign of the rest.
        for k in range(n - width):
            if _byte(addr, p + k) != fill:
                return False
        if (_byte(addr, p + n - width) >= 0x80) != (fill == 0xFF):
            return False
        p += n - width
        n = width
    for k in range(n):
        _store8(out, at + k, _byte(addr, p + n - 1 - k))
    for k in range(n, width):
        _store8(out, at + k, fill)
    return True


@nb.njit(**_OPTIONS)
def _skip(addr, p, end, root, nodes, children, stack):  # type: ignore[no-untyped-def]
    """(status, position after) of the nested value of node ``root`` at ``p``.

    A frame of ``stack`` is (node, counter): the next field of a record, or the
    items left in an array's or map's current block. Each step reads at least
    one byte or finishes a frame, so bad counts end at the record's end.
    """
    top = 0
    cur = root
    while True:
        if cur >= 0:
            kind = nodes[cur, N_KIND]
            if kind == OP_NULL:
                pass
            elif kind == OP_BOOLEAN:
                p += 1
            elif kind in (OP_INT, OP_LONG, OP_ENUM):
                _, p = _varint(addr, p, end)
                if p < 0:
                    return _failed(p), p
            elif kind == OP_FLOAT:
                p += 4
            elif kind == OP_DOUBLE:
                p += 8
            elif kind == OP_BYTES:
                raw, p = _varint(addr, p, end)
                if p < 0:
                    return _failed(p), p
                n = _zigzag(raw)
                if n < 0:
                    return NEGATIVE_LENGTH, p
                if n > end - p:
                    return PAST_RECORD, p
                p += n
            elif kind == OP_FIXED:
                p += nodes[cur, N_ARG]
            elif kind == NODE_UNION:
                raw, p = _varint(addr, p, end)
                if p < 0:
                    return _failed(p), p
                b = _zigzag(raw)
                if b < 0 or b >= nodes[cur, N_ARG]:
                    return BAD_BRANCH, p
                cur = children[nodes[cur, N_CHILD] + b]
                continue
            else:  # a record, array or map: a frame
                stack[top, 0] = cur
                stack[top, 1] = 0
                top += 1
            if p > end:
                return PAST_RECORD, end
            cur = -1
            continue
        if top == 0:
            return OK, p
        frame = stack[top - 1, 0]
        kind = nodes[frame, N_KIND]
        if kind == NODE_RECORD:
            i = stack[top - 1, 1]
            if i == nodes[frame, N_ARG]:
                top -= 1
            else:
                stack[top - 1, 1] = i + 1
                cur = children[nodes[frame, N_CHILD] + i]
            continue
        # An array or a map: items are in blocks, each after its count.
        if stack[top - 1, 1] == 0:
            raw, p = _varint(addr, p, end)
            if p < 0:
                return _failed(p), p
            count = _zigzag(raw)
            if count == 0:
                top -= 1
                continue
            item = nodes[frame, N_CHILD]
            if count < 0:
                # A negative count is followed by the block's size in bytes, which steps over it whole.
                raw, p = _varint(addr, p, end)
                if p < 0:
                    return _failed(p), p
                size = _zigzag(raw)
                if size < 0 or size > end - p:
                    return BAD_COUNT, p
                p += size
                continue
            if kind == NODE_ARRAY and nodes[item, N_ZERO] == 1:
                continue  # items of no bytes: the whole block is stepped over
            stack[top - 1, 1] = count
        stack[top - 1, 1] -= 1
        if kind == NODE_MAP:
            raw, p = _varint(addr, p, end)
            if p < 0:
                return _failed(p), p
            n = _zigzag(raw)
            if n < 0:
                return NEGATIVE_LENGTH, p
            if n > end - p:
                return PAST_RECORD, p
            p += n
        cur = nodes[frame, N_CHILD]


@nb.njit(nt.UniTuple(nt.int64, 3)(_BYTES_IN, nt.int64, _I64, _I64), **_OPTIONS)
def record_bounds(buf, count, starts, ends):  # type: ignore[no-untyped-def]
    """Where each of ``count`` records starts and ends, from their 4-byte big-endian
    length prefixes after the content's version and count: (status, record, position)."""
    size = len(buf)
    p = np.int64(8)
    for i in range(count):
        if p + 4 > size:
            return PAST_BLOCK, i, p
        length = (np.int64(buf[p]) << 24) | (np.int64(buf[p + 1]) << 16) | (np.int64(buf[p + 2]) << 8) | buf[p + 3]
        if length >= 0x80000000:
            return NEGATIVE_RECORD_LENGTH, i, p
        if length > size - p - 4:
            return PAST_BLOCK, i, p
        starts[i] = p + 4
        p += 4 + length
        ends[i] = p
    return OK, count, p


@nb.njit(inline="always", **_OPTIONS)
def _union(addr, p, end, branches, value_branch):  # type: ignore[no-untyped-def]
    """(1 when the union at ``p`` holds a value, 0 when null, else minus a
    status; the position after its branch)."""
    if p >= end:
        return -PAST_RECORD, end
    b = _byte(addr, p)
    if b < 0x80:  # one byte: an odd one is a negative index
        if b & 1:
            return -BAD_BRANCH, p
        b >>= 1
        p += 1
    else:
        b, p = _varint(addr, p, end)
        if p < 0:
            return -_failed(p), end
        b = _zigzag(b)
        if b < 0:
            return -BAD_BRANCH, p
    if b >= branches:
        return -BAD_BRANCH, p
    return (1 if b == value_branch else 0), p


@nb.njit(inline="always", **_OPTIONS)
def _mark_valid(valid, v, r0, g, bits, present):  # type: ignore[no-untyped-def]
    """Set the validity bits of records ``r0`` to ``r0 + g`` in bitmap ``v``
    from ``bits`` (bit j: record r0 + j), a byte at a time."""
    for b in range(0, g, 8):
        byte = (bits >> b) & 0xFF
        if byte == 0:
            continue
        at = r0 + b
        shift = at & 7
        valid[v, at >> 3] |= np.uint8((byte << shift) & 0xFF)
        spill = byte >> (8 - shift) if shift else 0
        if spill:  # bits of the next byte's records (a record past the bitmap's last has none)
            valid[v, (at >> 3) + 1] |= np.uint8(spill)
        while byte:
            present[v] += byte & 1
            byte >>= 1


@nb.njit(
    nt.UniTuple(nt.int64, 4)(
        _BYTES_IN,  # buf
        nt.int64,  # where the first record's length prefix is
        nt.int64,  # records to decode at most
        nt.int64,  # bytes they may span at most
        nt.int64,  # group: records decoded side by side
        _I64,  # their positions
        _I64,  # and ends
        _I64_2D_IN,  # program
        _I64_2D_IN,  # nodes
        _I64_IN,  # children
        _I64_2D,  # stack
        _I32_2D,  # int32 values: ints, dates, floats' bits, enum indices
        _I64_2D,  # int64 values: longs, timestamps, doubles' bits
        _U8_2D,  # booleans, a byte each
        _U8,  # fixed-width bytes: fixed values, decimals
        _I32_2D,  # offsets of bytes values
        _U8,  # their bytes: a region per field
        _I64,  # where each field's region starts
        _I64,  # and how many bytes it holds
        _I64,  # bytes written to each region
        _I64,  # each region's bytes OR-ed together (in words): whether any is past ASCII
        _U8_2D,  # validity bitmaps
        _I64,  # present values per validity bitmap
    ),
    **_OPTIONS,
)
def walk(  # type: ignore[no-untyped-def]
    buf,
    first,
    count,
    limit,
    group,
    pos,
    ends,
    program,
    nodes,
    children,
    stack,
    ints,
    longs,
    bools,
    fixed,
    offsets,
    data,
    region,
    capacity,
    used,
    high,
    valid,
    present,
):
    """Decode the records from content offset ``first`` on (each after its
    4-byte big-endian length) into the outputs the program names, until
    ``count`` records or ``limit`` bytes (at least one record):
    (OK, records decoded, -1, the position after them), or on bytes that do
    not decode (status, record, field or -1, position).

    Records are decoded ``group`` at a time, field after field: reading a
    record is a chain of loads, each at a position the one before gives, and
    the chains of several records overlap where one record's would wait. On
    bytes that do not decode, the record returned is the first of its group
    found failing; with ``group`` 1, the first of the block.

    Bytes values are copied eight bytes at a time, a value's last word running
    on into the space after it: a region must keep 8 bytes spare, and when a
    value would leave fewer the walk stops with OVERFLOW (the field is named)."""
    n = count
    fields = program.shape[0]
    addr = _address(buf)
    out = _address(data)
    fixed_at = _address(fixed)
    size_of_buf = len(buf)
    q = first
    r0 = np.int64(0)
    while r0 < n:
        g = min(group, n - r0)
        for j in range(g):
            if q + 4 > size_of_buf:
                return PAST_BLOCK, r0 + j, -1, q
            length = (
                (_byte(addr, q) << 24) | (_byte(addr, q + 1) << 16) | (_byte(addr, q + 2) << 8) | _byte(addr, q + 3)
            )
            if length >= 0x80000000:
                return NEGATIVE_RECORD_LENGTH, r0 + j, -1, q
            if length > size_of_buf - q - 4:
                return PAST_BLOCK, r0 + j, -1, q
            if q + 4 + length - first > limit and r0 + j > 0:
                g = j
                n = r0 + j  # the chunk ends before this record
                break
            pos[j] = q + 4
            q += 4 + length
            ends[j] = q
        # The next group's bytes, about as many as this one's, are asked for
        # now: they arrive from memory while this group decodes.
        for line in range(q, min(q + q - pos[0], size_of_buf), 64):
            _prefetch(addr + line)
        for f in range(fields):
            op = program[f, P_OP]
            slot = program[f, P_SLOT]
            branches = program[f, P_BRANCHES]
            value_branch = program[f, P_VALUE_BRANCH]
            v = program[f, P_VALID]
            bits = np.int64(0)  # bit j: record r0 + j holds a value (of a nullable field)
            if op == OP_BYTES:
                # The region's fill and ASCII check stay in registers through the group.
                filled = used[slot] if slot >= 0 else 0
                room = capacity[slot] if slot >= 0 else 0
                start = region[slot] if slot >= 0 else 0
                words = np.int64(0)
                for j in range(g):
                    r = r0 + j
                    p = pos[j]
                    end = ends[j]
                    if branches > 0:
                        state, p = _union(addr, p, end, branches, value_branch)
                        if state < 0:
                            return -state, r, f, p
                        if state == 0:
                            if slot >= 0:
                                offsets[slot, r + 1] = filled
                            pos[j] = p
                            continue
                        bits |= np.int64(1) << j
                    raw = np.int64(buf[p]) if p < end else np.int64(0x80)
                    if raw < 0x80:  # a length of one byte: an odd one is negative
                        if raw & 1:
                            return NEGATIVE_LENGTH, r, f, p
                        size = raw >> 1
                        p += 1
                    else:
                        raw, p = _varint(addr, p, end)
                        if p < 0:
                            return _failed(p), r, f, end
                        size = _zigzag(raw)
                        if size < 0:
                            return NEGATIVE_LENGTH, r, f, p
                    if size > end - p:
                        return PAST_RECORD, r, f, end
                    if slot >= 0:
                        if filled + size + 8 > room:
                            return OVERFLOW, r, f, p
                        at = start + filled
                        if p + size + 8 <= size_of_buf:
                            k = np.int64(0)
                            while k + 8 <= size:
                                w = _load64(addr, p + k)
                                words |= w
                                _store64(out, at + k, w)
                                k += 8
                            if k < size:
                                w = _load64(addr, p + k)
                                _store64(out, at + k, w)
                                words |= w & ((np.int64(1) << (8 * (size - k))) - 1)
                        else:  # near the end of the block: no word may reach past it
                            for k in range(size):
                                c = buf[p + k]
                                words |= c
                                data[at + k] = c
                        filled += size
                        offsets[slot, r + 1] = filled
                    pos[j] = p + size
                if slot >= 0:
                    used[slot] = filled
                    high[slot] |= words
            elif op == OP_BYTES_DECIMAL:
                width = program[f, P_WIDTH]
                base = program[f, P_FIXED_AT] * n
                for j in range(g):
                    r = r0 + j
                    p = pos[j]
                    end = ends[j]
                    if branches > 0:
                        state, p = _union(addr, p, end, branches, value_branch)
                        if state < 0:
                            return -state, r, f, p
                        if state == 0:
                            if slot >= 0:
                                for k in range(width):
                                    fixed[base + r * width + k] = 0
                            pos[j] = p
                            continue
                        bits |= np.int64(1) << j
                    raw, p = _varint(addr, p, end)
                    if p < 0:
                        return _failed(p), r, f, end
                    size = _zigzag(raw)
                    if size < 0:
                        return NEGATIVE_LENGTH, r, f, p
                    if size > end - p:
                        return PAST_RECORD, r, f, end
                    if slot >= 0 and not _decimal(addr, p, size, fixed_at, base + r * width, width):
                        return DECIMAL_RANGE, r, f, p
                    pos[j] = p + size
            elif op in (OP_INT, OP_LONG, OP_ENUM):
                for j in range(g):
                    r = r0 + j
                    p = pos[j]
                    end = ends[j]
                    if branches > 0:
                        state, p = _union(addr, p, end, branches, value_branch)
                        if state < 0:
                            return -state, r, f, p
                        if state == 0:
                            if slot >= 0:
                                if op == OP_LONG:
                                    longs[slot, r] = 0
                                else:
                                    ints[slot, r] = 0
                            pos[j] = p
                            continue
                        bits |= np.int64(1) << j
                    if p < end and buf[p] < 0x80:
                        raw = np.int64(buf[p])
                        p += 1
                    else:
                        raw, p = _varint(addr, p, end)
                        if p < 0:
                            return _failed(p), r, f, end
                    if slot >= 0:
                        value = _zigzag(raw)
                        if op == OP_LONG:
                            longs[slot, r] = value
                        elif op == OP_INT:
                            if value < -0x80000000 or value > 0x7FFFFFFF:
                                return INT_RANGE, r, f, p
                            ints[slot, r] = value
                        else:
                            if value < 0 or value >= program[f, P_ARG]:
                                return ENUM_RANGE, r, f, p
                            ints[slot, r] = value
                    pos[j] = p
            elif op in (OP_DOUBLE, OP_FLOAT, OP_BOOLEAN):
                size = 8 if op == OP_DOUBLE else (4 if op == OP_FLOAT else 1)
                for j in range(g):
                    r = r0 + j
                    p = pos[j]
                    end = ends[j]
                    if branches > 0:
                        state, p = _union(addr, p, end, branches, value_branch)
                        if state < 0:
                            return -state, r, f, p
                        if state == 0:
                            if slot >= 0:
                                if op == OP_DOUBLE:
                                    longs[slot, r] = 0
                                elif op == OP_FLOAT:
                                    ints[slot, r] = 0
                                else:
                                    bools[slot, r] = 0
                            pos[j] = p
                            continue
                        bits |= np.int64(1) << j
                    if size > end - p:
                        return PAST_RECORD, r, f, end
                    if slot >= 0:
                        if op == OP_DOUBLE:
                            longs[slot, r] = _load64(addr, p)
                        elif op == OP_FLOAT:
                            ints[slot, r] = _load32(addr, p)
                        else:
                            bools[slot, r] = buf[p] != 0
                    pos[j] = p + size
            elif op in (OP_FIXED, OP_FIXED_DECIMAL):
                size = program[f, P_ARG]
                width = size if op == OP_FIXED else program[f, P_WIDTH]
                base = program[f, P_FIXED_AT] * n
                for j in range(g):
                    r = r0 + j
                    p = pos[j]
                    end = ends[j]
                    if branches > 0:
                        state, p = _union(addr, p, end, branches, value_branch)
                        if state < 0:
                            return -state, r, f, p
                        if state == 0:
                            if slot >= 0:
                                for k in range(width):
                                    fixed[base + r * width + k] = 0
                            pos[j] = p
                            continue
                        bits |= np.int64(1) << j
                    if size > end - p:
                        return PAST_RECORD, r, f, end
                    if slot >= 0:
                        at = base + r * width
                        if op == OP_FIXED:
                            for k in range(size):
                                fixed[at + k] = buf[p + k]
                        elif not _decimal(addr, p, size, fixed_at, at, width):
                            return DECIMAL_RANGE, r, f, p
                    pos[j] = p + size
            elif op == OP_NESTED:
                for j in range(g):
                    r = r0 + j
                    status, p = _skip(addr, pos[j], ends[j], program[f, P_NODE], nodes, children, stack)
                    if status != OK:
                        return status, r, f, ends[j] if p < 0 else p
                    pos[j] = p
            elif branches > 0:  # OP_NULL: a union of nulls holds no bytes but its branch
                for j in range(g):
                    r = r0 + j
                    state, p = _union(addr, pos[j], ends[j], branches, value_branch)
                    if state < 0:
                        return -state, r, f, p
                    if state == 1:
                        bits |= np.int64(1) << j
                    pos[j] = p
            if v >= 0 and bits != 0:
                _mark_valid(valid, v, r0, g, bits, present)
        r0 += g
    return OK, n, -1, q


# Eight bytes whose high bits are set: 0x8080808080808080 as an int64.
_HIGH_BITS = np.int64(-0x7F7F7F7F7F7F7F80)


@nb.njit(nt.int64(_BYTES_IN, _I64_IN, _I32_IN, _I32, _U8), **_OPTIONS)
def gather(buf, spans, lengths, offsets, data):  # type: ignore[no-untyped-def]
    """Copy the values at ``spans`` (``lengths`` bytes each) into ``data``, back
    to back, writing their ``offsets``; returns 1 when any byte is not ASCII.
    ``data`` has 8 bytes more than the values: they are copied eight bytes at
    a time, a value's last word running on into the space of the next."""
    size = len(buf)
    addr = _address(buf)
    out = _address(data)
    high = np.int64(0)
    at = np.int64(0)
    offsets[0] = 0
    for i in range(len(spans)):
        p = spans[i]
        n = np.int64(lengths[i])
        if p + n + 8 <= size:
            k = np.int64(0)
            while k + 8 <= n:
                w = _load64(addr, p + k)
                high |= w
                _store64(out, at + k, w)
                k += 8
            if k < n:
                w = _load64(addr, p + k)
                _store64(out, at + k, w)
                high |= w & ((np.int64(1) << (8 * (n - k))) - 1)
        else:
            for k in range(n):
                c = buf[p + k]
                high |= c
                data[at + k] = c
        at += n
        offsets[i + 1] = at
    return 1 if high & _HIGH_BITS else 0


@nb.njit(inline="always", **_OPTIONS)
def _continuation(buf, p, end, lo, hi, more):  # type: ignore[no-untyped-def]
    """Position after a sequence's second byte (in ``lo``..``hi``) and ``more``
    continuation bytes at ``p``, or -1 when they are not there."""
    if p + 1 + more > end or buf[p] < lo or buf[p] > hi:
        return -1
    for k in range(more):
        c = buf[p + 1 + k]
        if c < 0x80 or c > 0xBF:
            return -1
    return p + 1 + more


@nb.njit(inline="always", **_OPTIONS)
def _utf8(buf, p, end):  # type: ignore[no-untyped-def]
    """Whether the bytes from ``p`` to ``end`` are UTF-8."""
    while p < end:
        c = buf[p]
        if c < 0x80:
            p += 1
            continue
        p += 1
        if 0xC2 <= c <= 0xDF:
            p = _continuation(buf, p, end, 0x80, 0xBF, 0)
        elif c == 0xE0:
            p = _continuation(buf, p, end, 0xA0, 0xBF, 1)
        elif 0xE1 <= c <= 0xEC or 0xEE <= c <= 0xEF:
            p = _continuation(buf, p, end, 0x80, 0xBF, 1)
        elif c == 0xED:
            p = _continuation(buf, p, end, 0x80, 0x9F, 1)
        elif c == 0xF0:
            p = _continuation(buf, p, end, 0x90, 0xBF, 2)
        elif 0xF1 <= c <= 0xF3:
            p = _continuation(buf, p, end, 0x80, 0xBF, 2)
        elif c == 0xF4:
            p = _continuation(buf, p, end, 0x80, 0x8F, 2)
        else:
            return False
        if p < 0:
            return False
    return True


@nb.njit(nt.int64(_BYTES_IN, _I64_IN, _I32_IN), **_OPTIONS)
def first_invalid_utf8(buf, spans, lengths):  # type: ignore[no-untyped-def]
    """The index of the first value at ``spans`` that is not UTF-8, or -1."""
    for i in range(len(spans)):
        if not _utf8(buf, spans[i], spans[i] + lengths[i]):
            return i
    return -1


@nb.njit(nt.int64(_BYTES_IN, _I32_IN), **_OPTIONS)
def first_invalid_utf8_of(data, offsets):  # type: ignore[no-untyped-def]
    """The index of the first value of ``data`` (between ``offsets``) that is not UTF-8, or -1."""
    for i in range(len(offsets) - 1):
        if not _utf8(data, offsets[i], offsets[i + 1]):
            return i
    return -1


@nb.njit(
    nt.UniTuple(nt.int64, 3)(_BYTES_IN, _I64, _I32, _U8, _I64, _I32, _U8, _U8, _I64, _I64, _I32),
    **_OPTIONS,
)
def delete_walk(  # type: ignore[no-untyped-def]
    buf, key_at, key_len, key_valid, path_at, path_len, path_valid, branch, values, value_at, value_len
):
    """The records of a ``HoodieDeleteRecordList`` (its Avro array of records):
    record keys and partition paths (spans, null when not valid), each ordering
    value's union branch and its value (varints and floats' bits in ``values``,
    bytes as spans). (status, records, position); outputs hold one entry per
    three bytes of ``buf``, as a record takes at least three."""
    end = len(buf)
    addr = _address(buf)
    p = np.int64(0)
    r = np.int64(0)
    while True:
        raw, p = _varint(addr, p, end)
        if p < 0:
            return _failed(p), r, end
        count = _zigzag(raw)
        if count == 0:
            return OK, r, p
        if count < 0:
            count = -count
            _, p = _varint(addr, p, end)  # the block's size in bytes
            if p < 0:
                return _failed(p), r, end
        for _ in range(count):
            if r >= len(branch):
                return PAST_BLOCK, r, p
            for which in range(2):  # recordKey, partitionPath: ["null", "string"]
                raw, p = _varint(addr, p, end)
                if p < 0:
                    return _failed(p), r, end
                b = _zigzag(raw)
                at = np.int64(0)
                size = np.int64(0)
                if b == 1:
                    raw, p = _varint(addr, p, end)
                    if p < 0:
                        return _failed(p), r, end
                    size = _zigzag(raw)
                    if size < 0:
                        return NEGATIVE_LENGTH, r, p
                    if size > end - p:
                        return PAST_BLOCK, r, p
                    at = p
                    p += size
                elif b != 0:
                    return BAD_BRANCH, r, p
                if which == 0:
                    key_at[r] = at
                    key_len[r] = size
                    key_valid[r] = b
                else:
                    path_at[r] = at
                    path_len[r] = size
                    path_valid[r] = b
            raw, p = _varint(addr, p, end)
            if p < 0:
                return _failed(p), r, end
            b = _zigzag(raw)
            if b < 0 or b > 11:
                return BAD_BRANCH, r, p
            branch[r] = b
            values[r] = 0
            value_at[r] = 0
            value_len[r] = 0
            if b == 1:  # boolean
                if p >= end:
                    return PAST_BLOCK, r, p
                values[r] = buf[p]
                p += 1
            elif b == 4 or b == 5:  # float, double
                width = 4 if b == 4 else 8
                if width > end - p:
                    return PAST_BLOCK, r, p
                values[r] = _le(addr, p, width)
                p += width
            elif b == 6 or b == 7 or b == 9:  # bytes, string, decimal
                raw, p = _varint(addr, p, end)
                if p < 0:
                    return _failed(p), r, end
                size = _zigzag(raw)
                if size < 0:
                    return NEGATIVE_LENGTH, r, p
                if size > end - p:
                    return PAST_BLOCK, r, p
                value_at[r] = p
                value_len[r] = size
                p += size
            elif b != 0:  # int, long, date, time, timestamp
                raw, p = _varint(addr, p, end)
                if p < 0:
                    return _failed(p), r, end
                values[r] = _zigzag(raw)
            r += 1
