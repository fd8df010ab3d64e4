"""The compiled Avro block decoder equals fastavro record by record.

Every primitive and logical type, nullable or not (the null branch first or
last), empty and long strings, varints of every length, projections that step
over fields, and nested fields (decoded by fastavro, stepped over by the walk).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
import uuid
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_ray.core.log_file import avro_decode
from hudi_ray.core.log_file.avro_decode import decoder_for
from hudi_ray.core.schema.avro import avro_to_arrow_schema

_UTC = dt.timezone.utc
_DAY = dt.timedelta(days=1)

# Each kind: its Avro type (a function of a unique name) and its values as fastavro writes them.
KINDS: dict[str, tuple[Any, st.SearchStrategy[Any]]] = {
    "null": ("null", st.none()),
    "boolean": ("boolean", st.booleans()),
    "int": ("int", st.integers(-(2**31), 2**31 - 1)),
    "long": ("long", st.integers(-(2**63), 2**63 - 1)),
    "float": ("float", st.floats(allow_nan=False, width=32)),
    "double": ("double", st.floats(allow_nan=False)),
    "string": ("string", st.text(max_size=40)),
    "long_string": ("string", st.text(min_size=60, max_size=400)),
    "bytes": ("bytes", st.binary(max_size=40)),
    "fixed": (lambda n: {"type": "fixed", "name": n, "size": 5}, st.binary(min_size=5, max_size=5)),
    "enum": (lambda n: {"type": "enum", "name": n, "symbols": ["A", "B", "C"]}, st.sampled_from(["A", "B", "C"])),
    "uuid": ({"type": "string", "logicalType": "uuid"}, st.uuids().map(str)),
    "date": (
        {"type": "int", "logicalType": "date"},
        st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)),
    ),
    "time_millis": ({"type": "int", "logicalType": "time-millis"}, st.times().map(lambda t: t.replace(microsecond=0))),
    "time_micros": ({"type": "long", "logicalType": "time-micros"}, st.times()),
    "ts_millis": (
        {"type": "long", "logicalType": "timestamp-millis"},
        st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)).map(
            lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=_UTC)
        ),
    ),
    "ts_micros": (
        {"type": "long", "logicalType": "timestamp-micros"},
        st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)).map(
            lambda d: d.replace(tzinfo=_UTC)
        ),
    ),
    "ts_nanos": ({"type": "long", "logicalType": "timestamp-nanos"}, st.integers(-(2**63), 2**63 - 1)),
    "local_ts_micros": (
        {"type": "long", "logicalType": "local-timestamp-micros"},
        st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
    ),
    "local_ts_millis": (
        {"type": "long", "logicalType": "local-timestamp-millis"},
        st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)).map(
            lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)
        ),
    ),
    "decimal_fixed": (
        lambda n: {"type": "fixed", "name": n, "size": 7, "logicalType": "decimal", "precision": 16, "scale": 2},
        st.integers(-(10**16) + 1, 10**16 - 1).map(lambda v: Decimal(f"{v}E-2")),
    ),
    "decimal_bytes": (
        {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 4},
        st.integers(-(10**38) + 1, 10**38 - 1).map(lambda v: Decimal(f"{v}E-4")),
    ),
    "decimal_wide_fixed": (
        lambda n: {"type": "fixed", "name": n, "size": 20, "logicalType": "decimal", "precision": 40, "scale": 0},
        st.integers(-(10**40) + 1, 10**40 - 1).map(Decimal),
    ),
    "decimal256_bytes": (
        {"type": "bytes", "logicalType": "decimal", "precision": 60, "scale": 10},
        st.integers(-(10**60) + 1, 10**60 - 1).map(lambda v: Decimal(f"{v}E-10")),
    ),
    # Nested fields: stepped over by the compiled walk, decoded by fastavro.
    "record": (
        lambda n: {
            "type": "record",
            "name": n,
            "fields": [{"name": "x", "type": "int"}, {"name": "s", "type": ["null", "string"]}],
        },
        st.fixed_dictionaries({"x": st.integers(-(2**31), 2**31 - 1), "s": st.none() | st.text(max_size=10)}),
    ),
    "array": ({"type": "array", "items": "long"}, st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5)),
    "map": (
        {"type": "map", "values": ["null", "double"]},
        st.dictionaries(st.text(max_size=5), st.none() | st.floats(allow_nan=False), max_size=4),
    ),
    "array_of_records": (
        lambda n: {
            "type": "array",
            "items": {
                "type": "record",
                "name": n,
                "fields": [{"name": "t", "type": {"type": "long", "logicalType": "timestamp-micros"}}],
            },
        },
        st.lists(
            st.fixed_dictionaries(
                {
                    "t": st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)).map(
                        lambda d: d.replace(tzinfo=_UTC)
                    )
                }
            ),
            max_size=3,
        ),
    ),
}
NESTED = {"record", "array", "map", "array_of_records"}


def _avro_type(kind: str, i: int) -> Any:
    t = KINDS[kind][0]
    return t(f"t{i}") if callable(t) else t


@st.composite
def blocks(draw: st.DrawFn, kinds: list[str] | None = None, max_rows: int = 30) -> tuple[dict, list[dict]]:
    chosen = kinds or draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=7))
    fields = []
    nullable = []
    for i, kind in enumerate(chosen):
        t = _avro_type(kind, i)
        null = "no" if kind == "null" else draw(st.sampled_from(["no", "first", "last"]))
        nullable.append(null != "no")
        fields.append(
            {"name": f"c{i}", "type": t if null == "no" else (["null", t] if null == "first" else [t, "null"])}
        )
    schema = {"type": "record", "name": "r", "fields": fields}
    rows = []
    for _ in range(draw(st.integers(0, max_rows))):
        row = {}
        for i, (kind, null) in enumerate(zip(chosen, nullable)):
            row[f"c{i}"] = None if null and draw(st.booleans()) else draw(KINDS[kind][1])
        rows.append(row)
    return schema, rows


def content_of(schema: dict, rows: list[dict], version: int = 3) -> bytes:
    parsed = fastavro.parse_schema(schema)
    out = io.BytesIO()
    out.write(struct.pack(">ii", version, len(rows)))
    for row in rows:
        b = io.BytesIO()
        fastavro.schemaless_writer(b, parsed, row)
        out.write(struct.pack(">i", len(b.getvalue())) + b.getvalue())
    return out.getvalue()


def fastavro_table(schema: dict, content: bytes) -> pa.Table:
    """What fastavro reads back, record by record, in Arrow."""
    parsed = fastavro.parse_schema(schema)
    _, count = struct.unpack_from(">ii", content, 0)
    pos, rows = 8, []
    for _ in range(count):
        (length,) = struct.unpack_from(">i", content, pos)
        record = fastavro.schemaless_reader(io.BytesIO(content[pos + 4 : pos + 4 + length]), parsed, None)
        rows.append({k: str(v) if isinstance(v, uuid.UUID) else v for k, v in record.items()})
        pos += 4 + length
    return pa.Table.from_pylist(rows, schema=avro_to_arrow_schema(schema))


@settings(max_examples=300, deadline=None)
@given(blocks())
def test_decoder_equals_fastavro(block: tuple[dict, list[dict]]) -> None:
    schema, rows = block
    content = content_of(schema, rows)
    decoder = decoder_for(json.dumps(schema))
    got = decoder.decode(content, len(rows))
    expected = fastavro_table(schema, content)
    assert got.schema.equals(expected.schema)
    assert got.equals(expected)
    nested = {f["name"] for f, kind in zip(schema["fields"], _kinds(schema)) if kind in NESTED}
    assert set(decoder.fallback_columns) == nested


def _kinds(schema: dict) -> list[str]:
    out = []
    for f in schema["fields"]:
        t = f["type"]
        t = next(b for b in t if b != "null") if isinstance(t, list) and t != ["null"] else t
        kind = t if isinstance(t, str) else t["type"]
        out.append("record" if kind == "record" else kind)
    return out


@settings(max_examples=200, deadline=None)
@given(blocks(), st.data())
def test_decoding_some_fields_equals_all_of_them_selected(block: tuple[dict, list[dict]], data: st.DataObject) -> None:
    """Fields left out are stepped over whatever their type, and the kept ones decode as in a full decode."""
    schema, rows = block
    names = [f["name"] for f in schema["fields"]]
    keep = set(data.draw(st.lists(st.sampled_from(names), max_size=len(names)))) | {"not_a_field"}
    decoder = decoder_for(json.dumps(schema))
    content = content_of(schema, rows)
    got = decoder.decode(content, len(rows), keep)
    full = decoder.decode(content, len(rows))
    assert got.column_names == [n for n in names if n in keep]
    assert got.num_rows == len(rows)
    assert got.equals(full.select(got.column_names))


_EXTREMES = [0, -1, 1, 63, -64, 64, -65, 2**31 - 1, -(2**31), 2**31, 2**56, -(2**56), 2**63 - 1, -(2**63)]


def test_varints_of_every_length() -> None:
    """Longs of 1 to 10 varint bytes, ints at their limits, both signs."""
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "l", "type": "long"}, {"name": "i", "type": ["int", "null"]}],
    }
    rows = [{"l": v, "i": max(-(2**31), min(2**31 - 1, v))} for v in _EXTREMES]
    rows += [{"l": 1 << s, "i": None} for s in range(63)] + [
        {"l": -(1 << s), "i": -(1 << min(s, 31))} for s in range(64)
    ]
    content = content_of(schema, rows)
    got = decoder_for(json.dumps(schema)).decode(content, len(rows))
    assert got.equals(fastavro_table(schema, content))


def test_strings_empty_long_and_not_ascii() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": ["null", "string"]}]}
    rows = [{"s": v} for v in ["", "a", "é" * 1000, "", None, "x" * 100_000, "日本語", "\U0001f600", ""]]
    content = content_of(schema, rows)
    got = decoder_for(json.dumps(schema)).decode(content, len(rows))
    assert got.column("s").to_pylist() == [r["s"] for r in rows]


def test_many_records_and_chunks_past_the_byte_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records past the 32-bit offsets' reach decode in chunks of records: shrunk
    here to a few hundred bytes, a block decodes as many chunks, and equal."""
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "k", "type": "string"},
            {"name": "v", "type": ["null", "long"]},
            {"name": "b", "type": ["boolean", "null"]},
        ],
    }
    rows = [{"k": f"key-{i}" * (i % 5), "v": None if i % 3 == 0 else i * 7919, "b": i % 2 == 0} for i in range(5000)]
    content = content_of(schema, rows)
    decoder = decoder_for(json.dumps(schema))
    whole = decoder.decode(content, len(rows))
    assert whole.column("k").num_chunks == 1
    monkeypatch.setattr(avro_decode, "_MAX_CHUNK_BYTES", 300)
    chunked = decoder.decode(content, len(rows))
    assert chunked.column("k").num_chunks > 100
    assert chunked.equals(whole)
    assert whole.equals(fastavro_table(schema, content))


