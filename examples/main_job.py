"""The main job: read a Hudi table through the planner actor and reader tasks
into a Ray Dataset, hand it to Spark through RayDP, and print what was read at
each step.

Without a table URI it writes a small sample table with the project's own
writer and reads that; with one (a path, file://, s3://) it reads your table.

Run it with ``./dev main [table-uri]`` (local Ray, 2 CPUs; Spark needs Java 17).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
from sample_table import write_sample_table

import hudi_ray
from hudi_ray.cli.output import aligned, cell
from hudi_ray.cli.quiet import quiet_spark_configs, ray_progress_bars, start_ray
from hudi_ray.datasource import planned_read
from hudi_ray.spark import init_spark, stop_spark, to_spark

# The sample table's question; another table is asked about its partitions.
SAMPLE_FILTERS = [("city", "IN", "chennai,sao_paulo")]
SAMPLE_COLUMNS = ["trip_id", "city", "fare"]


def step(title: str) -> None:
    print(f"\n== {title}")


def run(uri: str, *, sample: bool, spark: bool) -> None:
    # 1. The table API (hudi-rs's reader API).
    step("table")
    table = hudi_ray.HudiTableBuilder.from_base_uri(uri).build()
    commits = table.get_timeline().data_instants
    schema = table.get_schema()
    print(f"{table.table_name}: {table.table_type}, table version {table.table_version}, {len(commits)} commits")
    print(f"schema: {', '.join(schema.names)}")
    explain_filters = [("city", "=", "chennai"), ("fare", ">", "100")] if sample else []
    if explain_filters:
        print("pruning for " + " and ".join(" ".join(f) for f in explain_filters) + ":")
    print(table.explain(hudi_ray.HudiReadOptions(filters=explain_filters)))

    # 2. Ray: a planner actor plans once, reader tasks read the file slices;
    # Ray Data draws its progress bars when this runs in a terminal.
    step("Ray Dataset (read_hudi)")
    ray = start_ray(num_cpus=2)
    ray.data.DataContext.get_current().enable_progress_bars = ray_progress_bars(sys.stderr)
    filters = SAMPLE_FILTERS if sample else None
    columns = SAMPLE_COLUMNS if sample else None
    ds = hudi_ray.read_hudi(uri, filters=filters, columns=columns)
    plan = planned_read(ds)
    rows = pa.concat_tables(ray.get(ds.to_arrow_refs())) if sample else None
    count = rows.num_rows if rows is not None else ds.count()
    where = " where " + " and ".join(" ".join(f) for f in filters) if filters else ""
    print(f"{plan.num_slices} file slices in {len(plan.chunks)} reader tasks: {count} rows{where}")
    first = rows.sort_by("trip_id").slice(0, 5).to_pylist() if rows is not None else ds.take(5)
    # The data columns, aligned: Hudi's meta columns would fill the screen first.
    names = [n for n in (columns or schema.names) if not n.startswith("_hoodie_")]
    print(aligned(names, [[cell(r.get(n)) for n in names] for r in first], indent="  "))

    # 3. Spark through RayDP: the same read as a DataFrame, queried with Spark SQL.
    if spark:
        step("Spark SQL (RayDP)")
        session = init_spark(app_name="hudi-ray-main-job", executor_memory="700M", configs=quiet_spark_configs())
        df = to_spark(hudi_ray.read_hudi(uri), session)
        # Spark's executors read the reader tasks' Arrow streams from Ray's object store.
        print(f"DataFrame: {df.rdd.getNumPartitions()} partitions, {len(df.columns)} columns")
        df.createOrReplaceTempView("t")
        group = "city" if sample else next(iter(table.get_partition_schema().names), None)
        if group is None:
            query = "SELECT COUNT(*) AS rows FROM t"
            print(f"{query}:")
            for r in session.sql(query).collect():
                print(f"  {r['rows']} rows")
        elif sample:
            query = "SELECT city, COUNT(*) AS trips, SUM(fare) AS fares FROM t GROUP BY city ORDER BY city"
            print(f"{query}:")
            for r in session.sql(query).collect():
                print(f"  {r['city']:<14} {r['trips']:>3} trips  {r['fares']} total fare")
        else:
            query = f"SELECT `{group}` AS p, COUNT(*) AS rows FROM t GROUP BY `{group}` ORDER BY `{group}`"
            print(f"rows per {group}:")
            for r in session.sql(query).collect():
                print(f"  {r['p']!s:<24} {r['rows']:>8}")
        stop_spark()
    ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("uri", nargs="?", help="a Hudi table to read (default: write and read a sample table)")
    parser.add_argument("--table", type=Path, default=None, help="where to write the sample table")
    parser.add_argument("--no-spark", action="store_true", help="stop after the Ray Dataset")
    args = parser.parse_args()
    if args.uri is not None:
        try:
            run(args.uri, sample=False, spark=not args.no_spark)
        except hudi_ray.HudiCoreError as exc:
            # A path that is not a table, a bad option: the error names it, no traceback needed.
            sys.exit(f"error: {exc}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = write_sample_table(args.table or Path(tmp) / "trips")
        run(str(path), sample=True, spark=not args.no_spark)


if __name__ == "__main__":
    main()
