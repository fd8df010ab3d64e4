"""Delete blocks decoded column by column, against fastavro's record-by-record decode.

The merge must see the same deletes either way: the same keys, the same
commit-time-delete flags and, once cast to the ordering column's type, the
same ordering values (``LogRecords.add_deletes`` fed by each decode).
"""

from __future__ import annotations

import io
import itertools
import struct
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_ray import HudiCorruptFileError
from hudi_ray.core.log_file.block import BlockType, LogBlock
from hudi_ray.core.log_file.content import DELETE_RECORD_LIST_SCHEMA, decode_delete_block, decode_delete_columns_of
from hudi_ray.core.log_file.delete_columnar import decode_delete_columns
from hudi_ray.core.merge import LogRecords, MergeConfig, MergeMode

NS = "org.apache.hudi.avro.model."
_RECORD_SCHEMA = fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA["fields"][0]["type"]["items"], named_schemas={})

text = st.text(max_size=80)  # past 63 bytes a length takes two varint bytes
WRAPPED: dict[str, st.SearchStrategy[Any]] = {
    "IntWrapper": st.one_of(st.just(0), st.integers(-(2**31), 2**31 - 1)),
    "LongWrapper": st.one_of(st.just(0), st.integers(-(2**63), 2**63 - 1)),
    "DateWrapper": st.integers(-(2**31), 2**31 - 1),
    "TimestampMicrosWrapper": st.integers(-(2**63), 2**63 - 1),
    "FloatWrapper": st.floats(width=32, allow_nan=False),
    "DoubleWrapper": st.floats(allow_nan=False),
    "StringWrapper": text,
    "BytesWrapper": st.binary(max_size=80),
    "BooleanWrapper": st.booleans(),
    # Left to fastavro: decoded as Decimal and datetime.time.
    "DecimalWrapper": st.decimals(min_value=-(10**14), max_value=10**14, places=15, allow_nan=False),
    "TimeMicrosWrapper": st.times(),
}


