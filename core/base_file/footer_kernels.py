"""A compiled walk (numba) of a Parquet footer's Thrift compact encoding, to find its
key-value metadata without building the whole ``FileMetaData``.

Imported on first use (``util.compiled.load``). Planning a key lookup on thousands
of base files needs only their footers' bloom filter entries; pyarrow's parse of a
footer builds every schema element, row group and statistic, and holds the GIL.

The compact protocol, as Thrift defines it: a field is a header byte (field-id delta in
the high nibble, 0 meaning a zigzag varint id follows; type in the low nibble) and its
value; 0 ends a struct. Integers are zigzag varints, binaries a varint length and bytes,
a list a byte (size in the high nibble, 15 meaning a varint size follows; element type
in the low nibble) and its elements, a map a varint size and, when not empty, a byte of
key and value types. Booleans live in the field header, or take a byte inside a list.
``FileMetaData`` keeps ``key_value_metadata`` in field 5, a list of ``KeyValue``
structs: key in field 1, value (optional) in field 2.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from hudi_ray.core.util.compiled import JIT_OPTIONS as _OPTIONS

_STOP = 0
_TRUE = 1
_FALSE = 2
_BYTE = 3
_I16 = 4
_I32 = 5
_I64 = 6
_DOUBLE = 7
_BINARY = 8
_LIST = 9
_SET = 10
_MAP = 11
_STRUCT = 12
_UUID = 13

_DEPTH = 64  # nesting deeper than any Parquet footer; deeper is treated as damage
_KV_FIELD = 5


@nb.njit(**_OPTIONS)
def _varint(buf, pos):  # type: ignore[no-untyped-def]
    """(value, position after) of the unsigned varint at ``pos``; position -1 when it overruns."""
    value = np.int64(0)
    shift = 0
    while pos < len(buf) and shift < 64:
        b = np.int64(buf[pos])
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
    return value, -1


@nb.njit(**_OPTIONS)
def _field(buf, pos, last):  # type: ignore[no-untyped-def]
    """(field id, type, position after) of the field header at ``pos`` after field ``last``:
    type 0 at a struct's end; position -1 when the bytes end first."""
    if pos >= len(buf):
        return last, 0, -1
    head = np.int64(buf[pos])
    pos += 1
    if head == _STOP:
        return last, 0, pos
    if head & 0x0F == 0:
        return last, 0, -1  # a field without a type
    if head >> 4 == 0:
        zz, pos = _varint(buf, pos)
        return (zz >> 1) ^ -(zz & 1), head & 0x0F, pos
    return last + (head >> 4), head & 0x0F, pos


@nb.njit(**_OPTIONS)
def _list(buf, pos):  # type: ignore[no-untyped-def]
    """(element count, element type, position after) of the list header at ``pos``."""
    if pos >= len(buf):
        return 0, 0, -1
    head = np.int64(buf[pos])
    pos += 1
    n = head >> 4
    if n == 15:
        n, pos = _varint(buf, pos)
    return n, head & 0x0F, pos


@nb.njit(**_OPTIONS)
def _skip(buf, pos, kind, in_container):  # type: ignore[no-untyped-def]
    """The position after a value of type ``kind`` at ``pos``; -1 when the bytes are not
    a value of that type. Nested containers are followed on an explicit stack."""
    frames = np.zeros(_DEPTH, np.int64)  # 0 struct, 1 list or set, 2 map
    remaining = np.zeros(_DEPTH, np.int64)
    first = np.zeros(_DEPTH, np.int64)  # element type (a map's key type)
    second = np.zeros(_DEPTH, np.int64)  # a map's value type
    depth = 0
    element = in_container
    while True:
        if kind in (_TRUE, _FALSE):
            if element:
                pos += 1
        elif kind == _BYTE:
            pos += 1
        elif kind in (_I16, _I32, _I64):
            _, pos = _varint(buf, pos)
        elif kind == _DOUBLE:
            pos += 8
        elif kind == _UUID:
            pos += 16
        elif kind == _BINARY:
            n, pos = _varint(buf, pos)
            if pos < 0 or n < 0:
                return -1
            pos += n
        elif kind in (_LIST, _SET, _MAP, _STRUCT):
            if depth == _DEPTH or pos >= len(buf):
                return -1
            if kind == _STRUCT:
                frames[depth] = 0
            elif kind == _MAP:
                n, pos = _varint(buf, pos)
                if pos < 0:
                    return -1
                frames[depth] = 2
                remaining[depth] = 2 * n
                if n > 0:
                    if pos >= len(buf):
                        return -1
                    first[depth] = buf[pos] >> 4
                    second[depth] = buf[pos] & 0x0F
                    pos += 1
            else:
                n, element_type, pos = _list(buf, pos)
                if pos < 0:
                    return -1
                frames[depth] = 1
                remaining[depth] = n
                first[depth] = element_type
            depth += 1
        else:
            return -1
        if pos < 0 or pos > len(buf):
            return -1
        # The next value to walk: a struct's next field, a container's next element.
        while True:
            if depth == 0:
                return pos
            top = depth - 1
            if frames[top] == 0:
                _, kind, pos = _field(buf, pos, 0)
                if pos < 0:
                    return -1
                if kind == _STOP:
                    depth -= 1
                    continue
                element = False
                break
            if remaining[top] == 0:
                depth -= 1
                continue
            remaining[top] -= 1
            kind = second[top] if frames[top] == 2 and remaining[top] % 2 == 0 else first[top]
            element = True
            break


@nb.njit(**_OPTIONS)
def key_value_spans(buf, start):  # type: ignore[no-untyped-def]
    """The key-value metadata of the ``FileMetaData`` encoded from ``buf[start]``: rows of
    (key start, key length, value start, value length; -1, -1 without a value), and
    whether the bytes were a footer (when not, the caller lets pyarrow read it and report)."""
    out = np.zeros((0, 4), np.int64)
    bad = (False, out)
    pos = start
    field = 0
    while True:
        field, kind, pos = _field(buf, pos, field)
        if pos < 0:
            return bad
        if kind == _STOP:
            return True, out
        if field != _KV_FIELD or kind != _LIST:
            pos = _skip(buf, pos, kind, False)
            if pos < 0:
                return bad
            continue
        n, element_type, pos = _list(buf, pos)
        if pos < 0 or element_type != _STRUCT or n < 0 or n > len(buf):
            return bad
        out = np.full((n, 4), -1, np.int64)
        for i in range(n):
            sub = 0
            while True:
                sub, kind, pos = _field(buf, pos, sub)
                if pos < 0:
                    return bad
                if kind == _STOP:
                    break
                if (sub == 1 or sub == 2) and kind == _BINARY:
                    length, pos = _varint(buf, pos)
                    if pos < 0 or pos + length > len(buf):
                        return bad
                    out[i, 2 * (sub - 1)] = pos
                    out[i, 2 * (sub - 1) + 1] = length
                    pos += length
                else:
                    pos = _skip(buf, pos, kind, False)
                    if pos < 0:
                        return bad
            if out[i, 0] < 0:
                return bad  # a key is required
        return True, out
