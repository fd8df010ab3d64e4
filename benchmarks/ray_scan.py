"""Full-scan throughput of ``hudi_ray.read_hudi`` on Ray, COW and MOR.

    python benchmarks/ray_scan.py [--rows N] [--files F] [--reps R] [--dir D] [--only cow|mor]

For each table (written once with the project's writers, kept under
``benchmarks/.data/ray_scan`` and reused while its manifest matches), times,
interleaved, the median of ``--reps`` runs of:

* ``read_hudi`` with 1 and with 2 reader CPUs (``concurrency``);
* the single-process table read (``HudiTable.read``, the core's thread pool);
* Ray's own ``ray.data.read_parquet`` over the same base files, 1 and 2 CPUs.

The COW table is the COW benchmark's (``cow_scan.generate``, partitioned by
region); the MOR table the MOR benchmark's (base files, then a delta commit
updating 20% of the keys and one deleting 1%). On MOR, ``read_hudi`` merges
the logs while ``read_parquet`` only reads the base files (it would return
stale and deleted rows): it is a floor, not an equal. Ray runs locally with
2 CPUs; every Ray case consumes the dataset by streaming its blocks through
the object store (``iter_internal_ref_bundles``), without pulling them into
the driver. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

# No "execution finished" line per dataset (read when ray.data is imported).
os.environ.setdefault("RAY_DATA_LOG_LEVEL", "WARNING")
import ray

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cow_scan
import harness
import mor_scan
from harness import Case

import hudi_ray
from hudi_ray.planner import call, get_or_create_planner

DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "ray_scan"
RAY_CPUS = 2


def consume(ds: ray.data.Dataset) -> int:
    """Run the dataset to the end, counting rows from block metadata."""
    return sum(bundle.num_rows() or 0 for bundle in ds.iter_internal_ref_bundles())


def prepare_cow(root: Path, rows: int, files: int) -> Path:
    path = root / "cow"
    cow_scan.prepare(path, rows, files)
    return path


def prepare_mor(root: Path, rows: int, files: int) -> Path:
    args = argparse.Namespace(rows=rows, files=files, table_version=6, update_fraction=mor_scan.UPDATE_FRACTION)
    path, _ = mor_scan.prepare(root / "mor", args)
    return path


def base_files(path: Path) -> list[str]:
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    ro = hudi_ray.HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "true"})
    return [str(path / s.base_file_relative_path()) for s in table.get_file_slices(ro)]


def table_rows(path: Path, read_optimized: bool = False) -> int:
    opts = {"hoodie.read.use.read_optimized.mode": "true"} if read_optimized else {}
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    return sum(b.num_rows for b in table.read(hudi_ray.HudiReadOptions(hudi_options=opts)))


def cases(kind: str, path: Path) -> list[Case]:
    uri = str(path)
    files = base_files(path)
    rows = table_rows(path)
    base_rows = table_rows(path, read_optimized=True) if kind == "mor" else rows
    planner = get_or_create_planner(uri)
    call(planner.snapshot.remote())  # load the timeline once, as a long-lived planner has

    def hudi(cpus: int) -> Callable[[], int]:
        return lambda: consume(hudi_ray.read_hudi(uri, planner=planner, concurrency=cpus))

    def parquet(cpus: int) -> Callable[[], int]:
        return lambda: consume(ray.data.read_parquet(files, concurrency=cpus))

    def single() -> int:
        return sum(b.num_rows for b in hudi_ray.HudiTableBuilder.from_base_uri(uri).build().read())

    return [
        Case(f"{kind}: read_hudi, 1 CPU", hudi(1), rows),
        Case(f"{kind}: read_hudi, 2 CPUs", hudi(2), rows),
        Case(f"{kind}: table.read, 1 process", single, rows),
        Case(f"{kind}: read_parquet base files, 1 CPU", parquet(1), base_rows),
        Case(f"{kind}: read_parquet base files, 2 CPUs", parquet(2), base_rows),
    ]


def report(kind: str, all_cases: list[Case], medians: dict[str, float]) -> None:
    print(f"\n{'case':42} {'median s':>9} {'rows/s':>14}")
    for case in all_cases:
        seconds = medians[case.label]
        print(f"{case.label:42} {seconds:9.3f} {(case.expected or 0) / seconds:14,.0f}")

    def throughput(label: str) -> float:
        case = next(c for c in all_cases if c.label == f"{kind}: {label}")
        return (case.expected or 0) / medians[case.label]

    one, two = throughput("read_hudi, 1 CPU"), throughput("read_hudi, 2 CPUs")
    single = throughput("table.read, 1 process")
    pq1, pq2 = throughput("read_parquet base files, 1 CPU"), throughput("read_parquet base files, 2 CPUs")
    note = "  (read_parquet: base files only, unmerged)" if kind == "mor" else ""
    print(f"\n{kind} throughput ratios (rows/s over rows/s; > 1 means the first is faster){note}")
    for label, ratio in [
        ("read_hudi 2 CPUs / read_hudi 1 CPU", two / one),
        ("read_hudi 1 CPU  / table.read (1 process)", one / single),
        ("read_hudi 2 CPUs / table.read (1 process)", two / single),
        ("read_hudi 1 CPU  / read_parquet 1 CPU", one / pq1),
        ("read_hudi 2 CPUs / read_parquet 2 CPUs", two / pq2),
    ]:
        print(f"  {label:44} {ratio:6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=24)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--only", choices=["cow", "mor"], default=None)
    args = parser.parse_args()
    # Ray warns when a read has fewer files than its concurrency; expected here.
    warnings.filterwarnings("ignore", category=UserWarning, module="ray.data")
    root = args.dir.resolve()
    kinds = [args.only] if args.only else ["cow", "mor"]
    paths = {}
    for kind in kinds:
        started = time.perf_counter()
        paths[kind] = (prepare_cow if kind == "cow" else prepare_mor)(root, args.rows, args.files)
        print(f"{kind} table ready in {time.perf_counter() - started:.1f}s at {paths[kind]}")

    ray.init(address="local", num_cpus=RAY_CPUS, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    print(
        f"\nray {ray.__version__}, pyarrow {pa.__version__}, {os.cpu_count()} CPUs on the machine, "
        f"Ray with {RAY_CPUS} CPUs, {args.rows:,} rows, {args.reps} repetitions (medians)"
    )
    for kind in kinds:
        all_cases = cases(kind, paths[kind])
        files = len(base_files(paths[kind]))
        print(f"\n== {kind.upper()}: {files} base files, {all_cases[0].expected or 0:,} rows in the snapshot ==")
        report(kind, all_cases, harness.medians(harness.interleaved(all_cases, args.reps, warm_up=True)))
    ray.shutdown()


if __name__ == "__main__":
    main()
