"""An incremental batch job: each run processes only the commits that landed
since the previous run, through ``read_hudi(query_type="incremental")``.

    python examples/incremental_job.py --table PATH --state STATE.json --out OUT_DIR
    python examples/incremental_job.py --demo

A run pins its end to the newest completed commit it sees, reads the changed
rows in ``(checkpoint, end]``, writes fare totals per city for those rows as
one Parquet file in ``OUT_DIR``, and only then moves the checkpoint in
``STATE.json`` to ``end``: a failed run is simply run again. ``--demo``
writes the sample trips table, runs the job, adds a commit, runs it again
(only the new commit's rows) and a third time (nothing new).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import ray
from sample_table import trips, write_sample_table

import hudi_ray
from hudi_testkit import upsert_cow_table


def load_checkpoint(state: Path) -> str | None:
    return json.loads(state.read_text())["checkpoint"] if state.is_file() else None


def save_checkpoint(state: Path, checkpoint: str) -> None:
    tmp = state.with_suffix(".tmp")
    tmp.write_text(json.dumps({"checkpoint": checkpoint}))
    tmp.replace(state)  # atomic: the checkpoint never points past what was written


def run_once(table: str, state: Path, out: Path) -> int:
    """One run of the job; returns the number of changed rows it processed."""
    latest = hudi_ray.HudiTableBuilder.from_base_uri(table).build().get_timeline().latest_data_instant()
    checkpoint = load_checkpoint(state)
    if latest is None or latest.completed_at == checkpoint:
        print(f"nothing new since {checkpoint}")
        return 0
    end = latest.completed_at
    changes = hudi_ray.read_hudi(
        table,
        query_type="incremental",
        start_timestamp=checkpoint,  # None on the first run: from the start of the timeline
        end_timestamp=end,
        columns=["trip_id", "city", "fare"],
    )
    rows = changes.count()
    totals = changes.groupby("city").sum("fare").sort("city")
    result = pa.Table.from_pylist(totals.take_all())
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(result, out / f"fares_{end}.parquet")
    save_checkpoint(state, end)
    print(f"processed {rows} changed rows in ({checkpoint}, {end}]: {result.to_pylist()}")
    return rows


def demo() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        table = str(write_sample_table(root / "trips"))
        state, out = root / "state.json", root / "out"
        run_once(table, state, out)  # first run: everything so far
        upsert_cow_table(table, trips(3, start=100))  # three new trips land
        run_once(table, state, out)  # only those three
        run_once(table, state, out)  # nothing new
        print(f"outputs: {sorted(p.name for p in out.iterdir())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table")
    parser.add_argument("--state", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--demo", action="store_true")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: a local Ray)")
    args = parser.parse_args()
    if not args.demo and not (args.table and args.state and args.out):
        parser.error("give --table, --state and --out, or --demo")
    ray.init(address=args.address, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    if args.demo:
        demo()
    else:
        run_once(args.table, args.state, args.out)


if __name__ == "__main__":
    main()
