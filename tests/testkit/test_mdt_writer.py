"""The metadata table writer: tables written with a metadata table read back through hudi-ray's
MetadataTable and through hudi-rs, and the indexes prune as they should."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_ray import HudiReadOptions, HudiTableBuilder
from hudi_ray.core.config import parse_properties
from hudi_ray.core.file_group import parse_base_file_name, parse_log_file_name
from hudi_ray.core.hfile import HFileReader
from hudi_ray.core.log_file import BlockType, read_log_blocks
from hudi_ray.core.log_file.content import decode_avro_block
from hudi_ray.core.metadata import MetadataTable, hashing
from hudi_ray.core.metadata.records import decode_record
from hudi_testkit import CowTableSpec, CowTableWriter, MetadataTableOptions, MorTableWriter
from tests.support import row_set, to_table

REGIONS = ["us", "eu", "apac"]
EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("price", pa.float64()),
        pa.field("qty", pa.int32()),
        pa.field("active", pa.bool_()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("day", pa.date32()),
        pa.field("amount", pa.decimal128(12, 2)),
        pa.field("seq", pa.int64()),
        pa.field("region", pa.string()),
    ]
)
# Small HFile blocks: every MDT base file has many data blocks (one index level).
SMALL_BLOCKS = MetadataTableOptions(hfile_block_size=512, column_stats_file_groups=2, record_index_file_groups=4)
# Tiny blocks and a tiny root: MDT base files with multi-level indexes.
DEEP_INDEX = MetadataTableOptions(hfile_block_size=64, hfile_max_root_entries=2, hfile_index_fanout=3)


def rows(ids: list[int], version: int) -> pa.Table:
    """Rows whose ``price`` and ``day`` ranges depend on the region: partition stats can prune."""
    region = [REGIONS[i % 3] for i in ids]
    offset = {"us": 0.0, "eu": 1000.0, "apac": 2000.0}
    return pa.table(
        {
            "id": [f"k{i:04d}" for i in ids],
            "name": [None if i % 11 == 0 else f"name-{i}-{version}" for i in ids],
            "price": [offset[r] + i + version / 10 for i, r in zip(ids, region)],
            "qty": pa.array([i % 17 for i in ids], pa.int32()),
            "active": [i % 2 == 0 for i in ids],
            "ts": pa.array([EPOCH + dt.timedelta(hours=i, seconds=version) for i in ids], pa.timestamp("us", tz="UTC")),
            "day": pa.array(
                [dt.date(2024, 1 + REGIONS.index(r) * 3, 1) + dt.timedelta(days=i % 20) for i, r in zip(ids, region)],
                pa.date32(),
            ),
            "amount": pa.array([Decimal(i * 7 % 1000) / 4 for i in ids], pa.decimal128(12, 2)),
            "seq": pa.array([version] * len(ids), pa.int64()),
            "region": region,
        },
        schema=SCHEMA,
    )


def write_cow(path: Path, version: int, partitioned: bool, options: MetadataTableOptions) -> Path:
    spec = CowTableSpec("mdt_cow", "id", "region" if partitioned else None, "seq", version)
    w = CowTableWriter.create(path, spec, SCHEMA, rows_per_file=9, metadata_table=options)
    w.upsert(rows(list(range(60)), 0), commit_time="20240101000000000")
    w.upsert(rows(list(range(50, 80)), 1), commit_time="20240102000000000")  # updates and inserts
    w = CowTableWriter.open(path, rows_per_file=9, metadata_table=options)  # the MDT's records are reloaded
    w.upsert(rows([3, 4, 5, 77, 90, 91], 2), commit_time="20240103000000000")
    return path


def write_mor(path: Path) -> Path:
    w = MorTableWriter.create(
        path,
        rows(list(range(60)), 0),
        table_name="mdt_mor",
        record_key="id",
        partition_field="region",
        precombine_field="seq",
        table_version=9,
        rows_per_file=9,
        commit_time="20240101000000000",
        metadata_table=SMALL_BLOCKS,
    )
    w.upsert(rows(list(range(50, 80)), 1), commit_time="20240102000000000")  # logs and new base files
    keys = pa.table({"id": ["k0003", "k0004", "k0052"], "region": ["us", "eu", "eu"]})
    w.delete(keys, commit_time="20240103000000000")
    w = MorTableWriter.open(path, rows_per_file=9, metadata_table=SMALL_BLOCKS)
    w.upsert(rows([3, 8, 95], 5), commit_time="20240104000000000")  # a deleted key comes back
    return path


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mdt")
    return {
        "cow9": write_cow(root / "cow9", 9, True, SMALL_BLOCKS),
        "cow8": write_cow(root / "cow8", 8, True, MetadataTableOptions()),
        "cow8_nonpart": write_cow(root / "cow8np", 8, False, MetadataTableOptions(record_index_file_groups=3)),
        "mor9": write_mor(root / "mor9"),
        "cow9_deep": write_cow(root / "deep", 9, True, DEEP_INDEX),
    }


ALL = ["cow9", "cow8", "cow8_nonpart", "mor9", "cow9_deep"]


def _table(path: Path):
    return HudiTableBuilder.from_base_uri(str(path)).build()


def _mdt(path: Path) -> MetadataTable:
    ctx = _table(path)._context
    mdt = MetadataTable.open(ctx.storage, ctx.config, ctx.timeline)
    assert mdt is not None
    return mdt


def _storage_listing(path: Path, partition: str) -> dict[str, int]:
    """Committed data files of a partition on storage, with sizes."""
    done = {i.timestamp for i in _table(path).get_timeline().instants}
    folder = path / partition if partition else path
    out = {}
    for f in folder.iterdir():
        base, log = parse_base_file_name(f.name), parse_log_file_name(f.name)
        instant = base.instant_time if base else (log.base_instant if log else None)
        if instant in done:
            out[f.name] = f.stat().st_size
    return out


def python_filter(table: pa.Table, filters: list[tuple[str, str, str]]) -> pa.Table:
    """The rows passing ``filters``, evaluated with plain Arrow kernels."""
    ops: dict[str, Callable] = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal}
    ops.update({">": pc.greater, ">=": pc.greater_equal})
    mask = pa.array([True] * table.num_rows)
    for field, op, value in filters:
        col = table[field]
        if op == "IN":
            hit = pc.is_in(col, value_set=pa.array(value.split(",")).cast(col.type))
        else:
            hit = ops[op](col, pa.scalar(value).cast(col.type))
        mask = pc.and_(mask, pc.fill_null(hit, False))
    return table.filter(mask)


# -- layout ------------------------------------------------------------------------------------------


def test_layout_follows_spark_written_metadata_tables(tables: dict[str, Path]) -> None:
    path = tables["cow9"]
    props = parse_properties((path / ".hoodie/hoodie.properties").read_text())
    assert props["hoodie.table.metadata.partitions"] == "column_stats,files,partition_stats,record_index"
    assert props["hoodie.table.metadata.partitions.inflight"] == ""
    defs = json.loads((path / props["hoodie.table.index.defs.path"]).read_text())["indexDefinitions"]
    assert defs["column_stats"]["sourceFields"][:3] == [
        "_hoodie_commit_time",
        "_hoodie_partition_path",
        "_hoodie_record_key",
    ]
    mdt = path / ".hoodie/metadata"
    mprops = parse_properties((mdt / ".hoodie/hoodie.properties").read_text())
    assert mprops["hoodie.table.type"] == "MERGE_ON_READ"
    assert mprops["hoodie.table.base.file.format"] == "HFILE"
    assert mprops["hoodie.table.name"] == "mdt_cow_metadata"
    assert mprops["hoodie.table.version"] == "9" and mprops["hoodie.record.merge.mode"] == "CUSTOM"
    assert mprops["hoodie.table.keygenerator.type"] == "HOODIE_TABLE_METADATA"
    completed = sorted(
        m.group(1)
        for f in (mdt / ".hoodie/timeline").iterdir()
        if (m := re.match(r"^(\d{17})_\d{17}\.deltacommit$", f.name))
    )
    data = [i.timestamp for i in _table(path).get_timeline().instants]
    assert completed == [f"0000000000000000{i}" for i in range(4)] + data

    def file_groups(partition: str) -> list[str]:
        names = [parse_base_file_name(f.name) or parse_log_file_name(f.name) for f in (mdt / partition).iterdir()]
        return sorted({n.file_id for n in names if n is not None})

    ids = {p: file_groups(p) for p in ("files", "column_stats", "partition_stats", "record_index")}
    assert ids["files"] == ["files-0000-0"]
    assert ids["column_stats"] == ["col-stats-0000-0", "col-stats-0001-0"]
    assert ids["partition_stats"] == ["partition-stats-0000-0"]
    assert ids["record_index"] == [f"record-index-{i:04d}-0" for i in range(4)]
    # Every file group starts with an empty delete block at its partition's bootstrap instant.
    init = mdt / "record_index" / ".record-index-0002-0_00000000000000002.log.1_0-0-0"
    (block,) = read_log_blocks(init.read_bytes(), str(init))
    assert block.block_type is BlockType.DELETE and block.instant_time == "00000000000000002"
    assert (mdt / "files" / ".hoodie_partition_metadata").is_file()


@pytest.mark.parametrize("name", ALL)
def test_every_mdt_base_file_is_a_readable_hfile(tables: dict[str, Path], name: str) -> None:
    path = tables[name]
    partition_of = {f.name: _partition(path, f) for f in path.rglob("*") if ".hoodie" not in f.parts}
    record_index = {"cow9": 4, "cow8": 10, "cow8_nonpart": 3, "mor9": 4, "cow9_deep": 10}[name]
    counts = {"files": 1, "column_stats": 2, "partition_stats": 1, "record_index": record_index}
    multi_level = 0
    for f in (path / ".hoodie/metadata").rglob("*.hfile"):
        reader = HFileReader.from_bytes(f.read_bytes(), str(f))
        cells = list(reader.scan())
        assert len(cells) == reader.entry_count
        assert [k for k, _ in cells] == sorted(k for k, _ in cells)
        multi_level += reader.trailer.index_levels > 1
        group = int(parse_base_file_name(f.name).file_id.rsplit("-", 2)[1])
        for key, value in cells:
            record = decode_record(value, reader.avro_schema, str(f))
            assert record["key"] == ""  # blank in the value: readers take the HFile row
            assert reader.get(key) == value
            assert hashing.file_group_index(key.decode(), counts[f.parent.name]) == group
            cs = record["ColumnStatsMetadata"]
            if f.parent.name == "column_stats":
                expected = hashing.column_stats_key(cs["columnName"], partition_of[cs["fileName"]], cs["fileName"])
                assert key.decode() == expected
                assert ("valueType" in cs) == (not name.startswith("cow8"))
            if f.parent.name == "partition_stats":
                assert key.decode() == hashing.partition_stats_key(cs["columnName"], cs["fileName"])
                assert cs["isTightBound"] is True
    assert (multi_level > 0) == (name == "cow9_deep")


def _partition(table: Path, f: Path) -> str:
    rel = str(f.parent.relative_to(table))
    return "" if rel == "." else rel


# -- what the metadata table says --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_files_listing_equals_storage(tables: dict[str, Path], name: str) -> None:
    path = tables[name]
    mdt = _mdt(path)
    partitions = mdt.partition_paths()
    on_disk = sorted({_partition(path, p) for p in path.rglob("*.parquet")})
    assert partitions == on_disk
    listed = mdt.files(partitions)
    for p in partitions:
        assert {f.name: f.size for f in listed[p]} == _storage_listing(path, p), p
    if name == "mor9":
        assert any(f.name.startswith(".") for files in listed.values() for f in files)  # log files too


def _rows_of(path: Path, rel: str, columns: list[str], schema: pa.Schema) -> pa.Table | None:
    """The rows a data file holds (a log file's data blocks; None for delete blocks only)."""
    file = path / rel
    if file.name.startswith("."):
        blocks = read_log_blocks(file.read_bytes(), str(file))
        data = [decode_avro_block(b) for b in blocks if b.block_type is BlockType.AVRO_DATA]
        if not data:
            return None
        table = pa.concat_tables(data)
    else:
        table = pq.read_table(file)
    return pa.table({c: table[c].cast(schema.field(c).type) for c in columns})


@pytest.mark.parametrize("name", ["cow9", "cow8", "cow8_nonpart", "mor9"])
def test_column_stats_are_exact(tables: dict[str, Path], name: str) -> None:
    path = tables[name]
    table = _table(path)
    schema = table.get_schema_with_meta_fields()
    mdt = _mdt(path)
    partitions = mdt.partition_paths()
    columns = ["_hoodie_record_key", "name", "price", "qty", "active", "ts", "day", "amount", "seq"]
    stats = mdt.column_stats(columns, partitions, schema)
    files = {(p, f.name) for p, fs in mdt.files(partitions).items() for f in fs}
    assert set(stats) == files
    for (partition, file_name), by_column in stats.items():
        data = _rows_of(path, f"{partition}/{file_name}" if partition else file_name, columns, schema)
        for column in columns:
            got = by_column[column]
            if data is None:  # a log file of deletes only
                assert (got.value_count, got.null_count, got.min, got.max) == (0, 0, None, None)
                continue
            assert (got.value_count, got.null_count) == (data.num_rows, data[column].null_count), column
            expected = pc.min_max(data[column])
            assert (got.min, got.max) == (expected["min"], expected["max"]), (file_name, column)


@pytest.mark.parametrize("name", ["cow9", "cow8", "mor9"])
def test_partition_stats_aggregate_the_latest_file_slices(tables: dict[str, Path], name: str) -> None:
    """Per partition and column, exactly the stats of the rows in the latest slices' files
    (base files and, on MOR, log files): for COW, the snapshot's rows."""
    path = tables[name]
    table = _table(path)
    schema = table.get_schema_with_meta_fields()
    mdt = _mdt(path)
    columns = ["price", "qty", "ts", "day", "amount", "name", "_hoodie_commit_time"]
    stats = mdt.partition_stats(columns, schema)
    snapshot = to_table(table.read())
    assert set(stats) == set(mdt.partition_paths())
    for partition in mdt.partition_paths():
        slices = [s for s in table.get_file_slices() if s.partition_path == partition]
        rels = [s.base_file_relative_path() for s in slices] + [r for s in slices for r in s.log_files_relative_paths()]
        found = [t for t in (_rows_of(path, rel, columns, schema) for rel in rels) if t is not None]
        rows_ = pa.concat_tables(found)
        if name != "mor9":
            assert rows_.num_rows == pc.sum(pc.equal(snapshot["_hoodie_partition_path"], partition)).as_py()
        for column in columns:
            got, expected = stats[partition][column], pc.min_max(rows_[column])
            assert (got.min, got.max) == (expected["min"], expected["max"]), (partition, column)
            assert (got.value_count, got.null_count) == (rows_.num_rows, rows_[column].null_count)


@pytest.mark.parametrize("name", ALL)
def test_record_index_locates_every_live_key(tables: dict[str, Path], name: str) -> None:
    path = tables[name]
    table = _table(path)
    mdt = _mdt(path)
    live = to_table(table.read())
    expected = {}
    for key, partition, file_name in zip(
        live["_hoodie_record_key"].to_pylist(),
        live["_hoodie_partition_path"].to_pylist(),
        live["_hoodie_file_name"].to_pylist(),
    ):
        base = parse_base_file_name(file_name)
        expected[key] = (partition, base.file_id if base else file_name)  # MOR log rows carry the file id
    located = mdt.record_locations([*expected, "k9999", "k0003" if name == "mor9" else "nope"])
    if name == "mor9":
        expected.pop("k0004", None)
        assert "k0003" in expected and "k0004" not in expected  # deleted, then upserted again
        assert "k0052" not in located
    assert {k: (v.partition, v.file_id) for k, v in located.items()} == expected


# -- reads through both readers ------------------------------------------------------------------------------

FILTERS = [
    [("id", "=", "k0007")],
    [("id", "IN", "k0003,k0052,k0078,k9999")],
    [("price", ">", "2070")],
    [("price", "<", "20")],
    [("region", "=", "eu"), ("qty", "<=", "2")],
    [("day", "=", "2024-04-05")],
    [("amount", ">=", "240")],
    [("name", "=", "name-77-2")],
    [("active", "=", "true"), ("seq", ">", "0")],
    [("ts", "<", "2024-01-02T00:00:00Z")],
]


@pytest.mark.parametrize("name", ALL)
def test_reads_equal_hudi_rs_and_python_filtering(tables: dict[str, Path], name: str) -> None:
    path = str(tables[name])
    ours, theirs = _table(Path(path)), hudi.HudiTableBuilder.from_base_uri(path).build()
    everything = to_table(ours.read())
    assert row_set(everything) == row_set(to_table(theirs.read()))
    assert ours.compute_table_stats() == theirs.compute_table_stats() is not None
    for filters in FILTERS:
        if name == "cow8_nonpart" and filters[0][0] == "region":
            continue
        a = to_table(ours.read(HudiReadOptions(filters=filters)), everything.schema)
        b = to_table(theirs.read(hudi.HudiReadOptions(filters=filters)), everything.schema)
        assert row_set(a) == row_set(b) == row_set(python_filter(everything, filters)), filters
        kept = ours.get_file_slices(HudiReadOptions(filters=filters))
        if name != "cow9_deep":  # see test_stats_lookups_are_complete_with_multi_level_hfiles
            assert len(kept) <= len(theirs.get_file_slices(hudi.HudiReadOptions(filters=filters))), filters
        assert ours.explain(HudiReadOptions(filters=filters)).listing == "metadata table"


def test_stats_lookups_are_complete_with_multi_level_hfiles(tables: dict[str, Path]) -> None:
    """Column and partition stats lookups find every record of a deep (multi-level) index."""
    path = tables["cow9_deep"]
    mdt = _mdt(path)
    schema = _table(path).get_schema_with_meta_fields()
    partitions = mdt.partition_paths()
    stats = mdt.column_stats(["price", "name"], partitions, schema)
    assert set(stats) == {(p, f.name) for p, fs in mdt.files(partitions).items() for f in fs}
    assert all(set(s) == {"price", "name"} for s in stats.values())
    assert set(mdt.partition_stats(["price", "name"], schema)) == set(partitions)
    ours, theirs = _table(path), hudi.HudiTableBuilder.from_base_uri(str(path)).build()
    for filters in FILTERS:
        kept = ours.get_file_slices(HudiReadOptions(filters=filters))
        assert len(kept) <= len(theirs.get_file_slices(hudi.HudiReadOptions(filters=filters))), filters


def test_explain_shows_each_index_pruning(tables: dict[str, Path]) -> None:
    table = _table(tables["cow9"])
    everything = len(table.get_file_slices())
    plan = table.explain(HudiReadOptions(filters=[("price", ">", "2070")]))  # apac prices only
    stages = {s.name: s for s in plan.stages}
    assert stages["listed"].partitions == 3 and stages["partition stats"].partitions == 1
    assert stages["file slices"].file_slices < everything
    assert stages["column stats"].file_slices < stages["file slices"].file_slices
    plan = table.explain(HudiReadOptions(filters=[("id", "=", "k0007")]))
    stages = {s.name: s for s in plan.stages}
    assert stages["record index"].file_slices == 1
    assert "partition stats" in str(plan) and "column stats" in str(plan) and "record index" in str(plan)


@pytest.mark.parametrize("name", ["cow9", "cow9_deep"])
def test_hudi_rs_lists_files_from_the_metadata_table(tables: dict[str, Path], tmp_path: Path, name: str) -> None:
    """A stray copy of a base file under a new file id: storage listing sees it, the files
    partition does not; hudi-rs goes with the metadata table (so it read our HFile, with a
    one-level index or, for cow9_deep, a root + leaf index)."""
    dest = tmp_path / "t"
    shutil.copytree(tables[name], dest)
    files_hfile = max((dest / ".hoodie/metadata/files").glob("*.hfile"))
    levels = HFileReader.from_bytes(files_hfile.read_bytes(), str(files_hfile)).trailer.index_levels
    assert levels == (2 if name == "cow9_deep" else 1)
    victim = sorted((dest / "region=us").glob("*.parquet"))[0]
    stray = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa-0_" + victim.name.split("_", 1)[1]
    shutil.copy(victim, victim.parent / stray)
    with_mdt = len(hudi.HudiTableBuilder.from_base_uri(str(dest)).build().get_file_slices())
    assert with_mdt == len(hudi.HudiTableBuilder.from_base_uri(str(tables[name])).build().get_file_slices())
    listing = HudiTableBuilder.from_base_uri(str(dest)).with_hudi_option("hoodie.metadata.enable", "false").build()
    assert len(listing.get_file_slices()) == with_mdt + 1


def test_record_index_needs_unique_keys(tmp_path: Path) -> None:
    spec = CowTableSpec("t", "id", "region", None, 9)
    w = CowTableWriter.create(tmp_path / "t", spec, SCHEMA, metadata_table=True)
    w.upsert(rows([1, 2], 0), commit_time="20240101000000000")
    moved = rows([1], 1).set_column(9, "region", pa.array(["us"]))  # k0001 is in eu
    with pytest.raises(ValueError, match="unique across partitions"):
        w.upsert(moved, commit_time="20240102000000000")
    table = _table(tmp_path / "t")
    assert table.explain().listing == "metadata table"  # the failed commit left no trace in either table
    assert to_table(table.read()).num_rows == 2


def test_options_and_versions(tmp_path: Path) -> None:
    spec = CowTableSpec("t", "id", "region", None, 6)
    with pytest.raises(ValueError, match="version 8 or 9"):
        CowTableWriter.create(tmp_path / "v6", spec, SCHEMA, metadata_table=True)
    assert not (tmp_path / "v6").exists()
    only_files = MetadataTableOptions(column_stats=False, record_index=False)
    spec9 = CowTableSpec("t", "id", "region", None, 9)
    w = CowTableWriter.create(tmp_path / "files", spec9, SCHEMA, metadata_table=only_files)
    w.upsert(rows(list(range(10)), 0))
    props = parse_properties((tmp_path / "files/.hoodie/hoodie.properties").read_text())
    assert props["hoodie.table.metadata.partitions"] == "files"
    assert row_set(to_table(_table(tmp_path / "files").read())) == row_set(
        to_table(hudi.HudiTableBuilder.from_base_uri(str(tmp_path / "files")).build().read())
    )
    some = MetadataTableOptions(column_stats_columns=("price", "_hoodie_record_key"))
    w = CowTableWriter.create(tmp_path / "some", spec9, SCHEMA, metadata_table=some)
    w.upsert(rows(list(range(10)), 0))
    mdt = _mdt(tmp_path / "some")
    stats = mdt.column_stats(["price", "qty"], mdt.partition_paths(), _table(tmp_path / "some").get_schema())
    assert {c for s in stats.values() for c in s} == {"price"}
    with pytest.raises(ValueError, match="cannot be indexed"):
        CowTableWriter.create(
            tmp_path / "bad", spec9, SCHEMA, metadata_table=MetadataTableOptions(column_stats_columns=("nope",))
        )


@pytest.mark.parametrize(
    ("version", "name"),
    [(9, "sample_table/cow/v9_txns_simple_meta"), (8, "quickstart_trips_table/mor/avro/v8_trips_8i3u1d")],
)
def test_record_schema_is_the_one_spark_embeds(version: int, name: str, table_path) -> None:
    """Field for field (docs aside), the HoodieMetadataRecord schema of Spark-written MDT HFiles."""
    from hudi_testkit.metadata_table import metadata_record_schema

    hfile = next((table_path(name) / ".hoodie/metadata/files").glob("*.hfile"))
    real = json.loads(HFileReader.from_bytes(hfile.read_bytes(), str(hfile)).avro_schema)

    def shape(s):
        if isinstance(s, dict):
            return {k: shape(v) for k, v in s.items() if k != "doc"}
        if isinstance(s, list):
            return [shape(v) for v in s]
        return s

    assert metadata_record_schema(version) == shape(real)
