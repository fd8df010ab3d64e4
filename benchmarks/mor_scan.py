"""Snapshot scan of a MERGE_ON_READ table with Avro log blocks: hudi-ray vs hudi-rs.

    python benchmarks/mor_scan.py [--rows N] [--files F] [--table-version 6|9] [--dir D] [--reps R]
                                  [--update-fraction 0.2|1.0] [--memory] [--profile]

Writes the table once with the testkit's MOR writer (kept under
benchmarks/.data/mor_scan, or mor_scan_all_updated with ``--update-fraction 1``,
reused while its manifest matches): ``--rows`` base rows in about ``--files``
Parquet files, then one delta commit updating 20% of the keys (or all of them;
Avro data blocks of 100,000 records) and one deleting 1% (commit-time delete
blocks). Checks once that hudi-ray and hudi-rs return the same row count and
sum of ``qty``, then times, interleaved, the median of ``--reps`` runs of: the
snapshot read and read_stream of each reader, the read-optimized read (base
files only), and a snapshot read of two columns (``PROJECTION``). The merge
cost is snapshot time / read-optimized time. Then the peak RSS of hudi_ray's
``read`` and ``read_stream``, each in a fresh process (``--memory``: only that).

Then the merge's CPU budget: process time of both reads with slices read one
at a time (no thread contention), and of decoding every Avro data block of the
table on its own with the core's decoder. Decoding is work the read-optimized
read does not do, so while both reads spread over the cores alike, the merge
cost can go no lower than (read-optimized + decoding) / read-optimized, even if
every other merge step (key lookups, filtering the base, deletes) cost nothing.

When hudi-ray's snapshot read is slower than hudi-rs's (or with
``--profile``), the slices are read once more, serially, under cProfile, and
the time is broken down into phases: base file reads, log block framing, Avro
decoding (the compiled decoder), delete blocks and merging, next to what plain
record-by-record decoding (fastavro, then ``Table.from_pylist``) of the same
records costs. The header names the reader's Arrow memory pool, which the
eager reads' times depend on (the README's "Arrow's memory pool";
``HUDI_RAY_MEMORY_POOL`` chooses another). Not a test: numbers depend on the machine.
"""

from __future__ import annotations

# hudi_ray before pyarrow, as a user's sorted imports have it: importing it first configures
# Arrow's jemalloc for the reader (README, "Arrow's memory pool").
import hudi_ray

# isort: split
import argparse
import cProfile
import gc
import io
import json
import math
import os
import pstats
import shutil
import struct
import subprocess
import sys
import time
import types
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import fastavro
import hudi
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ray.core.log_file import BlockType, read_log_blocks
from hudi_ray.core.reading import files as slice_files
from hudi_ray.core.reading import slice_reader
from hudi_ray.core.schema import avro_to_arrow_schema
from hudi_ray.core.util.arrow_pool import reader_pool
from hudi_testkit import MorTableWriter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness
from cow_scan import generate  # the COW benchmark's row generator, in this directory
from harness import Case, peak_rss_mib

DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "mor_scan"
UPDATE_FRACTION = 0.20
DELETE_FRACTION = 0.01
RECORDS_PER_BLOCK = 100_000
MANIFEST_FORMAT = 2
RO = {"hoodie.read.use.read_optimized.mode": "true"}
STREAM_BATCH = 65_536


# -- the table -------------------------------------------------------------------------------------


def _mixed(keys: pa.Array) -> pa.Array:
    """A cheap hash of the keys (the generator's), to pick updated and deleted keys spread over all files."""
    return pc.bit_wise_and(pc.multiply(keys, 2_654_435_761), 0x7FFFFFFF)


