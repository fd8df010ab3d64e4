"""An incremental batch job: each run processes only the commits that landed
since the previous successful run, with ``hudi_ray.incremental``.

    python examples/incremental_job.py --table URI --checkpoint URI --out OUT_DIR [--max-instants N]
    python examples/incremental_job.py --demo

A run takes the checkpoint (a second run on it meanwhile is refused), reads
the changed rows after it as a Ray Dataset, writes fare totals per city for
those rows as one Parquet file in ``OUT_DIR``, and only then commits, moving
the checkpoint past the range. A run that fails before committing leaves the
checkpoint where it was: the next run reads the same range again. ``--demo``
writes the sample trips table, runs the job, adds a commit, runs it again
(only the new commit's rows) and a third time (nothing new).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import ray
from sample_table import trips, write_sample_table

import hudi_ray
from hudi_testkit import upsert_cow_table


def run_once(table: str, checkpoint: str, out: Path, max_instants: int | None = None) -> int:
    """One run of the job; returns the number of changed rows it processed."""
    with hudi_ray.incremental(
        table, checkpoint=checkpoint, max_instants=max_instants, columns=["trip_id", "city", "fare"]
    ) as run:
        if run.is_empty:
            print(f"nothing new after {run.start}" + (f" (waiting on {run.waiting_on})" if run.waiting_on else ""))
            return 0
        if run.full_snapshot:
            print(f"history gone, reading the latest snapshot: {run.fallback}")
        changes = run.dataset
        rows = changes.count()
        totals = changes.groupby("city").sum("fare").sort("city")
        result = pa.Table.from_pylist(totals.take_all())
        out.mkdir(parents=True, exist_ok=True)
        # One file per range, named by its end: a re-run of a failed range overwrites its own output.
        pq.write_table(result, out / f"fares_{run.end}.parquet")
        run.commit()  # only now does the checkpoint move
        print(f"processed {rows} changed rows of {len(run.instants)} commits in ({run.start}, {run.end}]")
        return rows


def demo() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        table = str(write_sample_table(root / "trips"))
        checkpoint, out = str(root / "job.checkpoint"), root / "out"
        run_once(table, checkpoint, out)  # first run: everything so far
        upsert_cow_table(table, trips(3, start=100))  # three new trips land
        run_once(table, checkpoint, out)  # only those three
        run_once(table, checkpoint, out)  # nothing new
        print(f"outputs: {sorted(p.name for p in out.iterdir())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table")
    parser.add_argument("--checkpoint", help="checkpoint file (path or URI, e.g. s3://bucket/jobs/trips.checkpoint)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--max-instants", type=int, default=None, help="at most this many commits per run")
    parser.add_argument("--demo", action="store_true")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: a local Ray)")
    args = parser.parse_args()
    if not args.demo and not (args.table and args.checkpoint and args.out):
        parser.error("give --table, --checkpoint and --out, or --demo")
    ray.init(address=args.address, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    if args.demo:
        demo()
    else:
        run_once(args.table, args.checkpoint, args.out, args.max_instants)


if __name__ == "__main__":
    main()
