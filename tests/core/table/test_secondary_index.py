"""Secondary-index pruning: ``col = v`` / ``col IN (...)`` on an indexed column reads only the
file groups holding the values, and never changes the answer; where a guard applies, every
file is kept and the explain says which guard."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_ray import HudiReadOptions, HudiTable, HudiTableBuilder
from hudi_testkit import CowTableSpec, CowTableWriter, MetadataTableOptions
from hudi_testkit.archive import archive_instants
from tests.support import assert_same_as_hudi_rs, row_set, table_pair, to_table

# The six real tables with secondary indexes (INDEX.md); their index columns come from each
# table's own index definitions file.
SI_TABLES = [
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
    "sample_table/cow/v9_txns_complex_meta",
    "sample_table/cow/v9_txns_nonpart_meta",
    "sample_table/cow/v9_txns_simple_meta",
    "sample_table/mor/avro/v9_txns_nonpart_meta",
    "sample_table/mor/avro/v9_txns_simple_meta",
]
KEPT_ALL = "secondary index kept every file"


def _indexed_columns(path: Path) -> list[str]:
    defs = json.loads((path / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]
    return sorted(d["sourceFields"][0] for d in defs.values() if d["indexType"] == "secondary_index")


def _render(value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def _missing(dtype: pa.DataType) -> str:
    return "1999-12-31" if pa.types.is_date32(dtype) else "no-such-value"


def _expected(everything: pa.Table, column: str, values: list[str]) -> pa.Table:
    col = everything[column]
    wanted = pa.array(values).cast(col.type)
    return everything.filter(pc.fill_null(pc.is_in(col, value_set=wanted), False))


def _holding(table: HudiTable, column: str, values: list[str]) -> set[tuple[str, str]]:
    """(partition, file id) of the file groups whose rows hold one of ``values``, read slice by slice."""
    reader = table.create_file_group_reader_with_options()
    out = set()
    for s in table.get_file_slices():
        batch = reader.read_file_slice(s)
        wanted = pa.array(values).cast(batch.schema.field(column).type)
        if batch.num_rows and pc.any(pc.is_in(batch[column], value_set=wanted)).as_py():
            out.add((s.partition_path, s.file_id))
    return out


def _explain(table: HudiTable, filters: list[tuple[str, str, str]]) -> Any:
    return table.explain(HudiReadOptions(filters=filters))


def _stage(plan: Any) -> Any:
    return plan.stage("secondary index")


@pytest.mark.parametrize("name", SI_TABLES)
def test_lookups_on_indexed_columns_equal_filtering_afterwards(name: str, table_path) -> None:
    """Every value of every indexed column (and one no row holds), by ``=`` and ``IN``: the rows
    are those of the unfiltered read that match, and the index keeps exactly the file groups
    holding them."""
    path = table_path(name)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    everything = to_table(table.read())
    columns = _indexed_columns(path)
    assert columns, name
    for column in columns:
        dtype = everything.schema.field(column).type
        present = sorted({_render(v) for v in everything[column].to_pylist() if v is not None})
        lookups = [[v] for v in present] + [[_missing(dtype)], [*present[:3], _missing(dtype)]]
        for values in lookups:
            filters = [(column, "=", values[0])] if len(values) == 1 else [(column, "IN", ",".join(values))]
            got = to_table(table.read(HudiReadOptions(filters=filters)), everything.schema)
            assert row_set(got) == row_set(_expected(everything, column, values)), (name, filters)
            plan = _explain(table, filters)
            stage = _stage(plan)
            assert stage is not None, (name, filters, str(plan))
            kept = {(s.partition_path, s.file_id) for s in table.get_file_slices(HudiReadOptions(filters=filters))}
            holding = _holding(table, column, values)
            # Every file an INSERT INTO wrote was read for the duplicate-key check, which found no
            # key in two file groups: the index decides every lookup, exactly.
            assert not any(KEPT_ALL in n for n in plan.notes), (name, filters, str(plan))
            assert kept == holding, (name, filters, str(plan))
            assert stage.file_slices == len(holding), (name, filters, str(plan))


def test_real_tables_with_later_inserts_prune_once_no_key_was_copied(table_path) -> None:
    """INSERT INTO after the first write skips the index, so it may copy keys: GrabFood's key
    TXN-016 came from such an insert. Reading the keys of every file an insert wrote shows no
    key in two file groups, so the index picks GrabFood's one file group."""
    path = table_path("sample_table/mor/avro/v9_txns_simple_meta")
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    plan = _explain(table, [("merchant_name", "=", "GrabFood")])
    assert _stage(plan).file_slices == len(_holding(table, "merchant_name", ["GrabFood"])) == 1, str(plan)
    assert not any(KEPT_ALL in n for n in plan.notes), str(plan)


