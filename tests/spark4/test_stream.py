"""spark.readStream.format("hudi_ray"): micro-batches of a table's commits.

Commits land between runs of a query (Trigger.AvailableNow, one instant per
micro-batch) that restarts from its checkpoint each time; every micro-batch
equals the core's incremental query over its offsets, the micro-batches
together read each commit once and their latest state per key is the final
snapshot; a commit in flight is read once it completes; real tables streamed
from ``earliest`` give per batch the incremental query of that instant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_ray.core.table import HudiTableBuilder
from hudi_ray.core.timeline.timestamps import START_OF_TIME
from hudi_testkit.archive import delete_archive
from hudi_testkit.history import archive_oldest, complete_held, hold_in_flight
from tests.commits import CommitLog, incremental, keyed, latest_per_key, snapshot
from tests.spark4.support import arrow_rows
from tests.support import all_table_names

FALLBACK = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"


class Stream:
    """Runs of one streaming query (one checkpoint) over a table."""

    def __init__(self, spark: Any, table: Path, checkpoint: Path, **options: str) -> None:
        self.spark = spark
        self.table = table
        self.checkpoint = checkpoint
        self.options = {"maxInstantsPerTrigger": "1", **options}
        self.batches: list[tuple[str, str, Any]] = []  # (start, end, DataFrame rows as Arrow)

    def run(self) -> list[tuple[str, str, Any]]:
        """Run until the commits ready now are read; the batches of this run."""
        got: dict[int, pa.Table] = {}

        def sink(df: Any, batch_id: int) -> None:
            got[batch_id] = df.toArrow()

        reader = self.spark.readStream.format("hudi_ray")
        for k, v in self.options.items():
            reader = reader.option(k, v)
        query = (
            reader.load(str(self.table))
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(self.checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        offsets = {}
        for progress in query.recentProgress:
            source = progress["sources"][0]
            start = json.loads(source["startOffset"]) if source["startOffset"] else None
            offsets[progress["batchId"]] = (start, json.loads(source["endOffset"]))
        new = []
        for batch_id in sorted(got):
            start, end = offsets[batch_id]
            lo = start["completion_time"] if start else START_OF_TIME
            new.append((lo, end["completion_time"], got[batch_id]))
        self.batches.extend(new)
        return new


def _check_batches(log: CommitLog, batches: list[tuple[str, str, Any]]) -> pa.Table:
    """Every batch equals the incremental query over its offsets; returns their union."""
    table = log.table()
    parts = []
    for start, end, rows in batches:
        assert start < end
        expected = incremental(table, start, end)
        assert keyed(rows) == keyed(expected), f"micro-batch ({start}, {end}]"
        parts.append(rows.select(["_hoodie_commit_time", "id", "value"]))
    return pa.concat_tables(parts)


@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "nonpartitioned"])
@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_commits_between_triggers(spark, tmp_path: Path, kind: str, partitioned: bool) -> None:
    log = CommitLog(tmp_path / "t", kind, partitioned, version=8)
    stream = Stream(spark, log.path, tmp_path / "checkpoint")
    log.commit(range(50))
    log.commit(range(25, 70))
    first = stream.run()
    assert len(first) == 2, "one instant per trigger"
    log.commit(range(0, 10))
    log.commit(range(60, 90))
    log.commit(range(100, 105))
    second = stream.run()  # restarted from the checkpoint
    assert len(second) == 3
    assert first[-1][1] == second[0][0], "the restarted query continues where the last batch ended"
    assert stream.run() == [], "nothing new: no batch"
    union = _check_batches(log, stream.batches)
    # No gap and no duplicate: each commit's rows come exactly once.
    commits = union.column("_hoodie_commit_time").to_pylist()
    assert sorted(set(commits)) == sorted(log.commits)
    assert len(commits) == 50 + 45 + 10 + 30 + 5
    assert latest_per_key(union) == sorted(keyed(snapshot(log.table()), ("id", "value")))


@pytest.mark.parametrize("version", [6, 8])
def test_commit_in_flight_is_read_only_once_complete(spark, tmp_path: Path, version: int) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=True, version=version)
    stream = Stream(spark, log.path, tmp_path / "checkpoint", maxInstantsPerTrigger="10")
    a = log.commit(range(20))
    b = log.commit(range(10, 30))
    c = log.commit(range(30, 40))
    hold_in_flight(log.path, b)
    read = stream.run()
    assert {r for *_, rows in read for r in rows.column("_hoodie_commit_time").to_pylist()} == {a}
    complete_held(log.path, b)
    later = stream.run()
    commits = [r for *_, rows in later for r in rows.column("_hoodie_commit_time").to_pylist()]
    assert sorted(set(commits)) == sorted([b, c]) and len(commits) == 30
    _check_batches(log, stream.batches)


def test_starting_offsets_latest_and_an_instant(spark, tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False, version=8)
    a = log.commit(range(10))
    latest = Stream(spark, log.path, tmp_path / "c1", startingOffsets="latest")
    after_a = Stream(spark, log.path, tmp_path / "c2", startingOffsets=a)
    # A new query runs a first batch even when it has nothing to read.
    assert all(rows.num_rows == 0 for *_, rows in latest.run())
    b = log.commit(range(10, 20))
    for stream in (latest, after_a):
        (batch,) = stream.run()
        assert set(batch[2].column("_hoodie_commit_time").to_pylist()) == {b}


@pytest.mark.parametrize("version", [6, 8])
def test_archived_commits_are_streamed(spark, tmp_path: Path, version: int) -> None:
    """A stream from the beginning reads the archived commits from the archive, one a trigger."""
    log = CommitLog(tmp_path / "t", "cow", partitioned=True, version=version)
    for start in range(0, 40, 10):
        log.commit(range(start, start + 15))
    archive_oldest(log.path, 2)
    stream = Stream(spark, log.path, tmp_path / "c")
    batches = stream.run()
    assert len(batches) == 4, "one instant per trigger, the archived ones included"
    union = _check_batches(log, batches)
    assert sorted(set(union.column("_hoodie_commit_time").to_pylist())) == sorted(log.commits)
    assert latest_per_key(union) == sorted(keyed(snapshot(log.table()), ("id", "value")))


def test_history_gone_fails_or_reads_the_latest_snapshot(spark, tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=True, version=6)
    for start in range(0, 40, 10):
        log.commit(range(start, start + 15))
    archive_oldest(log.path, 2)
    delete_archive(log.path)  # the archived history lost
    with pytest.raises(Exception, match="archived") as err:
        Stream(spark, log.path, tmp_path / "c1").run()
    assert FALLBACK in str(err.value)
    stream = Stream(spark, log.path, tmp_path / "c2", **{FALLBACK: "true"})
    (batch,) = stream.run()
    assert keyed(batch[2]) == keyed(snapshot(log.table())), "one batch: the latest state"
    log.commit(range(100, 103))
    (batch,) = stream.run()
    assert sorted(batch[2].column("id").to_pylist()) == [100, 101, 102]


def test_pinning_options_are_refused(spark, tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False)
    log.commit(range(3))
    with pytest.raises(Exception, match="startingOffsets"):
        Stream(spark, log.path, tmp_path / "c", as_of_timestamp=log.commits[0]).run()


# Lance base files need pylance, which the Spark 4 environment does not install;
# a table without completed commits streams nothing.
REAL = [
    "sample_table/cow/v6_nonpartitioned",
    "sample_table/cow/v8_complexkeygen_hivestyle",
    "sample_table/cow/v9_txns_simple_meta",
    "sample_table/mor/avro/v9_txns_simple_nometa",
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle",
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
]


@pytest.mark.parametrize("name", REAL)
def test_real_tables_from_earliest_one_instant_per_trigger(spark, table_path, tmp_path: Path, name: str) -> None:
    assert name in all_table_names()
    path = table_path(name)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    stream = Stream(spark, path, tmp_path / "checkpoint")
    batches = stream.run()
    # One batch per completed data instant that wrote rows (instants writing none give empty batches too).
    instants = table.get_timeline().data_instants
    assert [end for _, end, _ in batches] == sorted({i.completed_at.ljust(17, "0") for i in instants})
    for start, end, rows in batches:
        expected = incremental(table, start, end)
        assert sorted(map(repr, arrow_rows(rows))) == sorted(map(repr, arrow_rows(expected))), f"({start}, {end}]"
