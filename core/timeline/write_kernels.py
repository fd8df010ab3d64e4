"""Compiled loops that pick a few fields out of Avro commit metadata (numba).

Imported on first use (``util.compiled.load``). ``extract`` walks records with the
node table of ``log_file.avro_program`` and reports where the marked values lie,
stepping over everything else; it never reads past a record's end, and returns a
status instead of raising on bytes that do not decode.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types as nt

from hudi_ray.core.log_file.avro_kernels import _failed, _varint, _zigzag
from hudi_ray.core.log_file.avro_program import (
    BAD_BRANCH,
    BAD_COUNT,
    ENUM_RANGE,
    N_ARG,
    N_CHILD,
    N_KIND,
    N_ZERO,
    NEGATIVE_LENGTH,
    NODE_ARRAY,
    NODE_MAP,
    NODE_RECORD,
    NODE_UNION,
    OK,
    OP_BOOLEAN,
    OP_BYTES,
    OP_DOUBLE,
    OP_ENUM,
    OP_FIXED,
    OP_FLOAT,
    OP_INT,
    OP_LONG,
    OP_NULL,
    OVERFLOW,
    PAST_RECORD,
)
from hudi_ray.core.log_file.memory import address as _address
from hudi_ray.core.util.compiled import JIT_OPTIONS as _OPTIONS

_BYTES_IN = nt.Array(nt.uint8, 1, "C", readonly=True)
_I64_IN = nt.Array(nt.int64, 1, "C", readonly=True)
_I64_2D_IN = nt.Array(nt.int64, 2, "C", readonly=True)
_I64_2D = nt.Array(nt.int64, 2, "C")
_U8_IN = nt.Array(nt.uint8, 1, "C", readonly=True)

# Statuses of this module's own, beside those of ``avro_program``.
BAD_TEXT = 64  # a string that is not UTF-8

# Columns of an event row.
E_MARK = 0
E_A = 1  # a string's first byte; an int's, long's or enum's value; -1 for a record's start
E_B = 2  # a string's length
E_RECORD = 3


@nb.njit(inline="always", **_OPTIONS)
def _emit(events, n, mark, a, b, record):  # type: ignore[no-untyped-def]
    events[n, E_MARK] = mark
    events[n, E_A] = a
    events[n, E_B] = b
    events[n, E_RECORD] = record


@nb.njit(inline="always", **_OPTIONS)
def _utf8(buf, start, size):  # type: ignore[no-untyped-def]
    """Whether ``size`` bytes at ``start`` are UTF-8 (as Python decodes it: no surrogates,
    no overlong forms, nothing above U+10FFFF)."""
    i = start
    end = start + size
    while i < end:
        b = buf[i]
        if b < 0x80:
            i += 1
            continue
        if 0xC2 <= b <= 0xDF:
            n, lo, hi = 1, 0x80, 0xBF
        elif b == 0xE0:
            n, lo, hi = 2, 0xA0, 0xBF
        elif b == 0xED:
            n, lo, hi = 2, 0x80, 0x9F
        elif 0xE1 <= b <= 0xEF:
            n, lo, hi = 2, 0x80, 0xBF
        elif b == 0xF0:
            n, lo, hi = 3, 0x90, 0xBF
        elif b == 0xF4:
            n, lo, hi = 3, 0x80, 0x8F
        elif 0xF1 <= b <= 0xF3:
            n, lo, hi = 3, 0x80, 0xBF
        else:
            return False
        if i + n >= end:
            return False
        c = buf[i + 1]
        if c < lo or c > hi:
            return False
        for k in range(2, n + 1):
            c = buf[i + k]
            if c < 0x80 or c > 0xBF:
                return False
        i += n + 1
    return True


@nb.njit(inline="always", **_OPTIONS)
def _sized(addr, p, end):  # type: ignore[no-untyped-def]
    """(status, length, position after the length) of the string or bytes at ``p``."""
    raw, p = _varint(addr, p, end)
    if p < 0:
        return _failed(p), np.int64(0), p
    size = _zigzag(raw)
    if size < 0:
        return NEGATIVE_LENGTH, size, p
    if size > end - p:
        return PAST_RECORD, size, p
    return OK, size, p


@nb.njit(
    nt.UniTuple(nt.int64, 4)(
        _BYTES_IN,  # buf
        _I64_IN,  # starts of the records
        _I64_IN,  # ends of the records
        nt.int64,  # first record to walk
        nt.int64,  # root node
        _I64_2D_IN,  # nodes
        _I64_IN,  # children
        _I64_IN,  # marks of the nodes (-1: none)
        _U8_IN,  # 1 for the nodes of strings, checked as UTF-8
        _I64_2D,  # stack
        _I64_2D,  # events (out)
    ),
    **_OPTIONS,
)
def extract(buf, starts, ends, first, root, nodes, children, marks, text, stack, events):  # type: ignore[no-untyped-def]
    """Events of the marked values of records ``first`` on: a marked string (its
    position and length), int, long or enum (its value), record (its start) or map (its
    start, then each key as a string). Returns (status, record, position, events); on ``OVERFLOW`` the
    events are those of the records before ``record``, which is walked again after the
    caller makes room."""
    addr = _address(buf)
    cap = events.shape[0]
    n = np.int64(0)
    for r in range(first, len(starts)):
        p = starts[r]
        end = ends[r]
        before = n
        top = 0
        cur = root
        while True:
            if n + 1 >= cap:
                return OVERFLOW, r, p, before
            if cur >= 0:
                kind = nodes[cur, N_KIND]
                mark = marks[cur]
                if kind == OP_NULL:
                    pass
                elif kind == OP_BOOLEAN:
                    p += 1
                elif kind in (OP_INT, OP_LONG, OP_ENUM):
                    raw, p = _varint(addr, p, end)
                    if p < 0:
                        return _failed(p), r, p, before
                    if kind == OP_ENUM and not 0 <= _zigzag(raw) < nodes[cur, N_ARG]:
                        return ENUM_RANGE, r, p, before
                    if mark >= 0:
                        _emit(events, n, mark, _zigzag(raw), 0, r)
                        n += 1
                elif kind == OP_FLOAT:
                    p += 4
                elif kind == OP_DOUBLE:
                    p += 8
                elif kind == OP_BYTES:
                    status, size, p = _sized(addr, p, end)
                    if status != OK:
                        return status, r, p, before
                    if text[cur] and not _utf8(buf, p, size):
                        return BAD_TEXT, r, p, before
                    if mark >= 0:
                        _emit(events, n, mark, p, size, r)
                        n += 1
                    p += size
                elif kind == OP_FIXED:
                    p += nodes[cur, N_ARG]
                elif kind == NODE_UNION:
                    raw, p = _varint(addr, p, end)
                    if p < 0:
                        return _failed(p), r, p, before
                    branch = _zigzag(raw)
                    if branch < 0 or branch >= nodes[cur, N_ARG]:
                        return BAD_BRANCH, r, p, before
                    cur = children[nodes[cur, N_CHILD] + branch]
                    continue
                else:  # a record, array or map: a frame
                    if mark >= 0 and kind != NODE_ARRAY:  # a record's or map's start
                        _emit(events, n, mark, -1, 0, r)
                        n += 1
                    stack[top, 0] = cur
                    stack[top, 1] = 0
                    top += 1
                if p > end:
                    return PAST_RECORD, r, end, before
                cur = -1
                continue
            if top == 0:
                break
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
            # An array or a map: items come in blocks, each after its count.
            if stack[top - 1, 1] == 0:
                raw, p = _varint(addr, p, end)
                if p < 0:
                    return _failed(p), r, p, before
                count = _zigzag(raw)
                if count == 0:
                    top -= 1
                    continue
                if count < 0:
                    # A negative count comes with the block's size: the items are walked all the same.
                    count = -count
                    raw, p = _varint(addr, p, end)
                    if p < 0:
                        return _failed(p), r, p, before
                    if _zigzag(raw) < 0 or _zigzag(raw) > end - p:
                        return BAD_COUNT, r, p, before
                if count > end - p + 1 and not (kind == NODE_ARRAY and nodes[nodes[frame, N_CHILD], N_ZERO] == 1):
                    return BAD_COUNT, r, p, before
                if kind == NODE_ARRAY and nodes[nodes[frame, N_CHILD], N_ZERO] == 1:
                    continue  # items of no bytes: nothing to walk
                stack[top - 1, 1] = count
            stack[top - 1, 1] -= 1
            if kind == NODE_MAP:
                status, size, p = _sized(addr, p, end)
                if status != OK:
                    return status, r, p, before
                if not _utf8(buf, p, size):
                    return BAD_TEXT, r, p, before
                if marks[frame] >= 0:
                    _emit(events, n, marks[frame], p, size, r)
                    n += 1
                p += size
            cur = nodes[frame, N_CHILD]
    return OK, len(starts), 0, n


@nb.njit(inline="always", **_OPTIONS)
def _log_at(buf, k, end):  # type: ignore[no-untyped-def]
    """Whether ``.log.`` is at ``k``."""
    return (
        k + 5 <= end
        and buf[k] == 0x2E
        and buf[k + 1] == 0x6C
        and buf[k + 2] == 0x6F
        and buf[k + 3] == 0x67
        and buf[k + 4] == 0x2E
    )


@nb.njit(
    nt.boolean[:](_BYTES_IN, _I64_IN, _I64_IN, _I64_IN, _I64_IN),
    **_OPTIONS,
)
def names_file_id(buf, path_at, path_len, id_at, id_len):  # type: ignore[no-untyped-def]
    """Whether each path's file name is one Hudi gives a file of the stat's group, read
    as the name parsers read it: ``<fileId>_<token>_<instant>.<ext>`` (the id is what
    precedes the name's last two ``_``) or ``.<fileId>_<instant>.log.<rest>`` (the id
    is what precedes the only ``_<digits>.log.``). False also where the name is of
    neither shape."""
    out = np.zeros(len(path_at), dtype=np.bool_)
    for i in range(len(path_at)):
        start = path_at[i]
        end = start + path_len[i]
        name = start
        for k in range(end - 1, start - 1, -1):
            if buf[k] == 0x2F:  # '/'
                name = k + 1
                break
        log = name < end and buf[name] == 0x2E  # '.'
        if log:
            name += 1
        size = id_len[i]
        if size == 0 or name + size >= end or buf[name + size] != 0x5F:  # '_'
            continue
        same = True
        for k in range(size):
            if buf[name + k] != buf[id_at[i] + k]:
                same = False
                break
        if not same:
            continue
        rest = name + size + 1
        if log:
            k = rest
            while k < end and 0x30 <= buf[k] <= 0x39:  # the instant's digits
                k += 1
            if k == rest or not _log_at(buf, k, end):
                continue
            again = False
            for j in range(k + 1, end):
                if _log_at(buf, j, end):
                    again = True
                    break
            out[i] = not again
        else:
            underscores = 0
            for k in range(rest, end):
                if buf[k] == 0x5F:
                    underscores += 1
            out[i] = underscores == 1
    return out