def test_version_one_index_of_table_version_8_prunes_to_the_rider(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path("quickstart_trips_table/mor/avro/v8_trips_8i3u1d"))).build()
    plan = _explain(table, [("rider", "IN", "rider-C,rider-G,rider-Z")])
    assert _stage(plan).file_slices == 2
    assert "looked up in secondary_index_rider_idx" in str(plan)
    # rider-F was deleted: its pair is gone from the index, so nothing is read.
    assert _stage(_explain(table, [("rider", "=", "rider-F")])).file_slices == 0
    assert to_table(table.read(HudiReadOptions(filters=[("rider", "=", "rider-F")]))).num_rows == 0


# -- tables the test kit writes ------------------------------------------------------------------

SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("merchant", pa.string()),
        pa.field("day", pa.date32()),
        pa.field("n", pa.int64()),
        pa.field("ts", pa.int64()),
        pa.field("region", pa.string()),
    ]
)
# Values with the separator, the escape and a NUL character, and a null.
MERCHANTS = ["a$b", "c\\d", "nul\x00x", None, "plain", "other"]


def _rows(first: int, count: int, merchants: list[str | None]) -> pa.Table:
    ids = range(first, first + count)
    return pa.table(
        {
            "id": [f"k{i:04d}" for i in ids],
            "merchant": [merchants[i % len(merchants)] for i in ids],
            "day": [dt.date(2024, 1, 1) + dt.timedelta(days=i % 7) for i in ids],
            "n": [i % 5 for i in ids],
            "ts": list(ids),
            "region": [("eu", "us")[i % 2] for i in ids],
        },
        schema=SCHEMA,
    )


def write_indexed_table(path: Path, file_groups: int = 4) -> CowTableWriter:
    """48 rows in 12 files of a COW table with secondary indexes on merchant, day and n (also used by
    the engine layers' tests)."""
    options = MetadataTableOptions(
        secondary_indexes=(("merchant_idx", "merchant"), ("day_idx", "day"), ("n_idx", "n")),
        secondary_index_file_groups=file_groups,
    )
    spec = CowTableSpec("si", "id", "region", "ts", table_version=9)
    writer = CowTableWriter.create(path, spec, SCHEMA, rows_per_file=4, metadata_table=options)
    writer.upsert(_rows(0, 48, MERCHANTS))
    return writer


def _open(path: Path) -> HudiTable:
    return HudiTableBuilder.from_base_uri(str(path)).build()


def _check(path: Path, filters: list[tuple[str, str, str]]) -> Any:
    """The filtered read equals filtering the unfiltered read; returns the explain."""
    table = _open(path)
    everything = to_table(table.read())
    expected = everything
    for column, op, raw in filters:
        expected = _expected(expected, column, raw.split(",") if op == "IN" else [raw])
    got = to_table(table.read(HudiReadOptions(filters=filters)), everything.schema)
    assert row_set(got) == row_set(expected), filters
    return _explain(table, filters)