def updated_rows(base: pa.Table, fraction: float = UPDATE_FRACTION) -> pa.Table:
    """20% of the rows (all with ``fraction`` 1), every value but the key and region
    changed, with a later ``ts``."""
    picked = base if fraction >= 1 else base.filter(_every(base, 5, 0))
    hour = pa.scalar(3_600_000_000, pa.int64())
    return pa.table(
        {
            "id": picked["id"],
            "name": pc.binary_join_element_wise(picked["name"], "-updated", ""),
            "price": pc.add(picked["price"], 1.0),
            "qty": pc.add(picked["qty"], pa.scalar(1, pa.int32())),
            "ts": pc.cast(pc.add(pc.cast(picked["ts"], pa.int64()), hour), picked.schema.field("ts").type),
            "amount": picked["amount"],
            "region": picked["region"],
        }
    )


def _every(base: pa.Table, modulus: int, remainder: int) -> pa.Array:
    return pc.equal(pc.remainder(_mixed(base["id"]), modulus), remainder)


def deleted_keys(base: pa.Table, fraction: float = UPDATE_FRACTION) -> pa.Table:
    """1% of the keys (none of them updated unless every key is), with their partition column.

    Picked by the hash's high bits: its low bits follow the key's, and so the region.
    """
    high = pc.remainder(pc.divide(_mixed(base["id"]), 1024), 80)
    chosen = pc.equal(high, 1)
    if fraction < 1:
        chosen = pc.and_(chosen, pc.invert(_every(base, 5, 0)))
    picked = base.filter(chosen)
    return picked.select(["id", "region"])


def manifest_of(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "format": MANIFEST_FORMAT,
        "rows": args.rows,
        "files": args.files,
        "table_version": args.table_version,
        "update_fraction": args.update_fraction,
        "delete_fraction": DELETE_FRACTION,
        "records_per_block": RECORDS_PER_BLOCK,
        "block_format": "avro",
    }


