"""Incremental reads of each commit against a full snapshot read per commit.

    python benchmarks/incremental.py [--rows 5000000] [--commits 20] [--dir D] [--no-spark]

A copy-on-write table of ``--rows`` rows (files of 100,000 rows) receives
``--commits`` upsert commits of 1% of the rows each (one key range per commit,
so each commit rewrites one file), written once with the test kit under
``benchmarks/.data/incremental`` and reused. Then, per commit, side by side:

* (a) a Spark 4 streaming query, ``spark.readStream.format("hudi_ray")`` with
  one instant per trigger (Trigger.AvailableNow, to Spark's ``noop`` sink):
  rows and time of the micro-batch (Spark's trigger duration: planning and
  reading); run in the Spark 4 environment (``.venv-spark4``) as a child
  process, against (c') ``spark.read.format("hudi_ray")`` of the snapshot as
  of that commit to the same sink; beside it, Spark's phases of a micro-batch
  (``durationMs``) for this stream and for a Python streaming source that
  reads no files (as many rows per batch, made in memory): what Spark itself
  spends on each micro-batch of a Python source;
* (b) the Ray incremental job (``hudi_ray.incremental``, one run per commit:
  start, which reads a range this small at once in a reader task, fetch every
  block, commit the checkpoint), against (c) ``read_hudi`` of the snapshot as
  of that commit, every block read.

Both engines also report whether the read touched only the files the commit
wrote (the incremental plan's files against the commit's write stats).
Not a test: numbers depend on the machine; ratios are measured side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

import hudi_ray
from hudi_ray.core.incremental.ranges import position
from hudi_ray.core.table import HudiReadOptions, HudiTable, HudiTableBuilder
from hudi_ray.core.timeline.timestamps import START_OF_TIME

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "incremental"
ROWS_PER_FILE = 100_000


def generate(ids: pa.Array, version: int) -> pa.Table:
    """Rows for ``ids`` (Arrow kernels only); ``version`` marks the commit that wrote them."""
    mixed = pc.bit_wise_and(pc.multiply(ids, 2_654_435_761), 0x7FFFFFFF)
    return pa.table(
        {
            "id": ids,
            "name": pc.binary_join_element_wise("customer-", pc.cast(pc.divide(mixed, 1_000), pa.string()), ""),
            "price": pc.divide(pc.cast(pc.remainder(mixed, 1_000_000), pa.float64()), 100.0),
            "qty": pc.cast(pc.remainder(mixed, 10_000), pa.int32()),
            "version": pa.repeat(pa.scalar(version, pa.int32()), len(ids)),
        }
    )


def id_range(start: int, count: int) -> pa.Array:
    return pa.array(range(start, start + count), pa.int64())


def prepare(path: Path, rows: int, commits: int) -> list[str]:
    """The table (reused when it has the asked rows and commits); its instants, oldest first."""
    marker = path / "benchmark.json"
    wanted = {"rows": rows, "commits": commits}
    if marker.is_file() and json.loads(marker.read_text()) == wanted:
        print(f"Reusing the table at {path}")
        return [i.timestamp for i in HudiTableBuilder.from_base_uri(str(path)).build().get_timeline().data_instants]
    from hudi_testkit import CowTableWriter, write_cow_table

    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    write_cow_table(
        path,
        generate(id_range(0, rows), 0),
        table_name="incremental",
        record_key="id",
        partition_field=None,
        table_version=8,
        rows_per_file=ROWS_PER_FILE,
    )
    print(f"Wrote {rows:,} rows in {time.perf_counter() - started:.1f}s")
    step = rows // commits
    size = rows // 100
    for k in range(commits):
        began = time.perf_counter()
        # One key range per commit, inside one file: a 1% upsert rewrites one file group.
        start = (k * step) // ROWS_PER_FILE * ROWS_PER_FILE
        CowTableWriter.open(path, rows_per_file=ROWS_PER_FILE).upsert(generate(id_range(start, size), k + 1))
        print(f"  commit {k + 1}/{commits}: {size:,} rows upserted in {time.perf_counter() - began:.1f}s")
    marker.write_text(json.dumps(wanted))
    return [i.timestamp for i in HudiTableBuilder.from_base_uri(str(path)).build().get_timeline().data_instants]


def commit_files(table: HudiTable, instant: str) -> set[str]:
    timeline = table.get_timeline()
    found = timeline.find(instant)
    assert found is not None
    return {s["path"] for s in timeline.write_stats(found)}


def plan_files(table: HudiTable, start: str, end: str) -> set[str]:
    """The files the core plans to read for the incremental range ``(start, end]``."""
    options = HudiReadOptions(
        hudi_options={
            "hoodie.read.query.type": "incremental",
            "hoodie.read.start.timestamp": start,
            "hoodie.read.end.timestamp": end,
        }
    )
    slices = table.plan(options).slices
    return {s.base_file_relative_path() for s in slices if s.base_file_name} | {
        f for s in slices for f in s.log_files_relative_paths()
    }


# -- Ray: (b) the incremental job, (c) a full snapshot read ------------------------------------


def count_blocks(ds: Any) -> int:
    import ray

    return sum(ray.get(ref).num_rows for ref in ds.to_arrow_refs())


def ray_side(path: Path, instants: list[str]) -> list[dict[str, Any]]:
    import ray

    ray.init(include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    # Ray Data logs every execution at INFO on its own logger; the table below is the output.
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    uri = str(path)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = str(Path(tmp) / "job.checkpoint")
        # The job starts after the initial load, as a job set up on an existing table would.
        run = hudi_ray.incremental(uri, checkpoint=checkpoint, max_instants=1)
        assert run.instants == [instants[0]]
        run.commit()
        table = HudiTableBuilder.from_base_uri(uri).build()
        count_blocks(hudi_ray.read_hudi(uri, as_of_timestamp=instants[0]))  # warm up: workers, page cache
        for instant in instants[1:]:
            started = time.perf_counter()
            run = hudi_ray.incremental(uri, checkpoint=checkpoint, max_instants=1)
            rows = count_blocks(run.dataset)
            run.commit()
            job_s = time.perf_counter() - started
            assert run.instants == [instant], (run.instants, instant)
            from hudi_ray.datasource import planned_read

            read = {f.split(uri.rstrip("/") + "/", 1)[-1] for f in planned_read(run.dataset).input_files()}
            started = time.perf_counter()
            full = count_blocks(hudi_ray.read_hudi(uri, as_of_timestamp=instant))
            full_s = time.perf_counter() - started
            wrote = commit_files(table, instant)
            out.append(
                {
                    "instant": instant,
                    "rows": rows,
                    "seconds": job_s,
                    "full_rows": full,
                    "full_seconds": full_s,
                    "files": len(read),
                    "only_its_files": read <= wrote,
                }
            )
    ray.shutdown()
    return out


# -- Spark 4: (a) the stream, (c') a full snapshot read -----------------------------------------

# Spark's phases of a micro-batch (StreamingQueryProgress.durationMs), in the order they run.
PHASES = ("latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets", "triggerExecution")


def _as_read(ids: pa.Array, version: int) -> pa.Table:
    """``generate``'s rows with the five Hudi meta columns in front, as a read returns them."""
    data = generate(ids, version)
    commit = f"2026010100000{version:04d}"
    text = pc.cast(ids, pa.string())
    meta = {
        "_hoodie_commit_time": pa.repeat(pa.scalar(commit), len(ids)),
        "_hoodie_commit_seqno": pc.binary_join_element_wise(f"{commit}_0_", text, ""),
        "_hoodie_record_key": text,
        "_hoodie_partition_path": pa.repeat(pa.scalar(""), len(ids)),
        "_hoodie_file_name": pa.repeat(pa.scalar(f"{'0' * 36}-0_0-1-0_{commit}.parquet"), len(ids)),
    }
    return pa.table({**meta, **{name: data.column(name) for name in data.column_names}})


