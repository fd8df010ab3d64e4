"""The reader's memory policy: each read shape in fresh processes, under Arrow's own jemalloc
configuration, under hudi-ray's (``JE_ARROW_MALLOC_CONF=muzzy_decay_ms:-1``, which ``import
hudi_ray`` sets when pyarrow has not loaded yet) and with mimalloc, the other pool.

    python benchmarks/memory_pool.py [--rounds N] [--calls K]

Shapes: ``read`` (the whole table at once), ``read_stream`` (batch after batch) and a loop of
``read_file_slice`` over the table's slices (one contiguous batch each), on cow_scan's table
(5M rows, copy-on-write) and mor_scan's (5M rows, 20% of keys updated); each writes its table
under benchmarks/.data when it is missing. Each process makes ``--calls`` calls and reports its
best after the first, its peak RSS, and its RSS after a 3 s pause (freed memory jemalloc kept,
and what of it the kernel may take back, ``LazyFree``). ``--rounds`` runs everything again,
interleaved. Ratios are against Arrow's configuration, in the same round. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

_CHILD = r"""
import json, sys, time
import hudi_ray  # first: it configures jemalloc when the environment does not
shape, uri, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
table = hudi_ray.HudiTableBuilder.from_base_uri(uri).build()
slices = table.get_file_slices()

def read() -> int:
    return sum(b.num_rows for b in table.read())

def read_stream() -> int:
    return sum(b.num_rows for b in table.read_stream())

def slice_loop() -> int:
    reader = table.create_file_group_reader_with_options()
    return sum(reader.read_file_slice(s).num_rows for s in slices)

def status(*keys: str) -> dict:
    out = {}
    for path in ("/proc/self/status", "/proc/self/smaps_rollup"):
        try:
            for line in open(path):
                name, _, rest = line.partition(":")
                if name in keys:
                    out[name] = int(rest.split()[0]) // 1024
        except OSError:
            pass
    return out

fn = {"read": read, "read_stream": read_stream, "slice loop": slice_loop}[shape]
times = []
for _ in range(calls):
    started = time.perf_counter()
    rows = fn()
    times.append(time.perf_counter() - started)
time.sleep(3)
idle = status("Rss", "LazyFree")
print(json.dumps({"best": min(times[1:]), "rows": rows, "peak": status("VmHWM").get("VmHWM"),
                  "idle": idle.get("Rss"), "lazy": idle.get("LazyFree")}))
"""

POLICIES = {
    "Arrow's jemalloc": {"JE_ARROW_MALLOC_CONF": ""},
    "hudi-ray's jemalloc": {},
    "mimalloc": {"HUDI_RAY_MEMORY_POOL": "mimalloc"},
}
SHAPES = ("read", "read_stream", "slice loop")


def tables() -> dict[str, Path]:
    import cow_scan
    import mor_scan

    cow = cow_scan.DEFAULT_DIR / "table"
    cow_scan.prepare(cow, 5_000_000, 24)
    args = argparse.Namespace(rows=5_000_000, files=24, table_version=9, update_fraction=mor_scan.UPDATE_FRACTION)
    mor, _ = mor_scan.prepare(HERE / ".data" / "mor_scan", args)
    return {"cow": cow, "mor": mor}


def child(shape: str, uri: Path, calls: int, env: dict[str, str]) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("JE_ARROW_MALLOC_CONF", "HUDI_RAY_MEMORY_POOL")}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, shape, str(uri), str(calls)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=4)
    args = parser.parse_args()
    runs: dict[tuple[str, str, str], list[dict]] = {}
    paths = tables()
    for _ in range(args.rounds):
        for name, uri in paths.items():
            for shape in SHAPES:
                for policy, env in POLICIES.items():
                    runs.setdefault((name, shape, policy), []).append(child(shape, uri, args.calls, env))
    print(f"{os.cpu_count()} CPUs; medians over {args.rounds} rounds of fresh processes, best of calls 2-{args.calls}")
    head = ("table", 5), ("shape", 12), ("policy", 20), ("time", -8), ("ratio", -6), ("peak", -9), ("idle RSS", -9)
    print(" ".join(f"{t:<{w}}" if w > 0 else f"{t:>{-w}}" for t, w in head), f"{'LazyFree':>9}")
    for name in paths:
        for shape in SHAPES:
            base = statistics.median(r["best"] for r in runs[(name, shape, "Arrow's jemalloc")])
            for policy in POLICIES:
                got = runs[(name, shape, policy)]
                best = statistics.median(r["best"] for r in got)

                def mib(key: str, got: list[dict] = got) -> str:
                    values = [r[key] for r in got if r.get(key) is not None]
                    return f"{statistics.median(values):,.0f} MiB" if values else "-"

                print(
                    f"{name:<5} {shape:<12} {policy:<20} {best:7.3f}s {base / best:5.2f}x "
                    f"{mib('peak'):>9} {mib('idle'):>9} {mib('lazy'):>9}"
                )


if __name__ == "__main__":
    main()