def prepare(root: Path, args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """The table under ``root/table``; ``root/manifest.json`` (written last) says what it holds."""
    table_path = root / "table"
    manifest_path = root / "manifest.json"
    wanted = manifest_of(args)
    if manifest_path.is_file() and table_path.is_dir():
        found = json.loads(manifest_path.read_text())
        if {k: found.get(k) for k in wanted} == wanted:
            print(f"Reusing the table at {table_path}")
            return table_path, found
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    started = time.perf_counter()
    base = generate(args.rows)
    regions = len(pc.unique(base["region"]))
    # Files never span partitions: split each region's rows into files / regions files.
    rows_per_file = max(1, math.ceil(math.ceil(args.rows / regions) / max(1, round(args.files / regions))))
    writer = MorTableWriter.create(
        table_path,
        base,
        table_name="mor_scan",
        record_key="id",
        partition_field="region",
        precombine_field="ts",
        table_version=args.table_version,
        rows_per_file=rows_per_file,
        records_per_block=RECORDS_PER_BLOCK,
    )
    wrote = time.perf_counter()
    updates = updated_rows(base, args.update_fraction)
    writer.update(updates)
    updated = time.perf_counter()
    deletes = deleted_keys(base, args.update_fraction)
    writer.delete(deletes)
    done = time.perf_counter()
    files = sorted(table_path.rglob("*"))
    size = sum(p.stat().st_size for p in files if p.is_file() and ".hoodie" not in p.parts)
    logs = [p for p in files if ".log." in p.name]
    print(
        f"Wrote {args.rows:,} base rows in {len(writer.commits[0].files)} files "
        f"in {wrote - started:.1f}s, {updates.num_rows:,} updates in {updated - wrote:.1f}s, "
        f"{deletes.num_rows:,} deletes in {done - updated:.1f}s; {len(logs)} log files, "
        f"{size / 2**20:.0f} MiB in all, at {table_path}"
    )
    mode = writer.spec.resolved_merge_mode
    found = {**wanted, "updates": updates.num_rows, "deletes": deletes.num_rows, "merge_mode": mode}
    manifest_path.write_text(json.dumps(found, indent=2))
    return table_path, found


# -- checking and timing ---------------------------------------------------------------------------


def count(batches: Iterable[pa.RecordBatch]) -> int:
    return sum(b.num_rows for b in batches)


def _read(module: Any, uri: str, opts: dict[str, str] | None = None) -> list[pa.RecordBatch]:
    table = module.HudiTableBuilder.from_base_uri(uri).build()
    return table.read(module.HudiReadOptions(hudi_options=opts or {}))


def check(path: Path, manifest: dict[str, Any]) -> tuple[int, int]:
    """hudi-ray and hudi-rs read the same rows count and sum of ``qty``; returns (snapshot, base) row counts."""
    uri = str(path)
    ours = pa.Table.from_batches(_read(hudi_ray, uri))
    theirs = pa.Table.from_batches(_read(hudi, uri))
    sums = [pc.sum(t["qty"].cast(pa.int64())).as_py() for t in (ours, theirs)]
    rows = [ours.num_rows, theirs.num_rows]
    expected = manifest["rows"] - manifest["deletes"]
    if rows != [expected, expected] or sums[0] != sums[1]:
        sys.exit(f"Readers disagree: rows (hudi_ray, hudi-rs) = {rows} (expected {expected:,}), sum(qty) = {sums}")
    print(f"Check passed: {rows[0]:,} rows, sum(qty) = {sums[0]:,} in hudi_ray and hudi-rs")
    base = count(_read(hudi_ray, uri, RO))
    return rows[0], base


# A projection without the ordering field: merging still needs it and the record key.
PROJECTION = ["id", "price"]


def _projected(module: Any, uri: str) -> int:
    table = module.HudiTableBuilder.from_base_uri(uri).build()
    return count(table.read(module.HudiReadOptions().with_projection(PROJECTION)))


def _stream(module: Any, uri: str) -> int:
    table = module.HudiTableBuilder.from_base_uri(uri).build()
    return count(table.read_stream(module.HudiReadOptions().with_batch_size(STREAM_BATCH)))


def cases(path: Path, snapshot_rows: int, base_rows: int) -> list[Case]:
    uri = str(path)
    return [
        Case("(a) hudi_ray snapshot read", lambda: count(_read(hudi_ray, uri)), snapshot_rows),
        Case("(b) hudi-rs snapshot read", lambda: count(_read(hudi, uri)), snapshot_rows),
        Case("(c) hudi_ray read-optimized read", lambda: count(_read(hudi_ray, uri, RO)), base_rows),
        Case("(d) hudi-rs read-optimized read", lambda: count(_read(hudi, uri, RO)), base_rows),
        Case("(e) hudi_ray snapshot read_stream", lambda: _stream(hudi_ray, uri), snapshot_rows),
        Case("(f) hudi-rs snapshot read_stream", lambda: _stream(hudi, uri), snapshot_rows),
        Case(f"(g) hudi_ray snapshot read of {len(PROJECTION)} cols", lambda: _projected(hudi_ray, uri), snapshot_rows),
        Case(f"(h) hudi-rs snapshot read of {len(PROJECTION)} cols", lambda: _projected(hudi, uri), snapshot_rows),
    ]


def memory_child(path: Path, mode: str) -> None:
    """Run in a fresh process: one read, then its row count and peak RSS."""
    uri = str(path)
    if mode == "read":
        rows = count(_read(hudi_ray, uri))
    elif mode == "read_stream":
        rows = _stream(hudi_ray, uri)
    else:  # the imports alone: what every read's figure includes
        rows = 0
    print(rows, f"{peak_rss_mib():.1f}")


def memory(path: Path) -> None:
    """Peak RSS of ``read`` and ``read_stream``, each in a process of its own; the
    stream should stay near a few slices whatever the table's size."""
    on_disk = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and ".hoodie" not in f.parts)
    print(f"\npeak RSS (fresh process per read; table {on_disk / (1 << 20):,.0f} MiB on disk)")
    for mode in ("imports only", "read", "read_stream"):
        out = subprocess.run(
            [sys.executable, __file__, "--dir", str(path.parent), "--memory-child", mode.split()[0]],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        print(f"  hudi_ray {mode:12} {int(out[0]):>12,} rows  peak RSS {float(out[1]):8.0f} MiB")


# -- profiling -------------------------------------------------------------------------------------


class Phases:
    """Wall time per phase of serial slice reads, by wrapping the file group reader's module globals."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started
                self.calls[label] += 1

        return timed

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Wrap what exists of the reader's steps; a step the reader no longer has is left out."""
        targets: list[tuple[Any, str, str]] = [
            (slice_files, "read_log_blocks", "log block framing (read_log_blocks)"),
            (slice_files, "decode_delete_columns_of", "delete block decoding"),
            (slice_reader, "decide_merge", "merge decisions (decide_merge)"),
            (slice_reader, "apply_merge", "merged rows (apply_merge)"),
            (getattr(slice_files, "SliceFiles", None), "read", "base file reads (SliceFiles.read)"),
            (getattr(slice_files, "LogRecords", None), "add_data", "log rows into LogRecords (add_data)"),
        ]
        saved = [(owner, name, getattr(owner, name)) for owner, name, _ in targets if hasattr(owner, name)]
        decoders: dict[Any, Callable[..., Any]] = getattr(slice_files, "DATA_DECODERS", {})
        saved_decoders = dict(decoders)
        try:
            for owner, name, label in targets:
                if hasattr(owner, name):
                    setattr(owner, name, self.wrap(label, getattr(owner, name)))
            for kind, fn in saved_decoders.items():
                decoders[kind] = self.wrap(f"{kind.name} decoding (decode_avro_block)", fn)
            yield
        finally:
            for owner, name, fn in saved:
                setattr(owner, name, fn)
            decoders.update(saved_decoders)


def _serial_read(uri: str) -> int:
    table = hudi_ray.HudiTableBuilder.from_base_uri(uri).build()
    reader = table.create_file_group_reader_with_options()
    return sum(reader.read_file_slice(s).num_rows for s in table.get_file_slices())


def _avro_blocks(path: Path) -> Iterator[Any]:
    """Every Avro data block of the table's log files, file by file."""
    for log in sorted(path.rglob(".*.log.*")):
        for block in read_log_blocks(log.read_bytes(), str(log)):
            if block.block_type is BlockType.AVRO_DATA:
                yield block


def _process_seconds(fn: Callable[[], Any], reps: int = 2) -> float:
    """Best process (CPU) time of ``reps`` calls: other tenants of the machine move it far less than wall time."""
    best = math.inf
    for _ in range(reps):
        gc.collect()
        started = time.process_time()
        fn()
        best = min(best, time.process_time() - started)
    return best


def _decode_all_avro_blocks(blocks: list[Any]) -> int:
    decode = slice_files.DATA_DECODERS[BlockType.AVRO_DATA]
    return sum(decode(block, None).num_rows for block in blocks)


# The revision whose numpy column-at-a-time decoder (core/log_file/avro_columnar.py)
# the compiled one replaced: the "old" per-record cost is measured with it.
OLD_DECODER_REVISION = "eb8176b"


def _old_decoder(revision: str) -> Callable[[Any], int] | None:
    """The old decoder's ``decoder_for(schema).decode`` of a whole block, loaded
    from ``revision`` with git (its two modules, beside today's core); None
    without git or the revision."""
    repo = Path(__file__).resolve().parent.parent

    def source(path: str) -> str | None:
        done = subprocess.run(["git", "-C", str(repo), "show", f"{revision}:{path}"], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else None

    columnar_src, decode_src = source("core/log_file/avro_columnar.py"), source("core/log_file/avro_decode.py")
    if columnar_src is None or decode_src is None:
        return None
    decode_src = decode_src.replace("from hudi_ray.core.log_file.avro_columnar import", "from old_avro_columnar import")
    modules = {}
    for name, text in (("old_avro_columnar", columnar_src), ("old_avro_decode", decode_src)):
        module = sys.modules[name] = types.ModuleType(name)  # registered first: dataclasses look their module up
        exec(compile(text, f"{name}.py", "exec"), module.__dict__)
        modules[name] = module
    old = modules["old_avro_decode"]

    def decode(block: Any) -> int:
        content = block.content
        count = struct.unpack_from(">i", content, 4)[0]
        return old.decoder_for(block.schema).decode(content, count, None).num_rows

    return decode


def merge_budget(path: Path, old_revision: str = OLD_DECODER_REVISION) -> None:
    """Serial CPU time of both reads and of Avro decoding alone (the compiled
    decoder and the old one), and the merge cost decoding alone implies."""
    uri = str(path)
    one_at_a_time = {"hoodie.read.file.slice.read.concurrency": "1"}
    ro_options = {**one_at_a_time, **RO}
    blocks = list(_avro_blocks(path))
    records = _decode_all_avro_blocks(blocks)  # also a warm-up (and the first load of the compiled code)
    ro = _process_seconds(lambda: _read(hudi_ray, uri, ro_options))
    snapshot = _process_seconds(lambda: _read(hudi_ray, uri, one_at_a_time))
    decoding = _process_seconds(lambda: _decode_all_avro_blocks(blocks))
    print("\nmerge CPU budget (process time, slices read one at a time, best of 2):")
    print(f"  {'read-optimized read':38} {ro:7.2f}s")
    print(f"  {'snapshot read':38} {snapshot:7.2f}s  ({snapshot / ro:.2f}x read-optimized)")
    per_record = 1e6 * decoding / max(records, 1)
    print(f"  {f'Avro decoding alone ({records:,} records)':38} {decoding:7.2f}s  ({per_record:.3f} us/record)")
    print(f"  {'rest of the merge':38} {snapshot - ro - decoding:7.2f}s")
    print(f"  merge cost if the rest cost nothing: {(ro + decoding) / ro:.2f}x")
    old = _old_decoder(old_revision)
    if old is None:
        print(f"  (the old decoder of revision {old_revision} is not available: no per-record comparison)")
        return
    sum(old(b) for b in blocks)  # warm-up
    old_seconds = _process_seconds(lambda: sum(old(b) for b in blocks))
    old_per_record = 1e6 * old_seconds / max(records, 1)
    print(
        f"  per-record decode cost, every column of every Avro block: compiled {per_record:.3f} us, "
        f"old numpy decoder ({old_revision}) {old_per_record:.3f} us: {old_per_record / per_record:.1f}x faster"
    )


def avro_decode_split(path: Path) -> tuple[float, float, int]:
    """Reference cost of plain record-by-record decoding of every Avro block: (fastavro loop, from_pylist, records).

    What decode_avro_block did when this benchmark was written: fastavro.schemaless_reader per
    record (Python datetimes and Decimals for logical types), then Table.from_pylist.
    """
    loop = build = 0.0
    records = 0
    for block in _avro_blocks(path):
        assert block.schema is not None
        parsed = fastavro.parse_schema(json.loads(block.schema))
        arrow_schema = avro_to_arrow_schema(block.schema, "log block")
        started = time.perf_counter()
        content = bytes(block.content)
        count = struct.unpack_from(">i", content, 4)[0]
        buf = io.BytesIO(content)
        buf.seek(8)
        rows = []
        for _ in range(count):
            buf.read(4)
            rows.append(fastavro.schemaless_reader(buf, parsed, None))
        middle = time.perf_counter()
        pa.Table.from_pylist(rows, schema=arrow_schema)
        build += time.perf_counter() - middle
        loop += middle - started
        records += count
    return loop, build, records


def profile(path: Path, parallel_seconds: float) -> None:
    uri = str(path)
    print("\nProfile of hudi_ray's snapshot read, slices read serially in the main thread")
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    _serial_read(uri)
    profiler.disable()
    serial = time.perf_counter() - started
    print(f"serial read under cProfile: {serial:.2f}s (parallel read, timed above: {parallel_seconds:.2f}s)")
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(14)
    lines = stream.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    print("\n".join(lines[start:]).rstrip())

    phases = Phases()
    gc.collect()
    started = time.perf_counter()
    with phases.installed():
        _serial_read(uri)
    total = time.perf_counter() - started
    print(f"\nphases of a serial snapshot read (wall, no profiler): {total:.2f}s")
    for label, seconds in sorted(phases.seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {label:44} {seconds:7.2f}s {100 * seconds / total:5.1f}%  ({phases.calls[label]} calls)")
    accounted = sum(phases.seconds.values())
    print(f"  {'everything else (planning, conform, concat)':44} {total - accounted:7.2f}s")
    loop, build, records = avro_decode_split(path)
    print(
        f"reference, plain Avro decoding of the same {records:,} records: fastavro.schemaless_reader loop "
        f"{loop:.2f}s ({1e6 * loop / max(records, 1):.1f} us/record), Table.from_pylist {build:.2f}s "
        f"({1e6 * build / max(records, 1):.1f} us/record)"
    )


# -- main ------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--files", type=int, default=24)
    parser.add_argument("--table-version", type=int, choices=(6, 9), default=9)
    parser.add_argument("--dir", type=Path, default=None, help="data directory (default benchmarks/.data/mor_scan)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="profile even when hudi_ray is not slower")
    parser.add_argument(
        "--update-fraction", type=float, choices=(UPDATE_FRACTION, 1.0), default=UPDATE_FRACTION, help="keys updated"
    )
    parser.add_argument("--memory", action="store_true", help="only print the peak RSS of read and read_stream")
    parser.add_argument("--memory-child", choices=("imports", "read", "read_stream"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--old-decoder", default=OLD_DECODER_REVISION, help="revision of the old Avro decoder to compare decoding with"
    )
    args = parser.parse_args()
    if args.memory_child:
        memory_child((args.dir or DEFAULT_DIR).resolve() / "table", args.memory_child)
        return
    root = (args.dir or DEFAULT_DIR).resolve()  # hudi-rs needs an absolute path
    if args.dir is None and args.table_version != 9:
        root = root.with_name(f"{root.name}_v{args.table_version}")
    if args.dir is None and args.update_fraction >= 1:
        root = root.with_name(f"{root.name}_all_updated")

    path, manifest = prepare(root, args)
    if args.memory:
        memory(path)
        return
    snapshot_rows, base_rows = check(path, manifest)
    print(
        f"pyarrow {pa.__version__} (reader's memory pool {reader_pool().backend_name}), "
        f"hudi-rs {getattr(hudi, '__version__', '?')}, {os.cpu_count()} CPUs, "
        f"table version {manifest['table_version']} ({manifest['merge_mode']}), {manifest['updates']:,} updated and "
        f"{manifest['deletes']:,} deleted keys in Avro log blocks, {args.reps} repetitions\n"
    )

    medians = harness.medians(harness.interleaved(cases(path, snapshot_rows, base_rows), args.reps))
    print(f"{'case':36} {'median s':>9} {'rows/s':>14}")
    for case in cases(path, snapshot_rows, base_rows):
        seconds = medians[case.label]
        print(f"{case.label:36} {seconds:9.3f} {(case.expected or 0) / seconds:14,.0f}")

    ours, theirs = medians["(a) hudi_ray snapshot read"], medians["(b) hudi-rs snapshot read"]
    ours_ro, theirs_ro = medians["(c) hudi_ray read-optimized read"], medians["(d) hudi-rs read-optimized read"]
    print(f"\nsnapshot throughput ratio hudi_ray / hudi-rs: {theirs / ours:.2f}x (> 1 means hudi_ray is faster)")
    print(
        f"merge cost (snapshot time / read-optimized time): hudi_ray {ours / ours_ro:.2f}x, "
        f"hudi-rs {theirs / theirs_ro:.2f}x"
    )
    stream, rs_stream = medians["(e) hudi_ray snapshot read_stream"], medians["(f) hudi-rs snapshot read_stream"]
    print(f"snapshot read_stream ratio hudi_ray / hudi-rs: {rs_stream / stream:.2f}x")
    ours_p = medians[f"(g) hudi_ray snapshot read of {len(PROJECTION)} cols"]
    theirs_p = medians[f"(h) hudi-rs snapshot read of {len(PROJECTION)} cols"]
    print(f"snapshot read of {PROJECTION} ratio hudi_ray / hudi-rs: {theirs_p / ours_p:.2f}x")
    memory(path)
    merge_budget(path, args.old_decoder)
    if ours > theirs or args.profile:
        profile(path, ours)


if __name__ == "__main__":
    main()
