"""The metadata table: HFiles, file listings, stats, record index, pruning,
compute_table_stats, and fallbacks when it cannot be trusted."""

from __future__ import annotations

import shutil
from pathlib import Path

import hudi
import pytest

from hudi_ray import HudiCorruptFileError, HudiReadOptions, HudiTableBuilder
from hudi_ray.core.file_group import parse_base_file_name, parse_log_file_name
from hudi_ray.core.hfile import HFileReader
from hudi_ray.core.log_file import BlockType, read_log_blocks
from hudi_ray.core.metadata import MetadataTable, hashing
from hudi_ray.core.metadata.records import decode_record
from tests.support import all_table_names, row_set, to_table


def _has_mdt(path: Path) -> bool:
    return (path / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").exists()


@pytest.fixture(scope="module")
def mdt_tables(table_path) -> list[Path]:
    paths = [table_path(n) for n in all_table_names()]
    found = [p for p in paths if _has_mdt(p)]
    assert len(found) >= 10
    return found


def _mdt(path: Path) -> MetadataTable:
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    ctx = table._context
    mdt = MetadataTable.open(ctx.storage, ctx.config, ctx.timeline)
    assert mdt is not None, path
    return mdt


def _hfiles(path: Path) -> list[tuple[str, HFileReader]]:
    """Every HFile of a table's metadata table: base files and HFile log blocks."""
    out = []
    for f in sorted((path / ".hoodie" / "metadata").rglob("*")):
        if f.suffix == ".hfile":
            out.append((str(f), HFileReader.from_bytes(f.read_bytes(), str(f))))
        elif parse_log_file_name(f.name):
            for b in read_log_blocks(f.read_bytes(), str(f)):
                if b.block_type is BlockType.HFILE_DATA:
                    out.append((b.where(), HFileReader.from_bytes(bytes(b.content), b.where())))
    return out


def test_every_hfile_reads(mdt_tables: list[Path]) -> None:
    total = 0
    for path in mdt_tables:
        for where, reader in _hfiles(path):
            rows = list(reader.scan())
            assert len(rows) == reader.entry_count, where
            keys = [k for k, _ in rows]
            assert keys == sorted(keys), where
            schema = reader.avro_schema
            for key, value in rows:
                assert reader.get(key) == value, (where, key)
                assert [k for k, _ in reader.scan_prefix(key)][:1] == [key]
                record = decode_record(value, schema, where) if schema else None
                assert record is None or "type" in record
            assert reader.get(b"\xff no such key") is None
            total += 1
    assert total > 200


def test_batched_lookups_equal_the_scan_on_every_hfile(mdt_tables: list[Path]) -> None:
    """Record index, secondary index, stats and files HFiles: keys and prefixes sought
    together find the cells a scan holds, and nothing for keys the file lacks."""
    checked = 0
    for path in mdt_tables:
        for where, reader in _hfiles(path):
            rows = dict(reader.scan())
            keys = sorted(rows)
            absent = [k + b"\x00" for k in keys[::3]] + [k[:-1] for k in keys[1::3]] + [b"", b"\xff"]
            expected = {k: rows[k] for k in keys[::2] + absent if k in rows}
            assert reader.get_many(keys[::2] + absent) == expected, where
            assert all(reader.get(k) == rows.get(k) for k in absent), where
            prefixes = sorted(
                {k[: max(1, len(k) // 2)] for k in keys[::5]} | {k.split(b"$")[0] + b"$" for k in keys[::4]}
            )
            found = list(reader.scan_prefixes(prefixes))
            assert found == [(k, rows[k]) for k in keys if k.startswith(tuple(prefixes))], where
            checked += 1
    assert checked > 200


def test_column_and_partition_stats_keys_hash_like_hudi(mdt_tables: list[Path]) -> None:
    checked = 0
    for path in mdt_tables:
        for _, reader in _hfiles(path):
            schema = reader.avro_schema
            for key, value in reader.scan():
                rec = decode_record(value, schema, "x")
                cs = rec.get("ColumnStatsMetadata")
                if not cs or rec["type"] not in (3, 6):
                    continue
                part_key = key.decode()[12:24]
                if rec["type"] == 3:
                    expected_tail = hashing.file_id(cs["fileName"])
                    assert key.decode().endswith(expected_tail)
                    assert key.decode().startswith(hashing.column_id(cs["columnName"]))
                else:
                    assert key.decode() == hashing.partition_stats_key(cs["columnName"], cs["fileName"] or "")
                assert len(part_key) == 12
                checked += 1
    assert checked > 500


def test_files_listing_equals_storage_minus_uncommitted(mdt_tables: list[Path]) -> None:
    for path in mdt_tables:
        table = HudiTableBuilder.from_base_uri(str(path)).build()
        timeline = table.get_timeline()
        done = {i.timestamp for i in timeline.instants}
        mdt = _mdt(path)
        partitions = mdt.partition_paths()
        listed = {p: {f.name: f.size for f in files} for p, files in mdt.files(partitions).items()}
        for p in partitions:
            folder = path / p if p else path
            on_disk = {}
            for f in folder.iterdir():
                base = parse_base_file_name(f.name)
                lf = parse_log_file_name(f.name)
                instant = base.instant_time if base else (lf.base_instant if lf else None)
                if instant is not None and instant in done:
                    on_disk[f.name] = f.stat().st_size
            assert listed[p] == on_disk, (path, p)


def test_compute_table_stats_equals_hudi_rs(table_path) -> None:
    names = all_table_names()
    seen = 0
    for name in names:
        path = str(table_path(name))
        ours = HudiTableBuilder.from_base_uri(path).build().compute_table_stats()
        theirs = hudi.HudiTableBuilder.from_base_uri(path).build().compute_table_stats()
        assert ours == theirs, name
        seen += ours is not None
    assert seen >= 10
    inc = HudiReadOptions().with_query_type("incremental")
    assert HudiTableBuilder.from_base_uri(str(table_path(names[0]))).build().compute_table_stats(inc) is None


def test_record_index_lookups(table_path) -> None:
    mdt = _mdt(table_path("sample_table/cow/v9_txns_simple_meta"))
    locs = mdt.record_locations(["TXN-001", "TXN-011", "TXN-004", "no-such-key"])
    assert {k: (v.partition, v.file_id) for k, v in locs.items()} == {
        "TXN-001": ("region=us", "6d0f5b25-276e-4c1b-8ed0-c74a7d393fc9-0"),
        "TXN-011": ("region=eu", "04a47f87-3cc6-4c8b-a583-df8602967032-0"),
    }


PRUNE_CASES = [
    [("txn_id", "=", "TXN-001")],
    [("txn_id", "IN", "TXN-001,TXN-011,TXN-999")],
    [("amount", ">", "3000")],
    [("amount", "<", "100")],
    [("region", "=", "us"), ("amount", ">", "3000")],
    [("txn_date", "=", "2024-01-15")],
    [("merchant_name", "=", "Amazon")],
    [("txn_ts", ">=", "1700400000009")],
    [("currency", "!=", "USD")],
    [("is_international", "=", "true")],
]


@pytest.mark.parametrize(
    "name",
    [
        "sample_table/cow/v9_txns_simple_meta",
        "sample_table/mor/avro/v9_txns_simple_meta",
        "sample_table/cow/v9_txns_nonpart_meta",
        "sample_table/mor/avro/v9_txns_nonpart_meta",
        "sample_table/cow/v9_txns_complex_meta",
    ],
)
def test_pruned_reads_equal_hudi_rs_and_keep_no_more_slices(name: str, table_path) -> None:
    path = str(table_path(name))
    ours = HudiTableBuilder.from_base_uri(path).build()
    theirs = hudi.HudiTableBuilder.from_base_uri(path).build()
    unfiltered = to_table(ours.read())
    for filters in PRUNE_CASES:
        if any(f[0] not in unfiltered.column_names for f in filters):
            continue
        a = to_table(ours.read(HudiReadOptions(filters=filters)))
        b = to_table(theirs.read(hudi.HudiReadOptions(filters=filters)))
        assert row_set(a) == row_set(b), filters
        kept = ours.get_file_slices(HudiReadOptions(filters=filters))
        assert len(kept) <= len(theirs.get_file_slices(hudi.HudiReadOptions(filters=filters))), filters
        explain = ours.explain(HudiReadOptions(filters=filters))
        assert explain.listing == "metadata table"
        assert explain.file_slices == len(kept)


def test_explain_shows_each_stage(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path("sample_table/cow/v9_txns_simple_meta"))).build()
    plan = table.explain(HudiReadOptions(filters=[("txn_id", "=", "TXN-001")]))
    stages = {s.name: s for s in plan.stages}
    assert stages["listed"].partitions == 3
    assert stages["partition stats"].partitions == 1
    assert stages["record index"].file_slices == 1
    assert "record index" in str(plan)
    assert table.explain().file_slices == len(table.get_file_slices())


def test_truncated_and_corrupt_hfiles(table_path, tmp_path: Path) -> None:
    src = next((table_path("sample_table/cow/v9_txns_simple_meta") / ".hoodie/metadata/files").glob("*449278.hfile"))
    data = src.read_bytes()
    with pytest.raises(HudiCorruptFileError, match="trailer"):
        HFileReader.from_bytes(data[:-100], "t.hfile")
    bad = bytearray(data)
    bad[-4096:-4088] = b"NOTTRAIL"
    with pytest.raises(HudiCorruptFileError, match="trailer"):
        HFileReader.from_bytes(bytes(bad), "t.hfile")
    bad = bytearray(data)
    bad[40:60] = b"\x00" * 20  # inside the gzip payload of the data block
    reader = HFileReader.from_bytes(bytes(bad), "t.hfile")
    with pytest.raises(HudiCorruptFileError, match=r"t\.hfile"):
        list(reader.scan())


def test_corrupt_mdt_base_file_fails_loudly(table_path, tmp_path: Path) -> None:
    dest = tmp_path / "t"
    shutil.copytree(table_path("sample_table/cow/v9_txns_simple_meta"), dest)
    victim = next((dest / ".hoodie/metadata/files").glob("*449278.hfile"))
    victim.write_bytes(victim.read_bytes()[:500])
    table = HudiTableBuilder.from_base_uri(str(dest)).build()
    with pytest.raises(HudiCorruptFileError, match=victim.name):
        table.read()


def test_lagging_metadata_table_falls_back_to_storage(table_path, tmp_path: Path) -> None:
    """A data commit the metadata table has not recorded: listing comes from
    storage and no rows go missing."""
    name = "sample_table/cow/v9_txns_simple_meta"
    dest = tmp_path / "t"
    shutil.copytree(table_path(name), dest)
    latest = "20260307162456179"
    for f in (dest / ".hoodie/metadata/.hoodie/timeline").glob(f"{latest}_*.deltacommit"):
        f.unlink()
    table = HudiTableBuilder.from_base_uri(str(dest)).build()
    plan = table.explain(HudiReadOptions(filters=[("txn_id", "=", "TXN-017")]))
    assert plan.listing == "storage"
    assert any("lags" in n for n in plan.notes)
    expected = to_table(HudiTableBuilder.from_base_uri(str(table_path(name))).build().read())
    assert row_set(to_table(table.read())) == row_set(expected)
    assert to_table(table.read(HudiReadOptions(filters=[("txn_id", "=", "TXN-017")]))).num_rows == 1


def test_metadata_table_can_be_switched_off(table_path) -> None:
    path = str(table_path("sample_table/cow/v9_txns_simple_meta"))
    table = HudiTableBuilder.from_base_uri(path).with_hudi_option("hoodie.metadata.enable", "false").build()
    assert table.explain().listing == "storage"
    assert table.compute_table_stats() is None
    assert row_set(to_table(table.read())) == row_set(to_table(HudiTableBuilder.from_base_uri(path).build().read()))


def test_time_travel_plans_from_storage(table_path) -> None:
    path = str(table_path("sample_table/cow/v9_txns_simple_meta"))
    table = HudiTableBuilder.from_base_uri(path).build()
    first = table.get_timeline().data_instants[0].timestamp
    assert table.explain(HudiReadOptions().with_as_of_timestamp(first)).listing == "storage"
