"""Read a Hudi table into a Ray Dataset with filters pushed into the read.

    python examples/ray_read.py [--table PATH] [--address RAY_ADDRESS]

Without ``--table`` it writes the small trips table of ``sample_table.py``.
Shows: a read with Hudi filters, a ``filter(expr=...)`` that prunes
partitions (the plan reads fewer files), column selection, time travel and
an aggregation running on the cluster.
"""

from __future__ import annotations

import argparse
import tempfile
from decimal import Decimal
from pathlib import Path

import ray
from ray.data.expressions import col
from sample_table import write_sample_table

import hudi_ray
from hudi_ray.datasource import planned_read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=Path, default=None, help="a Hudi table (default: write the sample one)")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: a local Ray)")
    args = parser.parse_args()
    ray.init(address=args.address, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(args.table or write_sample_table(Path(tmp) / "trips"))

        # Hudi filters, as ray.data.read_hudi takes them (values are strings).
        chennai = hudi_ray.read_hudi(path, filters=[("city", "=", "chennai")], columns=["trip_id", "rider", "fare"])
        print(f"chennai trips: {chennai.count()}, columns {chennai.columns()}")

        # A Ray expression: its column-op-literal parts become Hudi filters that
        # prune partitions and files; the whole predicate still filters the rows.
        everything = hudi_ray.read_hudi(path)
        pricey = everything.filter(expr=(col("city") == "sao_paulo") & (col("fare") > Decimal("30")))
        pricey = pricey.select_columns(["trip_id", "rider", "fare"])
        plan = planned_read(pricey)
        print(
            f"sao_paulo trips with fare > 30: {pricey.count()} rows; pushed Hudi filters {plan.plan.options.filters}; "
            f"files read {len(plan.input_files())} of {len(planned_read(everything).input_files())}"
        )
        for row in pricey.sort("trip_id").take(5):
            print(f"  {row}")

        # Time travel: the table as of its first commit.
        first = hudi_ray.HudiTableBuilder.from_base_uri(path).build().get_timeline().data_instants[0]
        before = hudi_ray.read_hudi(path, as_of_timestamp=first.timestamp)
        print(f"as of {first.timestamp}: {before.count()} rows, max fare {before.max('fare')}")

        # Aggregations run in Ray tasks over the merged snapshot.
        for row in everything.groupby("city").count().sort("city").take_all():
            print(f"  {row}")


if __name__ == "__main__":
    main()
