"""Reads from an object store with latency: hudi_ray vs hudi-rs vs pyarrow, over S3 on loopback.

    python benchmarks/object_store.py [--tables cow,mor,v9meta,small] [--latencies 0,20,50] [--reps R]
                                      [--max-seconds S] [--dir D] [--no-ray] [--no-memory]

Starts moto in server mode on loopback and ``hudi_testkit.s3proxy`` in front
of it (each in a subprocess of its own), uploads the tables directly to moto,
then reads them through the proxy, which holds every request ``L`` ms (about
one S3 round trip) for each of ``--latencies``. The tables (``--tables``):

* ``cow``: cow_scan's copy-on-write table, 1,000,000 rows in 200 base files
  (4 region partitions);
* ``mor``: mor_scan's merge-on-read table (version 9), 1,000,000 base rows in
  about 24 files, a delta commit updating 20% of the keys in Avro log blocks
  and one deleting 1%;
* ``v9meta``: the shared ``sample_table/mor/avro/v9_txns_simple_meta``, a
  small merge-on-read table with a metadata table (extracted to a temporary
  directory, removed at the end);
* ``small``: small_files' copy-on-write table of 2,000 files of 20 rows in 20
  partitions (no metadata table).

The generated tables are written once under ``benchmarks/.data/object_store``
(git-ignored) and reused while their shape matches.

For each latency and table it times, interleaved (harness.interleaved), the
median and best of ``--reps`` runs of: hudi_ray's ``table.read`` and
``table.read_stream`` (default batch size, the stream consumed batch by
batch), ``hudi_ray.read_hudi`` on a local Ray with 2 CPUs, hudi-rs's
``read``, and, for the copy-on-write tables, ``pyarrow.dataset`` over the
latest base files through pyarrow's own S3 filesystem (the file list comes
from hudi_ray's ``get_file_slices``, made once, outside the timing: pyarrow
gets the plan for free). For ``v9meta`` also planning alone (``build`` +
``get_file_slices``), hudi_ray and hudi-rs. Every run builds its table, so
timeline loading and planning count.

``read_hudi`` uses the table's named planner actor, which lives across runs
as in a long job: after the untimed warm-up (one ``read_hudi`` per table,
which also starts Ray's workers) each run reloads the timeline, and while it
is unchanged the actor serves the plan it made first.

Each repetition runs every case once; the first run of the readers in this
process is the agreement check before the timings. A hudi-rs or pyarrow case
expected to take over ``--max-seconds`` a run at the next latency (its time,
plus the added latency once per request over its average requests in
flight) is not run there nor above (printed as skipped): on the small-files
table they make 14,000 and 6,000 requests, minutes a run at 50 ms.

For every run the proxy's counters are read and reset (one loopback control
call inside the timed run, about half a millisecond): the requests a run
made (median over runs; a range when runs differ), split into LIST, GET,
ranged GET and HEAD, and the requests in flight: the time-weighted average
over the time at least one request was in flight (median over runs), and
the maximum (over all runs).

Peak RSS cannot be told apart per case in one process (a process's peak
only grows), so it is measured in fresh child processes, one per mode, each
reading the table once through the proxy at the current latency: ``open``
(imports and ``build``: the baseline) and ``read`` at the first latency,
``read_stream`` (whose buffers may grow with latency) at every one. These
are extra runs, not the timed ones.

moto, the proxy, this process and Ray's workers share the machine's CPUs;
moto in server mode spends a few milliseconds of CPU per request, so at 0 ms
request-heavy cases measure moto as much as the reader: the CPU time moto and
the proxy used over each table's runs is printed under its table. Not a
test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hudi
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs

# No "execution finished" line per dataset (read when ray.data is imported).
os.environ.setdefault("RAY_DATA_LOG_LEVEL", "WARNING")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cow_scan
import harness
import mor_scan
import small_files
from harness import Case, peak_rss_mib

import hudi_ray
from hudi_testkit.s3proxy import MotoServer, S3Proxy, storage_options

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "object_store"
SHARED_TABLES = Path(os.environ.get("HUDI_TABLES_DIR", REPO.parent / "shared" / "hudi-tables"))
V9META_ZIP = "sample_table/mor/avro/v9_txns_simple_meta"
BUCKET = "bench"
RAY_CPUS = 2
ALL_TABLES = ("cow", "mor", "v9meta", "small")
KINDS = ("LIST", "GET", "GET range", "HEAD")


def count(batches: Iterable[pa.RecordBatch]) -> int:
    return sum(b.num_rows for b in batches)


# -- the tables ----------------------------------------------------------------------------------


@dataclass
class BenchTable:
    name: str
    local: Path
    copy_on_write: bool
    # What the agreement check found: the section headings show it, the cases expect it.
    shape: str = ""
    rows: int = 0
    slices: int = 0
    base_files: list[str] = field(default_factory=list)  # bucket/key paths of the latest base files

    @property
    def uri(self) -> str:
        return f"s3://{BUCKET}/{self.name}"


def prepare_tables(names: list[str], args: argparse.Namespace, scratch: Path) -> list[BenchTable]:
    root = args.dir.resolve()
    tables = []
    for name in names:
        started = time.perf_counter()
        if name == "cow":
            path = root / "cow"
            cow_scan.prepare(path, args.cow_rows, args.cow_files)
            table = BenchTable(name, path, True)
        elif name == "mor":
            spec = argparse.Namespace(
                rows=args.mor_rows, files=args.mor_files, table_version=9, update_fraction=mor_scan.UPDATE_FRACTION
            )
            path, _ = mor_scan.prepare(root / "mor", spec)
            table = BenchTable(name, path, False)
        elif name == "v9meta":
            zip_path = SHARED_TABLES / f"{V9META_ZIP}.zip"
            if not zip_path.is_file():
                sys.exit(f"{zip_path} not found (set HUDI_TABLES_DIR)")
            with zipfile.ZipFile(zip_path) as zf:
                zf.extractall(scratch, [m for m in zf.namelist() if not m.startswith("__MACOSX/")])
            table = BenchTable(name, scratch / Path(V9META_ZIP).name, False)
        else:
            path = root / "small"
            small_files.prepare(path, args.small_files, 20, 20)
            table = BenchTable(name, path, True)
        print(f"  {name}: ready in {time.perf_counter() - started:.1f}s at {table.local}")
        tables.append(table)
    return tables


def upload(endpoint: str, tables: list[BenchTable]) -> None:
    """Straight to moto, not through the proxy: its counters and latency stay out of it."""
    import s3fs

    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": endpoint})
    fs.mkdir(BUCKET)
    for table in tables:
        started = time.perf_counter()
        files = [p for p in table.local.rglob("*") if p.is_file()]
        fs.put(str(table.local), f"{BUCKET}/{table.name}", recursive=True)
        size = sum(p.stat().st_size for p in files)
        print(
            f"  {table.name}: {len(files):,} files, {size / 2**20:.1f} MiB uploaded "
            f"in {time.perf_counter() - started:.1f}s"
        )


def _ours(table: BenchTable, opts: dict[str, str]) -> hudi_ray.HudiTable:
    return hudi_ray.HudiTableBuilder.from_base_uri(table.uri).with_storage_options(opts).build()


def _theirs(table: BenchTable, opts: dict[str, str]) -> hudi.HudiTable:
    return hudi.HudiTableBuilder.from_base_uri(table.uri).with_storage_options(opts).build()


def pyarrow_s3(endpoint: str) -> pafs.S3FileSystem:
    return pafs.S3FileSystem(
        endpoint_override=endpoint, scheme="http", access_key="testing", secret_key="testing", region="us-east-1"
    )


def check(table: BenchTable, opts: dict[str, str], endpoint: str) -> None:
    """hudi_ray and hudi-rs (and pyarrow on copy-on-write) read as many rows through the proxy."""
    ours = _ours(table, opts)
    slices = ours.get_file_slices()
    rows = {"hudi_ray": count(ours.read()), "hudi-rs": count(_theirs(table, opts).read())}
    logs = sum(len(s.log_file_names) for s in slices)
    if table.copy_on_write:
        table.base_files = [f"{BUCKET}/{table.name}/{s.base_file_relative_path()}" for s in slices]
        rows["pyarrow"] = ds.dataset(table.base_files, format="parquet", filesystem=pyarrow_s3(endpoint)).count_rows()
    if len(set(rows.values())) != 1:
        sys.exit(f"{table.name}: readers disagree on the rows: {rows}")
    table.rows = rows["hudi_ray"]
    table.slices = len(slices)
    table.shape = f"{len(slices):,} file slices" + (f", {logs:,} log files" if logs else "") + f", {table.rows:,} rows"
    print(f"  {table.name}: {table.shape}; {', '.join(rows)} agree")


# -- the cases -----------------------------------------------------------------------------------


def consume(dataset: Any) -> int:
    """Run a Ray dataset to the end, counting rows from block metadata."""
    return sum(bundle.num_rows() or 0 for bundle in dataset.iter_internal_ref_bundles())


def cases(table: BenchTable, opts: dict[str, str], endpoint: str, with_ray: bool) -> list[Case]:
    def read() -> int:
        return count(_ours(table, opts).read())

    def read_stream() -> int:
        return count(_ours(table, opts).read_stream())

    def read_hudi() -> int:
        return consume(hudi_ray.read_hudi(table.uri, storage_options=opts))

    def rs_read() -> int:
        return count(_theirs(table, opts).read())

    def pyarrow_read() -> int:
        return ds.dataset(table.base_files, format="parquet", filesystem=pyarrow_s3(endpoint)).to_table().num_rows

    found = [Case("hudi_ray table.read", read, table.rows), Case("hudi_ray read_stream", read_stream, table.rows)]
    if with_ray:
        found.append(Case(f"hudi_ray read_hudi (Ray, {RAY_CPUS} CPUs)", read_hudi, table.rows))
    found.append(Case("hudi-rs read", rs_read, table.rows))
    if table.copy_on_write:
        found.append(Case("pyarrow.dataset base files", pyarrow_read, table.rows))
    if table.name == "v9meta":
        plan = Case("hudi_ray plan (build+slices)", lambda: len(_ours(table, opts).get_file_slices()), table.slices)
        rs_plan = Case("hudi-rs plan (build+slices)", lambda: len(_theirs(table, opts).get_file_slices()), table.slices)
        found += [plan, rs_plan]
    return found


def counted(cases_: list[Case], proxy: S3Proxy, samples: dict[str, list[dict[str, Any]]]) -> list[Case]:
    """The cases, each run ending by taking (and resetting) the proxy's counters of that run."""

    def wrap(case: Case) -> Callable[[], int]:
        def run() -> int:
            n = case.run()
            samples[case.label].append(proxy.reset())
            return n

        return run

    return [Case(c.label, wrap(c), c.expected) for c in cases_]


