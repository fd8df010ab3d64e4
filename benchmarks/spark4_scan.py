"""spark.read.format("hudi_ray") on PySpark 4 against Spark reading the same Parquet files itself.

    .venv-spark4/bin/python benchmarks/spark4_scan.py [--rows 10000000] [--files F] [--reps R]
                                                      [--cores 1,2] [--only cow|mor] [--dir D]

Runs in the Spark 4 environment (``./dev setup-spark4``). The tables are
``spark_scan``'s (a copy-on-write table partitioned by region, and a
merge-on-read one with 20% of the keys updated and 1% deleted through log
blocks), written once under ``benchmarks/.data/spark_scan`` and reused. For
each number of cores (a local SparkSession, ``local[N]``), interleaved,
``--reps`` times each, best of the runs:

* ``spark.read.format("hudi_ray").load(uri)`` to Spark's ``noop`` sink, against
  ``spark.read.parquet(<the snapshot's base files>)`` to the same sink. On
  merge-on-read, Parquet reads the base files only (stale and deleted rows),
  so it is a floor, not an equal;
* the ceiling of any Python data source: a source that reads nothing and
  yields, for each base file, in-memory slices of one Arrow batch of that
  file (as many rows as the file holds, same schema), to the same sink. What
  it costs is PySpark's own path from a Python source's batches to Spark rows,
  which ``format("hudi_ray")`` cannot go below;
* a filtered count on the copy-on-write table (one region, an id range) with
  Spark's filter pushdown on and off: the file slices read (one partition per
  slice, counted from the scan's partitions) and the time.

Not a test: numbers depend on the machine; ratios are measured side by side in one run.
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import timed
from spark_tables import DEFAULT_DIR, prepare, snapshot_base_files, table_rows

from hudi_ray.spark4 import PUSHDOWN_CONF, register

FILTER = "region = 'eu' AND id < {limit}"
CEILING_FORMAT = "hudi_ray_bench_in_memory"
CEILING_BATCH = 10_000


def ceiling_source(files: list[str], schema: Any) -> type:
    """A Python data source that yields each file's row count in slices of one
    batch already in memory: Spark's side of a Python source, with no reading."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class FilePartition(InputPartition):
        def __init__(self, path: str) -> None:
            self.path = path

    class InMemoryReader(DataSourceReader):
        def partitions(self) -> list[InputPartition]:
            return [FilePartition(f) for f in files]

        def read(self, partition: InputPartition) -> Any:
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(partition.path)  # type: ignore[attr-defined]
            batch = next(pf.iter_batches(CEILING_BATCH))
            left = pf.metadata.num_rows
            while left > 0:
                yield batch.slice(0, min(left, CEILING_BATCH))
                left -= CEILING_BATCH

    class InMemorySource(DataSource):
        @classmethod
        def name(cls) -> str:
            return CEILING_FORMAT

        def schema(self) -> Any:
            return schema

        def reader(self, schema: Any) -> DataSourceReader:
            return InMemoryReader()

    return InMemorySource


def via_ceiling(spark: Any) -> None:
    spark.read.format(CEILING_FORMAT).load().write.format("noop").mode("overwrite").save()


def via_hudi(spark: Any, uri: str, partitions: dict[str, int], kind: str) -> None:
    df = spark.read.format("hudi_ray").load(uri)
    df.write.format("noop").mode("overwrite").save()
    partitions[kind] = df.rdd.getNumPartitions()


def via_parquet(spark: Any, paths: list[str]) -> None:
    spark.read.parquet(*paths).write.format("noop").mode("overwrite").save()


def filtered_count(spark: Any, uri: str, where: str, counts: dict[bool, int], pushdown: bool) -> None:
    counts[pushdown] = spark.read.format("hudi_ray").load(uri).filter(where).count()


