"""Per-file overhead: a COPY_ON_WRITE table of many small base files, hudi-ray vs hudi-rs.

    python benchmarks/small_files.py [--files F] [--rows-per-file R] [--partitions P]
                                     [--reps N] [--dir D] [--no-ray]

The table (default 20,000 base files of 20 rows in 20 partitions, no metadata
table: the shape of a table fed by frequent small commits) is written once with
hudi_testkit, one commit per partition, under benchmarks/.data/small_files, and
reused while its shape matches. Times, interleaved (each repetition runs every
case once, in a rotated order), medians and bests of ``--reps`` runs of:

* ``get_file_slices`` without filters, hudi-ray vs hudi-rs;
* ``get_file_slices`` with a data-column filter: no metadata table, so every
  base file's footer is read for stats pruning, hudi-ray vs hudi-rs;
* ``table.read``, hudi-ray vs hudi-rs;
* ``read_hudi`` on a local Ray with 2 CPUs (the planner actor loaded once, as a
  long-lived planner is: repetitions after the first get the plan it made
  then), against the single-process ``table.read``. The cost of a first plan
  is printed apart ("planner, plan for 2 chunks").

* every base file read with pyarrow alone, as many at once as ``table.read``
  reads slices, the files listed beforehand: a ceiling for any reader built on
  pyarrow's per-file reads. ``table.read`` plans and reads, so hudi-rs's time
  over this one bounds the ``table.read`` ratio from above.

Every table case builds its table first, so no footer or listing is cached
across runs. Also prints the per-slice overhead of the core (``table.read``
time over slices) and of one reader task (``read_chunk`` over every slice, in
this process, over slices). Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import sys
import time
import warnings
from collections.abc import Iterable
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

# No "execution finished" line per dataset (read when ray.data is imported).
os.environ.setdefault("RAY_DATA_LOG_LEVEL", "WARNING")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cow_scan
import harness
from harness import Case

import hudi_ray
from hudi_ray.core.config.tunables import ReadTunables
from hudi_testkit import CowTableSpec, CowTableWriter

DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "small_files"
RAY_CPUS = 2
# qty is spread over 0..9999: about one file in six of 20 rows has a row below 100,
# so footer pruning keeps a few thousand of 20,000 files.
FILTER = [("qty", "<", "100")]


def generate(files: int, rows_per_file: int, partitions: int) -> pa.Table:
    """cow_scan's deterministic rows, with a partition column cycling over ``partitions`` values."""
    data = cow_scan.generate(files * rows_per_file).drop_columns(["region"])
    part = pc.binary_join_element_wise(
        "p", pc.cast(pc.remainder(data["id"], partitions), pa.string()), ""
    )  # p0 .. p{partitions-1}
    return data.append_column("part", part)


def manifest(files: int, rows_per_file: int, partitions: int) -> dict[str, int]:
    return {"files": files, "rows_per_file": rows_per_file, "partitions": partitions}


def prepare(path: Path, files: int, rows_per_file: int, partitions: int) -> None:
    """Write the table unless one of the same shape is there. One commit per
    partition: each upsert only inserts into partitions no earlier commit
    touched, so the writer looks up no existing keys and generation stays fast."""
    wanted = manifest(files, rows_per_file, partitions)
    marker = path / "manifest.json"
    if marker.is_file() and json.loads(marker.read_text()) == wanted:
        print(f"Reusing the table at {path}")
        return
    if files % partitions:
        sys.exit("--files must be a multiple of --partitions")
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    data = generate(files, rows_per_file, partitions)
    spec = CowTableSpec("small_files", "id", "part", "ts", 6, True)
    writer = CowTableWriter.create(path, spec, data.schema, rows_per_file=rows_per_file)
    for p in range(partitions):
        batch = data.filter(pc.equal(data["part"], f"p{p}"))
        writer.upsert(batch)
    marker.write_text(json.dumps(wanted))
    print(
        f"Wrote {files:,} files of {rows_per_file} rows in {partitions} commits in {time.perf_counter() - started:.1f}s"
    )


def count(batches: Iterable[pa.RecordBatch]) -> int:
    return sum(b.num_rows for b in batches)