# -- peak RSS in fresh processes ------------------------------------------------------------------

MEMORY_MODES = ("open", "read", "read_stream")


def memory_child(uri: str, endpoint: str, mode: str) -> None:
    """The body of a child process: one read, then ``rows peak_mib``."""
    table = hudi_ray.HudiTableBuilder.from_base_uri(uri).with_storage_options(storage_options(endpoint)).build()
    rows = 0
    if mode == "read":
        batches = table.read()
        rows = count(batches)
        del batches
    elif mode == "read_stream":
        rows = count(table.read_stream())
    print(rows, f"{peak_rss_mib():.1f}")


def memory(table: BenchTable, endpoint: str, modes: tuple[str, ...]) -> dict[str, float]:
    peaks = {}
    for mode in modes:
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", mode, "--uri", table.uri, "--endpoint", endpoint],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        rows, peak = int(out[-2]), float(out[-1])
        if mode != "open" and rows != table.rows:
            sys.exit(f"{table.name}: {mode} in a child read {rows:,} rows, expected {table.rows:,}")
        peaks[mode] = peak
    return peaks


# -- reporting -----------------------------------------------------------------------------------


def cpu_seconds(pids: dict[str, int]) -> dict[str, float] | None:
    """User + system CPU time of each process (Linux); None where /proc cannot tell."""
    found = {}
    for name, pid in pids.items():
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            found[name] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None
    return found


