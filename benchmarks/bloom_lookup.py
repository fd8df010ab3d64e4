"""Record-key lookups pruned by the bloom filters in base file footers, on tables without a
record index, written by inserts.

    python benchmarks/bloom_lookup.py [--versions 6,9] [--files N] [--rows-per-file R]
                                      [--bloom-entries E|hudi] [--reps K] [--dir D]

Each table holds ``--files`` file groups (at least 2,000) written by ten INSERT commits,
random record keys (so key ranges overlap and column stats cannot prune), a bloom filter
per base file as Hudi writes one, and ``key_copy``, an unindexed copy of the key. Table
version 6 has no metadata table (filters come from footers); version 9 has one with files,
column stats and the ``bloom_filters`` partition but no record index. ``--bloom-entries
hudi`` sizes filters as Hudi's defaults do (60,000 keys, fpp 1e-9: 431 KB of footer text
per file); a number sizes them for that many keys, as a table tuned with
``hoodie.index.bloom.num_entries`` has.

``key = k`` and ``key IN (100 keys)`` run against the same filters on ``key_copy``
(every file read, the same filter machinery, no bloom filter) and against hudi-rs with the
key filter. Each run opens the table, as a user's query would; "reused" runs keep one
table (its footers cached). Files read come from ``explain()``. Tables are written once
under benchmarks/.data and reused while their parameters match. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import hudi
import numpy as np
import pyarrow as pa

import hudi_ray
from hudi_testkit import BloomFilterSpec, CowTableSpec, CowTableWriter, MetadataTableOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Case, interleaved, medians

DATA = Path(__file__).resolve().parent / ".data"
COMMITS = 10
PARTITIONS = 10
SCHEMA = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("key_copy", pa.string()),
        pa.field("region", pa.string()),
        pa.field("amount", pa.float64()),
        pa.field("ts", pa.int64()),
        pa.field("note", pa.string()),
    ]
)


def _rows(rng: np.random.Generator, count: int) -> pa.Table:
    raw = rng.integers(0, 2**63, size=(count, 2), dtype=np.int64)
    keys = pa.array([f"{a:016x}{b:016x}" for a, b in raw.tolist()], pa.string())
    return pa.table(
        {
            "key": keys,
            "key_copy": keys,
            "region": pa.array([f"r{i % PARTITIONS}" for i in range(count)]),
            "amount": pa.array(np.round(rng.uniform(1, 1000, count), 2)),
            "ts": pa.array(rng.integers(1_700_000_000_000, 1_800_000_000_000, count)),
            "note": pa.array([f"note {i % 9973} of the order" for i in range(count)]),
        },
        schema=SCHEMA,
    )


def prepare(path: Path, version: int, files: int, rows_per_file: int, bloom: BloomFilterSpec) -> None:
    params = {"version": version, "files": files, "rows_per_file": rows_per_file, "bloom": bloom.__dict__}
    marker = path / "benchmark.json"
    if marker.is_file() and json.loads(marker.read_text()) == params:
        print(f"Reusing the table at {path}")
        return
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    spec = CowTableSpec("bloom_lookup", "key", "region", None, table_version=version)
    mdt = MetadataTableOptions(record_index=False, bloom_filters=True) if version >= 8 else False
    writer = CowTableWriter.create(
        path, spec, SCHEMA, rows_per_file=rows_per_file, metadata_table=mdt, bloom_filter=bloom
    )
    rng = np.random.default_rng(version)
    started = time.perf_counter()
    for _ in range(COMMITS):
        writer.insert(_rows(rng, files // COMMITS * rows_per_file))
    print(f"Wrote {files * rows_per_file:,} rows in {files:,} files in {time.perf_counter() - started:.1f}s to {path}")
    marker.write_text(json.dumps(params))


def run_version(args: argparse.Namespace, version: int, bloom: BloomFilterSpec) -> None:
    label = "hudi" if args.bloom_entries == "hudi" else args.bloom_entries
    path = (args.dir or DATA).resolve() / f"bloom_lookup_v{version}_{label}"
    files = max(args.files, 2000)
    prepare(path, version, files, args.rows_per_file, bloom)
    uri = str(path)

    def ours() -> hudi_ray.HudiTable:
        return hudi_ray.HudiTableBuilder.from_base_uri(uri).build()

    keys = pa.Table.from_batches(ours().read(hudi_ray.HudiReadOptions(projection=["key"])))["key"]
    picks = [keys[int(i)].as_py() for i in np.random.default_rng(11).choice(len(keys), 100, replace=False)]
    queries = {"key = k": ("=", picks[0], 1), "key IN (100 keys)": ("IN", ",".join(picks), 100)}
    footer = os.path.getsize(next(path.rglob("*.parquet"))) if args.rows_per_file else 0
    print(
        f"\nTable version {version}: {files:,} file groups in {PARTITIONS} partitions, {args.rows_per_file:,} rows "
        f"per file ({footer / 1024:.0f} KiB a file), bloom filters for {bloom.num_entries:,} keys "
        f"({bloom.bits / 8 / 1024 * 4 / 3:.0f} KiB of footer text); {os.cpu_count()} CPUs; {args.reps} repetitions"
    )
    for name, (op, value, expected) in queries.items():
        pruned = hudi_ray.HudiReadOptions(filters=[("key", op, value)], projection=["key", "amount"])
        plain = hudi_ray.HudiReadOptions(filters=[("key_copy", op, value)], projection=["key", "amount"])
        rs_options = hudi.HudiReadOptions(filters=[("key", op, value)], projection=["key", "amount"])
        plan = ours().explain(pruned)
        unpruned = ours().explain(plain).file_slices
        print(f"\nQuery {name} ({expected} matching rows)")
        print(plan)
        print(f"  file groups read: {plan.file_slices:,} of {unpruned:,} ({plan.file_slices / unpruned:.2%})")
        reused = ours()
        reused.read(pruned), reused.read(plain)

        def rows(t: hudi_ray.HudiTable, o: hudi_ray.HudiReadOptions) -> int:
            return sum(b.num_rows for b in t.read(o))

        def rs(o: hudi.HudiReadOptions = rs_options) -> int:
            table = hudi.HudiTableBuilder.from_base_uri(uri).build()
            return sum(b.num_rows for b in table.read(o))

        times = medians(
            interleaved(
                [
                    Case("plan + read, bloom filters", lambda o=pruned: rows(ours(), o), expected),
                    Case("plan + read, no pruning", lambda o=plain: rows(ours(), o), expected),
                    Case("reused table, bloom filters", lambda o=pruned, t=reused: rows(t, o), expected),
                    Case("reused table, no pruning", lambda o=plain, t=reused: rows(t, o), expected),
                    Case("plan only, bloom filters", lambda o=pruned: len(ours().get_file_slices(o))),
                    Case("hudi-rs, plan + read", rs, expected),
                ],
                args.reps,
                warm_up=True,
            )
        )
        for case, seconds in times.items():
            print(f"  {case:<30} {seconds * 1000:9.1f} ms")
        fresh = times["plan + read, no pruning"] / times["plan + read, bloom filters"]
        again = times["reused table, no pruning"] / times["reused table, bloom filters"]
        versus_rs = times["hudi-rs, plan + read"] / times["plan + read, bloom filters"]
        print(f"  no pruning / bloom filters: {fresh:.1f}x (table opened), {again:.1f}x (table reused)")
        print(f"  hudi-rs / hudi_ray with bloom filters: {versus_rs:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--versions", default="6,9")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rows-per-file", type=int, default=5000)
    parser.add_argument("--bloom-entries", default="hudi", help="'hudi' (Hudi's defaults) or keys per filter")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    if args.bloom_entries == "hudi":
        bloom = BloomFilterSpec()
    else:
        entries = int(args.bloom_entries)
        bloom = BloomFilterSpec(num_entries=entries, max_entries=max(entries, 100_000))
    for version in (int(v) for v in args.versions.split(",")):
        run_version(args, version, bloom)


if __name__ == "__main__":
    main()
