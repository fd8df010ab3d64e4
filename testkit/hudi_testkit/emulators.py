"""Loopback GCS and Azure Blob emulators for tests and benchmarks, each in a subprocess
that exits with its parent.

    python -m hudi_testkit.emulators --gcs --port N --parent-pid P
    python -m hudi_testkit.emulators --azurite BIN --port N --parent-pid P

* ``GcsEmulator``: gcp-storage-emulator (PyPI), in memory. It serves the JSON API gcsfs
  uses, with ranged reads from an offset, but ignores suffix ranges. Added here: listings
  in pages (``maxResults``, ``pageToken``), and the XML API's object HEAD and GET with
  ``ETag`` and ``Last-Modified``, which object_store (Lance) reads objects through.
* ``Azurite``: Azure's own emulator (npm ``azurite``), the Blob service only, in memory.
  It has no Data Lake (dfs) endpoint; ADLS Gen2 clients read through the Blob API, as
  adlfs and hudi-rs do. ``azurite_binary`` finds it where ``./dev`` installs it.

Both print nothing once started; ``url`` is where they answer. The S3 proxy
(``hudi_testkit.s3proxy.S3Proxy``) forwards any HTTP, so it sits in front of either.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from hudi_testkit.s3proxy import LOOPBACK, PARENT_POLL_SECONDS, LoopbackServer, _stop_process

# Azurite's published development account (object_store's ``use_emulator`` uses it too).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
# Where ``./dev`` installs Azurite (npm), beside the virtual environment it makes.
REPO = Path(__file__).resolve().parents[2]
AZURITE_PREFIX = REPO / ".venv" / "azurite"


def azurite_binary() -> str | None:
    """The ``azurite-blob`` command: ``AZURITE_BLOB`` if set, else ``./dev``'s install, else PATH."""
    named = os.environ.get("AZURITE_BLOB")
    if named:
        return named
    local = AZURITE_PREFIX / "node_modules" / ".bin" / "azurite-blob"
    return str(local) if local.exists() else shutil.which("azurite-blob")


def _exit_with_parent(parent_pid: int, child: subprocess.Popen[bytes] | None = None) -> None:
    while os.getppid() == parent_pid and (child is None or child.poll() is None):
        time.sleep(PARENT_POLL_SECONDS)
    if child is not None:
        _stop_process(child)
    os._exit(0)


def serve_gcs(port: int, parent_pid: int | None, preload: list[tuple[str, Path]]) -> None:
    import http.server
    import threading

    from gcp_storage_emulator import server as emulator
    from gcp_storage_emulator.handlers.buckets import create_bucket
    from gcp_storage_emulator.handlers.objects import _checksums, _make_object_resource

    class Threading(http.server.ThreadingHTTPServer):
        # The emulator serves one request at a time with a backlog of 5, and resets the
        # connections of a client that sends dozens at once.
        request_queue_size = 1024
        daemon_threads = True

    emulator.server.HTTPServer = Threading  # type: ignore[attr-defined]
    _serve_pages_and_xml_reads()
    server = emulator.create_server(LOOPBACK, port, in_memory=True)
    storage = server._storage
    # Objects put in directly: an upload rewrites every object's metadata, so thousands
    # of uploads take minutes. The metadata is written once, at the end.
    write_config = storage._write_config_to_file
    storage._write_config_to_file = lambda: None
    for bucket, root in preload:
        create_bucket(bucket, storage)
        files = [Path(d) / f for d, _, names in os.walk(root, followlinks=True) for f in names]
        for path in sorted(files):
            name = path.relative_to(root).as_posix()
            data = path.read_bytes()
            obj = _make_object_resource(
                f"http://{LOOPBACK}:{port}", bucket, name, "application/octet-stream", str(len(data))
            )
            storage.create_file(bucket, name, data, _checksums(data, obj))
    storage._write_config_to_file = write_config
    write_config()
    server.start()
    if parent_pid:
        threading.Thread(target=_exit_with_parent, args=(parent_pid,), daemon=True).start()
    while True:
        time.sleep(3600)


