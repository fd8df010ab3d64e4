"""Data skipping with the metadata table: the partition stats blog's experiment, at this machine's scale,
and point lookups through a secondary index.

    python benchmarks/data_skipping.py [--case zip|secondary|all] [--files N] [--rows-per-file R] [--dir D] [--reps K]

A table of US shipping addresses partitioned by state (50 partitions), zip
codes clustered by state and sorted within it, so each state's base files
cover narrow zip ranges (NY holds 10001). It is written once with hudi_ray's
COPY_ON_WRITE writer and a metadata table (files, column_stats,
partition_stats, record_index), kept under benchmarks/.data and reused while
its parameters match. The query ``zip_code = '10001'`` runs (a) with the
metadata table (partition stats, then column stats), (b) without it
(``hoodie.metadata.enable=false``: storage listing and Parquet footer stats)
and (c) without any pruning (every file read, rows filtered afterwards).
Files read come from ``explain()``; runtimes are medians of interleaved runs,
each opening the table as a user's query would. Planning
(``get_file_slices`` with the filter) is timed against hudi-rs on the same
table and filter. Not a test: numbers depend on the machine.

The secondary-index case (``--case secondary``) writes a table of at least 2,000
file groups (``--files``) whose ``merchant`` values are spread at random over the
files, so column stats cannot prune, with a secondary index on ``merchant`` and
an unindexed copy of the column, ``merchant_plain``. ``merchant = v`` and
``merchant IN (v1..v10)`` run against the same filters on ``merchant_plain``
(the metadata table's other indexes only): files read, the minimum (the file
groups that hold the values, from the data), query time and planning time,
side by side.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import math
import os
import pstats
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import hudi
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import hudi_ray
from hudi_testkit import CowTableSpec, CowTableWriter, MetadataTableOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Case, interleaved, medians

DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "data_skipping"
SECONDARY_DIR = Path(__file__).resolve().parent / ".data" / "data_skipping_secondary"
ROWS_PER_MERCHANT = 5
SECONDARY_SCHEMA = pa.schema(
    [
        pa.field("txn_id", pa.string(), nullable=False),
        pa.field("merchant", pa.string()),
        pa.field("merchant_plain", pa.string()),
        pa.field("amount", pa.float64()),
    ]
)
ZIP = "10001"
FILTER = [("zip_code", "=", ZIP)]
COMMITS = 5  # the states are written in this many commits
# (state, first zip, last zip): US zip code ranges by state.
STATES = [
    ("MA", 1000, 2799), ("RI", 2800, 2999), ("NH", 3000, 3899), ("ME", 3900, 4999), ("VT", 5000, 5999),
    ("CT", 6000, 6999), ("NJ", 7000, 8999), ("NY", 10000, 14999), ("PA", 15000, 19699), ("DE", 19700, 19999),
    ("MD", 20600, 21999), ("VA", 22000, 24699), ("WV", 24700, 26999), ("NC", 27000, 28999), ("SC", 29000, 29999),
    ("GA", 30000, 31999), ("FL", 32000, 34999), ("AL", 35000, 36999), ("TN", 37000, 38599), ("MS", 38600, 39799),
    ("KY", 40000, 42799), ("OH", 43000, 45999), ("IN", 46000, 47999), ("MI", 48000, 49999), ("IA", 50000, 52899),
    ("WI", 53000, 54999), ("MN", 55000, 56799), ("SD", 57000, 57799), ("ND", 58000, 58899), ("MT", 59000, 59999),
    ("IL", 60000, 62999), ("MO", 63000, 65899), ("KS", 66000, 67999), ("NE", 68000, 69399), ("LA", 70000, 71499),
    ("AR", 71600, 72999), ("OK", 73000, 74999), ("TX", 75000, 79999), ("CO", 80000, 81699), ("WY", 82000, 83199),
    ("ID", 83200, 83899), ("UT", 84000, 84799), ("AZ", 85000, 86599), ("NM", 87000, 88499), ("NV", 88900, 89899),
    ("CA", 90000, 96199), ("HI", 96700, 96899), ("OR", 97000, 97999), ("WA", 98000, 99499), ("AK", 99500, 99999),
]  # fmt: skip
SCHEMA = pa.schema(
    [
        pa.field("order_id", pa.string(), nullable=False),
        pa.field("state", pa.string()),
        pa.field("zip_code", pa.string()),
        pa.field("city", pa.string()),
        pa.field("street", pa.string()),
        pa.field("order_ts", pa.timestamp("us", tz="UTC")),
        pa.field("amount", pa.float64()),
    ]
)


def state_rows(index: int, rows: int, first_order: int) -> pa.Table:
    """One state's orders, sorted by zip code (so consecutive files cover adjacent ranges)."""
    state, lo, hi = STATES[index]
    rng = np.random.default_rng(index)
    zips = np.sort(rng.integers(lo, hi + 1, rows))
    if state == "NY":
        zips[:: max(1, rows // 7)] = int(ZIP)  # a few orders to find
        zips.sort()
    zip_codes = pc.utf8_lpad(pc.cast(pa.array(zips), pa.string()), 5, "0")
    orders = pa.array(np.arange(first_order, first_order + rows))
    return pa.table(
        {
            "order_id": pc.binary_join_element_wise("order-", pc.utf8_lpad(pc.cast(orders, pa.string()), 9, "0"), ""),
            "state": pa.repeat(pa.scalar(state), rows),
            "zip_code": zip_codes,
            "city": pc.binary_join_element_wise(f"{state}-city-", pc.utf8_slice_codeunits(zip_codes, 0, 3), ""),
            "street": pc.binary_join_element_wise(
                pc.cast(pa.array(rng.integers(1, 9999, rows)), pa.string()), "Main St", " "
            ),
            "order_ts": pa.array(1_704_067_200_000_000 + rng.integers(0, 31_536_000_000_000, rows), pa.int64()).cast(
                pa.timestamp("us", tz="UTC")
            ),
            "amount": pa.array(np.round(rng.uniform(5, 500, rows), 2)),
        },
        schema=SCHEMA,
    )


def prepare(path: Path, files: int, rows_per_file: int) -> dict[str, int]:
    params = {"files": files, "rows_per_file": rows_per_file, "states": len(STATES)}
    marker = path / "benchmark.json"
    if marker.is_file() and json.loads(marker.read_text()) == params:
        print(f"Reusing the table at {path}")
        return params
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    per_state = math.ceil(files / len(STATES))
    started = time.perf_counter()
    spec = CowTableSpec("shipping_address", "order_id", "state", None, table_version=9, hive_style=True)
    writer = CowTableWriter.create(
        path, spec, SCHEMA, rows_per_file=rows_per_file, metadata_table=MetadataTableOptions()
    )
    chunk = math.ceil(len(STATES) / COMMITS)
    first = 0
    for c in range(0, len(STATES), chunk):
        tables = []
        for i in range(c, min(c + chunk, len(STATES))):
            tables.append(state_rows(i, per_state * rows_per_file, first))
            first += per_state * rows_per_file
        t0 = time.perf_counter()
        result = writer.upsert(pa.concat_tables(tables))
        print(f"  commit {result.instant_time}: {len(result.files)} files in {time.perf_counter() - t0:.1f}s")
    print(f"Wrote {first:,} rows in {time.perf_counter() - started:.1f}s to {path}")
    marker.write_text(json.dumps(params))
    return params


def minimum_files(path: Path, slices: list) -> int:
    """Base files whose actual zip codes span 10001 (min <= 10001 <= max): no index can do better."""
    n = 0
    for s in slices:
        zips = pq.read_table(path / s.base_file_relative_path(), columns=["zip_code"])["zip_code"]
        mm = pc.min_max(zips)
        n += mm["min"].as_py() <= ZIP <= mm["max"].as_py()
    return n


def median_times(cases: dict[str, Callable[[], object]], reps: int) -> dict[str, float]:
    """Median seconds per case; each repetition runs every case once, in a rotated order."""
    names = list(cases)
    times: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            started = time.perf_counter()
            cases[name]()
            times[name].append(time.perf_counter() - started)
    return {n: statistics.median(t) for n, t in times.items()}


# -- secondary index ------------------------------------------------------------------------------


def prepare_secondary(path: Path, files: int, rows_per_file: int) -> None:
    """One commit of ``files`` file groups; each merchant's rows land in random files."""
    params = {"files": files, "rows_per_file": rows_per_file, "rows_per_merchant": ROWS_PER_MERCHANT}
    marker = path / "benchmark.json"
    if marker.is_file() and json.loads(marker.read_text()) == params:
        print(f"Reusing the table at {path}")
        return
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = files * rows_per_file
    rng = np.random.default_rng(31)
    merchants = rng.permutation(np.arange(rows) // ROWS_PER_MERCHANT)
    names = pc.binary_join_element_wise(
        "merchant-", pc.utf8_lpad(pc.cast(pa.array(merchants), pa.string()), 7, "0"), ""
    )
    ids = pc.binary_join_element_wise("txn-", pc.utf8_lpad(pc.cast(pa.array(np.arange(rows)), pa.string()), 9, "0"), "")
    table = pa.table(
        {"txn_id": ids, "merchant": names, "merchant_plain": names, "amount": pa.array(rng.uniform(1, 500, rows))},
        schema=SECONDARY_SCHEMA,
    )
    spec = CowTableSpec("merchant_txns", "txn_id", None, None, table_version=9)
    options = MetadataTableOptions(secondary_indexes=(("merchant_idx", "merchant"),))
    started = time.perf_counter()
    writer = CowTableWriter.create(path, spec, SECONDARY_SCHEMA, rows_per_file=rows_per_file, metadata_table=options)
    result = writer.upsert(table)
    print(f"Wrote {rows:,} rows in {len(result.files):,} files in {time.perf_counter() - started:.1f}s to {path}")
    marker.write_text(json.dumps(params))


def holding_files(path: Path, values: list[str]) -> int:
    """File groups whose rows hold one of ``values``: no index can read fewer."""
    table = pa.Table.from_batches(
        hudi_ray.HudiTableBuilder.from_base_uri(str(path))
        .build()
        .read(hudi_ray.HudiReadOptions(projection=["_hoodie_file_name", "merchant_plain"]))
    )
    hit = table.filter(pc.is_in(table["merchant_plain"], pa.array(values)))
    return len(set(hit["_hoodie_file_name"].to_pylist()))


def secondary_case(args: argparse.Namespace) -> None:
    path = (args.dir or SECONDARY_DIR).resolve()
    files = max(args.files, 2000)
    rows_per_file = min(args.rows_per_file, 50)
    prepare_secondary(path, files, rows_per_file)
    uri = str(path)
    merchants = (files * rows_per_file) // ROWS_PER_MERCHANT
    picks = [f"merchant-{m:07d}" for m in np.random.default_rng(7).choice(merchants, 10, replace=False)]
    queries = {"= v": ("=", picks[0], picks[:1]), "IN (v1..v10)": ("IN", ",".join(picks), picks)}

    def table() -> hudi_ray.HudiTable:
        return hudi_ray.HudiTableBuilder.from_base_uri(uri).build()

    print(
        f"\n{files:,} file groups, {rows_per_file} rows per file, {ROWS_PER_MERCHANT} rows per merchant at random; "
        f"{os.cpu_count()} CPUs; {args.reps} repetitions"
    )
    for label, (op, value, wanted) in queries.items():
        indexed = hudi_ray.HudiReadOptions(filters=[("merchant", op, value)], projection=["txn_id", "merchant"])
        plain = hudi_ray.HudiReadOptions(filters=[("merchant_plain", op, value)], projection=["txn_id", "merchant"])
        expected = ROWS_PER_MERCHANT * len(wanted)
        plan_indexed, plan_plain = table().explain(indexed), table().explain(plain)
        minimum = holding_files(path, wanted)
        print(f"\nQuery merchant {label} ({expected} matching rows)")
        print(plan_indexed)
        print("Files read")
        print(f"  minimum (file groups holding the values)      {minimum:>6,}")
        print(f"  with the secondary index                      {plan_indexed.file_slices:>6,}")
        print(f"  without it (unindexed copy of the column)     {plan_plain.file_slices:>6,}")
        reused = table()
        reused.read(indexed), reused.read(plain)  # the reused table's caches filled once

        def rows(t: hudi_ray.HudiTable, o: hudi_ray.HudiReadOptions) -> int:
            return sum(b.num_rows for b in t.read(o))

        times = medians(
            interleaved(
                [
                    Case("read, with the index", lambda o=indexed: rows(table(), o), expected),
                    Case("read, without it", lambda o=plain: rows(table(), o), expected),
                    Case("read reused, with the index", lambda o=indexed, t=reused: rows(t, o), expected),
                    Case("read reused, without it", lambda o=plain, t=reused: rows(t, o), expected),
                    Case("plan, with the index", lambda o=indexed: len(table().get_file_slices(o))),
                    Case("plan, without it", lambda o=plain: len(table().get_file_slices(o))),
                ],
                args.reps,
                warm_up=True,
            )
        )
        print("Runtime (median; table opened in each run, or one table reused)")
        for name, seconds in times.items():
            print(f"  {name:<30} {seconds * 1000:9.1f} ms")
        read = times["read, without it"] / times["read, with the index"]
        again = times["read reused, without it"] / times["read reused, with the index"]
        plan = times["plan, without it"] / times["plan, with the index"]
        print(f"  read without / with the index: {read:.1f}x (table opened), {again:.1f}x (table reused)")
        print(f"  planning without / with the index: {plan:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=("zip", "secondary", "all"), default="all")
    parser.add_argument(
        "--files", type=int, default=2100, help="base files in all (at least 2000 for the blog's shape)"
    )
    parser.add_argument("--rows-per-file", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    if args.case in ("secondary", "all"):
        secondary_case(args)
    if args.case in ("zip", "all"):
        zip_case(args)


def zip_case(args: argparse.Namespace) -> None:
    path = (args.dir or DEFAULT_DIR).resolve()  # hudi-rs needs an absolute path
    uri = str(path)
    prepare(path, args.files, args.rows_per_file)

    def ours(mdt: bool = True) -> hudi_ray.HudiTable:
        builder = hudi_ray.HudiTableBuilder.from_base_uri(uri)
        return builder.build() if mdt else builder.with_hudi_option("hoodie.metadata.enable", "false").build()

    with_filter = hudi_ray.HudiReadOptions(filters=FILTER, projection=["zip_code"])
    everything = hudi_ray.HudiReadOptions(projection=["zip_code"])
    all_slices = ours().get_file_slices()
    minimum = minimum_files(path, all_slices)
    plan_mdt = ours().explain(hudi_ray.HudiReadOptions(filters=FILTER))
    plan_footers = ours(False).explain(hudi_ray.HudiReadOptions(filters=FILTER))
    plan_all = ours(False).explain()

    def query_indexes() -> int:
        return sum(b.num_rows for b in ours().read(with_filter))

    def query_footers() -> int:
        return sum(b.num_rows for b in ours(False).read(with_filter))

    def query_full_scan() -> int:
        table = pa.Table.from_batches(ours(False).read(everything))
        return table.filter(pc.equal(table["zip_code"], ZIP)).num_rows

    matches = {query_indexes(), query_footers(), query_full_scan()}
    theirs = hudi.HudiTableBuilder.from_base_uri(uri).build()
    rs_rows = sum(b.num_rows for b in theirs.read(hudi.HudiReadOptions(filters=FILTER)))
    if len(matches | {rs_rows}) != 1:
        sys.exit(f"Readers disagree on the matching rows: hudi_ray {matches}, hudi-rs {rs_rows}")

    print(
        f"\n{len({s.partition_path for s in all_slices})} partitions, {len(all_slices):,} base files, "
        f"{args.rows_per_file} rows per file; {os.cpu_count()} CPUs; pyarrow {pa.__version__}; "
        f"{args.reps} repetitions"
    )
    print(f"Query: zip_code = '{ZIP}' ({rs_rows} matching rows in hudi_ray and hudi-rs alike)\n")
    print(plan_mdt)
    print()
    read_mdt, read_footers, read_all = plan_mdt.file_slices, plan_footers.file_slices, plan_all.file_slices
    print("Files read")
    print(f"  minimum (files whose zip range spans {ZIP})           {minimum:>6,}")
    print(f"  (a) with indexes: partition stats + column stats       {read_mdt:>6,}")
    print(f"  (b) without indexes: storage listing + footer stats    {read_footers:>6,}")
    print(f"  (c) without indexes and without pruning (full scan)    {read_all:>6,}")
    within = read_mdt <= minimum * 1.1
    print(f"  with indexes vs minimum: {read_mdt / max(minimum, 1):.2f}x ({'within' if within else 'NOT within'} 10%)")
    print(f"  without indexes (full scan) vs with: {read_all / max(read_mdt, 1):.0f}x more files\n")

    medians = median_times(
        {"(a) indexes": query_indexes, "(b) footer stats": query_footers, "(c) full scan": query_full_scan},
        args.reps,
    )
    print("Query runtime (median, table opened in each run)")
    for name, seconds in medians.items():
        print(f"  {name:<18} {seconds * 1000:9.1f} ms")
    a, b, c = medians["(a) indexes"], medians["(b) footer stats"], medians["(c) full scan"]
    print(f"  with / without indexes (full scan): {a / c:.3f} ({(1 - a / c) * 100:.0f}% less time)")
    print(f"  with / without indexes (footer stats): {a / b:.3f} ({(1 - a / b) * 100:.0f}% less time)\n")

    opts_ours = hudi_ray.HudiReadOptions(filters=FILTER)
    opts_rs = hudi.HudiReadOptions(filters=FILTER)
    built_ours, built_rs = ours(), hudi.HudiTableBuilder.from_base_uri(uri).build()
    built_ours.get_file_slices(opts_ours)
    built_rs.get_file_slices(opts_rs)
    planning = median_times(
        {
            "hudi_ray (metadata table), table opened": lambda: ours().get_file_slices(opts_ours),
            "hudi-rs, table opened": lambda: hudi.HudiTableBuilder.from_base_uri(uri).build().get_file_slices(opts_rs),
            "hudi_ray (metadata table), table reused": lambda: built_ours.get_file_slices(opts_ours),
            "hudi-rs, table reused": lambda: built_rs.get_file_slices(opts_rs),
        },
        args.reps,
    )
    kept_ours, kept_rs = len(ours().get_file_slices(opts_ours)), len(theirs.get_file_slices(opts_rs))
    print(
        f"Planning: get_file_slices(zip_code = '{ZIP}') (median; slices kept: hudi_ray {kept_ours}, hudi-rs {kept_rs})"
    )
    for name, seconds in planning.items():
        print(f"  {name:<42} {seconds * 1000:9.1f} ms")
    fresh = planning["hudi_ray (metadata table), table opened"] / planning["hudi-rs, table opened"]
    reused = planning["hudi_ray (metadata table), table reused"] / planning["hudi-rs, table reused"]
    print(f"  hudi_ray / hudi-rs: {fresh:.2f} (table opened), {reused:.2f} (table reused)")
    if fresh > 1 or reused > 1:
        print("\nhudi_ray plans slower than hudi-rs; where the time goes (fresh table, cumulative):")
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(5):
            ours().get_file_slices(opts_ours)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        print(out.getvalue())


if __name__ == "__main__":
    main()