def session(cores: int) -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName("spark4-scan")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=24)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cores", default="1,2", help="comma-separated local[N] core counts")
    parser.add_argument("--only", choices=["cow", "mor"], default=None)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args()
    # Spark's Python workers must run this interpreter: it has hudi_ray.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    kinds = [args.only] if args.only else ["cow", "mor"]
    tables = {kind: prepare(kind, args.dir.resolve(), args.rows, args.files) for kind in kinds}
    expected = {kind: table_rows(path) for kind, path in tables.items()}
    files = {kind: snapshot_base_files(path) for kind, path in tables.items()}
    where = FILTER.format(limit=args.rows // 10)

    results: list[tuple[int, str, int, float, float]] = []
    ceilings: list[tuple[int, float, float]] = []
    filtered: list[tuple[int, str, int, int, float]] = []
    version = ""
    for cores in [int(c) for c in args.cores.split(",")]:
        spark = session(cores)
        version = spark.version
        best: dict[str, dict[str, list[float]]] = {k: {"hudi": [], "parquet": []} for k in tables}
        partitions: dict[str, int] = {}
        ceiling: list[float] = []
        if "cow" in tables:
            spark.dataSource.register(ceiling_source(files["cow"], spark.read.parquet(*files["cow"]).schema))
        for _ in range(args.reps):
            for kind, path in tables.items():
                best[kind]["hudi"].append(timed(partial(via_hudi, spark, str(path), partitions, kind)))
                best[kind]["parquet"].append(timed(partial(via_parquet, spark, files[kind])))
            if "cow" in tables:
                ceiling.append(timed(partial(via_ceiling, spark)))
        if ceiling:
            ceilings.append((cores, min(ceiling), min(best["cow"]["parquet"])))
        for kind, path in tables.items():
            got = spark.read.format("hudi_ray").load(str(path)).count()
            if got != expected[kind]:
                sys.exit(f"{kind}: Spark counted {got:,} rows, the table API reads {expected[kind]:,}")
            results.append((cores, kind, partitions[kind], min(best[kind]["hudi"]), min(best[kind]["parquet"])))
        if "cow" in tables:
            uri = str(tables["cow"])
            counts: dict[bool, int] = {}
            for pushdown in (True, False):
                spark.conf.set(PUSHDOWN_CONF, str(pushdown).lower())
                # One partition per file slice: the scan's partitions are the slices read.
                slices = (
                    spark.read.format("hudi_ray").option("partition_bytes", "1").load(uri).filter(where)
                ).rdd.getNumPartitions()
                runs = [timed(partial(filtered_count, spark, uri, where, counts, pushdown)) for _ in range(args.reps)]
                filtered.append((cores, "on" if pushdown else "off", slices, counts[pushdown], min(runs)))
            spark.conf.set(PUSHDOWN_CONF, "true")
            if counts[True] != counts[False]:
                sys.exit(f"filtered counts differ: {counts[True]:,} with pushdown, {counts[False]:,} without")
        spark.stop()

    print(f"\nSpark {version}, local[N], {args.rows:,} rows generated, best of {args.reps}")
    print(f"\n{'table':6} {'cores':>5} {'rows':>11} {'parts':>5} {'hudi_ray s':>10} {'parquet s':>10} {'ratio':>6}")
    for cores, kind, parts, hudi, parquet in results:
        note = "  (parquet: base files only, unmerged)" if kind == "mor" else ""
        print(
            f"{kind:6} {cores:5} {expected[kind]:11,} {parts:5} {hudi:10.2f} {parquet:10.2f} "
            f"{parquet / hudi:5.2f}x{note}"
        )
    print('ratio: spark.read.parquet time / spark.read.format("hudi_ray") time (>= 0.8 is the target on cow)')
    if ceilings:
        print(
            f"\nceiling on cow: a Python data source yielding in-memory batches of {CEILING_BATCH:,} rows "
            "(no reading) to the noop sink"
        )
        print(f"{'cores':>5} {'in-memory s':>11} {'parquet s':>10} {'ratio':>6}")
        for cores, seconds, parquet in ceilings:
            print(f"{cores:5} {seconds:11.2f} {parquet:10.2f} {parquet / seconds:5.2f}x")
    if filtered:
        total = len(snapshot_base_files(tables["cow"]))
        print(f"\nfiltered count on cow ({where}); {total} file slices in the table")
        print(f"{'cores':>5} {'pushdown':>8} {'slices read':>11} {'rows':>10} {'time s':>7}")
        for cores, mode, slices, rows, seconds in filtered:
            print(f"{cores:5} {mode:>8} {slices:11} {rows:10,} {seconds:7.2f}")


if __name__ == "__main__":
    main()
