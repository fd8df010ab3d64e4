"""Latency hiding on GCS and Azure: a 200-file copy-on-write table read through each store's
emulator behind the latency proxy, at 0 ms and at 20 ms per request, side by side.

    python benchmarks/cloud_stores.py [--stores gcs,azure,s3] [--latencies 0,20] [--reps R]
                                      [--tables cow,v6,v9,v8-mor] [--dir D]

The ``cow`` table is object_store.py's (cow_scan's 1,000,000 rows in 200 base files;
written under benchmarks/.data/object_store when missing). ``v6``, ``v9`` and ``v8-mor``
are real tables from ../shared/hudi-tables (3 to 5 base files each, unpacked under
benchmarks/.data/object_store/real): small tables, whose reads are a chain of round
trips rather than many files fetched together. Each store runs in a subprocess
on loopback: gcp-storage-emulator (the table preloaded), Azurite (``./dev test`` installs it;
the table uploaded), and moto for S3 beside them. ``hudi_testkit.s3proxy`` in front of each
holds every request the latency. Every run builds its table (timeline and planning count)
and reads it with ``table.read``; runs are interleaved (harness.interleaved) across
latencies, medians of ``--reps``. Printed per store: the times, the requests a read makes,
and the ratio of each latency's time to the 0 ms one (target: 20 ms within 1.5x).

The emulators are not the services: their own serving time is part of the 0 ms figure,
which is why the ratio, not the time, is the measure. Not a test.
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cow_scan
from harness import Case, interleaved, medians

import hudi_ray
from hudi_testkit.emulators import AZURITE_ACCOUNT, AZURITE_KEY, Azurite, GcsEmulator, azurite_binary
from hudi_testkit.s3proxy import MotoServer, S3Proxy, storage_options

DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "object_store"
ROWS, FILES = 1_000_000, 200
SHARED = Path(__file__).resolve().parents[2] / "shared" / "hudi-tables"
REAL = {
    "v6": "sample_table/cow/v6_complexkeygen_hivestyle",
    "v9": "sample_table/cow/v9_txns_simple_meta",
    "v8-mor": "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
}


def _real_table(root: Path, name: str) -> Path:
    """The shared table ``REAL[name]``, unpacked once under ``root``."""
    dest = root / "real" / name
    if not (dest / ".hoodie").is_dir():
        with zipfile.ZipFile(SHARED / f"{REAL[name]}.zip") as zf:
            zf.extractall(dest.parent / f"{name}.unpacked", [m for m in zf.namelist() if not m.startswith("__MACOSX/")])
        found = next(
            p.parent.parent
            for p in (dest.parent / f"{name}.unpacked").rglob("hoodie.properties")
            if p.parent.name == ".hoodie" and "metadata" not in p.parts
        )
        found.rename(dest)
    return dest


def _options(store: str, url: str) -> dict[str, str]:
    if store == "gcs":
        return {"google_base_url": url, "google_skip_signature": "true"}
    if store == "azure":
        return {
            "azure_storage_account_name": AZURITE_ACCOUNT,
            "azure_storage_account_key": AZURITE_KEY,
            "azure_storage_endpoint": f"{url}/{AZURITE_ACCOUNT}",
        }
    return storage_options(url)


def _uri(store: str, name: str) -> str:
    return {"gcs": "gs", "azure": "abfs", "s3": "s3"}[store] + f"://bench/{name}"


def _start(store: str, tables: dict[str, Path], stack: ExitStack) -> str:
    """The store on loopback holding each of ``tables`` at ``_uri(store, name)``; its URL."""
    if store == "gcs":
        staged = DEFAULT_DIR / ".gcs-preload"
        staged.mkdir(parents=True, exist_ok=True)
        for name, table in tables.items():
            link = staged / name
            if not link.exists():
                link.symlink_to(table.resolve(), target_is_directory=True)
        emulator = stack.enter_context(GcsEmulator(preload={"bench": staged}))
        return emulator.url
    if store == "azure":
        binary = azurite_binary()
        if binary is None:
            sys.exit("Azurite is not installed: ./dev test installs it with npm")
        azurite = stack.enter_context(Azurite(binary))
        from hudi_ray.core.storage.azure import AzureBlobFileSystem

        fs = AzureBlobFileSystem(connection_string=azurite.connection_string())
        fs.mkdir("bench")
        for name, table in tables.items():
            fs.put(str(table), f"bench/{name}", recursive=True)
        return azurite.url
    import s3fs

    moto = stack.enter_context(MotoServer())
    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": moto.url})
    fs.mkdir("bench")
    for name, table in tables.items():
        fs.put(str(table), f"bench/{name}", recursive=True)
    assert moto.url is not None
    return moto.url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stores", default="gcs,azure,s3")
    parser.add_argument("--latencies", default="0,20")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tables", default="cow", help="cow (generated), and real tables: " + ",".join(REAL))
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args()
    latencies = [int(x) for x in args.latencies.split(",")]
    root = args.dir.resolve()
    tables: dict[str, Path] = {}
    for name in args.tables.split(","):
        if name == "cow":
            tables[name] = root / "cow"
            cow_scan.prepare(tables[name], ROWS, FILES)
        else:
            tables[name] = _real_table(root, name)
    rows = {name: sum(b.num_rows for b in hudi_ray.HudiTable(str(path)).read()) for name, path in tables.items()}
    print(f"tables: {', '.join(f'{n} ({r:,} rows)' for n, r in rows.items())}; medians of {args.reps}\n")
    for store in args.stores.split(","):
        with ExitStack() as stack:
            upstream = _start(store, tables, stack)
            proxies = {ms: stack.enter_context(S3Proxy(upstream, latency_ms=ms)) for ms in latencies}

            def read(ms: int, name: str, store: str = store, proxies: dict[int, S3Proxy] = proxies) -> int:
                url = proxies[ms].url
                assert url is not None
                uri = _uri(store, name)
                built = hudi_ray.HudiTableBuilder.from_base_uri(uri).with_storage_options(_options(store, url))
                return sum(b.num_rows for b in built.build().read())

            print(f"{store}:")
            for name in tables:
                cases = [Case(f"{ms} ms", lambda ms=ms, n=name: read(ms, n), rows[name]) for ms in latencies]
                for case in cases:  # the agreement check, and the warm-up
                    assert case.run() == rows[name]
                for proxy in proxies.values():
                    proxy.reset()
                times = medians(interleaved(cases, args.reps))
                requests = {ms: proxies[ms].stats()["requests"] // args.reps for ms in latencies}
                base = times[f"{latencies[0]} ms"]
                for ms in latencies:
                    t = times[f"{ms} ms"]
                    print(
                        f"  {name:<7} {ms:>3} ms a request  {t * 1000:8.0f} ms  {requests[ms]:5d} requests  "
                        f"{t / base:5.2f}x"
                    )


if __name__ == "__main__":
    main()
