"""Delete blocks (``HoodieDeleteRecordList``) decoded column by column.

Delete records carry no length prefix: one compiled walk over the Avro array
(``avro_kernels.delete_walk``) finds each record's key, partition path and
ordering value, whose columns are then built at once, as data blocks' are,
instead of a dictionary per record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file import avro_program as prog
from hudi_ray.core.log_file.avro_decode import kernels

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
else:
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")

# Union branches of ``orderingVal`` (0 is null), in the order of
# ``content._WRAPPERS``, and the bytes a value of each takes.
_BOOLEAN, _INT, _LONG, _FLOAT, _DOUBLE, _BYTES, _STRING, _DATE, _DECIMAL, _TIME, _TIMESTAMP = range(1, 12)
_VARINT = frozenset((_INT, _LONG, _DATE, _TIME, _TIMESTAMP))
# Branches whose values come out in one Arrow type, as ``pyarrow.array`` infers
# it from the values fastavro decodes. Booleans, decimals and times (which
# fastavro gives as ``Decimal`` and ``datetime.time``) are left to it.
_KINDS = {b: "int64" for b in (_INT, _LONG, _DATE, _TIMESTAMP)}
_KINDS.update({_FLOAT: "float64", _DOUBLE: "float64", _STRING: "string", _BYTES: "binary"})


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


def _text(
    k: ModuleType, buf: np.ndarray, at: np.ndarray, length: np.ndarray, valid: np.ndarray, dtype: pa.DataType
) -> pa.Array:
    """The values at ``at`` (null where not ``valid``) as ``dtype``, strings checked to be UTF-8."""
    n = len(at)
    offsets = np.empty(n + 1, dtype=np.int32)
    size = int(length.sum(dtype=np.int64))
    data = np.empty(size + 8, dtype=np.uint8)  # the gather copies whole words
    high = k.gather(buf, at, length, offsets, data)
    if pa.types.is_string(dtype) and high and k.first_invalid_utf8(buf, at, length) >= 0:
        raise ValueError("invalid UTF-8 in a string value")
    mask = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(dtype, n, [mask, pa.py_buffer(offsets), pa.py_buffer(data[:size])])


def decode_delete_columns(payload: bytes | memoryview) -> DeleteColumns | None:
    """The records of a ``HoodieDeleteRecordList`` (the Avro datum, without the
    block's version and length); None when their ordering values are not of
    one type built here. Raises ValueError on bytes that do not decode."""
    k = kernels()
    buf = np.frombuffer(payload, dtype=np.uint8)
    cap = len(buf) // 3 + 1  # a record takes at least three bytes, its union branches
    key_at, path_at, values, value_at = (np.empty(cap, dtype=np.int64) for _ in range(4))
    key_len, path_len, value_len = (np.empty(cap, dtype=np.int32) for _ in range(3))
    key_valid, path_valid, branches = (np.empty(cap, dtype=np.uint8) for _ in range(3))
    status, n, pos = k.delete_walk(
        buf, key_at, key_len, key_valid, path_at, path_len, path_valid, branches, values, value_at, value_len
    )
    if status != prog.OK:
        raise ValueError(f"delete record {n} does not decode (status {status}) at offset {pos}")
    keys = _text(k, buf, key_at[:n], key_len[:n], key_valid[:n].astype(bool), pa.string())
    # Partition paths are not used, but checked: bytes that are not UTF-8 are a damaged block.
    if k.first_invalid_utf8(buf, path_at[:n], path_len[:n]) >= 0:
        raise ValueError("invalid UTF-8 in a partition path")
    branch = branches[:n].astype(np.int64)
    present = np.unique(branch)
    if any(b not in _KINDS for b in present.tolist() if b):
        return None
    ordering: dict[int, tuple[np.ndarray, pa.Array]] = {}
    for b in present.tolist():
        rows = np.flatnonzero(branch == b)
        if b in _VARINT:
            ordering[b] = (rows, pa.array(values[rows]))
        elif b == _FLOAT:
            ordering[b] = (rows, pa.array(values[rows].astype(np.uint32).view(np.float32).astype(np.float64)))
        elif b == _DOUBLE:
            ordering[b] = (rows, pa.array(values[rows].view(np.float64)))
        elif b in (_STRING, _BYTES):
            all_valid = np.ones(len(rows), dtype=bool)
            ordering[b] = (
                rows,
                _text(k, buf, value_at[rows], value_len[rows], all_valid, pa.type_for_alias(_KINDS[b])),
            )
    # The writer's "no ordering value" default is an Integer 0; as in Apache
    # Hudi (``OrderingValues.isDefault``), a Long 0 is a real ordering value.
    ct = branch == 0
    if _INT in ordering:
        rows, ints = ordering[_INT]
        ct[rows[ints.to_numpy() == 0]] = True
    real = {b for b, (rows, _) in ordering.items() if not ct[rows].all()}
    kinds = {pa.type_for_alias(_KINDS[b]) for b in real}
    if len(kinds) > 1:
        return None
    kind = kinds.pop() if kinds else pa.int64()
    index = np.full(n, -1, dtype=np.int64)
    pieces = []
    offset = 0
    for b in sorted(ordering):
        rows, arr = ordering[b]
        index[rows] = np.arange(offset, offset + len(rows))
        # Branches of commit-time deletes alone (IntWrapper zeros) add no values.
        pieces.append(arr.cast(kind) if b in real else pa.nulls(len(rows), kind))
        offset += len(rows)
    index[ct] = -1
    gathered = pa.concat_arrays(pieces) if pieces else pa.array([], kind)
    return DeleteColumns(keys, gathered.take(pa.array(index, mask=index < 0)), ct)