def test_testkit_index_prunes_to_the_file_groups_holding_the_values(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_indexed_table(path)
    table = _open(path)
    cases = [
        [("merchant", "=", "a$b")],
        [("merchant", "=", "c\\d")],
        [("merchant", "=", "nul\x00x")],
        [("merchant", "IN", "plain,a$b,zzz")],
        [("merchant", "=", "zzz")],
        [("day", "=", "2024-01-03")],
        [("n", "IN", "1,4")],
        [("n", "=", "1"), ("merchant", "=", "plain")],
    ]
    for filters in cases:
        plan = _check(path, filters)
        holding = None
        for column, op, raw in filters:
            found = _holding(table, column, raw.split(",") if op == "IN" else [raw])
            holding = found if holding is None else holding & found
        assert _stage(plan).file_slices == len(holding or ()), (filters, str(plan))
        assert not any(KEPT_ALL in n for n in plan.notes), str(plan)


def test_column_stats_look_up_only_filters_the_index_did_not_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The slices the index kept each hold a value its filter allows, so their stats are
    not looked up for that filter; other filters still prune by column stats, and a
    filter the index could not decide is looked up as before."""
    from hudi_ray.core.metadata import MetadataTable

    path = tmp_path / "t"
    write_indexed_table(path)
    looked_up: list[set[str]] = []
    original = MetadataTable.column_stats_of_files

    def spy(self: MetadataTable, columns: Any, files: Any, schema: pa.Schema) -> Any:
        looked_up.append(set(columns))
        return original(self, columns, files, schema)

    monkeypatch.setattr(MetadataTable, "column_stats_of_files", spy)
    plan = _check(path, [("merchant", "IN", "plain,a$b")])
    assert plan.stage("column stats").file_slices == _stage(plan).file_slices > 0
    assert looked_up == []
    table = _open(path)
    everything = to_table(table.read())
    both = [("merchant", "IN", "plain,a$b"), ("ts", ">", "40")]
    got = to_table(table.read(HudiReadOptions(filters=both)), everything.schema)
    expected = _expected(everything, "merchant", ["plain", "a$b"])
    expected = expected.filter(pc.greater(expected["ts"], 40))
    assert row_set(got) == row_set(expected) and got.num_rows > 0
    assert {"ts"} in looked_up and not any("merchant" in c for c in looked_up)
    plan = _explain(table, both)
    assert plan.stage("column stats").file_slices < _stage(plan).file_slices
    looked_up.clear()
    _explain(table, [("day", "<", "2024-01-03"), ("ts", "<", "8")])  # the index decides no range filter
    assert {"day", "ts"} in looked_up


def test_testkit_tables_read_identically_in_hudi_rs(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_indexed_table(path)
    ours, theirs = table_pair(str(path))
    assert assert_same_as_hudi_rs(ours, theirs) == 48
    assert assert_same_as_hudi_rs(ours, theirs, filters=[("merchant", "=", "a$b")]) == 8


def test_updates_and_deletes_move_and_drop_index_pairs(tmp_path: Path) -> None:
    path = tmp_path / "t"
    writer = write_indexed_table(path)
    # Every "plain" row becomes "moved"; k0001 is deleted.
    everything = to_table(_open(path).read())
    plain = everything.filter(pc.equal(everything["merchant"], "plain"))
    changed = plain.select(SCHEMA.names).set_column(1, SCHEMA.field("merchant"), pa.array(["moved"] * plain.num_rows))
    writer.upsert(changed)
    reopened = CowTableWriter.open(path)
    assert reopened is not None
    for filters in ([("merchant", "=", "plain")], [("merchant", "=", "moved")], [("merchant", "IN", "moved,a$b")]):
        plan = _check(path, filters)
        assert not any(KEPT_ALL in n for n in plan.notes), str(plan)
    assert _stage(_explain(_open(path), [("merchant", "=", "plain")])).file_slices == 0


# -- guards ----------------------------------------------------------------------------------------


def _kept_all(plan: Any, why: str) -> None:
    stage = _stage(plan)
    assert stage is not None and stage.file_slices == plan.stage("file slices").file_slices, str(plan)
    assert any(KEPT_ALL in n and why in n for n in plan.notes), str(plan)


def test_a_write_that_copied_keys_keeps_files(tmp_path: Path) -> None:
    """An INSERT of keys the table holds gives them a second copy: no value is looked up then
    (the index may have dropped a pair the first copy still holds). Keys a write inserted
    without copying any, by upsert or by insert, leave the index exact."""
    path = tmp_path / "t"
    writer = write_indexed_table(path)
    writer.upsert(_rows(100, 8, ["fresh"]))
    writer.insert(_rows(200, 4, ["newer"]))
    for filters in ([("merchant", "=", "fresh")], [("merchant", "=", "newer")], [("merchant", "=", "a$b")]):
        plan = _check(path, filters)
        assert _stage(plan).file_slices == len(_holding(_open(path), *_one(filters))), (filters, str(plan))
    writer.insert(_rows(0, 4, ["copied"]))
    for filters in ([("merchant", "=", "copied")], [("merchant", "=", "a$b")], [("merchant", "=", "fresh")]):
        _kept_all(_check(path, filters), "second copy")


def test_key_lookups_use_the_record_index_for_keys_never_copied(tmp_path: Path) -> None:
    """After an INSERT copied k0000..k0003, a lookup of one of them reads both copies and a
    lookup of any other key still reads only its file group, also once the copying write
    is archived."""
    path = tmp_path / "t"
    writer = write_indexed_table(path)
    writer.insert(_rows(0, 4, ["copied"]))
    writer.insert(_rows(300, 2, ["later"]))
    for archived in (False, True):
        if archived:
            archive_instants(path, 2)
        copied = _check(path, [("id", "=", "k0001")])
        assert copied.stage("record index") is None, str(copied)
        assert to_table(_open(path).read(HudiReadOptions(filters=[("id", "=", "k0001")]))).num_rows == 2
        plan = _check(path, [("id", "IN", "k0005,k0040")])
        assert plan.stage("record index").file_slices == 2, str(plan)
        _kept_all(_check(path, [("merchant", "=", "plain")]), "second copy")


def _one(filters: list[tuple[str, str, str]]) -> tuple[str, list[str]]:
    column, op, raw = filters[0]
    return column, raw.split(",") if op == "IN" else [raw]


def test_a_lagging_metadata_table_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_indexed_table(path)
    timeline = path / ".hoodie/metadata/.hoodie/timeline"
    latest = max(p for p in timeline.glob("*.deltacommit") if not p.name.startswith("0000"))
    latest.unlink()
    plan = _check(path, [("merchant", "=", "a$b")])
    assert _stage(plan) is None
    assert any("lags" in n for n in plan.notes), str(plan)


def test_archived_history_still_prunes_and_an_unreadable_one_keeps_files(tmp_path: Path) -> None:
    """The guards read the archived commits' write stats: an archived write inserting keys
    still keeps the files it may have copied values into, and values its files cannot
    hold are still looked up, exactly as before archival."""
    path = tmp_path / "t"
    writer = write_indexed_table(path)
    writer.upsert(_rows(100, 8, ["fresh"]))  # inserts, which may have copied keys (they did not)
    writer.upsert(_rows(0, 4, MERCHANTS))  # updates in place
    archive_instants(path, 2)
    table = _open(path)
    assert len(table.get_timeline().archived_data_instants()) == 2
    for filters in (
        [("merchant", "=", "fresh")],
        [("merchant", "=", "a$b")],
        [("merchant", "IN", "plain,a$b,zzz")],
        [("merchant", "=", "zzz")],
    ):
        plan = _check(path, filters)
        holding = None
        for column, op, raw in filters:
            found = _holding(table, column, raw.split(",") if op == "IN" else [raw])
            holding = found if holding is None else holding & found
        assert _stage(plan).file_slices == len(holding or ()), (filters, str(plan))
    for manifest in (path / ".hoodie/timeline/history").glob("manifest_*"):
        manifest.write_text("{}")
    _kept_all(_check(path, [("merchant", "=", "a$b")]), "archived history cannot be read")


def test_a_damaged_index_file_keeps_files(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_indexed_table(path, file_groups=1)
    for victim in (path / ".hoodie/metadata/secondary_index_merchant_idx").glob("*.hfile"):
        victim.write_bytes(victim.read_bytes()[:200])
    _kept_all(_check(path, [("merchant", "=", "a$b")]), "damaged")


def test_damaged_index_definitions_keep_files(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_indexed_table(path)
    (path / ".hoodie/.index_defs/index.json").write_text("{not json")
    _kept_all(_check(path, [("merchant", "=", "a$b")]), "damaged")


def test_an_index_being_built_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_indexed_table(path)
    (path / ".hoodie/timeline/29990101000000000.indexing.requested").write_bytes(b"")
    _kept_all(_check(path, [("merchant", "=", "a$b")]), "being built")


@pytest.mark.parametrize("listing", ["inflight", "absent"])
def test_an_index_not_listed_as_complete_is_not_used(tmp_path: Path, listing: str) -> None:
    path = tmp_path / "t"
    write_indexed_table(path)
    props = path / ".hoodie/hoodie.properties"
    lines = props.read_text().splitlines()
    out = []
    for line in lines:
        if line.startswith("hoodie.table.metadata.partitions="):
            line = line.replace(",secondary_index_merchant_idx", "")
        if line.startswith("hoodie.table.metadata.partitions.inflight=") and listing == "inflight":
            line = "hoodie.table.metadata.partitions.inflight=secondary_index_merchant_idx"
        out.append(line)
    props.write_text("\n".join(out) + "\n")
    _kept_all(_check(path, [("merchant", "=", "a$b")]), "not listed as complete")


def test_an_index_declared_but_missing_from_the_metadata_table_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_indexed_table(path)
    shutil.rmtree(path / ".hoodie/metadata/secondary_index_merchant_idx")
    _kept_all(_check(path, [("merchant", "=", "a$b")]), "absent")


def test_time_travel_and_incremental_reads_do_not_use_the_index(tmp_path: Path) -> None:
    path = tmp_path / "t"
    writer = write_indexed_table(path)
    first = _open(path).get_timeline().data_instants[-1]
    writer.upsert(_rows(0, 4, ["later"]))
    table = _open(path)
    filters = [("merchant", "=", "a$b")]
    as_of = HudiReadOptions(filters=filters).with_as_of_timestamp(first.timestamp)
    plan = table.explain(as_of)
    assert _stage(plan) is None and any("time travel" in n for n in plan.notes), str(plan)
    everything = to_table(table.read(HudiReadOptions().with_as_of_timestamp(first.timestamp)))
    assert row_set(to_table(table.read(as_of), everything.schema)) == row_set(
        _expected(everything, "merchant", ["a$b"])
    )
    instants = table.get_timeline().data_instants
    incremental = (
        HudiReadOptions(filters=[("merchant", "=", "later")])
        .with_query_type("incremental")
        .with_start_timestamp("0")
        .with_end_timestamp(instants[-1].completed_at)
    )
    assert _stage(table.explain(incremental)) is None
    assert to_table(table.read(incremental)).num_rows == 4
