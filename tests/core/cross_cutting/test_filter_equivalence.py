"""A filter must never change which rows match: on every real table, a filtered read returns
exactly the rows of the unfiltered read that pass the filter, whatever index pruned the plan."""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_ray import HudiReadOptions, HudiTableBuilder
from tests.support import all_table_names, row_set, to_table

TABLES = all_table_names()
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
    # Columns with a secondary index are always checked: their lookups go through it.
    indexed = [f for f in _secondary_index_columns(table) if f in data[DATA_COLUMNS_PER_TABLE:]]
    return [c for c in picked if _renderable(everything.schema.field(c).type)] + data[:DATA_COLUMNS_PER_TABLE] + indexed


def _secondary_index_columns(table: Any) -> list[str]:
    defs = table._context.storage.base_url.removeprefix("file://") + "/.hoodie/.index_defs/index.json"
    if not Path(defs).is_file():
        return []
    found = json.loads(Path(defs).read_text()).get("indexDefinitions", {}).values()
    return [d["sourceFields"][0] for d in found if d.get("indexType") == "secondary_index"]


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


def test_an_unreadable_archive_switches_the_record_index_off(table_path, tmp_path: Path) -> None:
    """An archive that cannot be read hides which writes inserted: no key lookup can be
    proven complete, and the read still returns the exact rows."""
    dest = tmp_path / "t"
    shutil.copytree(table_path("sample_table/cow/v9_txns_simple_meta"), dest)
    table = HudiTableBuilder.from_base_uri(str(dest)).build()
    assert _stage(table, [("txn_id", "=", "TXN-001")]) is not None
    (dest / ".hoodie/timeline/history/manifest_1").write_text("{}")
    table = HudiTableBuilder.from_base_uri(str(dest)).build()
    assert _stage(table, [("txn_id", "=", "TXN-001")]) is None
    assert to_table(table.read(HudiReadOptions(filters=[("txn_id", "=", "TXN-001")]))).num_rows == 1


COMPLEX_TABLE = "sample_table/cow/v9_txns_complex_meta"


def test_composite_keys_are_looked_up_as_stored(table_path) -> None:
    """A complex key generator stores ``txn_id:X,account_id:Y``: the record index is used only
    when every key field names its values (or the stored key is given), never for one field."""
    table = HudiTableBuilder.from_base_uri(str(table_path(COMPLEX_TABLE))).build()
    everything = to_table(table.read())
    assert "txn_id:TXN-001,account_id:ACC-A" in everything["_hoodie_record_key"].to_pylist()
    cases = [
        [("txn_id", "=", "TXN-001")],
        [("account_id", "=", "ACC-A")],
        [("txn_id", "IN", "TXN-001,TXN-003,TXN-999")],
        [("txn_id", "=", "TXN-001"), ("account_id", "=", "ACC-A")],
        [("txn_id", "IN", "TXN-001,TXN-003,TXN-999"), ("account_id", "IN", "ACC-A,ACC-Z")],
        [("txn_id", "=", "TXN-001"), ("account_id", "=", "ACC-B")],  # no such key
        [("_hoodie_record_key", "=", "txn_id:TXN-001,account_id:ACC-A")],
        [("_hoodie_record_key", "=", "TXN-001")],
    ]
    for filters in cases:
        got = to_table(table.read(HudiReadOptions(filters=filters)), everything.schema)
        expected = everything
        for f in filters:
            expected = _expected(expected, f)
        assert row_set(got) == row_set(expected), filters
    # One field alone names no stored key; the key found proves the composition.
    for filters in cases[:3] + cases[5:6]:
        assert _stage(table, filters) is None, filters
    for filters in (cases[3], cases[4], cases[6]):
        stage = _stage(table, filters)
        assert stage is not None and stage.file_slices == 1, filters


def test_single_field_complex_key_generator_skips_the_record_index(table_path, tmp_path: Path) -> None:
    """Over one field a complex key generator stores ``field:value`` or the bare value, by
    version and option: the field's filter is not looked up; the stored key still is."""
    dest = tmp_path / "t"
    shutil.copytree(table_path("sample_table/cow/v9_txns_simple_meta"), dest)
    props = dest / ".hoodie/hoodie.properties"
    text = props.read_text()
    assert "hoodie.table.keygenerator.type=SIMPLE\n" in text
    props.write_text(
        text.replace("hoodie.table.keygenerator.type=SIMPLE\n", "hoodie.table.keygenerator.type=COMPLEX\n")
    )
    table = HudiTableBuilder.from_base_uri(str(dest)).build()
    for op, value in (("=", "TXN-001"), ("IN", "TXN-001,TXN-999")):
        assert _stage(table, [("txn_id", op, value)]) is None
        assert to_table(table.read(HudiReadOptions(filters=[("txn_id", op, value)]))).num_rows == 1
    assert _stage(table, [("_hoodie_record_key", "=", "TXN-001")]) is not None


def _has_archived_history(path: Path) -> bool:
    from hudi_ray.core.config import load_table_config
    from hudi_ray.core.storage import Storage
    from hudi_ray.core.timeline.archive import has_archived_history

    storage = Storage(str(path), {})
    return has_archived_history(storage, load_table_config(storage, {}))


