"""What the compiled (numba) kernels cost a process: compiling, loading them from the cache,
and a fresh Ray worker's first merge-on-read slice.

    python benchmarks/compile_cost.py [--table D] [--no-ray]

Reads ``mor_scan``'s table (benchmarks/.data/mor_scan/table: run mor_scan.py
first) or ``--table``. Every measure runs in a fresh Python process, side by
side with the same slice read-optimized (base file only: no compiled code):

1. ``import hudi_ray``: its time, and whether numba was imported (it must not be);
2. the first merge-on-read slice of a process whose numba cache is empty (a
   fresh machine: the kernels compile and are cached), and the second slice;
3. the same with the cache filled (every later process);
4. a fresh Ray worker's first merge-on-read slice and its second.

The extra cost of the first slice over the second is what the compiled code
costs that process. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_TABLE = HERE / ".data" / "mor_scan" / "table"

# Runs in a fresh interpreter: prints one JSON line of timings.
_CHILD = r"""
import json, sys, time
started = time.perf_counter()
import hudi_ray
imported = time.perf_counter() - started
numba_at_import = "numba" in sys.modules
table = hudi_ray.HudiTableBuilder.from_base_uri(sys.argv[1]).build()
slices = [s for s in table.get_file_slices() if s.log_file_names][:2]
ro = hudi_ray.HudiReadOptions().with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
reader = table.create_file_group_reader_with_options()
ro_reader = table.create_file_group_reader_with_options(ro)
out = {"import": imported, "numba_at_import": numba_at_import}
for i, s in enumerate(slices):
    t = time.perf_counter(); ro_reader.read_file_slice(s); out[f"ro{i}"] = time.perf_counter() - t
    t = time.perf_counter(); reader.read_file_slice(s); out[f"mor{i}"] = time.perf_counter() - t
out["numba_after"] = "numba" in sys.modules
print(json.dumps(out))
"""


def _child(table: Path, cache: Path) -> dict[str, float]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(table)], env=env, capture_output=True, text=True, timeout=900, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def _ray_worker(table: Path, cache: Path) -> dict[str, float]:
    import ray

    ray.init(
        num_cpus=1,
        include_dashboard=False,
        logging_level="warning",
        runtime_env={"env_vars": {"NUMBA_CACHE_DIR": str(cache)}},
    )
    try:

        @ray.remote(max_calls=0)
        def first_slices(uri: str) -> dict[str, float]:
            import time

            import hudi_ray

            table = hudi_ray.HudiTableBuilder.from_base_uri(uri).build()
            slices = [s for s in table.get_file_slices() if s.log_file_names][:2]
            reader = table.create_file_group_reader_with_options()
            out = {}
            for i, s in enumerate(slices):
                t = time.perf_counter()
                reader.read_file_slice(s)
                out[f"mor{i}"] = time.perf_counter() - t
            return out

        return ray.get(first_slices.remote(str(table)))
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray worker measure")
    args = parser.parse_args()
    if not (args.table / ".hoodie").is_dir():
        sys.exit(f"No table at {args.table}: run benchmarks/mor_scan.py first, or pass --table")
    with tempfile.TemporaryDirectory(prefix="hudi-ray-compile-cost-") as tmp:
        cache = Path(tmp) / "numba-cache"
        cold = _child(args.table, cache)
        warm = _child(args.table, cache)
        print(f"table {args.table}; each line a fresh process (numba cache in a new directory for this run)")
        print(f"import hudi_ray: {cold['import']:.2f}s cold, {warm['import']:.2f}s warm; ", end="")
        print(f"numba imported by it: {cold['numba_at_import'] or warm['numba_at_import']}")
        head = ("process", "1st MOR slice", "2nd MOR slice", "1st slice RO", "compiled code costs")
        print(f"{head[0]:28} {head[1]:>14} {head[2]:>14} {head[3]:>13} {head[4]:>20}")
        for label, r in (("empty cache (compiles)", cold), ("cache filled (loads)", warm)):
            extra = r["mor0"] - r["mor1"]
            print(f"{label:28} {r['mor0']:13.2f}s {r['mor1']:13.2f}s {r['ro0']:12.2f}s {extra:19.2f}s")
        if not args.no_ray:
            ray_run = _ray_worker(args.table, cache)
            extra = ray_run["mor0"] - ray_run["mor1"]
            label = "fresh Ray worker, cache filled"
            print(f"{label:28} {ray_run['mor0']:13.2f}s {ray_run['mor1']:13.2f}s {'':>13} {extra:19.2f}s")


if __name__ == "__main__":
    main()
