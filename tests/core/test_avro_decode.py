"""The column-at-a-time Avro block decoder equals fastavro record by record."""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hudi_ray.core.log_file.avro_decode import decoder_for
from hudi_ray.core.schema.avro import avro_to_arrow_schema

FIELD_TYPES = {
    "long": st.integers(-(2**63), 2**63 - 1),
    "int": st.integers(-(2**31), 2**31 - 1),
    # Past 12 bytes a value is no longer inline in its Arrow binary view.
    "string": st.text(max_size=24),
    "bytes": st.binary(max_size=24),
    "double": st.floats(allow_nan=False),
    "float": st.floats(allow_nan=False, width=32),
    "boolean": st.booleans(),
    "ts": st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)).map(
        lambda d: d.replace(tzinfo=dt.timezone.utc)
    ),
    "date": st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 1, 1)),
    "decimal": st.integers(-(10**14) + 1, 10**14 - 1).map(lambda n: Decimal(n).scaleb(-2)),
    "enum": st.sampled_from(["A", "B", "C"]),
}


def _avro_type(kind: str, i: int) -> object:
    if kind == "ts":
        return {"type": "long", "logicalType": "timestamp-micros"}
    if kind == "date":
        return {"type": "int", "logicalType": "date"}
    if kind == "decimal":
        return {"type": "fixed", "name": f"fx{i}", "size": 7, "logicalType": "decimal", "precision": 15, "scale": 2}
    if kind == "enum":
        return {"type": "enum", "name": f"en{i}", "symbols": ["A", "B", "C"]}
    return kind


@st.composite
def blocks(draw: st.DrawFn) -> tuple[dict, list[dict]]:
    kinds = draw(st.lists(st.sampled_from(sorted(FIELD_TYPES)), min_size=1, max_size=6))
    nullable = draw(st.lists(st.sampled_from(["no", "first", "last"]), min_size=len(kinds), max_size=len(kinds)))
    fields = []
    for i, (kind, null) in enumerate(zip(kinds, nullable)):
        t = _avro_type(kind, i)
        avro = t if null == "no" else (["null", t] if null == "first" else [t, "null"])
        fields.append({"name": f"c{i}", "type": avro})
    schema = {"type": "record", "name": "r", "fields": fields}
    n = draw(st.integers(0, 30))
    rows = []
    for _ in range(n):
        row = {}
        for i, (kind, null) in enumerate(zip(kinds, nullable)):
            value = draw(FIELD_TYPES[kind])
            row[f"c{i}"] = None if null != "no" and draw(st.booleans()) else value
        rows.append(row)
    return schema, rows


def _content(schema: dict, rows: list[dict]) -> bytes:
    parsed = fastavro.parse_schema(schema)
    out = io.BytesIO()
    out.write(struct.pack(">ii", 3, len(rows)))
    for row in rows:
        b = io.BytesIO()
        fastavro.schemaless_writer(b, parsed, row)
        out.write(struct.pack(">i", len(b.getvalue())) + b.getvalue())
    return out.getvalue()


@settings(max_examples=120, deadline=None)
@given(blocks())
def test_columnar_decoder_equals_fastavro(block: tuple[dict, list[dict]]) -> None:
    schema, rows = block
    decoder = decoder_for(json.dumps(schema))
    assert decoder.columnar is not None
    got = decoder.decode(_content(schema, rows), len(rows))
    expected = pa.Table.from_pylist(rows, schema=avro_to_arrow_schema(schema))
    assert got.schema.equals(expected.schema)
    assert got.equals(expected)


@settings(max_examples=120, deadline=None)
@given(blocks(), st.data())
def test_decoding_some_fields_equals_all_of_them_selected(block: tuple[dict, list[dict]], data: st.DataObject) -> None:
    """Fields left out are stepped over whatever their type, and the kept ones decode as in a full decode."""
    schema, rows = block
    names = [f["name"] for f in schema["fields"]]
    keep = set(data.draw(st.lists(st.sampled_from(names), max_size=len(names)))) | {"not_a_field"}
    decoder = decoder_for(json.dumps(schema))
    content = _content(schema, rows)
    got = decoder.decode(content, len(rows), keep)
    full = decoder.decode(content, len(rows))
    assert got.column_names == [n for n in names if n in keep]
    assert got.equals(full.select(got.column_names))