@pytest.mark.parametrize(
    ("folder_line", "archive_file"),
    [
        ("hoodie.archivelog.folder=archived\n", "archived/.commits_.archive.1_1-0-1"),
        ("hoodie.archivelog.folder=\n", ".commits_.archive.1_1-0-1"),  # legacy: the archive is .hoodie
        ("", "archived/.commits_.archive.1_1-0-1"),  # the default folder
        ("hoodie.archivelog.folder=../outside\n", None),  # never listed: assumed to hold history
        ("hoodie.archivelog.folder=/abs\n", None),
    ],
)
def test_archived_history_of_layout_1_tables(table_path, tmp_path: Path, folder_line: str, archive_file) -> None:
    dest = tmp_path / "t"
    shutil.copytree(table_path("sample_table/cow/v6_simplekeygen_nonhivestyle"), dest)
    props = dest / ".hoodie/hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.archivelog.folder=archived\n", folder_line))
    if archive_file is None:
        assert _has_archived_history(dest)
        return
    assert not _has_archived_history(dest)
    (dest / ".hoodie" / archive_file).parent.mkdir(exist_ok=True)
    (dest / ".hoodie" / archive_file).write_bytes(b"")
    assert _has_archived_history(dest)


def test_unreadable_history_in_the_timeline_folder_switches_the_record_index_off(table_path, tmp_path: Path) -> None:
    dest = tmp_path / "t"
    shutil.copytree(table_path("sample_table/cow/v9_txns_simple_meta"), dest)
    props = dest / ".hoodie/hoodie.properties"
    props.write_text(
        props.read_text().replace("hoodie.timeline.history.path=history\n", "hoodie.timeline.history.path=\n")
    )
    table = HudiTableBuilder.from_base_uri(str(dest)).build()
    assert _stage(table, [("txn_id", "=", "TXN-001")]) is not None
    (dest / ".hoodie/timeline/manifest_1").write_text("{}")
    table = HudiTableBuilder.from_base_uri(str(dest)).build()
    assert _stage(table, [("txn_id", "=", "TXN-001")]) is None


def test_record_index_verdict_is_computed_once_per_table(table_path, monkeypatch) -> None:
    """Suspect files and their key-column stats are fetched once, by exact keys, not per query."""
    from hudi_ray.core.metadata import MetadataTable

    calls: list[tuple[str, bool]] = []
    records = MetadataTable.records

    def counting(self, partition, keys=None, prefixes=None, **kw):
        # Only the verdict's lookups: column-stats pruning of each plan looks up its own slices.
        if sys._getframe(1).f_code.co_filename.endswith("record_index.py"):
            calls.append((partition, keys is not None))
        return records(self, partition, keys=keys, prefixes=prefixes, **kw)

    monkeypatch.setattr(MetadataTable, "records", counting)
    table = HudiTableBuilder.from_base_uri(str(table_path("sample_table/cow/v9_timebasedkeygen_nonhivestyle"))).build()
    assert _stage(table, [("txn_id", "=", "TXN-003")]) is not None
    # The verdict looks up its suspect files' stats by key.
    assert calls.count(("column_stats", True)) == 1
    for key in ("TXN-004", "TXN-001", "TXN-003"):
        _stage(table, [("txn_id", "=", key)])
    assert calls.count(("column_stats", True)) == 1


def test_write_stat_paths_are_checked_once_per_instant(table_path, monkeypatch) -> None:
    import hudi_ray.core.timeline.commit_validation as timeline_module

    checked: list[str] = []
    check = timeline_module.check_metadata_path
    monkeypatch.setattr(timeline_module, "check_metadata_path", lambda v, *a: checked.append(v) or check(v, *a))
    table = HudiTableBuilder.from_base_uri(str(table_path("sample_table/cow/v9_txns_simple_meta"))).build()
    timeline = table.get_timeline()
    instant = timeline.data_instants[-1]
    stats = timeline.write_stats(instant)
    assert stats and len(checked) >= len(stats)
    table.read()
    before = len(checked)
    for _ in range(3):
        assert timeline.write_stats(instant) == stats
    table.read(HudiReadOptions(filters=[("txn_id", "=", "TXN-001")]))
    assert len(checked) == before


@pytest.mark.parametrize("index", ["column_stats", "partition_stats", "record_index"])
def test_damaged_index_falls_back_and_stays_right(index: str, table_path, tmp_path: Path, caplog) -> None:
    """A corrupt index file in the metadata table only costs pruning: filtered reads
    still equal the unfiltered read filtered, with a warning naming the file."""
    path = tmp_path / "table"
    shutil.copytree(table_path("sample_table/cow/v9_txns_simple_meta"), path)
    damaged = sorted((path / ".hoodie" / "metadata" / index).glob("*.hfile"))
    assert damaged, index
    for f in damaged:
        f.write_bytes(b"\x00" * 64 + f.read_bytes()[64:-64])
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    everything = to_table(table.read())
    caplog.set_level("WARNING", logger="hudi_ray.core.table.table")
    for column in ("txn_id", "region", "amount"):
        for f in _filters_for(column, everything[column]):
            got = to_table(table.read(HudiReadOptions(filters=[f])), everything.schema)
            assert row_set(got) == row_set(_expected(everything, f)), (index, f)
    warnings = [r.getMessage() for r in caplog.records if "Not pruning" in r.getMessage()]
    assert warnings and any(d.name in w for w in warnings for d in damaged), warnings
