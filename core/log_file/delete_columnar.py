"""Delete blocks (``HoodieDeleteRecordList``) decoded column by column.

Delete records carry no length prefix, so one sequential walk steps over
their fields to find where each starts. Their record keys and ordering values
are then gathered for all records at once, as data blocks' columns are
(``avro_columnar``), instead of building a dictionary per record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from hudi_ray.core.log_file.avro_columnar import _column, _copied_text, _Cursor

# Union branches of ``orderingVal`` (0 is null), in the order of
# ``content._WRAPPERS``, and the bytes a value of each takes.
_BOOLEAN, _INT, _LONG, _FLOAT, _DOUBLE, _BYTES, _STRING, _DATE, _DECIMAL, _TIME, _TIMESTAMP = range(1, 12)
_BRANCHES = 12
_VARINT = frozenset((_INT, _LONG, _DATE, _TIME, _TIMESTAMP))
_LENGTH_PREFIXED = frozenset((_BYTES, _STRING, _DECIMAL))
_FIXED = {_BOOLEAN: 1, _FLOAT: 4, _DOUBLE: 8}
# Branches whose values come out in one Arrow type, as ``pyarrow.array`` infers
# it from the values fastavro decodes. Booleans, decimals and times (which
# fastavro gives as ``Decimal`` and ``datetime.time``) are left to it.
_KINDS = {b: pa.int64() for b in (_INT, _LONG, _DATE, _TIMESTAMP)}
_KINDS.update({_FLOAT: pa.float64(), _DOUBLE: pa.float64(), _STRING: pa.string(), _BYTES: pa.binary()})


@dataclass(frozen=True)
class DeleteColumns:
    """The keys of a delete block and their ordering values.

    ``ordering`` is an array (null where a record has no ordering value) or,
    from a block decoded record by record, the values as fastavro gives them.
    ``commit_time_delete`` marks deletes without a real ordering value (see
    ``content.DeleteRecords``).
    """

    keys: pa.Array
    ordering: pa.Array | Sequence[Any]
    commit_time_delete: np.ndarray


def _long(buf: bytes | memoryview, p: int) -> tuple[int, int]:
    """The zigzag varint at ``p`` and the position after it; IndexError past the end."""
    b = buf[p]
    raw, shift = b & 0x7F, 7
    p += 1
    while b & 0x80:
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")
        b = buf[p]
        raw |= (b & 0x7F) << shift
        shift += 7
        p += 1
    return (raw >> 1) ^ -(raw & 1), p


def _after_bytes(buf: bytes | memoryview, p: int) -> int:
    """The position after the length-prefixed value at ``p``."""
    n, p = _long(buf, p)
    if n < 0:
        raise ValueError(f"negative length before offset {p}")
    return p + n


def _record_bounds(buf: bytes | memoryview) -> tuple[list[int], list[int]]:
    """(start, end) of each record of the ``deleteRecordList`` array. Reading
    past the end raises IndexError: after the last record comes the array's
    closing count, so a record running past the end fails there at the latest."""
    starts: list[int] = []
    ends: list[int] = []
    p = 0
    while True:
        count, p = _long(buf, p)
        if count == 0:
            return starts, ends
        if count < 0:
            count = -count
            _, p = _long(buf, p)  # the block's size in bytes
        for _ in range(count):
            starts.append(p)
            for _field in range(2):  # recordKey, partitionPath: ["null", "string"]
                branch = buf[p]
                if branch == 2:
                    n = buf[p + 1]
                    # A one-byte length (under 64 bytes) inline, others in full.
                    p = p + 2 + (n >> 1) if n < 0x80 and not n & 1 else _after_bytes(buf, p + 1)
                elif branch:
                    raise ValueError(f"union branch out of range at offset {p}")
                else:
                    p += 1
            branch = buf[p]
            if branch & 1 or branch >= 2 * _BRANCHES:
                raise ValueError(f"ordering value branch out of range at offset {p}")
            p += 1
            branch >>= 1
            if branch in _VARINT:
                p = p + 1 if buf[p] < 0x80 else _long(buf, p)[1]
            elif branch in _LENGTH_PREFIXED:
                p = _after_bytes(buf, p)
            elif branch:
                p += _FIXED[branch]
            ends.append(p)


def decode_delete_columns(payload: bytes | memoryview) -> DeleteColumns | None:
    """The records of a ``HoodieDeleteRecordList`` (the Avro datum, without the
    block's version and length); None when their ordering values are not of
    one type built here. Raises ValueError or IndexError on bytes that do not decode."""
    starts, ends = _record_bounds(payload)
    n = len(starts)
    cur = _Cursor(payload, np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64))
    keys = _column(cur, n, 1, "string", pa.string())
    # Partition paths are not used, but decoded: bytes that are not UTF-8 are a damaged block.
    _column(cur, n, 1, "string", pa.string())
    branch = (cur.first_bytes(cur.pos) >> 1).astype(np.int64)
    cur.pos = cur.pos + 1
    present = np.unique(branch)
    if any(b not in _KINDS for b in present.tolist() if b):
        return None
    values: dict[int, tuple[np.ndarray, pa.Array]] = {}
    for b in present.tolist():
        rows = np.flatnonzero(branch == b)
        if b in _VARINT:
            values[b] = (rows, pa.array(cur.varint(rows)))
        elif b in (_FLOAT, _DOUBLE):
            raw = cur.fixed(rows, _FIXED[b]).view("<f4" if b == _FLOAT else "<f8").reshape(-1)
            values[b] = (rows, pa.array(raw.astype(np.float64)))
        elif b in (_STRING, _BYTES):
            # Spread over every record (the others empty), then taken: views cannot be.
            values[b] = (rows, _copied_text(cur.views(rows, n), _KINDS[b]).take(pa.array(rows)))
    cur.check_ends()
    # The writer's "no ordering value" default is an Integer 0; as in Apache
    # Hudi (``OrderingValues.isDefault``), a Long 0 is a real ordering value.
    ct = branch == 0
    if _INT in values:
        rows, ints = values[_INT]
        ct[rows[ints.to_numpy() == 0]] = True
    real = {b for b, (rows, _) in values.items() if not ct[rows].all()}
    kinds = {_KINDS[b] for b in real}
    if len(kinds) > 1:
        return None
    kind = kinds.pop() if kinds else pa.int64()
    index = np.full(n, -1, dtype=np.int64)
    pieces = []
    offset = 0
    for b in sorted(values):
        rows, arr = values[b]
        index[rows] = np.arange(offset, offset + len(rows))
        # Branches of commit-time deletes alone (IntWrapper zeros) add no values.
        pieces.append(arr.cast(kind) if b in real else pa.nulls(len(rows), kind))
        offset += len(rows)
    index[ct] = -1
    gathered = pa.concat_arrays(pieces) if pieces else pa.array([], kind)
    ordering = gathered.take(pa.array(index, mask=index < 0))
    return DeleteColumns(keys, ordering, ct)