@st.composite
def delete_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Records whose ordering values mostly share one wrapper (as a writer's
    do), with null and IntWrapper 0 ("no value") among them, sometimes mixed."""
    wrappers = draw(st.lists(st.sampled_from(sorted(WRAPPED)), min_size=1, max_size=3, unique=True))
    records = []
    for _ in range(draw(st.integers(0, 40))):
        choice = draw(st.sampled_from([*wrappers, *wrappers, "null", "IntWrapper-0"]))
        if choice == "null":
            ordering = None
        elif choice == "IntWrapper-0":
            ordering = (NS + "IntWrapper", {"value": 0})
        else:
            ordering = (NS + choice, {"value": draw(WRAPPED[choice])})
        key = draw(st.one_of(st.none(), text)) if draw(st.integers(0, 9)) == 0 else draw(text)
        records.append({"recordKey": key, "partitionPath": draw(st.one_of(st.none(), text)), "orderingVal": ordering})
    return records


def _varint(n: int) -> bytes:
    raw = (n << 1) ^ (n >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    return bytes([*out, raw])


def _payload(records: list[dict[str, Any]], cuts: list[int], sized: bool) -> bytes:
    """The record list as Avro, its array in blocks ending at ``cuts``
    (negative counts followed by byte sizes when ``sized``), as writers may."""
    items = []
    for r in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, _RECORD_SCHEMA, r)
        items.append(buf.getvalue())
    out = bytearray()
    bounds = sorted({0, *(c for c in cuts if 0 < c < len(items)), len(items)})
    for lo, hi in itertools.pairwise(bounds):
        body = b"".join(items[lo:hi])
        out += _varint(-(hi - lo)) + _varint(len(body)) if sized else _varint(hi - lo)
        out += body
    return bytes(out + _varint(0))


def _block(payload: bytes) -> LogBlock:
    return LogBlock(BlockType.DELETE, {}, struct.pack(">ii", 3, len(payload)) + payload, "f.log", 0)


def _merge_input(keys: Any, ordering: Any, ct: Any, dtype: pa.DataType) -> pa.Table:
    schema = pa.schema([pa.field("_hoodie_record_key", pa.string()), pa.field("ts", dtype)])
    cfg = MergeConfig(mode=MergeMode.EVENT_TIME_ORDERING, ordering_fields=("ts",), record_key_fields=("k",))
    logs = LogRecords(schema, cfg)
    logs.add_deletes(keys, ordering, ct)
    return logs.table()


@settings(max_examples=300, deadline=None)
@given(
    records=delete_records(),
    cuts=st.lists(st.integers(0, 40), max_size=3),
    sized=st.booleans(),
    dtype=st.sampled_from([pa.int64(), pa.int32(), pa.float64(), pa.string(), pa.binary()]),
)
def test_columns_decode_as_fastavro_does(
    records: list[dict[str, Any]], cuts: list[int], sized: bool, dtype: pa.DataType
) -> None:
    block = _block(_payload(records, cuts, sized))
    reference = decode_delete_block(block)
    assert reference.keys == [r["recordKey"] for r in records]  # the payload is what fastavro reads back
    got = decode_delete_columns_of(block)
    assert got.keys.to_pylist() == reference.keys
    assert got.commit_time_delete.tolist() == reference.commit_time_delete
    expected = _merge_input(reference.keys, reference.ordering, reference.commit_time_delete, dtype)
    assert _same_rows(_merge_input(got.keys, got.ordering, got.commit_time_delete, dtype), expected)


def _same_rows(a: pa.Table, b: pa.Table) -> bool:
    """Table equality where a NaN equals a NaN (an ordering value "NaN" cast to double is one)."""
    if a.schema != b.schema:
        return False
    for x, y in zip(a.columns, b.columns):
        if pa.types.is_floating(x.type):
            if not pc.is_nan(x).fill_null(False).equals(pc.is_nan(y).fill_null(False)):
                return False
            x, y = (pc.if_else(pc.is_nan(c), pa.scalar(0.0, c.type), c) for c in (x, y))
        if not x.equals(y):
            return False
    return True


def test_blocks_of_one_ordering_type_decode_as_columns() -> None:
    """The columnar path is taken (not the fallback) for a block of long values
    with commit-time deletes among them, and for one of strings."""
    longs = [
        {"recordKey": f"k{i}", "partitionPath": "p", "orderingVal": (NS + "LongWrapper", {"value": i * 2**33})}
        for i in range(5)
    ]
    longs.append({"recordKey": "z", "partitionPath": None, "orderingVal": (NS + "IntWrapper", {"value": 0})})
    got = decode_delete_columns(_payload(longs, [], False))
    assert got is not None
    assert got.ordering.type == pa.int64()
    assert got.ordering.to_pylist() == [i * 2**33 for i in range(5)] + [None]
    assert got.commit_time_delete.tolist() == [False] * 5 + [True]
    strings = [{"recordKey": "k", "partitionPath": "p", "orderingVal": (NS + "StringWrapper", {"value": "é" * 40})}]
    got = decode_delete_columns(_payload(strings, [], True))
    assert got is not None and got.ordering.to_pylist() == ["é" * 40]
    floats = [
        {"recordKey": "f", "partitionPath": "p", "orderingVal": (NS + "FloatWrapper", {"value": 0.1})},
        {"recordKey": "d", "partitionPath": "p", "orderingVal": (NS + "DoubleWrapper", {"value": 0.1})},
    ]
    got = decode_delete_columns(_payload(floats, [], False))
    assert got is not None and got.ordering.to_pylist() == [float(np.float32(0.1)), 0.1]
    # Ints and doubles together are left to fastavro, as are decimals and times.
    mixed = [
        {"recordKey": "a", "partitionPath": "p", "orderingVal": (NS + "IntWrapper", {"value": 3})},
        {"recordKey": "b", "partitionPath": "p", "orderingVal": (NS + "DoubleWrapper", {"value": 2.5})},
    ]
    assert decode_delete_columns(_payload(mixed, [], False)) is None


@settings(max_examples=200, deadline=None)
@given(records=delete_records(), data=st.data())
def test_damaged_delete_blocks_fail_as_fastavro_reports_them(
    records: list[dict[str, Any]], data: st.DataObject
) -> None:
    """A truncated or altered payload gives the same keys as fastavro or the
    project's error, never a raw exception."""
    payload = bytearray(_payload(records, [], False))
    if data.draw(st.booleans()):
        payload = payload[: data.draw(st.integers(0, len(payload)))]
    elif payload:
        i = data.draw(st.integers(0, len(payload) - 1))
        payload[i] = data.draw(st.integers(0, 255))
    block = _block(bytes(payload))
    try:
        reference = decode_delete_block(block).keys
    except HudiCorruptFileError:
        reference = None
    if reference is None:
        with pytest.raises(HudiCorruptFileError):
            decode_delete_columns_of(block)
        return
    try:
        got = decode_delete_columns_of(block).keys.to_pylist()
    except HudiCorruptFileError:
        pytest.fail("the columnar decode failed where fastavro did not")
    assert got == reference


def test_commit_time_deletes_only() -> None:
    records = [{"recordKey": f"k{i}", "partitionPath": None, "orderingVal": None} for i in range(3)]
    got = decode_delete_columns(_payload(records, [1], True))
    assert got is not None
    assert got.keys.to_pylist() == ["k0", "k1", "k2"]
    assert np.all(got.commit_time_delete)