def consume(ds: object) -> int:
    """Run a Ray dataset to the end, counting rows from block metadata."""
    return sum(bundle.num_rows() or 0 for bundle in ds.iter_internal_ref_bundles())  # type: ignore[attr-defined]


def check(uri: str) -> tuple[int, int, int]:
    """(rows, slices, slices kept by the filter); hudi-ray and hudi-rs must agree on all three."""
    ours = hudi_ray.HudiTableBuilder.from_base_uri(uri).build()
    theirs = hudi.HudiTableBuilder.from_base_uri(uri).build()
    rows = (count(ours.read()), count(theirs.read()))
    slices = (len(ours.get_file_slices()), len(theirs.get_file_slices()))
    kept = (
        len(ours.get_file_slices(hudi_ray.HudiReadOptions(filters=FILTER))),
        len(theirs.get_file_slices(hudi.HudiReadOptions(filters=FILTER))),
    )
    if len({*rows}) != 1 or len({*slices}) != 1:
        sys.exit(f"Readers disagree: rows {rows}, slices {slices} (hudi_ray, hudi-rs)")
    if kept[0] > kept[1]:
        # Pruning is best-effort, but it must not keep more than hudi-rs on plain footers.
        sys.exit(f"hudi_ray kept {kept[0]} slices with the filter, hudi-rs {kept[1]}")
    print(f"Check passed: {rows[0]:,} rows in {slices[0]:,} slices; the filter keeps {kept[0]:,} (hudi-rs {kept[1]:,})")
    return rows[0], slices[0], kept[0]


def _read_file(fs: pafs.FileSystem, path: str) -> int:
    """One file's rows through pyarrow's bare reader, the cheapest per-file path it has."""
    with fs.open_input_file(path) as source:
        reader = pq.ParquetReader()
        reader.open(source, pre_buffer=False)
        return reader.read_all(use_threads=False).num_rows


def pyarrow_case(uri: str, rows: int) -> Case:
    table = hudi_ray.HudiTableBuilder.from_base_uri(uri).build()
    paths = [f"{uri}/{s.base_file_relative_path()}" for s in table.get_file_slices()]
    fs = pafs.LocalFileSystem()
    width = ReadTunables().slice_read_concurrency  # as many at once as table.read reads slices

    def read_all() -> int:
        with concurrent.futures.ThreadPoolExecutor(width) as pool:
            return sum(pool.map(lambda path: _read_file(fs, path), paths))

    return Case(f"pyarrow per-file reads ({width} threads)", read_all, rows)


def table_cases(uri: str, rows: int, slices: int, kept: int) -> list[Case]:
    def ours() -> hudi_ray.HudiTable:
        return hudi_ray.HudiTableBuilder.from_base_uri(uri).build()

    def theirs() -> hudi.HudiTable:
        return hudi.HudiTableBuilder.from_base_uri(uri).build()

    return [
        Case("get_file_slices: hudi_ray", lambda: len(ours().get_file_slices()), slices),
        Case("get_file_slices: hudi-rs", lambda: len(theirs().get_file_slices()), slices),
        Case(
            "filtered plan (footers): hudi_ray",
            lambda: len(ours().get_file_slices(hudi_ray.HudiReadOptions(filters=FILTER))),
            kept,
        ),
        Case(
            "filtered plan (footers): hudi-rs",
            lambda: len(theirs().get_file_slices(hudi.HudiReadOptions(filters=FILTER))),
            None,  # hudi-rs may keep more: only hudi_ray's count is checked
        ),
        Case("table.read: hudi_ray", lambda: count(ours().read()), rows),
        Case("table.read: hudi-rs", lambda: count(theirs().read()), rows),
    ]


def ray_cases(uri: str, rows: int) -> list[Case]:
    from hudi_ray.planner import call, get_or_create_planner

    planner = get_or_create_planner(uri)
    call(planner.snapshot.remote())  # the timeline loaded once, as a long-lived planner has it
    return [Case("read_hudi: 2 CPUs", lambda: consume(hudi_ray.read_hudi(uri, planner=planner, concurrency=2)), rows)]


