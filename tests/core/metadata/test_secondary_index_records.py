"""Secondary index records: key escaping as Hudi's SecondaryIndexKeyUtils does it, stored value
texts, index definitions, and value -> record keys read from the real tables' indexes."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import pyarrow as pa
import pytest

from hudi_ray import HudiTableBuilder
from hudi_ray.core.exceptions import HudiCorruptFileError
from hudi_ray.core.metadata.secondary_index import definitions, escape, split_key, stored_value, unescape
from tests.support import to_table

SI_TABLES = {
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d": ("uuid", {"rider": False}),
    "sample_table/cow/v9_txns_complex_meta": (None, {"merchant_name": True, "txn_date": True}),
    "sample_table/cow/v9_txns_nonpart_meta": ("txn_id", {"merchant_name": True, "txn_date": True}),
    "sample_table/cow/v9_txns_simple_meta": ("txn_id", {"merchant_name": True, "txn_date": True}),
    "sample_table/mor/avro/v9_txns_nonpart_meta": ("txn_id", {"merchant_name": True, "txn_date": True}),
    "sample_table/mor/avro/v9_txns_simple_meta": ("txn_id", {"merchant_name": True, "txn_date": True}),
}


def test_keys_are_escaped_as_hudi_escapes_them() -> None:
    # Hudi's own examples: "part\\one" and "key$two" join as part\\\\one$key\\$two.
    assert escape("part\\one") + "$" + escape("key$two") == "part\\\\one$key\\$two"
    assert split_key("part\\\\one$key\\$two") == ("part\\\\one", "key$two")
    assert unescape("part\\\\one") == "part\\one"
    assert escape("a\x00b") == "a\\\x00b"
    assert split_key("\x00$record_123") == ("\x00", "record_123")  # a null value
    with pytest.raises(HudiCorruptFileError, match="separator"):
        split_key("no\\$separator")


def test_values_are_stored_as_java_renders_them() -> None:
    assert stored_value("Amazon", pa.string(), "c") == "Amazon"
    assert stored_value("0042", pa.int64(), "c") == "42"
    assert stored_value("2024-01-15", pa.date32(), "c") == str((dt.date(2024, 1, 15) - dt.date(1970, 1, 1)).days)
    assert stored_value("2024-01-15", pa.date32(), "c") == "19737"  # as the real tables store it
    assert stored_value("1.5", pa.float64(), "c") is None
    assert stored_value("x", pa.int32(), "c") is None


@pytest.mark.parametrize("name", sorted(SI_TABLES))
def test_index_lookups_return_the_keys_holding_each_value(name: str, table_path) -> None:
    """For every value of every indexed column the index names exactly the record keys of the
    rows holding it, in table version 8 (keys routed whole) and 9 (routed by value) alike."""
    table = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    ctx = table._context
    mdt = table._sources.metadata_table()
    assert mdt is not None
    declared = {d.column: d for d in definitions(ctx.storage, ctx.config).values()}
    key_field, columns = SI_TABLES[name]
    assert {c: d.routed_by_value for c, d in declared.items()} == columns
    everything = to_table(table.read())
    keys = everything[key_field or "_hoodie_record_key"].to_pylist()
    for column in columns:
        dtype = everything.schema.field(column).type
        expected: dict[str, set[str]] = defaultdict(set)
        for value, key in zip(everything[column].to_pylist(), keys):
            if value is not None:
                text = value.isoformat() if isinstance(value, dt.date) else str(value)
                expected[stored_value(text, dtype, column) or ""].add(key)
        found = mdt.secondary_index_keys(declared[column], [*expected, "no-such-value"])
        assert found.pop("no-such-value") == set()
        assert found == dict(expected), (name, column)
