"""``read_hudi_spark`` (Spark scans the base files that need no merge, hudi-ray reads
the rest) against Spark reading the same Parquet files itself.

    python benchmarks/spark_native.py --session raydp [--rows 2000000,10000000] [--reps R]
    .venv-spark4/bin/python benchmarks/spark_native.py --session plain [...]

``raydp``: Spark on a local Ray of 2 CPUs through RayDP (one executor of one core, as
``spark_scan.py`` runs it, leaving Ray a CPU for its reader tasks; PySpark 3.5, the main
environment). ``plain``: a local[2] SparkSession without Ray (PySpark 4,
``./dev setup-spark4``). The tables are ``spark_scan``'s (copy-on-write, partitioned by
region; merge-on-read with 20% of keys updated and 1% deleted through log blocks), and a
copy-on-write table of ``--many-files`` files, written once under
``benchmarks/.data/spark_scan``. Interleaved, ``--reps`` times each, best of the runs:

* ``read_hudi_spark(uri)`` to Spark's ``noop`` sink against ``spark.read.parquet(<the
  snapshot's base files>)`` to the same sink (on merge-on-read Parquet reads the base
  files only, stale and deleted rows included: a floor, not an equal);
* the first rows: ``read_hudi_spark(uri).limit(10).collect()`` against
  ``spark.read.parquet(<files>).limit(10).collect()`` on the many-files table, each
  call from the read to the rows.

Not a test: numbers depend on the machine; ratios are measured side by side in one run.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import timed
from spark_tables import DEFAULT_DIR, prepare, snapshot_base_files, table_rows

from hudi_ray.spark import read_hudi_spark


def session(kind: str) -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    configs = {"spark.ui.showConsoleProgress": "false", "spark.sql.session.timeZone": "UTC"}
    if kind == "raydp":
        import ray

        from hudi_ray.spark import init_spark

        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
        ray.data.DataContext.get_current().enable_progress_bars = False
        spark = init_spark(app_name="spark-native", executor_cores=1, executor_memory="2G", configs=configs)
    else:
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master("local[2]").appName("spark-native").config("spark.driver.memory", "4g")
        for key, value in {**configs, "spark.ui.enabled": "false"}.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--session", choices=["raydp", "plain"], required=True)
    parser.add_argument("--rows", default="2000000,10000000", help="comma-separated table sizes")
    parser.add_argument("--files", type=int, default=24)
    parser.add_argument("--many-files", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", choices=["cow", "mor", "first"], default=None)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args()
    root = args.dir.resolve()
    tables: dict[str, Path] = {}
    for rows in [int(r) for r in args.rows.split(",")]:
        for kind in ("cow", "mor"):
            if args.only in (None, kind):
                tables[f"{kind} {rows:,}"] = prepare(kind, root, rows, args.files)
    many = prepare("cow", root / "many", 1_000_000, args.many_files) if args.only in (None, "first") else None
    spark = session(args.session)
    cores = "1 executor core, Ray 2 CPUs" if args.session == "raydp" else "local[2]"
    print(f"\nSpark {spark.version}, {args.session} session ({cores}); best of {args.reps}")

    def noop(df: Any) -> None:
        df.write.format("noop").mode("overwrite").save()

    scans: dict[str, dict[str, list[float]]] = {name: {"hudi": [], "parquet": []} for name in tables}
    files = {name: snapshot_base_files(path) for name, path in tables.items()}
    first: dict[str, list[float]] = {"hudi": [], "parquet": []}
    many_files = snapshot_base_files(many) if many is not None else []
    for _ in range(args.reps):
        for name, path in tables.items():
            scans[name]["hudi"].append(timed(lambda p=path: noop(read_hudi_spark(spark, str(p)))))
            scans[name]["parquet"].append(timed(lambda f=files[name]: noop(spark.read.parquet(*f))))
        if many is not None:
            first["hudi"].append(timed(lambda: read_hudi_spark(spark, str(many)).limit(10).collect()))
            first["parquet"].append(timed(lambda: spark.read.parquet(*many_files).limit(10).collect()))

    for name, path in tables.items():
        got, want = read_hudi_spark(spark, str(path)).count(), table_rows(path)
        if got != want:
            sys.exit(f"{name}: Spark counted {got:,} rows, the table API reads {want:,}")
    print(f"\n{'table':16} {'read_hudi_spark s':>17} {'parquet s':>10} {'ratio':>6}")
    for name in tables:
        hudi, parquet = min(scans[name]["hudi"]), min(scans[name]["parquet"])
        note = "  (parquet: base files only, unmerged)" if name.startswith("mor") else ""
        print(f"{name:16} {hudi:17.2f} {parquet:10.2f} {parquet / hudi:5.2f}x{note}")
    print("ratio: spark.read.parquet time / read_hudi_spark time (target: >= 0.95 on cow, >= 0.8 on mor)")
    if many is not None:
        hudi, parquet = min(first["hudi"]), min(first["parquet"])
        print(
            f"\nfirst rows (limit(10).collect()) on {len(many_files):,} files: read_hudi_spark {hudi:.2f} s, "
            f"spark.read.parquet {parquet:.2f} s: {hudi / parquet:.2f}x Spark's time (target: <= 1.5x)"
        )
    spark.stop()


if __name__ == "__main__":
    main()