def expected_seconds(r: Result, latency: int, next_latency: int) -> float:
    """A case's time at ``next_latency`` if its requests keep as many in flight: each
    sequence of requests waits the extra latency once per request."""
    requests = statistics.median(s["requests"] for s in r.stats)
    in_flight = max(1.0, statistics.median(s["avg_in_flight"] for s in r.stats))
    return r.median + requests / in_flight * (next_latency - latency) / 1000


@dataclass
class Result:
    seconds: list[float]
    stats: list[dict[str, Any]]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def _requests(stats: list[dict[str, Any]]) -> str:
    totals = [s["requests"] for s in stats]
    low, high = min(totals), max(totals)
    return f"{statistics.median_low(totals):,}" if low == high else f"{low:,}-{high:,}"


def _kind(stats: list[dict[str, Any]], kind: str) -> int:
    return statistics.median_low([s["by_kind"].get(kind, 0) for s in stats])


def report(
    table: BenchTable,
    latency: int,
    results: dict[str, Result],
    skipped: dict[str, str],
    servers: str,
    peaks: dict[str, float] | None,
) -> None:
    print(f"\n== {table.name} at {latency} ms: {table.shape} ==")
    print(
        f"{'case':32} {'median s':>9} {'best s':>8} {'requests':>11} "
        + " ".join(f"{k:>6}" for k in ("LIST", "GET", "GETrng", "HEAD"))
        + f" {'avg infl':>9} {'max infl':>9}"
    )
    for label, r in results.items():
        kinds = " ".join(f"{_kind(r.stats, k):6,}" for k in KINDS)
        avg = statistics.median(s["avg_in_flight"] for s in r.stats)
        peak = max(s["max_in_flight"] for s in r.stats)
        others = sum(s["requests"] - sum(s["by_kind"].get(k, 0) for k in KINDS) for s in r.stats)
        note = f"  (+{others} other)" if others else ""
        print(
            f"{label:32} {r.median:9.3f} {min(r.seconds):8.3f} {_requests(r.stats):>11} {kinds} "
            f"{avg:9.2f} {peak:9d}{note}"
        )
    for label, why in skipped.items():
        print(f"{label:32} skipped: {why}")
    if servers:
        print(servers)
    if peaks:
        base = peaks["open"]
        parts = [f"open (imports + build) {base:.0f} MiB"]
        parts += [
            f"{mode} {peaks[mode]:.0f} MiB (+{peaks[mode] - base:.0f})"
            for mode in ("read", "read_stream")
            if mode in peaks
        ]
        print("peak RSS, a fresh process per mode: " + ", ".join(parts))


