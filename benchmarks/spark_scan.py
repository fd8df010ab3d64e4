"""Hudi into Spark through RayDP against Spark reading the same Parquet files itself.

    python benchmarks/spark_scan.py [--rows 2000000,10000000] [--files F] [--reps R]
                                    [--only cow|mor] [--object-store-mb M] [--dir D]

For each size, a copy-on-write table (``cow_scan``'s, partitioned by region) and a
merge-on-read table (``mor_scan``'s: base files, then 20% of the keys updated and
1% deleted through Avro log blocks) are written once under ``benchmarks/.data``
and reused. Ray runs locally with 2 CPUs and Spark on it through RayDP with one
executor of one core, as a user on a small machine would run them. Interleaved,
``--reps`` times each, best of the runs:

* ``read_hudi_spark(uri)`` materialised through Spark's ``noop`` sink, against
  ``spark.read.parquet(<the snapshot's base files>)`` through the same sink. On
  merge-on-read, Parquet reads the base files only (stale and deleted rows), so
  it is a floor, not an equal;
* ``read_hudi`` alone, before Spark starts and while it is up (Spark's executor
  holds one of the two CPUs).

``--object-store-mb`` starts Ray with a smaller object store (spilling to disk),
to show a table larger than the store reaching Spark. Not a test: numbers depend
on the machine; ratios are measured side by side in one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("RAY_DATA_LOG_LEVEL", "WARNING")
import ray

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import timed
from spark_tables import DEFAULT_DIR, prepare, snapshot_base_files, table_rows

import hudi_ray
from hudi_ray.planner import call, get_or_create_planner
from hudi_ray.spark import init_spark, java_version, read_hudi_spark, release, stop_spark

RAY_CPUS = 2


def read_hudi_alone(uri: str, planner: object) -> int:
    ds = hudi_ray.read_hudi(uri, planner=planner)
    return sum(bundle.num_rows() or 0 for bundle in ds.iter_internal_ref_bundles())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="2000000,10000000", help="comma-separated table sizes")
    parser.add_argument("--files", type=int, default=24)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", choices=["cow", "mor"], default=None)
    parser.add_argument("--object-store-mb", type=int, default=None)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args()
    if java_version() is None:
        sys.exit("Spark needs Java 17 on PATH")
    warnings.filterwarnings("ignore", category=UserWarning, module="ray.data")
    sizes = [int(r) for r in args.rows.split(",")]
    kinds = [args.only] if args.only else ["cow", "mor"]
    tables = {(kind, rows): prepare(kind, args.dir.resolve(), rows, args.files) for rows in sizes for kind in kinds}

    store = args.object_store_mb << 20 if args.object_store_mb else None
    ray.init(
        address="local",
        num_cpus=RAY_CPUS,
        object_store_memory=store,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="WARNING",
    )
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    planners = {key: get_or_create_planner(str(path)) for key, path in tables.items()}
    for planner in planners.values():
        call(planner.snapshot.remote())
    expected = {key: table_rows(path) for key, path in tables.items()}

    alone: dict[tuple[str, int], list[float]] = {key: [] for key in tables}
    for _ in range(args.reps):
        for key, path in tables.items():
            alone[key].append(timed(lambda p=path, k=key: read_hudi_alone(str(p), planners[k])))

    spark = init_spark(
        app_name="spark-scan",
        executor_memory="2G",
        configs={"spark.ui.showConsoleProgress": "false"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    store_mb = ray.cluster_resources().get("object_store_memory", 0) / 2**20
    print(
        f"\nray {ray.__version__}, Spark {spark.version} through RayDP (1 executor, 1 core), "
        f"Ray with {RAY_CPUS} CPUs and a {store_mb:,.0f} MiB object store; best of {args.reps}"
    )
    times: dict[tuple[str, int], dict[str, list[float]]] = {
        key: {"hudi": [], "parquet": [], "read_hudi": []} for key in tables
    }
    partitions: dict[tuple[str, int], int] = {}
    for _ in range(args.reps):
        for key, path in tables.items():
            uri = str(path)
            files = snapshot_base_files(path)

            def via_hudi(uri: str = uri, key: tuple[str, int] = key) -> None:
                df = read_hudi_spark(spark, uri, planner=planners[key])
                df.write.format("noop").mode("overwrite").save()
                partitions[key] = df.rdd.getNumPartitions()
                release(df)

            def via_parquet(files: list[str] = files) -> None:
                spark.read.parquet(*files).write.format("noop").mode("overwrite").save()

            times[key]["hudi"].append(timed(via_hudi))
            times[key]["parquet"].append(timed(via_parquet))
            times[key]["read_hudi"].append(timed(lambda u=uri, k=key: read_hudi_alone(u, planners[k])))

    # Row counts once, outside the timings: Spark sees the snapshot's rows.
    for key, path in tables.items():
        df = read_hudi_spark(spark, str(path), planner=planners[key])
        got = df.count()
        release(df)
        if got != expected[key]:
            sys.exit(f"{key}: Spark counted {got:,} rows, the table API reads {expected[key]:,}")

    print(f"\n{'table':14} {'rows':>11} {'parts':>5} {'hudi->spark s':>13} {'parquet s':>10} {'ratio':>6}")
    for key in tables:
        kind = key[0]
        hudi, parquet = min(times[key]["hudi"]), min(times[key]["parquet"])
        note = "  (parquet: base files only, unmerged)" if kind == "mor" else ""
        print(
            f"{kind:14} {expected[key]:11,} {partitions[key]:5} {hudi:13.2f} {parquet:10.2f} "
            f"{parquet / hudi:5.2f}x{note}"
        )
    print("\nratio: spark.read.parquet time / read_hudi_spark time (> 1 means Hudi through RayDP is faster)")
    print(f"\n{'read_hudi alone':14} {'rows':>11} {'no Spark s':>11} {'Spark up s':>11} {'slowdown':>9}")
    for key in tables:
        before, during = min(alone[key]), min(times[key]["read_hudi"])
        print(f"{key[0]:14} {expected[key]:11,} {before:11.2f} {during:11.2f} {during / before:8.2f}x")
    stop_spark()
    ray.shutdown()


if __name__ == "__main__":
    main()