def task_overhead(uri: str, slices: int) -> tuple[float, float, int]:
    """(planning seconds, seconds of one reader task reading every slice, blocks it
    yields), in this process, through the planner class and ``read_chunk`` as a
    Ray task runs them."""
    import asyncio

    from hudi_ray.planner import HudiPlanner
    from hudi_ray.reader import ChunkRead, read_chunk

    planner = HudiPlanner(uri)
    asyncio.run(planner.snapshot())
    started = time.perf_counter()
    planned = asyncio.run(planner.plan(None, RAY_CPUS))
    planning = time.perf_counter() - started
    started = time.perf_counter()
    blocks = 0
    for chunk in planned.chunks:
        for _ in read_chunk(ChunkRead(plan=planned.plan, slices=chunk)):
            blocks += 1
    return planning, time.perf_counter() - started, blocks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rows-per-file", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--no-ray", action="store_true", help="skip read_hudi")
    args = parser.parse_args()
    path = args.dir.resolve()  # hudi-rs needs an absolute path
    uri = str(path)
    prepare(path, args.files, args.rows_per_file, args.partitions)
    rows, slices, kept = check(uri)

    all_cases = [*table_cases(uri, rows, slices, kept), pyarrow_case(uri, rows)]
    if not args.no_ray:
        import ray

        warnings.filterwarnings("ignore", category=UserWarning, module="ray.data")
        ray.init(
            address="local", num_cpus=RAY_CPUS, include_dashboard=False, log_to_driver=False, logging_level="WARNING"
        )
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        all_cases += ray_cases(uri, rows)
        consume(hudi_ray.read_hudi(uri, concurrency=RAY_CPUS))  # warm-up: worker processes and imports
    print(
        f"pyarrow {pa.__version__}, hudi-rs {getattr(hudi, '__version__', '?')}, {os.cpu_count()} CPUs, "
        f"{slices:,} slices of {args.rows_per_file} rows in {args.partitions} partitions, {args.reps} repetitions\n"
    )
    times = harness.interleaved(all_cases, args.reps)
    median = {label: statistics.median(ts) for label, ts in times.items()}
    print(f"{'case':36} {'median s':>9} {'best s':>9}")
    for label, ts in times.items():
        print(f"{label:36} {median[label]:9.3f} {min(ts):9.3f}")

    def ratio(ours: str, other: str) -> str:
        # Time over time: above 1 means the first is faster.
        return f"{median[other] / median[ours]:.2f}x (best {min(times[other]) / min(times[ours]):.2f}x)"

    print("\nspeed ratios (other's time / hudi_ray's; > 1 means hudi_ray is faster)")
    print(f"  get_file_slices vs hudi-rs:       {ratio('get_file_slices: hudi_ray', 'get_file_slices: hudi-rs')}")
    print(
        "  filtered plan vs hudi-rs:         "
        f"{ratio('filtered plan (footers): hudi_ray', 'filtered plan (footers): hudi-rs')}"
    )
    print(f"  table.read vs hudi-rs:            {ratio('table.read: hudi_ray', 'table.read: hudi-rs')}")
    bare = next(label for label in times if label.startswith("pyarrow per-file reads"))
    print(f"  ceiling, pyarrow reads vs hudi-rs: {ratio(bare, 'table.read: hudi-rs')}")
    print(f"  table.read vs pyarrow reads:      {ratio('table.read: hudi_ray', bare)}")
    if not args.no_ray:
        print(f"  read_hudi (2 CPUs) vs table.read: {ratio('read_hudi: 2 CPUs', 'table.read: hudi_ray')}")

    planning, task, blocks = task_overhead(uri, slices)
    print("\nper-slice overhead")
    print(f"  core, table.read / slices:        {median['table.read: hudi_ray'] / slices * 1e3:7.3f} ms")
    print(f"  reader task, read_chunk / slices: {task / slices * 1e3:7.3f} ms ({blocks:,} blocks)")
    print(f"  planner, plan for {RAY_CPUS} chunks:       {planning:7.3f} s")
    if not args.no_ray:
        import ray

        ray.shutdown()


if __name__ == "__main__":
    main()
