"""What a fresh process pays before its first answer: ``import hudi_ray``, the CLI's
``info``, planning a table of many files, and a first Ray read, each in a fresh process,
with the same call again in that process beside it.

    python benchmarks/cold_start.py [--reps N] [--no-ray] [--files-table D] [--mor-table D]

* ``import hudi_ray``, and ``import pyarrow`` for scale;
* ``hudi-ray info`` on a small real table, the whole process, beside ``python -c pass``;
* ``get_file_slices`` on the small-files table (benchmarks/small_files.py writes it:
  20,000 base files), first and second call in one fresh process, hudi_ray and hudi-rs;
* on a fresh local Ray (2 CPUs) in a fresh process: ``read_hudi(uri).count()`` first and
  second, and ``ray.data.read_parquet`` of the same base files first and second (Ray's own
  cold cost), on mor_scan's table (benchmarks/mor_scan.py writes it).

Medians of ``--reps`` fresh processes. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED_TABLE = "sample_table/cow/v6_complexkeygen_hivestyle"

_IMPORT = r"""
import json, time
t = time.perf_counter()
import pyarrow
a = time.perf_counter() - t
t = time.perf_counter()
import hudi_ray
b = time.perf_counter() - t
print(json.dumps({"import pyarrow": a, "import hudi_ray (after pyarrow)": b}))
"""

_IMPORT_ALONE = r"""
import json, time
t = time.perf_counter()
import hudi_ray
a = time.perf_counter() - t
t = time.perf_counter()
hudi_ray.HudiTableBuilder
b = time.perf_counter() - t
print(json.dumps({"import hudi_ray": a, "then HudiTableBuilder": b}))
"""

_SLICES = r"""
import json, sys, time
t0 = time.perf_counter()
if sys.argv[2] == "hudi_ray":
    import hudi_ray as lib
else:
    import hudi as lib
imported = time.perf_counter() - t0
out = {}
for n in (1, 2):
    t = time.perf_counter()
    table = lib.HudiTableBuilder.from_base_uri(sys.argv[1]).build()
    slices = table.get_file_slices()
    out[f"call {n}"] = time.perf_counter() - t
out["import"] = imported
out["slices"] = len(slices)
print(json.dumps(out))
"""

_RAY = r"""
import json, sys, time
import ray
ray.init(num_cpus=2, include_dashboard=False, logging_level="error")
uri, files = sys.argv[1], json.loads(sys.argv[2])
out = {}
if sys.argv[3] == "hudi_ray":
    from hudi_ray import read_hudi
    for n in (1, 2):
        t = time.perf_counter()
        rows = read_hudi(uri).count()
        out[f"call {n}"] = time.perf_counter() - t
else:
    for n in (1, 2):
        t = time.perf_counter()
        rows = ray.data.read_parquet(files).count()
        out[f"call {n}"] = time.perf_counter() - t
out["rows"] = rows
print(json.dumps(out))
"""


def _child(code: str, *args: str, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _wall(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, capture_output=True, timeout=300, check=True)
    return time.perf_counter() - started


def _medians(runs: list[dict]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0] if isinstance(runs[0][k], float)}


def _show(title: str, values: dict[str, float]) -> None:
    print(title)
    for k, v in values.items():
        print(f"  {k:<34} {v * 1000:9.0f} ms")


def _small_table(tmp: Path) -> Path:
    shared = REPO.parent / "shared" / "hudi-tables" / f"{SHARED_TABLE}.zip"
    dest = tmp / SHARED_TABLE
    if not dest.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(shared) as zf:
            zf.extractall(dest.parent, [m for m in zf.namelist() if not m.startswith("__MACOSX/")])
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--files-table", type=Path, default=HERE / ".data" / "small_files" / "table")
    parser.add_argument("--mor-table", type=Path, default=HERE / ".data" / "mor_scan" / "table")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, medians of {args.reps} fresh processes\n")

    _show("import", _medians([_child(_IMPORT) for _ in range(args.reps)]))
    _show("import, names on first use", _medians([_child(_IMPORT_ALONE) for _ in range(args.reps)]))

    small = _small_table(HERE / ".data" / "cold_start")
    cli = str(Path(sys.executable).with_name("hudi-ray"))
    info = statistics.median(_wall([cli, "info", str(small)]) for _ in range(args.reps))
    empty = statistics.median(_wall([sys.executable, "-c", "pass"]) for _ in range(args.reps))
    _show(f"hudi-ray info ({SHARED_TABLE}), whole process", {"hudi-ray info": info, "python -c pass": empty})

    if args.files_table.is_dir():
        for lib in ("hudi_ray", "hudi"):
            runs = [_child(_SLICES, str(args.files_table), lib) for _ in range(args.reps)]
            _show(f"get_file_slices, {runs[0]['slices']:,} slices, {lib}, fresh process", _medians(runs))
    else:
        print(f"(no {args.files_table}: run benchmarks/small_files.py for the planning case)")

    if not args.no_ray and args.mor_table.is_dir():
        files = sorted(str(p) for p in args.mor_table.rglob("*.parquet") if ".hoodie" not in p.parts)
        by_name = {}
        for path in files:  # the latest base file of each file group
            group = Path(path).name.split("_")[0]
            by_name[group] = max(by_name.get(group, path), path, key=lambda p: Path(p).name.split("_")[-1])
        base = json.dumps(sorted(by_name.values()))
        ours = _medians([_child(_RAY, str(args.mor_table), base, "hudi_ray") for _ in range(args.reps)])
        theirs = _medians([_child(_RAY, str(args.mor_table), base, "parquet") for _ in range(args.reps)])
        _show("fresh Ray, read_hudi(uri).count()", ours)
        _show("fresh Ray, ray.data.read_parquet(base files).count()", theirs)
        ray_cold = theirs["call 1"] - theirs["call 2"]
        budget = ours["call 2"] + ray_cold + 0.5
        print(f"  first read_hudi {ours['call 1']:.2f} s; target: second {ours['call 2']:.2f} s + Ray's cold cost")
        print(f"  {ray_cold:.2f} s + 0.5 s = {budget:.2f} s ({'met' if ours['call 1'] <= budget else 'not met'})")


if __name__ == "__main__":
    main()