Results = dict[tuple[str, int], dict[str, Result]]  # by (table, latency), then case


def ratios(all_results: Results, tables: list[BenchTable], latencies: list[int]) -> None:
    base = latencies[0]
    higher = latencies[1:]
    if higher:
        print(f"\nlatency cost: each case's median time at L ms over its own at {base} ms (1.00: latency is free)")
        print(f"{'table':8} {'case':32} " + " ".join(f"{f'{lat} ms':>8}" for lat in higher))
        for table in tables:
            for label, r in all_results[(table.name, base)].items():
                later = [all_results[(table.name, lat)].get(label) for lat in higher]
                cells = " ".join(f"{x.median / r.median:7.2f}x" if x else f"{'-':>8}" for x in later)
                print(f"{table.name:8} {label:32} {cells}")

    print("\nspeed ratios (the other's median time / the first's; > 1 means the first is faster)")
    columns = [
        ("table.read vs pyarrow", "hudi_ray table.read", "pyarrow.dataset base files"),
        ("table.read vs hudi-rs", "hudi_ray table.read", "hudi-rs read"),
        ("read_hudi vs table.read", f"hudi_ray read_hudi (Ray, {RAY_CPUS} CPUs)", "hudi_ray table.read"),
        ("plan vs hudi-rs plan", "hudi_ray plan (build+slices)", "hudi-rs plan (build+slices)"),
    ]
    print(f"{'table':8} {'latency':>8} " + " ".join(f"{title:>24}" for title, _, _ in columns))
    for table in tables:
        for lat in latencies:
            r = all_results[(table.name, lat)]
            cells = []
            for _, first, other in columns:
                if first in r and other in r:
                    cells.append(f"{r[other].median / r[first].median:23.2f}x")
                else:
                    cells.append(f"{'-':>24}")
            print(f"{table.name:8} {f'{lat} ms':>8} " + " ".join(cells))


# -- main ----------------------------------------------------------------------------------------


