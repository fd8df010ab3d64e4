"""Full-scan throughput of a COPY_ON_WRITE table: hudi-ray vs plain pyarrow vs hudi-rs.

    python benchmarks/cow_scan.py [--rows N] [--files F] [--dir D] [--reps R] [--memory]

Writes the table once with hudi_ray's own writer (kept under benchmarks/.data,
reused while its row and file counts match), checks that hudi-ray and hudi-rs
agree on it, then times each reader, interleaved, and reports medians. Every
timed case includes opening the table / dataset, as a user's scan would.
Then it prints the peak RSS of hudi_ray's ``read`` and ``read_stream`` of the
table, each measured in a fresh child process that does only that read
(``--memory``: only this).
Not a test: numbers depend on the machine.
"""

from __future__ import annotations

# hudi_ray before pyarrow, as a user's sorted imports have it: importing it first configures
# Arrow's jemalloc for the reader (README, "Arrow's memory pool").
import hudi_ray

# isort: split
import argparse
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from hudi_testkit import write_cow_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness
from harness import Case, peak_rss_mib

DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "cow_scan"
REGIONS = pa.array(["us", "eu", "apac", "latam"])
BATCH_SIZE = 65_536


def generate(rows: int) -> pa.Table:
    """Deterministic rows, built with Arrow kernels only (no per-row Python)."""
    key = pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), rows)), 1)
    mixed = pc.bit_wise_and(pc.multiply(key, 2_654_435_761), 0x7FFFFFFF)  # a cheap hash: spreads values
    name = pc.binary_join_element_wise("customer-", pc.cast(pc.divide(mixed, 1_000), pa.string()), "")
    price = pc.divide(pc.cast(pc.remainder(mixed, 1_000_000), pa.float64()), 100.0)
    qty = pc.cast(pc.remainder(mixed, 10_000), pa.int32())
    micros = pc.add(pc.multiply(key, 1_000_003), 1_704_067_200_000_000)  # from 2024-01-01, ~1s apart
    ts = pc.cast(micros, pa.timestamp("us", tz="UTC"))
    cents = pc.cast(pc.remainder(mixed, 100_000_000), pa.float64())
    amount = pc.cast(pc.divide(cents, 100.0), pa.decimal128(12, 2))
    region = REGIONS.take(pc.remainder(key, len(REGIONS)))
    return pa.table({"id": key, "name": name, "price": price, "qty": qty, "ts": ts, "amount": amount, "region": region})


def base_files(path: Path) -> list[str]:
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    return [str(path / s.base_file_relative_path()) for s in table.get_file_slices()]


def existing_rows(path: Path) -> tuple[int, int] | None:
    """(rows, files) of a table already at ``path``, or None if there is no readable table."""
    try:
        files = base_files(path)
    except Exception:  # any failure means: regenerate
        return None
    return sum(pq.read_metadata(f).num_rows for f in files), len(files)


def prepare(path: Path, rows: int, files: int) -> None:
    if existing_rows(path) == (rows, files):
        print(f"Reusing the table at {path}")
        return
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    data = generate(rows)
    # Regions are equally sized, so this gives `files` files when it divides evenly among regions.
    rows_per_file = max(1, math.ceil(rows / files))
    result = write_cow_table(
        path,
        data,
        table_name="cow_scan",
        record_key="id",
        partition_field="region",
        precombine_field="ts",
        table_version=6,
        rows_per_file=rows_per_file,
    )
    size = sum(s.file_size for s in result.write_stats)
    print(
        f"Wrote {rows:,} rows in {len(result.files)} files ({size / 2**20:.0f} MiB) "
        f"in {time.perf_counter() - started:.1f}s to {path}"
    )


def count(batches: Iterable[pa.RecordBatch]) -> int:
    return sum(b.num_rows for b in batches)


def check(path: Path, files: list[str]) -> int:
    """hudi-ray, hudi-rs and pyarrow read the same number of rows with the same sum of ``qty``."""
    ours = pa.Table.from_batches(hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build().read())
    theirs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(str(path)).build().read())
    plain = ds.dataset(files, format="parquet").to_table(columns=["qty"])
    sums = [pc.sum(t["qty"].cast(pa.int64())).as_py() for t in (ours, theirs, plain)]
    rows = [ours.num_rows, theirs.num_rows, plain.num_rows]
    if len(set(rows)) != 1 or len(set(sums)) != 1:
        sys.exit(f"Readers disagree: rows (hudi_ray, hudi-rs, pyarrow) = {rows}, sum(qty) = {sums}")
    print(f"Check passed: {rows[0]:,} rows, sum(qty) = {sums[0]:,} in hudi_ray, hudi-rs and pyarrow")
    return rows[0]


