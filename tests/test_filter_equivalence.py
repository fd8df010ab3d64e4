"""A filter must never change which rows match: on every real table, a filtered read returns
exactly the rows of the unfiltered read that pass the filter, whatever index pruned the plan."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_ray import HudiReadOptions, HudiTableBuilder

from conftest import all_table_names
from oracle import row_set, to_table

TABLES = [n for n in all_table_names() if "lance" not in n]
# The tables where the record index holds one location for a key that lives in two
# file groups: INSERT (no index lookup) wrote a key the table already held.
DUPLICATED_KEYS = {
    "sample_table/cow/v9_timebasedkeygen_epochmillis": "TXN-001",
    "sample_table/cow/v9_timebasedkeygen_nonhivestyle": "TXN-001",
    "sample_table/mor/avro/v9_nonpartitioned_rollback": "TXN-002",
    "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle": "TXN-001",
}
# A few data columns per table keep the run short; these types render as filter strings exactly.
DATA_COLUMNS_PER_TABLE = 3


def _renderable(dtype: pa.DataType) -> bool:
    return (
        pa.types.is_string(dtype)
        or pa.types.is_integer(dtype)
        or pa.types.is_decimal(dtype)
        or pa.types.is_date32(dtype)
    )


def _render(value: Any) -> str:
    """Dates render as ISO dates and decimals without exponent, as filters parse them."""
    return str(value)


def _values(column: pa.ChunkedArray) -> list[Any]:
    """Distinct non-null values, the most repeated first (duplicated keys are the interesting
    ones), then in sorted order."""
    counts = Counter(v for v in column.to_pylist() if v is not None)
    return sorted(counts, key=lambda v: (-counts[v], v))


def _filters_for(column: str, data: pa.ChunkedArray) -> list[tuple[str, str, str]]:
    values = _values(data)
    if not values:
        return []
    ordered = sorted(values)
    middle = ordered[len(ordered) // 2]
    in_values = [values[0], ordered[-1]]
    if pa.types.is_string(data.type):
        in_values.append("no-such-value")
    return [
        (column, "=", _render(values[0])),
        (column, "IN", ",".join(_render(v) for v in in_values)),
        (column, "<", _render(middle)),
        (column, ">=", _render(middle)),
    ]


def _expected(everything: pa.Table, f: tuple[str, str, str]) -> pa.Table:
    column, op, raw = f
    col = everything[column]
    if op == "IN":
        wanted = [v for v in raw.split(",") if v != "no-such-value"] if pa.types.is_string(col.type) else raw.split(",")
        hit = pc.is_in(col, value_set=pa.array(wanted).cast(col.type))
    else:
        scalar = pa.scalar(raw).cast(col.type)
        hit = {"=": pc.equal, "<": pc.less, ">=": pc.greater_equal}[op](col, scalar)
    return everything.filter(pc.fill_null(hit, False))


def _columns(table: Any, everything: pa.Table) -> list[str]:
    """Record key fields (and the key meta field), partition fields, then a few data columns."""
    config = table._context.config
    keys = [*config.record_key_fields, "_hoodie_record_key"]
    partitions = table.get_partition_schema().names
    picked = [c for c in dict.fromkeys([*keys, *partitions]) if c in everything.column_names]
    data = [
        c
        for c in everything.column_names
        if c not in picked and not c.startswith("_hoodie_") and _renderable(everything.schema.field(c).type)
    ]
    return [c for c in picked if _renderable(everything.schema.field(c).type)] + data[:DATA_COLUMNS_PER_TABLE]


@pytest.mark.parametrize("name", TABLES)
def test_filtered_read_equals_filtering_the_unfiltered_read(name: str, table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    everything = to_table(table.read())
    if everything.num_rows == 0:
        pytest.skip(f"{name} holds no rows")
    checked = 0
    for column in _columns(table, everything):
        if everything[column].null_count == everything.num_rows:
            continue  # e.g. meta fields a table without them reads as nulls
        for f in _filters_for(column, everything[column]):
            got = to_table(table.read(HudiReadOptions(filters=[f])), everything.schema)
            expected = _expected(everything, f)
            assert row_set(got) == row_set(expected), (name, f, got.num_rows, expected.num_rows)
            checked += 1
    assert checked >= 8, name


@pytest.mark.parametrize("name", sorted(DUPLICATED_KEYS))
def test_key_filter_finds_every_copy_of_a_duplicated_key(name: str, table_path) -> None:
    """The record index keeps one location per key; these tables hold the key twice."""
    table = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    key = DUPLICATED_KEYS[name]
    everything = to_table(table.read())
    assert pc.sum(pc.equal(everything["txn_id"], key)).as_py() == 2
    for field in ("txn_id", "_hoodie_record_key"):
        for op, value in (("=", key), ("IN", f"{key},TXN-999")):
            got = to_table(table.read(HudiReadOptions(filters=[(field, op, value)])), everything.schema)
            assert got.num_rows == 2, (field, op)


def _stage(table: Any, filters: list[tuple[str, str, str]]) -> Any:
    return {s.name: s for s in table.explain(HudiReadOptions(filters=filters)).stages}.get("record index")


def test_record_index_prunes_only_keys_no_insert_can_have_copied(table_path) -> None:
    """TXN-001 was inserted twice: no record index. TXN-003 and TXN-004 came only from the
    table's first write (and in-place updates): the record index alone locates them."""
    table = HudiTableBuilder.from_base_uri(str(table_path("sample_table/cow/v9_timebasedkeygen_nonhivestyle"))).build()
    assert _stage(table, [("txn_id", "=", "TXN-001")]) is None
    assert _stage(table, [("txn_id", "IN", "TXN-003,TXN-001")]) is None
    for key in ("TXN-003", "TXN-004"):
        stage = _stage(table, [("txn_id", "=", key)])
        assert stage is not None and stage.file_slices == 1, key
        assert to_table(table.read(HudiReadOptions(filters=[("txn_id", "=", key)]))).num_rows == 1


def test_archived_writes_switch_the_record_index_off(table_path, tmp_path: Path) -> None:
    """Archived instants hide which writes inserted: no key lookup can be proven complete."""
    dest = tmp_path / "t"
    shutil.copytree(table_path("sample_table/cow/v9_txns_simple_meta"), dest)
    table = HudiTableBuilder.from_base_uri(str(dest)).build()
    assert _stage(table, [("txn_id", "=", "TXN-001")]) is not None
    (dest / ".hoodie/timeline/history/manifest_1").write_text("{}")
    table = HudiTableBuilder.from_base_uri(str(dest)).build()
    assert _stage(table, [("txn_id", "=", "TXN-001")]) is None
    assert to_table(table.read(HudiReadOptions(filters=[("txn_id", "=", "TXN-001")]))).num_rows == 1
