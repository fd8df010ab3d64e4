"""Local-disk reads of this work tree against an earlier revision, interleaved in one run.

    python benchmarks/revisions.py --rev REV [--new REV] [--reps N] [--cases cow,mor,small,...]

The revision's ``hudi_ray`` and ``core`` are unpacked (``git archive``) into a
temporary folder laid out as the installed package, and each timed read runs
in a fresh child process, alternately with that folder first on ``PYTHONPATH``
(the old code) and without (this tree, or the ``--new`` revision unpacked alike), so a noisy stretch of the machine hits
both alike. Each child times ``table.read()`` and draining ``read_stream()``
after building the table. The tables are the ones the other benchmarks write
under ``benchmarks/.data/object_store`` (run ``object_store.py`` first); a
case whose table is missing is skipped.
Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "benchmarks" / ".data"

CHILD = """
import json, sys, time
import hudi_ray
uri, filters = sys.argv[1], json.loads(sys.argv[2])
options = hudi_ray.HudiReadOptions(filters=[tuple(f) for f in filters]) if filters else None
out = {"module": hudi_ray.__file__}
t = time.perf_counter()
table = hudi_ray.HudiTableBuilder.from_base_uri(uri).build()
out["rows"] = sum(b.num_rows for b in table.read(options))
out["read"] = time.perf_counter() - t
t = time.perf_counter()
table = hudi_ray.HudiTableBuilder.from_base_uri(uri).build()
out["stream_rows"] = sum(b.num_rows for b in table.read_stream(options))
out["read_stream"] = time.perf_counter() - t
print(json.dumps(out))
"""


# Case name -> (folder under benchmarks/.data, filters of the timed read).
CASES: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "cow": ("object_store/cow", []),
    "mor": ("object_store/mor", []),
    "small": ("object_store/small", []),
    "cow_scan": ("cow_scan", []),
    "mor_scan": ("mor_scan", []),
    "small_files": ("small_files", []),
    "data_skipping": ("data_skipping", [("zip_code", "=", "10001")]),
}


def _tables() -> dict[str, Path]:
    """The benchmark tables present under benchmarks/.data, by case name."""
    found: dict[str, Path] = {}
    for case, (folder, _) in CASES.items():
        root = DATA / folder
        for path in (root, root / "table"):
            if (path / ".hoodie").is_dir():
                found[case] = path
                break
    return found


def _unpack(rev: str, into: Path) -> Path:
    into.mkdir()
    archive = subprocess.run(["git", "archive", rev, "hudi_ray", "core"], cwd=REPO, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    shutil.move(str(into / "core"), str(into / "hudi_ray" / "core"))
    return into


def _run(uri: Path, filters: list[tuple[str, str, str]], old: Path | None) -> dict:
    env = dict(os.environ)
    if old is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(old), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(uri), json.dumps(filters)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", required=True, help="the revision to compare against (e.g. HEAD~3)")
    parser.add_argument("--new", help="a revision to use instead of this work tree")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated, of: " + ", ".join(CASES))
    args = parser.parse_args()
    tables = _tables()
    cases = [c for c in args.cases.split(",") if c in tables]
    if not cases:
        sys.exit(f"no benchmark tables under {DATA}: run the benchmarks that write them first")
    with tempfile.TemporaryDirectory() as tmp:
        old = _unpack(args.rev, Path(tmp) / "old")
        new = _unpack(args.new, Path(tmp) / "new") if args.new else None
        times: dict[tuple[str, str, str], list[float]] = {}
        for rep in range(args.reps):
            for case in cases:
                order = [("old", old), ("new", new)] if rep % 2 == 0 else [("new", new), ("old", old)]
                for label, path in order:
                    got = _run(tables[case], CASES[case][1], path)
                    expected_root = str(path) if path is not None else str(REPO)
                    if not got["module"].startswith(expected_root):
                        sys.exit(f"{label} run imported {got['module']}, not code under {expected_root}")
                    if got["rows"] != got["stream_rows"]:
                        sys.exit(f"{case} {label}: read gave {got['rows']} rows, read_stream {got['stream_rows']}")
                    for what in ("read", "read_stream"):
                        times.setdefault((case, what, label), []).append(got[what])
        shown_new = args.new or "this tree"
        print(f"{args.reps} interleaved runs per case, medians (best); new = {shown_new}, old = {args.rev}")
        print(f"{'case':<15}{'read':<13}{'old s':>16}{'new s':>16}{'new/old':>10}")
        for case in cases:
            for what in ("read", "read_stream"):
                o, n = times[(case, what, "old")], times[(case, what, "new")]
                ratio = statistics.median(n) / statistics.median(o)
                print(
                    f"{case:<15}{what:<13}{statistics.median(o):>9.3f} ({min(o):.3f}){statistics.median(n):>9.3f} "
                    f"({min(n):.3f}){ratio:>10.2f}"
                )


if __name__ == "__main__":
    main()