def test_nested_fields_take_the_fastavro_path() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "a", "type": {"type": "array", "items": "long"}},
            {"name": "s", "type": ["null", {"type": "record", "name": "s", "fields": [{"name": "x", "type": "int"}]}]},
            {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": ["null", "string"]}}},
            {"name": "z", "type": "long"},
        ],
    }
    rows = [
        {"a": [1, 2], "s": {"x": 3}, "m": {"k": ["a", None]}, "z": 5},
        {"a": [], "s": None, "m": {}, "z": -1},
        {"a": list(range(300)), "s": {"x": -3}, "m": {str(i): [] for i in range(50)}, "z": 2**40},
    ]
    decoder = decoder_for(json.dumps(schema))
    assert decoder.fallback_columns == ("a", "s", "m")
    content = content_of(schema, rows)
    assert decoder.decode(content, len(rows)).equals(fastavro_table(schema, content))
    # The walk steps over all of them to reach the last field.
    assert decoder.decode(content, len(rows), {"z"}).column("z").to_pylist() == [5, -1, 2**40]


def test_arrays_written_in_blocks_with_sizes_are_stepped_over() -> None:
    """Writers may split an array into blocks, negative counts followed by
    their size in bytes; the walk steps over each block by its size."""
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "a", "type": {"type": "array", "items": "string"}}, {"name": "z", "type": "int"}],
    }

    def zz(n: int) -> bytes:
        return avro_decode._zigzag(n)

    items = [b"\x02a", b"\x04bc", b"\x00"]
    array = zz(-2) + zz(len(items[0] + items[1])) + items[0] + items[1] + zz(1) + items[2] + zz(0)
    datum = array + zz(7)
    content = struct.pack(">iii", 3, 1, len(datum)) + datum
    got = decoder_for(json.dumps(schema)).decode(content, 1)
    assert got.to_pylist() == [{"a": ["a", "bc", ""], "z": 7}]


