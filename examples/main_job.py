"""The main job: write a small Hudi table with the project's writer, then read it
back through the table API (snapshot, filtered, time travel, incremental) and
print what was read.

Run it with ``./dev main``. The Ray and Spark stages join this job when the Ray
layer lands.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pyarrow as pa
from sample_table import write_sample_table

from hudi_ray import HudiQueryType, HudiReadOptions, HudiTableBuilder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--table", type=Path, default=None, help="where to write the sample table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_sample_table(args.table or Path(tmp) / "trips")
        table = HudiTableBuilder.from_base_uri(str(path)).build()
        commits = table.get_timeline().get_completed_commits()
        print(f"table {table.table_name} ({table.table_type}, version {table.hudi_options()['hoodie.table.version']})")
        print(f"commits: {[c.timestamp for c in commits]}")
        print(f"file slices: {len(table.get_file_slices())}, partitions: {table.get_partition_schema().names}")

        snapshot = pa.Table.from_batches(table.read())
        print(f"\nsnapshot: {snapshot.num_rows} rows")
        for row in snapshot.select(["trip_id", "rider", "city", "fare"]).sort_by("trip_id").slice(0, 8).to_pylist():
            print(f"  {row}")

        opts = HudiReadOptions(filters=[("city", "=", "chennai"), ("fare", ">", "100")], projection=["trip_id", "fare"])
        filtered = pa.Table.from_batches(table.read(opts))
        print(f"\nchennai trips with fare > 100: {filtered.sort_by('trip_id').to_pylist()}")

        first = pa.Table.from_batches(table.read(HudiReadOptions().with_as_of_timestamp(commits[0].timestamp)))
        print(f"\nas of the first commit: max fare {max(first.column('fare').to_pylist())}")

        changes = HudiReadOptions().with_query_type(HudiQueryType.Incremental)
        changes = changes.with_start_timestamp(commits[0].completed_at).with_end_timestamp(commits[1].completed_at)
        changed = pa.Table.from_batches(table.read(changes))
        print(f"changed by the second commit: {sorted(changed.column('trip_id').to_pylist())}")


if __name__ == "__main__":
    main()
