"""The main job: write a small Hudi table with the project's own writer, read it
through the planner actor and reader tasks into a Ray Dataset, hand it to Spark
through RayDP, and print what was read at each step.

Run it with ``./dev main`` (local Ray, 2 CPUs; Spark needs Java 17).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pyarrow as pa
import ray
from sample_table import write_sample_table

import hudi_ray
from hudi_ray.datasource import planned_read
from hudi_ray.spark import init_spark, stop_spark, to_spark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--table", type=Path, default=None, help="where to write the sample table")
    parser.add_argument("--no-spark", action="store_true", help="stop after the Ray Dataset")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(write_sample_table(args.table or Path(tmp) / "trips"))

        # 1. The table API (hudi-rs's reader API).
        table = hudi_ray.HudiTableBuilder.from_base_uri(path).build()
        commits = table.get_timeline().get_completed_commits()
        print(
            f"table {table.table_name}: {table.table_type}, {len(commits)} commits, schema {table.get_schema().names}"
        )
        print(table.explain(hudi_ray.HudiReadOptions(filters=[("city", "=", "chennai"), ("fare", ">", "100")])))

        # 2. Ray: a planner actor plans once, reader tasks read the file slices.
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        ds = hudi_ray.read_hudi(
            path, filters=[("city", "IN", "chennai,sao_paulo")], columns=["trip_id", "city", "fare"]
        )
        plan = planned_read(ds)
        print(f"\nread_hudi: {plan.num_slices} file slices in {len(plan.chunks)} reader tasks")
        rows = pa.concat_tables(ray.get(ds.to_arrow_refs())).sort_by("trip_id")
        print(f"Ray Dataset: {rows.num_rows} rows")
        for row in rows.slice(0, 5).to_pylist():
            print(f"  {row}")

        # 3. Spark through RayDP: the same read as a DataFrame, queried with Spark SQL.
        if not args.no_spark:
            spark = init_spark(app_name="hudi-ray-main-job", executor_memory="700M")
            df = to_spark(hudi_ray.read_hudi(path), spark)
            # Spark's executors read the reader tasks' Arrow streams from Ray's object store.
            print(f"\nSpark DataFrame: {df.rdd.getNumPartitions()} partitions, {len(df.columns)} columns")
            df.createOrReplaceTempView("trips")
            print("\nSpark SQL over the Hudi table:")
            query = "SELECT city, COUNT(*) AS trips, SUM(fare) AS fares FROM trips GROUP BY city ORDER BY city"
            for r in spark.sql(query).collect():
                print(f"  {r['city']:<14} {r['trips']:>3} trips  {r['fares']} total fare")
            stop_spark()
        ray.shutdown()


if __name__ == "__main__":
    main()