def test_arrays_of_empty_records_step_over_any_count() -> None:
    """Items of no bytes take no steps: a count of 2**62 of them is stepped over at once."""
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "a", "type": {"type": "array", "items": {"type": "record", "name": "e", "fields": []}}},
            {"name": "z", "type": "int"},
        ],
    }
    datum = avro_decode._zigzag(2**62) + avro_decode._zigzag(0) + avro_decode._zigzag(9)
    content = struct.pack(">iii", 3, 1, len(datum)) + datum
    assert decoder_for(json.dumps(schema)).decode(content, 1, {"z"}).column("z").to_pylist() == [9]


def test_duration_is_months_days_and_nanoseconds() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "d", "type": ["null", {"type": "fixed", "name": "du", "size": 12, "logicalType": "duration"}]}
        ],
    }
    value = struct.pack("<III", 14, 3, 1500)
    content = content_of(schema, [{"d": value}, {"d": None}])
    got = decoder_for(json.dumps(schema)).decode(content, 2)
    assert got.column("d").type == pa.month_day_nano_interval()
    assert got.column("d").to_pylist() == [pa.MonthDayNano([14, 3, 1_500_000_000]), None]


def test_decimals_that_do_not_fit_their_arrow_type_are_errors() -> None:
    """A bytes decimal wider than 16 bytes whose high bytes are more than its sign."""
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 0}}],
    }
    fits = (-5).to_bytes(20, "big", signed=True)
    too_wide = (2**130).to_bytes(20, "big", signed=True)
    decoder = decoder_for(json.dumps(schema))
    for value, ok in ((fits, True), (too_wide, False)):
        datum = avro_decode._zigzag(len(value)) + value
        content = struct.pack(">iii", 3, 1, len(datum)) + datum
        if ok:
            assert decoder.decode(content, 1).column("d").to_pylist() == [Decimal(-5)]
        else:
            with pytest.raises(ValueError, match="record 0, column 'd': a decimal wider than its Arrow type"):
                decoder.decode(content, 1)