@settings(max_examples=60, deadline=None)
@given(blocks(), st.integers(1, 7))
def test_blocks_decoded_in_chunks_equal_fastavro(block: tuple[dict, list[dict]], size: int) -> None:
    """Records decoded a chunk at a time (as a block of more than 16,384 is)
    give the same table, its columns in the chunks they were decoded in."""
    from hudi_ray.core.log_file import avro_columnar

    schema, rows = block
    decoder = decoder_for(json.dumps(schema))
    saved = avro_columnar._CHUNK_RECORDS
    avro_columnar._CHUNK_RECORDS = size
    try:
        got = decoder.decode(_content(schema, rows), len(rows))
    finally:
        avro_columnar._CHUNK_RECORDS = saved
    assert got.equals(pa.Table.from_pylist(rows, schema=avro_to_arrow_schema(schema)))
    if len(rows) > size:
        assert got.column(0).num_chunks == -(-len(rows) // size)


def test_a_corrupt_record_in_a_later_chunk_is_named_by_its_place_in_the_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hudi_ray.core.log_file import avro_columnar

    monkeypatch.setattr(avro_columnar, "_CHUNK_RECORDS", 2)
    schema = {"type": "record", "name": "r", "fields": [{"name": "v", "type": "long"}]}
    good = struct.pack(">i", 1) + b"\x02"
    # Record 4 (the third chunk's first) claims one byte of a two-byte varint.
    content = struct.pack(">ii", 3, 6) + good * 4 + struct.pack(">i", 1) + b"\xd8" + struct.pack(">i", 1) + b"\x02"
    with pytest.raises(ValueError, match="record 4 decodes past its length"):
        avro_columnar.decode_columnar(content, 6, avro_columnar.plan_fields(schema), pa.schema([("v", pa.int64())]))


def test_skipped_fields_still_bound_each_record() -> None:
    """A skipped string that claims more bytes than its record holds is still an error."""
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "long"}]}
    good = _content(schema, [{"a": "xy", "b": 1}, {"a": "z", "b": 2}])
    # Record 0's string length 2 (zigzag 4) becomes 3 (zigzag 6): it reads into the long.
    bad = good[:12] + b"\x06" + good[13:]
    decoder = decoder_for(json.dumps(schema))
    with pytest.raises(ValueError, match="record 0 decodes past its length"):
        decoder.decode(bad, 2, {"b"})


_LONG_STRINGS = (
    {"type": "record", "name": "r", "fields": [{"name": "s", "type": ["null", "string"]}]},
    [{"s": None if i % 7 == 0 else f"value {i:03d} " + "x" * (i % 20)} for i in range(60)],
)


@settings(max_examples=40, deadline=None)
@given(blocks())
@example(_LONG_STRINGS)
def test_values_past_the_first_data_window(block: tuple[dict, list[dict]]) -> None:
    """Blocks past 2 GiB address their values through overlapping windows;
    shrunk to a few hundred bytes here, values cross window starts."""
    from unittest import mock

    from hudi_ray.core.log_file import avro_columnar

    schema, rows = block
    decoder = decoder_for(json.dumps(schema))
    # Values have at most 96 bytes (24 characters of up to 4 bytes).
    with mock.patch.object(avro_columnar, "_WINDOW_STEP", 128), mock.patch.object(avro_columnar, "_WINDOW", 255):
        got = decoder.decode(_content(schema, rows), len(rows))
    assert got.equals(pa.Table.from_pylist(rows, schema=avro_to_arrow_schema(schema)))


def test_a_value_reading_into_the_next_record_is_an_error() -> None:
    """A record whose fields need more bytes than its length prefix gives is
    corrupt, even when the bytes after it happen to decode."""
    from hudi_ray.core.log_file.avro_columnar import decode_columnar, plan_fields

    schema = {"type": "record", "name": "r", "fields": [{"name": "v", "type": "long"}]}
    # Record 0 claims one byte, a varint's first; its continuation bit reads on
    # into record 1's length prefix.
    content = struct.pack(">ii", 3, 2) + struct.pack(">i", 1) + b"\xd8" + struct.pack(">i", 1) + b"\x02"
    with pytest.raises(ValueError, match="record 0 decodes past its length"):
        decode_columnar(content, 2, plan_fields(schema), pa.schema([("v", pa.int64())]))


def test_nested_schemas_take_the_fastavro_path() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "a", "type": {"type": "array", "items": "long"}},
            {"name": "s", "type": ["null", {"type": "record", "name": "s", "fields": [{"name": "x", "type": "int"}]}]},
        ],
    }
    rows = [{"a": [1, 2], "s": {"x": 3}}, {"a": [], "s": None}]
    decoder = decoder_for(json.dumps(schema))
    assert decoder.columnar is None
    got = decoder.decode(_content(schema, rows), len(rows))
    assert got.to_pylist() == rows


def test_varints_at_the_int64_limits_and_overlong_ones() -> None:
    """The byte-at-a-time varint decoder: every length from 1 to 10 bytes, and
    an 11-byte varint rejected instead of read as garbage."""
    import io
    import struct

    import fastavro
    import numpy as np
    import pyarrow as pa

    from hudi_ray.core.log_file.avro_columnar import _Cursor, decode_columnar, plan_fields

    values = [0, -1, 1, 63, -64, 64, 2**31, -(2**31), 2**56, 2**63 - 1, -(2**63)]
    schema = {"type": "record", "name": "r", "fields": [{"name": "v", "type": "long"}]}
    parsed = fastavro.parse_schema(schema)
    content = bytearray(struct.pack(">ii", 1, len(values)))
    for v in values:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, {"v": v})
        content += struct.pack(">i", len(buf.getvalue())) + buf.getvalue()
    table = decode_columnar(bytes(content), len(values), plan_fields(schema), pa.schema([("v", pa.int64())]))
    assert table.column("v").to_pylist() == values

    overlong = bytes(struct.pack(">ii", 1, 1) + struct.pack(">i", 11) + b"\xff" * 10 + b"\x01")
    with pytest.raises(ValueError, match="longer than 10 bytes"):
        _Cursor.of_data_block(overlong, 1).varint(np.arange(1))