def _no_io_source(rows: int, batches: int) -> Any:
    """A Python streaming source that reads no files: each of ``batches``
    micro-batches yields ``rows`` rows of the same columns made in memory.
    Its trigger times are what Spark itself spends on such a micro-batch of
    a Python source."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

    class Reader(DataSourceStreamReader, SupportsTriggerAvailableNow):
        def initialOffset(self) -> dict:
            return {"batch": 0}

        def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
            return {"batch": min((start or {"batch": 0})["batch"] + 1, batches)}

        def prepareForTriggerAvailableNow(self) -> None:
            pass

        def partitions(self, start: dict, end: dict) -> list[InputPartition]:
            return [InputPartition(end["batch"])] if end["batch"] > start["batch"] else []

        def read(self, partition: InputPartition) -> Any:
            yield from _as_read(id_range(0, rows), partition.value).to_batches()

    class NoIo(DataSource):
        @classmethod
        def name(cls) -> str:
            return "no_io_stream"

        def schema(self) -> Any:
            return from_arrow_schema(_as_read(id_range(0, 1), 0).schema)

        def streamReader(self, schema: Any) -> Any:
            return Reader()

    return NoIo


def _stream(spark: Any, fmt: str, options: dict[str, str], uri: str | None, checkpoint: Path) -> list[dict]:
    """Run a stream with Trigger.AvailableNow to Spark's noop sink; the progress of its non-empty batches."""
    reader = spark.readStream.format(fmt)
    for k, v in options.items():
        reader = reader.option(k, v)
    frame = reader.load(uri) if uri is not None else reader.load()
    query = (
        frame.writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return [p for p in query.recentProgress if p["sources"][0]["endOffset"]]


def _phases(progress: list[dict]) -> dict[str, float]:
    """Median milliseconds per phase over the batches (the first three left out: workers warming up)."""
    steady = progress[3:] or progress
    return {k: statistics.median(p["durationMs"].get(k, 0) for p in steady) for k in PHASES}


def spark_side(path: Path, instants: list[str]) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    from hudi_ray.spark4 import register

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    uri = str(path)
    table = HudiTableBuilder.from_base_uri(uri).build()
    # Warm up: Python workers, the JVM's code paths, the page cache.
    spark.read.format("hudi_ray").option("as_of_timestamp", instants[0]).load(uri).write.format("noop").mode(
        "overwrite"
    ).save()
    with tempfile.TemporaryDirectory() as tmp:
        options = {"startingOffsets": instants[0], "maxInstantsPerTrigger": "1"}  # after the initial load
        progress = _stream(spark, "hudi_ray", options, uri, Path(tmp) / "checkpoint")
        rows_per_batch = int(statistics.median(p["numInputRows"] for p in progress))
        spark.dataSource.register(_no_io_source(rows_per_batch, len(progress)))
        no_io = _stream(spark, "no_io_stream", {}, None, Path(tmp) / "no_io")
    first = table.get_timeline().find(instants[0])
    assert first is not None
    previous = position(first.completed_at)
    batches = []
    for p in progress:
        source = p["sources"][0]
        given = json.loads(source["startOffset"]) if source["startOffset"] else None
        start = given["completion_time"] if given else previous  # Spark shows no start for a first batch
        end = json.loads(source["endOffset"])["completion_time"]
        previous = end
        if start == end:
            continue
        batches.append((start, end, p["numInputRows"], p["durationMs"]["triggerExecution"] / 1000))
    out = []
    for instant, (start, end, rows, seconds) in zip(instants[1:], batches):
        read = plan_files(table, start, end)
        started = time.perf_counter()
        full = spark.read.format("hudi_ray").option("as_of_timestamp", instant).load(uri)
        full.write.format("noop").mode("overwrite").save()
        full_s = time.perf_counter() - started
        out.append(
            {
                "instant": instant,
                "rows": rows,
                "seconds": seconds,
                "full_seconds": full_s,
                "files": len(read),
                "only_its_files": read <= commit_files(table, instant),
            }
        )
    spark.stop()
    return {"steps": out, "phases": _phases(progress), "no_io_phases": _phases(no_io), "no_io_rows": rows_per_batch}


def run_spark_child(path: Path, instants: list[str]) -> dict[str, Any] | None:
    python = REPO / ".venv-spark4" / "bin" / "python"
    if not python.exists():
        print("No .venv-spark4 (./dev setup-spark4): the streaming side is left out")
        return None
    env = {**os.environ, "PYSPARK_PYTHON": str(python), "PYSPARK_DRIVER_PYTHON": str(python)}
    done = subprocess.run(
        [str(python), __file__, "--spark-child", "--dir", str(path), "--instants", ",".join(instants)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"The Spark side failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(ray_rows: list[dict[str, Any]], spark: dict[str, Any] | None, total: int) -> None:
    spark_rows = spark["steps"] if spark is not None else None
    head = f"{'commit':>6} {'rows':>8} | {'(b) Ray job':>11} {'(c) Ray full':>12} {'b/c':>6} {'files':>5} {'own':>4}"
    if spark_rows is not None:
        head += f" | {'(a) stream':>10} {'(c2) Spark full':>15} {'a/c2':>6} {'files':>5} {'own':>4}"
    print(head)
    for k, r in enumerate(ray_rows):
        line = (
            f"{k + 1:>6} {r['rows']:>8,} | {r['seconds']:>10.2f}s {r['full_seconds']:>11.2f}s "
            f"{r['seconds'] / r['full_seconds']:>6.1%} {r['files']:>5} {'yes' if r['only_its_files'] else 'NO':>4}"
        )
        if spark_rows is not None and k < len(spark_rows):
            s = spark_rows[k]
            line += (
                f" | {s['seconds']:>9.2f}s {s['full_seconds']:>14.2f}s {s['seconds'] / s['full_seconds']:>6.1%} "
                f"{s['files']:>5} {'yes' if s['only_its_files'] else 'NO':>4}"
            )
        print(line)
    ratios = [r["seconds"] / r["full_seconds"] for r in ray_rows]
    print(
        f"Ray: full snapshot {total:,} rows; incremental step / full read: median {statistics.median(ratios):.1%}, "
        f"max {max(ratios):.1%}; every step read only its commit's files: "
        f"{all(r['only_its_files'] for r in ray_rows)}"
    )
    if spark_rows:
        ratios = [s["seconds"] / s["full_seconds"] for s in spark_rows]
        print(
            f"Spark stream: {len(spark_rows)} micro-batches; step / full read: median {statistics.median(ratios):.1%}, "
            f"max {max(ratios):.1%}; every batch read only its commit's files: "
            f"{all(s['only_its_files'] for s in spark_rows)}"
        )
    if spark is not None:
        print(f"Spark's phases of a micro-batch, median ms (durationMs; {' / '.join(PHASES)}):")
        print("  hudi_ray stream:        " + " / ".join(f"{spark['phases'][k]:.0f}" for k in PHASES))
        print(
            "  no-I/O Python source:   "
            + " / ".join(f"{spark['no_io_phases'][k]:.0f}" for k in PHASES)
            + f"  ({spark['no_io_rows']:,} rows of the same columns made in memory per batch: Spark's own cost)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--prepare-only", action="store_true", help="write (or check) the table, then stop")
    parser.add_argument("--spark-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--instants", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spark_child:
        print(json.dumps(spark_side(args.dir, args.instants.split(","))))
        return
    instants = prepare(args.dir, args.rows, args.commits)
    assert len(instants) == args.commits + 1 and instants[0] > START_OF_TIME
    spark = None if args.no_spark else run_spark_child(args.dir, instants)
    ray_rows = ray_side(args.dir, instants)
    report(ray_rows, spark, args.rows)


if __name__ == "__main__":
    main()
