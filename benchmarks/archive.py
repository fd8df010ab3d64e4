"""Long-lived tables: what the archived timeline costs a read.

    python benchmarks/archive.py [--tables cow9,mor9,cow6] [--archived N] [--reps R] [--latency MS] [--dir D]
                                 [--no-s3]

Each table is written once by the test kit's long-lived generator (hundreds to
thousands of commits with compaction, clustering, cleaning, rollbacks and
archival at Apache Hudi's thresholds) until its archive holds at least
``--archived`` instants (default 10,000), and kept under ``--dir`` while its
parameters match. Beside it, a copy with hard links to the same files lacks the
archive (as if it were deleted). Side by side, interleaved, medians of
``--reps`` runs:

* **plan**: ``build`` and ``get_file_slices()`` (a fresh table each run, on local
  disk), with the archive and without it: the ratio is what the archive costs a
  snapshot plan;
* **index guard**: what the record-index and secondary-index guards read the
  first time on a fresh table: the files and operation of every write, the
  archived ones included (``record_index.every_write``, ``HudiTimeline.write_files``),
  against the same on the active timeline alone;
* **object store** (not with ``--no-s3``): both variants uploaded to moto behind
  ``hudi_testkit.s3proxy`` holding each request ``--latency`` ms (default 20): the
  plan with and without the archive, their difference in round trips of that
  latency, the requests that went to the archive folder, the time the plan waited
  on them, and the longest chain of them sent one after another (each after the one
  before it was answered). moto answers requests one at a time, so the wait grows
  with their number even where the chain is short.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness

from hudi_ray import HudiTableBuilder
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.planning.record_index import every_write
from hudi_testkit.archive import archive_layout, delete_archive
from hudi_testkit.longlived import COPY_ON_WRITE, MERGE_ON_READ, LongLivedSpec, write_long_lived_table

DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "archive"
KINDS = {"cow9": (COPY_ON_WRITE, 9), "mor9": (MERGE_ON_READ, 9), "cow6": (COPY_ON_WRITE, 6)}
BUCKET = "archive-bench"
# Archived instants per write commit, about: each commit's clean is archived with it.
INSTANTS_PER_COMMIT = 1.8


@dataclass(frozen=True)
class Variant:
    name: str
    path: Path


def _archived(path: Path) -> int:
    return len(HudiTableBuilder.from_base_uri(str(path)).build().get_timeline().archive.entries())


def prepare(name: str, archived: int, root: Path) -> tuple[Variant, Variant]:
    kind, version = KINDS[name]
    commits = math.ceil(archived / INSTANTS_PER_COMMIT) + 30
    path = root / f"{name}-{commits}"
    stamp = path / ".bench-complete"
    if not stamp.exists():
        shutil.rmtree(path, ignore_errors=True)
        started = time.perf_counter()
        spec = LongLivedSpec(kind, version, commits=commits, rows_per_commit=10, clustering_every=100)
        write_long_lived_table(path, spec)
        stamp.write_text(str(commits))
        print(f"  {name}: {commits:,} commits written in {time.perf_counter() - started:.0f}s")
    bare = root / f"{name}-{commits}-no-archive"
    if not (bare / ".bench-complete").exists():
        shutil.rmtree(bare, ignore_errors=True)
        shutil.copytree(path, bare, copy_function=os.link)
        delete_archive(bare)
    layout = archive_layout(path)
    print(
        f"  {name}: {_archived(path):,} archived instants in {layout.archive.relative_to(path)}, "
        f"{len(os.listdir(layout.archive)):,} archive files, at {path}"
    )
    return Variant("archive", path), Variant("no archive", bare)


def plan(uri: str, options: dict[str, str] | None = None) -> int:
    builder = HudiTableBuilder.from_base_uri(uri)
    if options:
        builder = builder.with_storage_options(options)
    return len(builder.build().get_file_slices())


def guard(uri: str, archived: bool) -> int:
    timeline = HudiTableBuilder.from_base_uri(uri).build().get_timeline()
    instants = every_write(timeline, "benchmark") if archived else timeline.data_instants
    assert instants is not None
    timeline.write_files(instants)
    return len(instants)


def report(title: str, times: dict[str, list[float]], base: str) -> dict[str, float]:
    med = harness.medians(times)
    print(f"\n{title} (median of {len(next(iter(times.values())))} runs; ratio to {base!r})")
    for label, seconds in med.items():
        print(
            f"  {label:<28} {seconds * 1000:9.1f} ms  best {min(times[label]) * 1000:9.1f} ms  "
            f"{seconds / med[base]:5.2f}x"
        )
    return med


def local(name: str, variants: tuple[Variant, Variant], reps: int) -> None:
    with_archive, bare = variants
    slices = plan(str(with_archive.path))
    cases = [harness.Case(f"{name} plan, archive", lambda: plan(str(with_archive.path)), slices)]
    try:
        plan(str(bare.path))
        cases.append(harness.Case(f"{name} plan, no archive", lambda: plan(str(bare.path)), slices))
    except HudiCoreError as exc:
        # A log file whose slice depends on an archived commit's completion time: without
        # the archive the plan cannot be made, so there is nothing to compare with.
        print(f"\n{name}: without the archive the plan fails ({type(exc).__name__}: {str(exc)[:160]}...)")
    times = harness.interleaved(cases, reps, warm_up=True)
    report(f"{name}: snapshot plan on local disk ({slices:,} file slices)", times, cases[-1].label)
    writes = guard(str(with_archive.path), True)
    active = guard(str(with_archive.path), False)
    times = harness.interleaved(
        [
            harness.Case(f"{name} guard, every write", lambda: guard(str(with_archive.path), True), writes),
            harness.Case(f"{name} guard, active only", lambda: guard(str(with_archive.path), False), active),
        ],
        reps,
        warm_up=True,
    )
    report(
        f"{name}: first index guard on a fresh table ({writes:,} writes, {active} on the active timeline)",
        times,
        f"{name} guard, active only",
    )


def object_store(name: str, variants: tuple[Variant, Variant], reps: int, latency: float, servers: tuple) -> None:
    import s3fs

    from hudi_testkit.s3proxy import storage_options

    moto, proxy = servers
    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": moto.url})
    if not fs.exists(BUCKET):
        fs.mkdir(BUCKET)
    uris = {}
    for v in variants:
        key = f"{BUCKET}/{name}-{v.name.replace(' ', '-')}"
        fs.put(str(v.path), key, recursive=True)
        uris[v.name] = f"s3://{key}"
    opts = storage_options(proxy.url)
    slices = plan(uris["archive"], opts)
    proxy.configure(latency_ms=latency, record=True)
    archive_requests: dict[str, list[int]] = {v.name: [] for v in variants}
    all_requests: dict[str, list[int]] = {v.name: [] for v in variants}

    def counted(label: str) -> int:
        proxy.reset()
        n = plan(uris[label], opts)
        seen = proxy.requests()
        all_requests[label].append(len(seen))
        folder = "/timeline/history/" if "9" in name else "/.hoodie/archived"
        archive_requests[label].append(sum(1 for r in seen if folder in r["path"] or "history%2F" in r["path"]))
        return n

    cases = [harness.Case(f"{name} S3 plan, archive", lambda: counted("archive"), slices)]
    try:
        plan(uris["no archive"], opts)
        cases.append(harness.Case(f"{name} S3 plan, no archive", lambda: counted("no archive"), slices))
    except HudiCoreError:
        archive_requests.pop("no archive")
    times = harness.interleaved(cases, reps, warm_up=True)
    med = report(f"{name}: snapshot plan over S3 at {latency:g} ms a request", times, cases[-1].label)
    if len(cases) == 2:
        extra = med[cases[0].label] - med[cases[1].label]
        print(f"  the archive adds {extra * 1000:.0f} ms: {extra * 1000 / latency:.1f} round trips of {latency:g} ms")
    for label in archive_requests:
        print(
            f"  {label}: {statistics.median(all_requests[label]):.0f} requests a plan, "
            f"{statistics.median(archive_requests[label]):.0f} of them to the archive folder"
        )
    waited, chain = archive_wait(uris["archive"], opts, reps)
    print(
        f"  archive lookups inside the plan: {waited * 1000:.0f} ms (median), the time of "
        f"{waited * 1000 / latency:.1f} round trips of {latency:g} ms; {chain} requests one after another at most"
    )
    proxy.configure(latency_ms=0, record=False)


def archive_wait(uri: str, opts: dict[str, str], reps: int) -> tuple[float, int]:
    """Seconds a fresh plan spends waiting on the archive (its completion-time lookups and
    the guards' reads), timed around the timeline's archive calls, and the most requests
    to the archive folder one had to wait for after another (each sent after the one
    before it answered), from the times the reader sent and got them."""
    from hudi_ray.core.storage import Storage
    from hudi_ray.core.timeline import HudiTimeline

    spent: list[float] = []
    sent: list[list[tuple[float, float]]] = []
    originals = {name: getattr(HudiTimeline, name) for name in ("archived_completion_times", "archived_data_instants")}
    reads = {name: getattr(Storage, name) for name in ("read_bytes_async", "read_range_async", "list_dir_async")}

    def timed(original: Any) -> Any:
        def run(self: HudiTimeline, *args: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(self, *args)
            finally:
                spent[-1] += time.perf_counter() - started

        return run

    def recorded(original: Any) -> Any:
        async def run(self: Storage, rel: str = "", *args: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(self, rel, *args)
            finally:
                if "/history" in rel or "/archived" in rel:
                    sent[-1].append((started, time.perf_counter()))

        return run

    try:
        for name, original in originals.items():
            setattr(HudiTimeline, name, timed(original))
        for name, original in reads.items():
            setattr(Storage, name, recorded(original))
        for _ in range(reps):
            spent.append(0.0)
            sent.append([])
            plan(uri, opts)
    finally:
        for name, original in originals.items():
            setattr(HudiTimeline, name, original)
        for name, original in reads.items():
            setattr(Storage, name, original)
    return statistics.median(spent), max(_chain(requests) for requests in sent)


def _chain(requests: list[tuple[float, float]]) -> int:
    """The longest run of requests each sent after the one before it was answered."""
    depth: list[int] = []
    ordered = sorted(requests)
    for i, (start, _) in enumerate(ordered):
        depth.append(1 + max((depth[j] for j in range(i) if ordered[j][1] <= start), default=0))
    return max(depth, default=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", default="cow9,mor9,cow6", help=f"some of {','.join(KINDS)}")
    parser.add_argument("--archived", type=int, default=10_000, help="archived instants at least")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--latency", type=float, default=20.0)
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--no-s3", action="store_true")
    args = parser.parse_args()
    names = [n for n in args.tables.split(",") if n]
    unknown = set(names) - set(KINDS)
    if unknown:
        sys.exit(f"--tables takes some of {','.join(KINDS)}; unknown: {sorted(unknown)}")
    args.dir.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} CPUs; tables:")
    prepared = {n: prepare(n, args.archived, args.dir) for n in names}
    for name, variants in prepared.items():
        local(name, variants, args.reps)
    if not args.no_s3:
        from hudi_testkit.s3proxy import MotoServer, S3Proxy

        with ExitStack() as stack:
            moto = stack.enter_context(MotoServer())
            assert moto.url is not None
            proxy = stack.enter_context(S3Proxy(moto.url))
            for name, variants in prepared.items():
                object_store(name, variants, args.reps, args.latency, (moto, proxy))


if __name__ == "__main__":
    main()