def cases(path: Path, files: list[str], rows: int) -> list[Case]:
    uri = str(path)

    def pyarrow_read() -> int:
        return ds.dataset(files, format="parquet").to_table().num_rows

    def ours_read() -> int:
        return count(hudi_ray.HudiTableBuilder.from_base_uri(uri).build().read())

    def rs_read() -> int:
        return count(hudi.HudiTableBuilder.from_base_uri(uri).build().read())

    def ours_stream() -> int:
        table = hudi_ray.HudiTableBuilder.from_base_uri(uri).build()
        return count(table.read_stream(hudi_ray.HudiReadOptions().with_batch_size(BATCH_SIZE)))

    def pyarrow_stream() -> int:
        return count(ds.dataset(files, format="parquet").to_batches(batch_size=BATCH_SIZE))

    def rs_stream() -> int:
        table = hudi.HudiTableBuilder.from_base_uri(uri).build()
        return count(table.read_stream(hudi.HudiReadOptions().with_batch_size(BATCH_SIZE)))

    return [
        Case("(a) pyarrow dataset to_table", pyarrow_read, rows),
        Case("(b) hudi_ray read", ours_read, rows),
        Case("(c) hudi-rs read", rs_read, rows),
        Case("(d) hudi_ray read_stream", ours_stream, rows),
        Case("(e) pyarrow dataset to_batches", pyarrow_stream, rows),
        Case("(f) hudi-rs read_stream", rs_stream, rows),
    ]


MEMORY_MODES = {
    "open": "open the table only (the baseline every child pays)",
    "read": "hudi_ray read",
    "read_stream": "hudi_ray read_stream",
}


def memory_child(path: Path, mode: str) -> None:
    """Run one read of ``mode`` and print ``rows peak_mib``: the body of a child process."""
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    rows = 0
    if mode == "read":
        batches = table.read()
        rows = count(batches)
        del batches
    elif mode == "read_stream":
        rows = count(table.read_stream(hudi_ray.HudiReadOptions().with_batch_size(BATCH_SIZE)))
    print(rows, f"{peak_rss_mib():.1f}")


def memory(path: Path, rows: int, size_mib: float) -> None:
    """Peak RSS of each mode, each in a fresh process (a process's peak never goes down)."""
    print(f"\npeak RSS, each in a fresh process (table: {rows:,} rows, {size_mib:.0f} MiB of Parquet on disk)")
    print(f"{'mode':50} {'peak MiB':>9} {'over open':>10}")
    baseline = 0.0
    for mode, label in MEMORY_MODES.items():
        out = subprocess.run(
            [sys.executable, __file__, "--dir", str(path), "--memory-child", mode],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        n, peak = int(out[-2]), float(out[-1])
        if mode != "open" and n != rows:
            sys.exit(f"{label} read {n:,} rows, expected {rows:,}")
        baseline = peak if mode == "open" else baseline
        print(f"{label:50} {peak:9.0f} {peak - baseline:10.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--files", type=int, default=24)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--memory", action="store_true", help="only print the peak RSS of read and read_stream")
    parser.add_argument("--memory-child", choices=sorted(MEMORY_MODES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    path = args.dir.resolve()  # hudi-rs needs an absolute path
    if args.memory_child:
        memory_child(path, args.memory_child)
        return

    prepare(path, args.rows, args.files)
    files = base_files(path)
    size_mib = sum(os.path.getsize(f) for f in files) / 2**20
    if args.memory:
        memory(path, sum(pq.read_metadata(f).num_rows for f in files), size_mib)
        return
    rows = check(path, files)
    print(
        f"pyarrow {pa.__version__}, hudi-rs {getattr(hudi, '__version__', '?')}, "
        f"{os.cpu_count()} CPUs, {len(files)} files, batch size {BATCH_SIZE:,}, {args.reps} repetitions\n"
    )

    medians = harness.medians(harness.interleaved(cases(path, files, rows), args.reps))
    print(f"{'case':34} {'median s':>9} {'rows/s':>14}")
    for label, seconds in medians.items():
        print(f"{label:34} {seconds:9.3f} {rows / seconds:14,.0f}")

    def ratio(ours: str, other: str) -> float:
        return medians[other] / medians[ours]  # throughput ratio: above 1 means hudi_ray is faster

    print("\nthroughput ratios (hudi_ray / other; > 1 means hudi_ray is faster)")
    print(f"  read:        vs pyarrow {ratio('(b) hudi_ray read', '(a) pyarrow dataset to_table'):.2f}x")
    print(f"  read:        vs hudi-rs {ratio('(b) hudi_ray read', '(c) hudi-rs read'):.2f}x")
    print(f"  read_stream: vs pyarrow {ratio('(d) hudi_ray read_stream', '(e) pyarrow dataset to_batches'):.2f}x")
    print(f"  read_stream: vs hudi-rs {ratio('(d) hudi_ray read_stream', '(f) hudi-rs read_stream'):.2f}x")
    memory(path, rows, size_mib)


if __name__ == "__main__":
    main()