def _serve_pages_and_xml_reads() -> None:
    """Teach gcp-storage-emulator what real GCS does and it does not: page a listing, and
    answer the XML API's HEAD and GET of an object with the headers object_store needs."""
    from email.utils import formatdate
    from http import HTTPStatus

    from gcp_storage_emulator import server as emulator
    from gcp_storage_emulator.exceptions import NotFound
    from gcp_storage_emulator.handlers import objects

    def paged_ls(request, response, storage, *args, **kwargs):  # type: ignore[no-untyped-def]
        objects.ls(request, response, storage, *args, **kwargs)
        limit = request.query.get("maxResults")
        if response.status != HTTPStatus.OK or not limit:
            return
        listing = json.loads(response._content)
        # Names and prefixes in one order, as GCS pages them; the token is the last one given.
        entries = sorted(
            [(o["name"], "items", o) for o in listing.get("items", [])]
            + [(name, "prefixes", name) for name in listing.get("prefixes", [])]
        )
        token = (request.query.get("pageToken") or [""])[0]
        entries = [e for e in entries if e[0] > token]
        page, rest = entries[: int(limit[0])], entries[int(limit[0]) :]
        out: dict[str, Any] = {"kind": "storage#objects", "items": [], "prefixes": []}
        for _, kind, value in page:
            out[kind].append(value)
        if rest:
            out["nextPageToken"] = page[-1][0]
        response.json(out)

    def xml_get(request, response, storage, *args, **kwargs):  # type: ignore[no-untyped-def]
        objects.download(request, response, storage, *args, **kwargs)
        try:
            obj = storage.get_file_obj(request.params["bucket_name"], request.params["object_id"])
        except NotFound:
            return
        response["ETag"] = f'"{obj["etag"]}"'
        updated = datetime.datetime.fromisoformat(obj["updated"].replace("Z", "+00:00"))
        response["Last-Modified"] = formatdate(updated.timestamp(), usegmt=True)

    routes = []
    for regex, handlers in emulator.HANDLERS:
        handlers = {m: paged_ls if h is objects.ls else h for m, h in handlers.items()}
        if handlers.get("GET") is objects.download and regex.startswith("^/(?P<bucket_name>"):
            handlers["GET"] = xml_get
        routes.append((regex, handlers))
    emulator.HANDLERS = tuple(routes)

    class HeadersOnly:
        """A HEAD answers with the GET's status and headers: the first write, not the body."""

        def __init__(self, out: Any) -> None:
            self.out, self.sent = out, False

        def write(self, data: bytes) -> int:
            if not self.sent:
                self.sent = True
                return self.out.write(data)
            return len(data)

        def flush(self) -> None:
            self.out.flush()

    def do_head(handler) -> None:  # type: ignore[no-untyped-def]
        real = handler.wfile
        handler.wfile = HeadersOnly(real)
        try:
            emulator.Router(handler).handle("GET")
        finally:
            handler.wfile = real

    emulator.RequestHandler.do_HEAD = do_head


def serve_azurite(binary: str, port: int, parent_pid: int | None) -> None:
    # In memory, so nothing is written; Azurite still wants a working directory of its own.
    workdir = tempfile.mkdtemp(prefix="azurite-")
    cmd = [binary, "--blobHost", LOOPBACK, "--blobPort", str(port), "--inMemoryPersistence"]
    cmd += ["--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry"]
    child = subprocess.Popen(cmd, cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    def stop(*_: object) -> None:  # asked to stop: Azurite (a node process) stops too
        _stop_process(child)
        shutil.rmtree(workdir, ignore_errors=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        _exit_with_parent(parent_pid or os.getppid(), child)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


class GcsEmulator(LoopbackServer):
    """gcp-storage-emulator on a free loopback port, serving requests on threads;
    ``preload``: buckets made at start, each holding a local directory's files."""

    what = "GCS emulator"
    module = "hudi_testkit.emulators"

    def __init__(self, preload: dict[str, Path] | None = None) -> None:
        super().__init__()
        self.preload = preload or {}

    def _args(self) -> list[str]:
        return ["--gcs", *(f"--preload={bucket}={root}" for bucket, root in self.preload.items())]


class Azurite(LoopbackServer):
    """Azurite's Blob service on a free loopback port; ``binary``: ``azurite_binary()``."""

    what = "Azurite"
    module = "hudi_testkit.emulators"

    def __init__(self, binary: str) -> None:
        super().__init__()
        self.binary = binary

    def _args(self) -> list[str]:
        return ["--azurite", self.binary]

    def connection_string(self, url: str | None = None) -> str:
        """adlfs's way to reach the emulator (or a proxy in front of it at ``url``)."""
        endpoint = f"{url or self.url}/{AZURITE_ACCOUNT}"
        return (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
            f"BlobEndpoint={endpoint};"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gcs", action="store_true", help="run gcp-storage-emulator")
    parser.add_argument("--azurite", metavar="BIN", help="run Azurite's Blob service with this azurite-blob")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--parent-pid", type=int, default=None, help="exit when this process is no longer the parent")
    parser.add_argument(
        "--preload", action="append", default=[], metavar="BUCKET=DIR", help="GCS: a bucket of DIR's files"
    )
    args = parser.parse_args(argv)
    if args.gcs:
        preload = [(b, Path(d)) for b, _, d in (item.partition("=") for item in args.preload)]
        serve_gcs(args.port, args.parent_pid, preload)
    elif args.azurite:
        serve_azurite(args.azurite, args.port, args.parent_pid)
    else:
        parser.error("--gcs or --azurite")


if __name__ == "__main__":
    main()