def start_ray() -> None:
    import ray

    # Ray warns when a read has fewer files than its concurrency; expected here.
    warnings.filterwarnings("ignore", category=UserWarning, module="ray.data")
    ray.init(address="local", num_cpus=RAY_CPUS, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False


def parse_list(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", default=",".join(ALL_TABLES), help=f"some of {','.join(ALL_TABLES)}")
    parser.add_argument("--latencies", default="0,20,50", help="ms per request, comma-separated; the first is the base")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="where generated tables are kept")
    parser.add_argument("--cow-rows", type=int, default=1_000_000)
    parser.add_argument("--cow-files", type=int, default=200)
    parser.add_argument("--mor-rows", type=int, default=1_000_000)
    parser.add_argument("--mor-files", type=int, default=24)
    parser.add_argument("--small-files", type=int, default=2_000, help="files of 20 rows in the small table")
    parser.add_argument("--no-ray", action="store_true", help="skip read_hudi")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak RSS child processes")
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=30.0,
        help="a hudi-rs or pyarrow case expected to take longer a run at the next latency is not run there",
    )
    parser.add_argument("--memory-child", choices=MEMORY_MODES, help=argparse.SUPPRESS)
    parser.add_argument("--uri", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.uri, args.endpoint, args.memory_child)
        return
    names = parse_list(args.tables)
    unknown = set(names) - set(ALL_TABLES)
    if unknown or not names:
        sys.exit(f"--tables takes some of {','.join(ALL_TABLES)}; unknown: {sorted(unknown)}")
    latencies = [int(x) for x in parse_list(args.latencies)]
    if not latencies:
        sys.exit("--latencies needs at least one value")

    started = time.perf_counter()
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="object_store-")))
        print("tables:")
        tables = prepare_tables(names, args, scratch)
        moto = stack.enter_context(MotoServer())
        assert moto.url is not None
        proxy = stack.enter_context(S3Proxy(moto.url))
        assert proxy.url is not None
        print(f"moto at {moto.url}, latency proxy at {proxy.url}; uploading to moto directly:")
        upload(moto.url, tables)
        opts = storage_options(proxy.url)
        print("check, through the proxy at 0 ms:")
        for table in tables:
            check(table, opts, proxy.url)
        if not args.no_ray:
            start_ray()
            stack.callback(lambda: __import__("ray").shutdown())
            for table in tables:  # untimed: Ray's workers start, each table's planner actor loads it
                consume(hudi_ray.read_hudi(table.uri, storage_options=opts))
        print(
            f"\nhudi_ray {hudi_ray.__version__}, hudi-rs {getattr(hudi, '__version__', '?')}, "
            f"pyarrow {pa.__version__}, "
            f"{os.cpu_count()} CPUs (shared with moto, the proxy and Ray's {RAY_CPUS} workers), "
            f"latencies {latencies} ms, {args.reps} repetitions, medians"
        )

        all_results: Results = {}
        too_slow: dict[tuple[str, str], str] = {}  # (table, case) -> why it no longer runs
        baselines: dict[str, float] = {}  # table -> peak RSS of imports + build
        pids = {"moto": moto.proc.pid if moto.proc else 0, "proxy": proxy.proc.pid if proxy.proc else 0}
        for i, latency in enumerate(latencies):
            proxy.configure(latency_ms=latency)
            for table in tables:
                all_cases = cases(table, opts, proxy.url, not args.no_ray)
                table_cases = [c for c in all_cases if (table.name, c.label) not in too_slow]
                samples: dict[str, list[dict[str, Any]]] = {c.label: [] for c in table_cases}
                proxy.reset()
                cpu_before = cpu_seconds(pids)
                wall = time.perf_counter()
                times = harness.interleaved(counted(table_cases, proxy, samples), args.reps)
                wall = time.perf_counter() - wall
                cpu_after = cpu_seconds(pids)
                results = {label: Result(seconds, samples[label]) for label, seconds in times.items()}
                all_results[(table.name, latency)] = results
                servers = ""
                if cpu_before is not None and cpu_after is not None:
                    used = {name: cpu_after[name] - cpu_before[name] for name in pids}
                    servers = (
                        f"server CPU over these runs ({wall:.0f}s of wall time): "
                        f"moto {used['moto']:.0f}s, proxy {used['proxy']:.0f}s"
                    )
                next_latency = latencies[i + 1] if i + 1 < len(latencies) else None
                for label, r in results.items():
                    if label.startswith("hudi_ray") or next_latency is None:
                        continue
                    expected = expected_seconds(r, latency, next_latency)
                    if expected > args.max_seconds:
                        too_slow[(table.name, label)] = (
                            f"{r.median:.1f}s at {latency} ms, so about {expected:.0f}s a run at {next_latency} ms, "
                            f"over --max-seconds {args.max_seconds:g}"
                        )
                skipped = {c.label: too_slow[(table.name, c.label)] for c in all_cases if c.label not in samples}
                peaks = None
                if not args.no_memory:
                    # imports + build and the whole read once; the stream, whose buffers follow latency, each time.
                    modes = ("read_stream",) if table.name in baselines else MEMORY_MODES
                    peaks = memory(table, proxy.url, modes)
                    baselines.setdefault(table.name, peaks.get("open", 0.0))
                    peaks["open"] = baselines[table.name]
                report(table, latency, results, skipped, servers, peaks)
        ratios(all_results, tables, latencies)
    print(f"\ntotal {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    main()
