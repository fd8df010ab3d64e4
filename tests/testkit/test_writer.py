"""The COPY_ON_WRITE writer: tables it writes read back through hudi-ray and hudi-rs alike."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import uuid
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hudi_ray
from hudi_ray.core.config import parse_properties
from hudi_ray.core.schema import META_FIELDS, avro_to_arrow_schema
from hudi_testkit import (
    COMMIT_METADATA_SCHEMA,
    CommitResult,
    CowTableSpec,
    CowTableWriter,
    arrow_to_avro_schema,
    avro_compatible_schema,
    decimal_fixed_size,
    format_instant_time,
    next_instant_time,
    parse_instant_time,
    upsert_cow_table,
    write_cow_table,
)
from tests.support import both_read, row_set, snapshot_opts, to_table

META = list(META_FIELDS)
BASE_FILE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-0_\d+-\d+-\d+_\d{17}\.parquet$")
REGIONS = ["us", "eu", "apac"]
EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("price", pa.float64()),
        pa.field("qty", pa.int32()),
        pa.field("active", pa.bool_()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("day", pa.date32()),
        pa.field("amount", pa.decimal128(12, 2)),
        pa.field("region", pa.string()),
    ]
)


def sample(ids: Sequence[int], tag: str = "v1") -> pa.Table:
    """Rows for ``ids``; ``tag`` changes every non-key value, so updates are visible."""
    bump = sum(map(ord, tag))
    rows = [
        {
            "id": i,
            "name": None if i % 7 == 3 else f"{tag}-{i}",
            "price": i * 1.25 + bump,
            "qty": (i * 3 + bump) % 1000,
            "active": (i + bump) % 2 == 0,
            "ts": EPOCH + dt.timedelta(seconds=i * 61 + bump),
            "day": (EPOCH + dt.timedelta(days=i % 40)).date(),
            "amount": Decimal(i * 101 + bump) / 100,
            "region": REGIONS[i % len(REGIONS)],  # a function of the key: updates stay in their partition
        }
        for i in ids
    ]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def merged(*batches: pa.Table) -> pa.Table:
    """What a table holds after upserting ``batches`` in order: the last row of each key wins."""
    latest: dict[Any, dict[str, Any]] = {}
    for batch in batches:
        for row in batch.to_pylist():
            latest[row["id"]] = row
    return pa.Table.from_pylist(list(latest.values()), schema=batches[0].schema)


def read_ours(path: Path, **kw: Any) -> pa.Table:
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    return to_table(table.read(hudi_ray.HudiReadOptions(**kw)))


def data_rows(table: pa.Table) -> list[str]:
    return row_set(table.drop_columns([c for c in META if c in table.column_names]))


def assert_readers_agree(path: Path, expected: pa.Table, **kw: Any) -> pa.Table:
    """hudi-ray and hudi-rs return the same rows, and the data columns equal ``expected``."""
    ours, theirs = both_read(str(path), **kw)
    assert ours.num_rows == theirs.num_rows == expected.num_rows
    assert row_set(ours) == row_set(theirs)
    assert data_rows(ours) == row_set(expected)
    return ours


def timeline_files(path: Path, version: int) -> list[str]:
    folder = path / (".hoodie" if version < 8 else ".hoodie/timeline")
    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.name[0].isdigit())


def decode_commit(raw: bytes) -> dict[str, Any]:
    if raw.startswith(b"Obj\x01"):
        return next(iter(fastavro.reader(io.BytesIO(raw))))
    return json.loads(raw)


def commit_files(path: Path, version: int) -> list[Path]:
    folder = path / (".hoodie" if version < 8 else ".hoodie/timeline")
    return sorted(folder.glob("*.commit"))


# -- round trips through both readers ------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 8, 9])
@pytest.mark.parametrize("partition", ["region", None], ids=["partitioned", "nonpartitioned"])
def test_commits_read_back_through_both_readers(tmp_path: Path, version: int, partition: str | None) -> None:
    path = tmp_path / "t"
    first = sample(range(60))
    r1 = write_cow_table(
        path,
        first,
        table_name="trips",
        record_key="id",
        partition_field=partition,
        precombine_field="qty",
        table_version=version,
        rows_per_file=7,
    )
    assert r1.num_inserts == 60 and r1.num_updates == 0
    assert_readers_agree(path, first)

    # Updates spread over many file groups, plus new keys.
    second = pa.concat_tables([sample(range(0, 60, 4), "v2"), sample(range(100, 110), "v2")])
    r2 = upsert_cow_table(path, second, rows_per_file=7)
    assert (r2.num_inserts, r2.num_updates) == (10, 15)
    third = sample([1, 2, 100, 105, 200], "v3")
    r3 = upsert_cow_table(path, third, rows_per_file=7)
    assert (r3.num_inserts, r3.num_updates) == (1, 4)
    assert r1.instant_time < r2.instant_time < r3.instant_time

    expected = merged(first, second, third)
    ours = assert_readers_agree(path, expected)

    # Meta fields: the commit that last wrote each key, and the file each row now lives in.
    last_commit = {}
    for result, batch in ((r1, first), (r2, second), (r3, third)):
        last_commit.update({i: result.instant_time for i in batch["id"].to_pylist()})
    for row in ours.to_pylist():
        assert row["_hoodie_commit_time"] == last_commit[row["id"]]
        assert row["_hoodie_record_key"] == str(row["id"])
        assert row["_hoodie_commit_seqno"].startswith(row["_hoodie_commit_time"] + "_")
        assert row["_hoodie_partition_path"] == (f"region={row['region']}" if partition else "")
        file = path / row["_hoodie_partition_path"] / row["_hoodie_file_name"]
        assert file.is_file() and BASE_FILE.match(file.name)

    # Rewritten file groups keep their file id; old versions stay on disk for time travel.
    rewritten = {s.file_id for s in r2.write_stats if s.prev_commit != "null"}
    assert rewritten and rewritten <= {s.file_id for s in r1.write_stats}
    assert_readers_agree(path, first, **snapshot_opts(as_of=r1.instant_time))
    assert_readers_agree(path, merged(first, second), **snapshot_opts(as_of=r2.instant_time))

    stream = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    streamed = to_table(list(stream.read_stream(hudi_ray.HudiReadOptions().with_batch_size(8))))
    assert row_set(streamed) == row_set(ours)


def test_nested_and_logical_types_round_trip(tmp_path: Path) -> None:
    item = pa.struct([pa.field("tag", pa.string()), pa.field("score", pa.float64())])
    schema = pa.schema(
        [
            pa.field("key", pa.string(), nullable=False),
            pa.field("tiny", pa.int8()),
            pa.field("small", pa.int16()),
            pa.field("f32", pa.float32()),
            pa.field("blob", pa.binary()),
            pa.field("millis", pa.timestamp("ms", tz="UTC")),
            pa.field("big", pa.decimal128(30, 4)),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("items", pa.list_(item)),
            pa.field("attrs", pa.map_(pa.string(), pa.int32())),
            pa.field("point", pa.struct([pa.field("x", pa.int32()), pa.field("inner", item)])),
            pa.field("part", pa.int32()),
        ]
    )
    rows = [
        {
            "key": f"k{i}",
            "tiny": i - 3,
            "small": i * 1000,
            "f32": i / 4,
            "blob": bytes([i, 255 - i]),
            "millis": EPOCH + dt.timedelta(milliseconds=i * 1234),
            "big": Decimal(f"{i}12345678901234567890.1234") * (1 if i % 2 else -1),
            "tags": None if i == 2 else [f"t{j}" for j in range(i % 3)],
            "items": [{"tag": f"a{i}", "score": i * 0.5}, {"tag": None, "score": None}],
            "attrs": [("a", i), ("b", None)] if i % 2 else [],
            "point": None if i == 4 else {"x": i, "inner": {"tag": "in", "score": 1.0}},
            "part": i % 2,
        }
        for i in range(8)
    ]
    table = pa.Table.from_pylist(rows, schema=schema)
    write_cow_table(path := tmp_path / "nested", table, table_name="nested", record_key="key", partition_field="part")
    upsert_cow_table(path, table.slice(0, 2).set_column(1, "tiny", pa.array([100, 101], pa.int8())))
    expected = pa.Table.from_pylist(
        [{**r, "tiny": 100 + i} if i < 2 else r for i, r in enumerate(rows)], schema=schema
    ).cast(avro_compatible_schema(schema))
    ours = assert_readers_agree(path, expected)
    assert ours.schema.field("tiny").type == pa.int32()


def test_local_timestamps_round_trip(tmp_path: Path) -> None:
    """Timestamps without a time zone are Avro local-timestamp-*; hudi-rs 0.5 panics on those
    ("not yet implemented" in avro_to_arrow/schema.rs), so only hudi-ray is checked."""
    local = [dt.datetime(2024, 5, 1) + dt.timedelta(microseconds=i * 7) for i in range(4)]
    table = pa.table(
        {
            "k": pa.array([1, 2, 3, 4]),
            "us": pa.array(local, pa.timestamp("us")),
            "s": pa.array(local, pa.timestamp("s")),
        }
    )
    write_cow_table(path := tmp_path / "local", table, table_name="local", record_key="k", partition_field=None)
    ours = read_ours(path)
    assert ours.schema.field("us").type == pa.timestamp("us")
    assert ours.schema.field("s").type == pa.timestamp("ms")
    assert data_rows(ours) == row_set(table.cast(avro_compatible_schema(table.schema)))


def test_precombine_dedupes_within_a_batch_and_incoming_rows_win(tmp_path: Path) -> None:
    batch = sample([1, 2, 3, 1, 2, 1])
    qty = [5, 9, 1, 7, 2, None]  # key 1: qty 7 wins over 5 and null; key 2: qty 9 wins over a later 2
    batch = batch.set_column(batch.schema.get_field_index("qty"), "qty", pa.array(qty, pa.int32()))
    batch = batch.set_column(batch.schema.get_field_index("name"), "name", pa.array([f"r{i}" for i in range(6)]))
    path = tmp_path / "dedupe"
    write_cow_table(path, batch, table_name="d", record_key="id", partition_field="region", precombine_field="qty")
    ours = read_ours(path)
    assert sorted(zip(ours["id"].to_pylist(), ours["name"].to_pylist())) == [(1, "r3"), (2, "r1"), (3, "r2")]

    # Across commits the incoming row replaces the stored one, even with a smaller ordering value.
    later = sample([1]).set_column(3, "qty", pa.array([0], pa.int32()))
    upsert_cow_table(path, later)
    ours = read_ours(path)
    assert ours.filter(pa.compute.equal(ours["id"], 1))["qty"].to_pylist() == [0]


def test_empty_first_commit_then_inserts(tmp_path: Path) -> None:
    path = tmp_path / "empty"
    write_cow_table(path, sample([]), table_name="e", record_key="id", partition_field="region", table_version=8)
    assert read_ours(path).num_rows == 0
    upsert_cow_table(path, sample(range(5)))
    assert_readers_agree(path, sample(range(5)))


# -- what lands on disk ------------------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 8, 9])
def test_table_layout(tmp_path: Path, version: int) -> None:
    path = tmp_path / "layout"
    data = sample(range(12))
    r1 = write_cow_table(
        path,
        data,
        table_name="layout",
        record_key="id",
        partition_field="region",
        precombine_field="qty",
        table_version=version,
        rows_per_file=3,
        commit_time="20240102030405006",
    )
    r2 = upsert_cow_table(path, sample([0, 1, 50], "v2"), commit_time="20240102030406000")

    props_text = (path / ".hoodie/hoodie.properties").read_text()
    assert '{"type"\\:"record"' in props_text  # ':' escaped as in real tables
    props = parse_properties(props_text)
    avro = arrow_to_avro_schema(SCHEMA, "layout")
    assert json.loads(props["hoodie.table.create.schema"]) == avro
    assert props["hoodie.table.version"] == str(version)
    assert props["hoodie.table.type"] == "COPY_ON_WRITE"
    assert props["hoodie.table.recordkey.fields"] == "id"
    assert props["hoodie.table.partition.fields"] == "region"
    assert props["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert props["hoodie.table.checksum"] == "2541009710"  # crc32("default.layout"), Hudi's checksum
    ordering_key = "hoodie.table.ordering.fields" if version >= 9 else "hoodie.table.precombine.field"
    assert props[ordering_key] == "qty"
    if version >= 8:
        assert props["hoodie.timeline.layout.version"] == "2"
        assert props["hoodie.timeline.path"] == "timeline"
        assert props["hoodie.table.initial.version"] == str(version)
        assert props["hoodie.table.keygenerator.type"] == "SIMPLE"
    else:
        assert props["hoodie.timeline.layout.version"] == "1"
        assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"

    assert r1.instant_time == "20240102030405006"
    if version >= 8:
        assert r1.completion_time == "20240102030405007"
        done = [f"{r1.instant_time}_{r1.completion_time}.commit", f"{r2.instant_time}_{r2.completion_time}.commit"]
    else:
        assert r1.completion_time is None
        done = [f"{r1.instant_time}.commit", f"{r2.instant_time}.commit"]
    expected = [done[0], f"{r1.instant_time}.commit.requested", f"{r1.instant_time}.inflight"]
    expected += [done[1], f"{r2.instant_time}.commit.requested", f"{r2.instant_time}.inflight"]
    assert timeline_files(path, version) == sorted(expected)
    assert (
        path / ".hoodie" / ("timeline" if version >= 8 else "") / f"{r1.instant_time}.commit.requested"
    ).read_bytes() == b""

    for result, commit in zip((r1, r2), commit_files(path, version)):
        raw = commit.read_bytes()
        assert raw.startswith(b"Obj\x01") == (version >= 8)
        if version >= 8:
            assert json.loads(fastavro.reader(io.BytesIO(raw)).metadata["avro.schema"]) == COMMIT_METADATA_SCHEMA
        meta = decode_commit(raw)
        assert meta["operationType"] == "UPSERT"
        assert json.loads(meta["extraMetadata"]["schema"]) == avro
        stats = [s for group in meta["partitionToWriteStats"].values() for s in group]
        assert {s["path"] for s in stats} == set(result.files)
        for s in stats:
            file = path / s["path"]
            assert BASE_FILE.match(file.name) and file.name.startswith(s["fileId"] + "_")
            assert s["path"].startswith(s["partitionPath"] + "/")
            assert s["numWrites"] == pq.read_metadata(file).num_rows
            assert s["fileSizeInBytes"] == s["totalWriteBytes"] == file.stat().st_size
            assert s["numWrites"] >= s["numInserts"] + s["numUpdateWrites"]
            assert s["prevCommit"] in ("null", r1.instant_time)

    partition_meta = parse_properties((path / "region=us" / ".hoodie_partition_metadata").read_text())
    assert partition_meta == {"commitTime": r1.instant_time, "partitionDepth": "1"}

    footer = pq.read_metadata(path / r1.files[0])
    kv = footer.metadata
    assert b"ARROW:schema" not in kv
    assert kv[b"writer.model.name"] == b"avro"
    parquet_avro = json.loads(kv[b"parquet.avro.schema"])
    assert [f["name"] for f in parquet_avro["fields"]] == META + SCHEMA.names
    keys = pq.read_table(path / r1.files[0], columns=["_hoodie_record_key"]).column(0).to_pylist()
    assert kv[b"hoodie_min_record_key"].decode() == min(keys)
    assert kv[b"hoodie_max_record_key"].decode() == max(keys)


def test_nonpartitioned_layout(tmp_path: Path) -> None:
    path = tmp_path / "flat"
    r = write_cow_table(path, sample(range(5)), table_name="flat", record_key="id", partition_field=None)
    props = parse_properties((path / ".hoodie/hoodie.properties").read_text())
    assert "hoodie.table.partition.fields" not in props
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    assert parse_properties((path / ".hoodie_partition_metadata").read_text())["partitionDepth"] == "0"
    assert all("/" not in f for f in r.files)


def test_commit_metadata_matches_real_tables(tmp_path: Path, reference_table) -> None:
    """Our write stats carry the fields, in the order, of commits Spark wrote."""
    v6 = reference_table("sample_table/cow/v6_nonpartitioned")
    v8 = reference_table("sample_table/cow/v8_nonpartitioned")
    real6 = json.loads(next((v6 / ".hoodie").glob("*.commit")).read_bytes())
    with next((v8 / ".hoodie/timeline").glob("*.commit")).open("rb") as fh:
        assert json.loads(fastavro.reader(fh).metadata["avro.schema"]) == COMMIT_METADATA_SCHEMA

    write_cow_table(path := tmp_path / "v6", sample(range(3)), table_name="v6", record_key="id", partition_field=None)
    ours6 = json.loads(commit_files(path, 6)[0].read_bytes())
    assert list(ours6) == list(real6)
    assert list(ours6["partitionToWriteStats"][""][0]) == list(real6["partitionToWriteStats"][""][0])


# -- schema conversion ---------------------------------------------------------------------------


def test_arrow_to_avro_schema() -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("i8", pa.int8()),
            pa.field("flag", pa.bool_()),
            pa.field("f", pa.float32()),
            pa.field("s", pa.large_string()),
            pa.field("b", pa.binary()),
            pa.field("d", pa.date32()),
            pa.field("tus", pa.timestamp("us", tz="UTC")),
            pa.field("tms", pa.timestamp("ms", tz="Europe/Paris")),
            pa.field("local", pa.timestamp("us")),
            pa.field("dec", pa.decimal128(10, 5)),
            pa.field("arr", pa.list_(pa.struct([pa.field("a", pa.string())]))),
            pa.field("m", pa.map_(pa.string(), pa.decimal128(4, 1))),
            pa.field("st", pa.struct([pa.field("inner", pa.struct([pa.field("x", pa.int32(), nullable=False)]))])),
        ]
    )
    avro = arrow_to_avro_schema(schema, "tbl")
    assert (avro["type"], avro["name"], avro["namespace"]) == ("record", "tbl_record", "hoodie.tbl")
    types = {f["name"]: f["type"] for f in avro["fields"]}
    assert types["id"] == "long"
    assert types["i8"] == ["null", "int"]
    assert types["flag"] == ["null", "boolean"]
    assert types["f"] == ["null", "float"]
    assert types["s"] == ["null", "string"]
    assert types["b"] == ["null", "bytes"]
    assert types["d"] == ["null", {"type": "int", "logicalType": "date"}]
    assert types["tus"] == ["null", {"type": "long", "logicalType": "timestamp-micros"}]
    assert types["tms"] == ["null", {"type": "long", "logicalType": "timestamp-millis"}]
    assert types["local"] == ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]
    # Exactly what Spark's Hudi writer records for a decimal(10, 5) column.
    assert types["dec"] == [
        "null",
        {
            "type": "fixed",
            "name": "fixed",
            "namespace": "hoodie.tbl.tbl_record.dec",
            "size": 5,
            "logicalType": "decimal",
            "precision": 10,
            "scale": 5,
        },
    ]
    assert types["arr"] == [
        "null",
        {
            "type": "array",
            "items": [
                "null",
                {
                    "type": "record",
                    "name": "arr",
                    "namespace": "hoodie.tbl.tbl_record",
                    "fields": [{"name": "a", "type": ["null", "string"], "default": None}],
                },
            ],
        },
    ]
    assert types["m"][1]["values"][1]["namespace"] == "hoodie.tbl.tbl_record.m"
    inner = types["st"][1]["fields"][0]
    assert inner["type"][1]["namespace"] == "hoodie.tbl.tbl_record.st"
    assert inner["type"][1]["fields"] == [{"name": "x", "type": "int"}]
    assert all(f.get("default", "absent") is None for f in avro["fields"] if f["name"] != "id")

    fastavro.parse_schema(avro)  # a valid Avro schema, names included
    # The reader's Avro -> Arrow mapping gives back exactly the types the writer stores.
    assert avro_to_arrow_schema(json.dumps(avro)) == avro_compatible_schema(schema)


@pytest.mark.parametrize(("precision", "size"), [(1, 1), (2, 1), (3, 2), (9, 4), (10, 5), (15, 7), (18, 8), (38, 16)])
def test_decimal_fixed_size(precision: int, size: int) -> None:
    assert decimal_fixed_size(precision) == size


@pytest.mark.parametrize("dtype", [pa.timestamp("ns"), pa.uint64(), pa.map_(pa.int32(), pa.int32()), pa.null()])
def test_unsupported_types_are_rejected(dtype: pa.DataType) -> None:
    with pytest.raises(TypeError):
        arrow_to_avro_schema(pa.schema([pa.field("c", dtype)]), "t")


# -- validation and instant times --------------------------------------------------------------


def test_instant_times() -> None:
    moment = dt.datetime(2024, 2, 29, 23, 59, 59, 999_000, tzinfo=dt.timezone.utc)
    assert format_instant_time(moment) == "20240229235959999"
    assert parse_instant_time("20240229235959999") == moment
    assert next_instant_time("20240229235959999", moment) == "20240301000000000"
    assert next_instant_time(None, moment) == "20240229235959999"
    assert len(next_instant_time(None)) == 17
    with pytest.raises(ValueError):
        parse_instant_time("2024")


def test_commit_times_strictly_increase(tmp_path: Path) -> None:
    path = tmp_path / "times"
    spec = CowTableSpec("times", "id", "region", table_version=8)
    writer = CowTableWriter.create(path, spec, SCHEMA, rows_per_file=4)
    results: list[CommitResult] = [writer.upsert(sample(range(i, i + 3))) for i in range(5)]
    times = [t for r in results for t in (r.instant_time, r.completion_time)]
    assert times == sorted(times) and len(set(times)) == len(times)
    with pytest.raises(ValueError, match="after"):
        writer.upsert(sample([1]), commit_time=results[-1].instant_time)
    # A reopened writer continues the timeline.
    again = CowTableWriter.open(path).upsert(sample([99]))
    assert again.instant_time > str(results[-1].completion_time)
    assert read_ours(path).num_rows == 8  # ids 0..6 and 99


def test_invalid_writes_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad"
    write_cow_table(path, sample(range(3)), table_name="bad", record_key="id", partition_field="region")
    with pytest.raises(FileExistsError):
        write_cow_table(path, sample(range(3)), table_name="bad", record_key="id", partition_field="region")
    with pytest.raises(ValueError, match="schema"):
        upsert_cow_table(path, sample([1]).cast(SCHEMA.set(2, pa.field("price", pa.string()))))
    with pytest.raises(ValueError, match="differ"):
        upsert_cow_table(path, sample([1]).drop_columns(["price"]))
    nullable_key = pa.table({"k": pa.array(["a", None]), "v": [1, 2]})
    with pytest.raises(ValueError, match="null"):
        write_cow_table(tmp_path / "nk", nullable_key, table_name="nk", record_key="k", partition_field=None)
    with pytest.raises(ValueError, match="not in the table schema"):
        write_cow_table(tmp_path / "nf", nullable_key, table_name="nf", record_key="missing", partition_field=None)
    assert read_ours(path).num_rows == 3  # rejected upserts left the table as it was


# -- property test ---------------------------------------------------------------------------------

PROP_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("label", pa.string()),
        pa.field("value", pa.float64()),
        pa.field("count", pa.int32()),
        pa.field("flag", pa.bool_()),
        pa.field("price", pa.decimal128(9, 2)),
        pa.field("bucket", pa.string()),
    ]
)


@st.composite
def batches(draw: st.DrawFn, max_rows: int = 25) -> pa.Table:
    ids = draw(st.lists(st.integers(0, 40), max_size=max_rows))
    rows = [
        {
            "id": i,
            "label": draw(st.none() | st.text(max_size=6)),
            "value": draw(st.none() | st.floats(allow_nan=False, allow_infinity=False, width=64)),
            "count": draw(st.none() | st.integers(-(2**31), 2**31 - 1)),
            "flag": draw(st.none() | st.booleans()),
            "price": draw(st.none() | st.decimals(-(10**6), 10**6, places=2, allow_nan=False, allow_infinity=False)),
            "bucket": f"b{i % 4}",
        }
        for i in ids
    ]
    return pa.Table.from_pylist(rows, schema=PROP_SCHEMA)


@settings(
    max_examples=12,
    deadline=None,
    database=None,  # no .hypothesis/ example store in the repository
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    commits=st.lists(batches(), min_size=1, max_size=3),
    version=st.sampled_from([6, 8, 9]),
    partitioned=st.booleans(),
    rows_per_file=st.integers(1, 10),
)
def test_random_tables_read_back_equal(
    tmp_path: Path, commits: list[pa.Table], version: int, partitioned: bool, rows_per_file: int
) -> None:
    path = tmp_path / uuid.uuid4().hex
    spec = CowTableSpec("prop", "id", "bucket" if partitioned else None, table_version=version)
    writer = CowTableWriter.create(path, spec, PROP_SCHEMA, rows_per_file=rows_per_file)
    for batch in commits:
        writer.upsert(batch)
    expected = merged(*commits)
    if expected.num_rows == 0:
        assert read_ours(path).num_rows == 0
        assert to_table(hudi.HudiTableBuilder.from_base_uri(str(path)).build().read()).num_rows == 0
        return
    assert_readers_agree(path, expected)
