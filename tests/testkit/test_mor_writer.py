"""The MERGE_ON_READ writer: tables it writes read back identically through hudi-ray, hudi-rs and a plain model.

The model below is Hudi's merge semantics for the physical layout this writer
produces (every key's first row is in a base file, later writes of the key are
log records of the same file group), following Java's
``BufferedRecordMergerFactory``:

* EVENT_TIME_ORDERING, log records oldest first: a record replaces the kept
  one when its ordering value is >= (or the kept one is a commit-time delete);
  a delete with an ordering value replaces it unless the kept record's value is
  greater, or the kept one is a commit-time delete (which stays); a commit-time
  delete replaces anything. Then base vs the log's survivor: the survivor wins
  when it is a commit-time delete or its ordering value is >= the base's.
  This is not a replay of the operations in order: after a commit-time delete,
  a re-inserted key with a lower ordering value than its base row brings the
  base row back, in Hudi as here.
* COMMIT_TIME_ORDERING: the latest log record (or delete) wins; the base row
  only when the log has nothing for the key.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hudi_ray
from hudi_ray.core.config import parse_properties
from hudi_ray.core.log_file import BlockType, HeaderKey, read_log_blocks
from hudi_ray.core.log_file.content import DELETE_RECORD_LIST_SCHEMA, decode_avro_block
from hudi_ray.core.merge import MergeMode, resolve_merge_config
from hudi_ray.core.schema import META_FIELDS
from hudi_testkit import (
    COMMIT_TIME_ORDERING,
    EVENT_TIME_ORDERING,
    AvroRecordEncoder,
    CommitResult,
    MorTableWriter,
    arrow_to_avro_schema,
    avro_compatible_schema,
    write_mor_table,
)
from hudi_testkit.log_writer import delete_block_content
from tests.support import row_set, snapshot_opts, to_table

REGIONS = ["us", "eu", "apac"]
EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
RO = {"hoodie.read.use.read_optimized.mode": "true"}
# Writer-internal meta fields: compared between the readers, not against the model.
UNMODELED = ["_hoodie_commit_seqno", "_hoodie_file_name"]
LOG_V6 = re.compile(r"^\.(?P<fid>[0-9a-f-]{36}-0)_(?P<instant>\d{17})\.log\.(?P<version>\d+)_\d+-\d+-\d+$")

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("price", pa.float64()),
        pa.field("qty", pa.int32()),
        pa.field("active", pa.bool_()),
        pa.field("event_time", pa.timestamp("us", tz="UTC")),
        pa.field("day", pa.date32()),
        pa.field("amount", pa.decimal128(12, 2)),
        pa.field("ts", pa.int64()),
        pa.field("region", pa.string()),
    ]
)


def sample(ids: Sequence[int], tag: str, ts: int | Sequence[int]) -> pa.Table:
    """Rows for ``ids``; ``tag`` changes every non-key value; ``ts`` is the ordering field."""
    bump = sum(map(ord, tag))
    orders = [ts] * len(ids) if isinstance(ts, int) else list(ts)
    rows = [
        {
            "id": i,
            "name": None if (i + bump) % 7 == 3 else f"{tag}-{i}",
            "price": i * 1.25 + bump,
            "qty": (i * 3 + bump) % 1000,
            "active": (i + bump) % 2 == 0,
            "event_time": EPOCH + dt.timedelta(seconds=i * 61 + bump),
            "day": (EPOCH + dt.timedelta(days=(i + bump) % 40)).date(),
            "amount": Decimal(i * 101 + bump) / 100,
            "ts": o,
            "region": REGIONS[i % len(REGIONS)],  # a function of the key: updates stay in their partition
        }
        for i, o in zip(ids, orders)
    ]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def key_table(ids: Sequence[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "region": [REGIONS[i % len(REGIONS)] for i in ids]})


# -- the model -------------------------------------------------------------------------------------


@dataclass
class _Entry:
    kind: str  # "rec" or "del"
    order: int | None  # None: a commit-time delete
    row: dict[str, Any] | None = None

    @property
    def commit_time_delete(self) -> bool:
        return self.kind == "del" and self.order is None


@dataclass
class Model:
    """A plain-Python Hudi table of this writer's layout: a base row per key, then the key's log entries."""

    mode: str
    partitioned: bool
    base: dict[int, _Entry] = field(default_factory=dict)
    logs: dict[int, list[_Entry]] = field(default_factory=dict)

    def _meta(self, row: dict[str, Any], instant: str) -> dict[str, Any]:
        partition = f"region={row['region']}" if self.partitioned else ""
        meta = {
            "_hoodie_commit_time": instant,
            "_hoodie_record_key": str(row["id"]),
            "_hoodie_partition_path": partition,
        }
        return {**meta, **row}

    def upsert(self, batch: pa.Table, instant: str) -> None:
        latest: dict[int, dict[str, Any]] = {}
        for row in batch.to_pylist():  # within a batch: the greatest ordering value, the last on ties
            kept = latest.get(row["id"])
            if kept is None or row["ts"] >= kept["ts"]:
                latest[row["id"]] = row
        for key, row in latest.items():
            entry = _Entry("rec", row["ts"], self._meta(row, instant))
            if key in self.base:
                self.logs.setdefault(key, []).append(entry)
            else:
                self.base[key] = entry

    def delete(self, ids: Sequence[int], ordering: Sequence[int] | None) -> None:
        for i, key in enumerate(ids):
            if key in self.base:  # deletes of keys the table never held are dropped
                self.logs.setdefault(key, []).append(_Entry("del", None if ordering is None else ordering[i]))

    def _survivor(self, entries: list[_Entry]) -> _Entry | None:
        kept: _Entry | None = None
        for new in entries:
            if kept is None or self.mode == COMMIT_TIME_ORDERING:
                kept = new
            elif new.kind == "rec":
                if kept.commit_time_delete or new.order >= kept.order:  # type: ignore[operator]
                    kept = new
            elif kept.commit_time_delete:
                pass  # a commit-time delete stays
            elif new.commit_time_delete or not kept.order > new.order:  # type: ignore[operator]
                kept = new
        return kept

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for key, base in self.base.items():
            log = self._survivor(self.logs.get(key, []))
            final = base
            newer = log is not None and (
                self.mode == COMMIT_TIME_ORDERING or log.commit_time_delete or log.order >= base.order  # type: ignore[operator]
            )
            if newer:
                final = log  # type: ignore[assignment]
            if final.kind == "rec":
                out.append(final.row)
        return out  # type: ignore[return-value]

    def base_rows(self) -> list[dict[str, Any]]:
        return [e.row for e in self.base.values()]  # type: ignore[misc]


# -- reading ---------------------------------------------------------------------------------------


def read(module: Any, path: Path, **opts: str) -> pa.Table:
    table = module.HudiTableBuilder.from_base_uri(str(path)).build()
    options = module.HudiReadOptions(hudi_options=dict(opts))
    return to_table(table.read(options), table.get_schema())


def modeled(table: pa.Table) -> list[str]:
    return row_set(table.drop_columns([c for c in UNMODELED if c in table.column_names]))


def expected_rows(rows: list[dict[str, Any]], like: pa.Table) -> list[str]:
    schema = pa.schema([f for f in like.schema if f.name not in UNMODELED])
    return row_set(pa.Table.from_pylist(rows, schema=schema))


def assert_reads(path: Path, expected: list[dict[str, Any]], **opts: str) -> pa.Table:
    """hudi-ray returns ``expected`` (plus writer-internal meta fields), and hudi-rs the same rows.

    hudi-rs agrees with the model everywhere these tests look, table version 6
    included (it reads the payload class as Hudi does: OverwriteWithLatestAvroPayload
    is commit time ordering, DefaultHoodieRecordPayload event time ordering).
    """
    ours = read(hudi_ray, path, **opts)
    assert modeled(ours) == expected_rows(expected, ours)
    theirs = read(hudi, path, **opts)
    assert row_set(theirs) == row_set(ours)
    return ours


# -- round trips of fixed scenarios ------------------------------------------------------------------


def run_scenario(
    path: Path, version: int, partitioned: bool, block_format: str, mode: str | None = None, **options: Any
) -> tuple[MorTableWriter, Model, list[tuple[CommitResult, list[dict[str, Any]]]]]:
    """Create, update (higher and lower ordering values), delete (both kinds), upsert; model each step."""
    first = sample(range(30), "a", 10)
    writer = MorTableWriter.create(
        path,
        first,
        table_name="trips",
        record_key="id",
        partition_field="region" if partitioned else None,
        precombine_field="ts",
        table_version=version,
        merge_mode=mode,
        rows_per_file=6,
        block_format=block_format,
        **options,
    )
    model = Model(writer.spec.resolved_merge_mode, partitioned)
    model.upsert(first, writer.commits[0].instant_time)
    history = [(writer.commits[0], model.rows())]

    def step(result: CommitResult) -> None:
        history.append((result, model.rows()))

    batch = pa.concat_tables([sample(range(0, 30, 3), "b", 20), sample([1, 2], "b", 5)])  # 1 and 2: older values
    model.upsert(batch, (r := writer.update(batch)).instant_time)
    step(r)
    model.delete([4, 5, 6, 99], None)
    step(writer.delete(key_table([4, 5, 6, 99])))
    # Ordering deletes: 7 and 8 win (>= 10), 9 and 12 lose (12 was updated to 20).
    model.delete([7, 8, 9, 12], [10, 11, 3, 15])
    step(writer.delete(key_table([7, 8, 9, 12]), ordering=[10, 11, 3, 15]))
    batch = pa.concat_tables([sample([0, 4, 13], "c", 30), sample(range(100, 108), "c", 1)])
    model.upsert(batch, (r := writer.upsert(batch)).instant_time)  # 4 comes back after its delete
    step(r)
    return writer, model, history


@pytest.mark.parametrize("block_format", ["avro", "parquet"])
@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "nonpartitioned"])
@pytest.mark.parametrize("version", [6, 8, 9])
def test_scenario_reads_identically(tmp_path: Path, version: int, partitioned: bool, block_format: str) -> None:
    path = tmp_path / "t"
    writer, model, history = run_scenario(path, version, partitioned, block_format)
    mode = EVENT_TIME_ORDERING if version >= 8 else COMMIT_TIME_ORDERING  # the writer's defaults
    assert writer.spec.resolved_merge_mode == mode
    instants = [r.instant_time for r, _ in history]
    assert instants == sorted(set(instants))

    ours = assert_reads(path, model.rows())
    assert 0 < ours.num_rows < 38
    for result, rows in history:  # time travel to every commit
        assert_reads(path, rows, **snapshot_opts(as_of=result.instant_time)["hudi_options"])
    assert_reads(path, model.base_rows(), **RO)


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("mode", [EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING])
def test_explicit_merge_modes(tmp_path: Path, version: int, mode: str) -> None:
    path = tmp_path / "t"
    _, model, history = run_scenario(path, version, True, "avro", mode)
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_text())
    config = resolve_merge_config(hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()._context.config)
    assert config.mode is MergeMode(mode)
    if version < 8:
        payload = "DefaultHoodieRecordPayload" if mode == EVENT_TIME_ORDERING else "OverwriteWithLatestAvroPayload"
        assert props["hoodie.compaction.payload.class"] == f"org.apache.hudi.common.model.{payload}"
        assert "hoodie.record.merge.mode" not in props
    else:
        assert props["hoodie.record.merge.mode"] == mode
    assert_reads(path, model.rows())
    for result, rows in history:
        assert_reads(path, rows, **snapshot_opts(as_of=result.instant_time)["hudi_options"])


def test_v6_appended_log_files(tmp_path: Path) -> None:
    """With appends, a slice has one log file that every delta commit adds blocks to."""
    path = tmp_path / "t"
    _, model, history = run_scenario(path, 6, True, "avro", EVENT_TIME_ORDERING, append_log_files=True)
    logs = sorted(p for p in path.rglob(".*.log.*"))
    assert logs and all(LOG_V6.match(p.name)["version"] == "1" for p in logs)  # type: ignore[index]
    blocks = {p.name: read_log_blocks(p.read_bytes(), str(p)) for p in logs}
    assert max(len(b) for b in blocks.values()) >= 3  # update, delete, delete, upsert share files
    stats = [s for r, _ in history[1:] for s in r.write_stats if s.path and ".log." in s.path]
    for s in stats:  # logOffset: where this commit's blocks start
        assert (s.log_offset == 0) == (s.total_write_bytes == s.file_size)
    assert_reads(path, model.rows())
    for result, rows in history:
        assert_reads(path, rows, **snapshot_opts(as_of=result.instant_time)["hudi_options"])


def test_ordering_delete_after_commit_time_delete(tmp_path: Path) -> None:
    """A commit-time delete followed by a losing ordering delete: Hudi keeps the commit-time delete
    (BufferedRecordMergerFactory.deltaMergeDeleteRecord returns empty when the existing record is a
    commit-time delete), so the key stays deleted; hudi-rs agrees."""
    path = tmp_path / "t"
    writer = MorTableWriter.create(
        path, sample([1, 2], "a", 10), table_name="t", record_key="id", precombine_field="ts", table_version=9
    )
    writer.delete([1])
    writer.delete([1], ordering=[3])
    assert sorted(read(hudi, path).column("id").to_pylist()) == [2]
    assert sorted(read(hudi_ray, path).column("id").to_pylist()) == [2]


# -- file layout and metadata ------------------------------------------------------------------------


def test_v9_layout_timeline_and_blocks(tmp_path: Path) -> None:
    path = tmp_path / "t"
    writer = MorTableWriter.create(
        path,
        sample(range(20), "a", 10),
        table_name="trips",
        record_key="id",
        partition_field="region",
        precombine_field="ts",
        table_version=9,
        records_per_block=2,
    )
    update = writer.update(sample([0, 3, 6, 9, 12], "b", 11))  # all in region=us: one file group
    delete = writer.delete(key_table([15, 18]), ordering=[12, 13])
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_text())
    assert props["hoodie.table.type"] == "MERGE_ON_READ"
    assert props["hoodie.record.merge.mode"] == EVENT_TIME_ORDERING
    assert props["hoodie.table.ordering.fields"] == "ts"
    timeline = sorted(p.name for p in (path / ".hoodie" / "timeline").iterdir() if p.is_file())
    for r in writer.commits:
        assert f"{r.instant_time}.deltacommit.requested" in timeline
        assert f"{r.instant_time}.deltacommit.inflight" in timeline
        assert f"{r.instant_time}_{r.completion_time}.deltacommit" in timeline
    first_stats = writer.commits[0].write_stats
    assert all(s.path and s.path.endswith(".parquet") and s.num_inserts for s in first_stats)

    (stat,) = update.write_stats
    assert stat.path == f"region=us/.{stat.file_id}_{update.instant_time}.log.1_0-1-0"
    log = path / stat.path
    assert stat.file_size == log.stat().st_size and stat.num_update_writes == 5
    blocks = read_log_blocks(log.read_bytes(), str(log))
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA] * 3  # 5 records, 2 per block
    schema = json.loads(blocks[0].header[HeaderKey.SCHEMA])
    assert [f["name"] for f in schema["fields"]][:5] == list(META_FIELDS)
    rows = pa.concat_tables([decode_avro_block(b) for b in blocks]).to_pylist()
    assert all(b.instant_time == update.instant_time for b in blocks)
    assert [r["_hoodie_record_key"] for r in rows] == ["0", "3", "6", "9", "12"]
    assert {r["_hoodie_file_name"] for r in rows} == {stat.file_id}
    assert {r["_hoodie_commit_time"] for r in rows} == {update.instant_time}
    assert all(struct.unpack(">i", bytes(b.content[:4]))[0] == 3 for b in blocks)

    (stat,) = delete.write_stats
    blocks = read_log_blocks((path / stat.path).read_bytes(), stat.path)
    assert [b.block_type for b in blocks] == [BlockType.DELETE]
    assert set(blocks[0].header) == {HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA}
    version, length = struct.unpack(">ii", bytes(blocks[0].content[:8]))
    datum = fastavro.schemaless_reader(
        io.BytesIO(bytes(blocks[0].content[8 : 8 + length])), DELETE_RECORD_LIST_SCHEMA, None, return_record_name=True
    )
    assert version == 3
    assert [(r["recordKey"], r["partitionPath"], r["orderingVal"]) for r in datum["deleteRecordList"]] == [
        ("15", "region=us", ("org.apache.hudi.avro.model.LongWrapper", {"value": 12})),
        ("18", "region=us", ("org.apache.hudi.avro.model.LongWrapper", {"value": 13})),
    ]
    meta = decode_commit(path / ".hoodie" / "timeline" / f"{delete.instant_time}_{delete.completion_time}.deltacommit")
    (raw,) = meta["partitionToWriteStats"]["region=us"]
    assert raw["numDeletes"] == 2 and raw["fileSizeInBytes"] == (path / stat.path).stat().st_size
    assert raw["logFiles"] == [stat.path.split("/")[-1]] and raw["prevCommit"] == delete.instant_time
    assert meta["operationType"] == "DELETE"


def decode_commit(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if raw.startswith(b"Obj\x01"):
        return next(iter(fastavro.reader(io.BytesIO(raw))))
    return json.loads(raw)


def test_v6_layout_and_commit_time_deletes(tmp_path: Path) -> None:
    path = tmp_path / "t"
    writer = MorTableWriter.create(
        path,
        sample(range(12), "a", 10),
        table_name="trips",
        record_key="id",
        partition_field=None,
        precombine_field="ts",
        table_version=6,
    )
    base = writer.commits[0]
    (base_stat,) = base.write_stats
    writer.update(sample([1, 2], "b", 1), block_format="parquet")
    deleted = writer.delete(pa.array([3, 4], pa.int64()))
    timeline = sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file() and p.name[0].isdigit())
    assert timeline == sorted(
        f"{r.instant_time}.deltacommit{s}" for r in writer.commits for s in ("", ".inflight", ".requested")
    )
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_text())
    assert props["hoodie.compaction.payload.class"].endswith("OverwriteWithLatestAvroPayload")
    assert props["hoodie.compaction.record.merger.strategy"] == "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
    assert props["hoodie.table.precombine.field"] == "ts"

    logs = sorted(p.name for p in path.glob(".*.log.*"))
    assert [LOG_V6.match(n)["version"] for n in logs] == ["1", "2"]  # type: ignore[index]
    assert all(LOG_V6.match(n)["instant"] == base.instant_time for n in logs)  # type: ignore[index]
    first, second = (read_log_blocks((path / n).read_bytes(), n) for n in logs)
    assert [b.block_type for b in first] == [BlockType.PARQUET_DATA]
    content = bytes(first[0].content)
    assert content[:4] == content[-4:] == b"PAR1"
    assert pq.read_table(pa.BufferReader(content)).column_names == [*META_FIELDS, *SCHEMA.names]
    assert [b.block_type for b in second] == [BlockType.DELETE]
    payload = bytes(second[0].content)
    assert payload[8:] == b"\x04\x02\x023\x02\x00\x04\x00\x02\x024\x02\x00\x04\x00\x00"  # IntWrapper(0) orderings

    meta = decode_commit(path / ".hoodie" / f"{deleted.instant_time}.deltacommit")
    (raw,) = meta["partitionToWriteStats"][""]
    assert raw["prevCommit"] == base.instant_time and raw["baseFile"] == base_stat.path
    assert raw["logVersion"] == 2 and raw["numDeletes"] == 2 and raw["path"] == logs[1]
    # COMMIT_TIME_ORDERING: the older ordering values of 1 and 2 still win.
    rows = read(hudi_ray, path).to_pylist()
    assert sorted(r["id"] for r in rows) == [0, 1, 2, *range(5, 12)]
    assert {r["id"]: r["ts"] for r in rows}[1] == 1
    assert row_set(read(hudi, path)) == row_set(read(hudi_ray, path))


def test_reopen_and_routing_rules(tmp_path: Path) -> None:
    path = tmp_path / "t"
    result = write_mor_table(
        path,
        sample(range(10), "a", 1),
        table_name="t",
        record_key="id",
        partition_field="region",
        precombine_field="ts",
        table_version=9,
    )
    writer = MorTableWriter.open(path)
    assert writer.spec.resolved_merge_mode == EVENT_TIME_ORDERING and writer.spec.table_version == 9
    with pytest.raises(ValueError, match="not in the table"):
        writer.update(sample([3, 50], "b", 2))
    with pytest.raises(ValueError, match="already in the table"):
        writer.insert(sample([3, 51], "b", 2))
    inserted = writer.insert(sample([50, 51], "b", 2))
    assert all(s.path.endswith(".parquet") for s in inserted.write_stats)  # type: ignore[union-attr]
    later = MorTableWriter.open(path).update(sample([50], "c", 3))
    assert result.instant_time < inserted.instant_time < later.instant_time
    assert later.write_stats[0].file_id in {s.file_id for s in inserted.write_stats}
    ids = sorted(read(hudi_ray, path).column("id").to_pylist())
    assert ids == [*range(10), 50, 51]
    with pytest.raises(ValueError, match="precombine"):
        MorTableWriter.create(
            tmp_path / "u", sample([1], "a", 1), table_name="t", record_key="id", merge_mode="EVENT_TIME_ORDERING"
        )


def test_encoder_matches_fastavro() -> None:
    """The vectorized encoder writes the bytes fastavro writes, for every type the writer maps."""
    item = pa.struct([pa.field("tag", pa.string()), pa.field("score", pa.float64())])
    schema = pa.schema(
        [
            pa.field("key", pa.int64(), nullable=False),
            pa.field("s", pa.string()),
            pa.field("f32", pa.float32()),
            pa.field("f64", pa.float64()),
            pa.field("i8", pa.int8()),
            pa.field("i32", pa.int32()),
            pa.field("b", pa.bool_()),
            pa.field("blob", pa.binary()),
            pa.field("ts_ms", pa.timestamp("ms")),
            pa.field("ts_us", pa.timestamp("us", tz="UTC")),
            pa.field("day", pa.date32()),
            pa.field("t_us", pa.time64("us")),
            pa.field("t_ms", pa.time32("ms")),
            pa.field("d", pa.decimal128(12, 2)),
            pa.field("d38", pa.decimal128(38, 4)),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("attrs", pa.map_(pa.string(), pa.int32())),
            pa.field("point", pa.struct([pa.field("x", pa.int32()), pa.field("inner", item)])),
        ]
    )
    extremes = [0, 1, -1, 63, -64, 64, 2**31 - 1, -(2**31), 2**62, -(2**63), 2**63 - 1]
    rows = []
    for i, big in enumerate(extremes * 3):
        null = i % 4 == 3
        rows.append(
            {
                "key": big,
                "s": None if null else "ü" * (i * 7),
                "f32": None if null else i / 3,
                "f64": None if null else -i * 1e300,
                "i8": None if null else (-1) ** i * i,
                "i32": None if null else max(-(2**31), min(2**31 - 1, big)),
                "b": None if null else i % 2 == 0,
                "blob": None if null else bytes(range(i * 9 % 256)),
                "ts_ms": None if null else dt.datetime(1900 + i * 7, 1, 1),
                "ts_us": None if null else EPOCH + dt.timedelta(microseconds=big // 10**5),
                "day": None if null else dt.date(1950 + i, 2, 3),
                "t_us": None if null else dt.time(i % 24, 1, 2, i),
                "t_ms": None if null else dt.time(i % 24, 1, 2, i * 1000),
                "d": None if null else Decimal(big % 10**10 - 5 * 10**9) / 100,
                "d38": None if null else Decimal(big) * 10**15 / 10**4,
                "tags": None if null else [f"t{j}" if j % 2 else None for j in range(i % 4)],
                "attrs": None if null else [(f"k{j}", j) for j in range(i % 3)],
                "point": None if null else {"x": i, "inner": None if i % 5 == 0 else {"tag": "p", "score": 0.5}},
            }
        )
    table = pa.Table.from_pylist(rows, schema=schema).cast(avro_compatible_schema(schema))
    avro = arrow_to_avro_schema(schema, "enc")
    encoded = AvroRecordEncoder(avro).encode(table).to_pylist()
    parsed = fastavro.parse_schema(avro)
    for row, ours in zip(table.to_pylist(), encoded):
        row["attrs"] = None if row["attrs"] is None else dict(row["attrs"])
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        assert ours == buf.getvalue(), row


@pytest.mark.parametrize(
    ("values", "wrapper", "decoded"),
    [
        (pa.array([7, None], pa.int32()), "IntWrapper", [7, 0]),
        (pa.array([7, None], pa.int64()), "LongWrapper", [7, 0]),
        (pa.array([1.5, None], pa.float32()), "FloatWrapper", [1.5, 0]),
        (pa.array([1.5, None], pa.float64()), "DoubleWrapper", [1.5, 0]),
        (pa.array(["x", None]), "StringWrapper", ["x", 0]),
        (pa.array([True, None]), "BooleanWrapper", [True, 0]),
        (pa.array([dt.date(1970, 1, 3), None]), "DateWrapper", [2, 0]),
        (pa.array([Decimal("-1.25"), None], pa.decimal128(5, 2)), "DecimalWrapper", [Decimal("-1.25"), 0]),
        (pa.array([5, None], pa.timestamp("us")), "LongWrapper", [5, 0]),
    ],
)
def test_delete_block_ordering_wrappers(values: pa.Array, wrapper: str, decoded: list[Any]) -> None:
    content = b"".join(bytes(c) for c in delete_block_content(pa.array(["k1", "k2"]), pa.array(["p", "p"]), values))
    version, length = struct.unpack(">ii", content[:8])
    assert version == 3 and length == len(content) - 8
    datum = fastavro.schemaless_reader(
        io.BytesIO(content[8:]), DELETE_RECORD_LIST_SCHEMA, None, return_record_name=True
    )
    names = [r["orderingVal"][0].rsplit(".", 1)[-1] for r in datum["deleteRecordList"]]
    assert names == [wrapper, "IntWrapper"]  # a null ordering value is a commit-time delete: IntWrapper(0)
    assert [r["orderingVal"][1]["value"] for r in datum["deleteRecordList"]] == decoded


# -- property test -----------------------------------------------------------------------------------

KEYS = range(6)  # few keys: the operations keep meeting the same records


@st.composite
def operations(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    order = st.integers(1, 3)  # few values: ties between ordering values are common
    first = draw(st.lists(st.tuples(st.sampled_from(KEYS), order), min_size=1, max_size=10))
    ops: list[tuple[Any, ...]] = [("upsert", first)]
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["upsert", "upsert", "delete", "ordered_delete"]))
        if kind == "upsert":
            ops.append(("upsert", draw(st.lists(st.tuples(st.sampled_from(KEYS), order), min_size=1, max_size=8))))
        else:
            keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=5, unique=True))
            orders = [draw(order) for _ in keys] if kind == "ordered_delete" else None
            ops.append(("delete", keys, orders))
    return ops


def _batch(pairs: list[tuple[int, int]], step: int) -> pa.Table:
    return sample([k for k, _ in pairs], f"s{step}", [o for _, o in pairs])


@settings(max_examples=15, deadline=None)
@given(
    ops=operations(),
    version=st.sampled_from([6, 9]),
    mode=st.sampled_from([EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING]),
    partitioned=st.booleans(),
    block_format=st.sampled_from(["avro", "parquet"]),
)
def test_random_operations_match_model(
    tmp_path_factory: pytest.TempPathFactory,
    ops: list[tuple[Any, ...]],
    version: int,
    mode: str,
    partitioned: bool,
    block_format: str,
) -> None:
    path = tmp_path_factory.mktemp("mor") / "t"
    model = Model(mode, partitioned)
    writer: MorTableWriter | None = None
    for step, op in enumerate(ops):
        if op[0] == "upsert":
            batch = _batch(op[1], step)
            if writer is None:
                writer = MorTableWriter.create(
                    path,
                    batch,
                    table_name="prop",
                    record_key="id",
                    partition_field="region" if partitioned else None,
                    precombine_field="ts",
                    table_version=version,
                    merge_mode=mode,
                    rows_per_file=4,
                    records_per_block=3,
                    block_format=block_format,
                )
                instant = writer.commits[0].instant_time
            else:
                instant = writer.upsert(batch).instant_time
            model.upsert(batch, instant)
        else:
            assert writer is not None
            writer.delete(key_table(op[1]), ordering=op[2])
            model.delete(op[1], op[2])
    assert_reads(path, model.rows())
