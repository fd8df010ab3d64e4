"""An S3 latency and fault proxy for tests and benchmarks, and a loopback moto server.

    python -m hudi_testkit.s3proxy --upstream URL [--port N] [--latency-ms L] [--parent-pid P]
    python -m hudi_testkit.s3proxy --moto [--port N] [--parent-pid P]

The proxy is an aiohttp server on loopback in front of an S3 API (moto in
server mode). It forwards every request unchanged (the client's ``Host``
header included, so what the client signed is what the upstream sees), after
holding it ``latency_ms``, and counts requests, by method and status, and how
many are in flight at once. It can answer a fraction of requests 503
``SlowDown`` (or 429, as GCS throttles) without forwarding them, drop a fraction of connections without
any response, fail every request whose path contains a substring (503
``SlowDown`` or 500 ``InternalError``), and stall those whose path contains
another one (held ``stall_seconds`` before anything is sent, then forwarded;
a client that hangs up first ends the hold). Random choices come from a
seeded generator, drawn once per request in arrival order.

It runs in a subprocess of its own, so its CPU does not share the GIL of the
process being measured. ``S3Proxy`` starts and drives it; ``MotoServer``
starts moto the same way. Both subprocesses exit when their parent does.

Control endpoints, on the proxy's own port and not counted (S3 bucket names
cannot contain ``_``, so no S3 request reaches them):

* ``GET /__proxy__/stats``: the counters as JSON;
* ``POST /__proxy__/reset``: zero the counters (answers them as they were);
* ``GET /__proxy__/config``: the settings; ``POST /__proxy__/config`` with a
  JSON object of some of ``latency_ms``, ``slowdown_fraction``, ``slowdown_status``,
  ``drop_fraction``, ``fail_path``, ``fail_status``, ``stall_path``,
  ``stall_seconds``, ``seed`` (a seed restarts the generator), ``record``,
  ``list_page_size`` (listings come in pages of that many entries);
* ``GET /__proxy__/requests``: with ``record`` on, a line per request since
  the last reset (method, path, range, outcome, duration).

Example::

    with MotoServer() as moto, S3Proxy(moto.url, latency_ms=20) as proxy:
        url = proxy.url
        ...  # read through ``url``
        proxy.configure(slowdown_fraction=0.1, seed=7)
        print(proxy.stats()["requests"])
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import asdict, dataclass, fields
from types import TracebackType
from typing import Any, TypeVar

CONTROL_PREFIX = "/__proxy__/"
# Headers that describe one connection, not the message: never forwarded. Expect
# too: the proxy has already read the body it would ask to send.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "expect",
    }
)
ERROR_BODIES = {
    503: b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
    500: b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b"<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>",
    # GCS throttles with 429; the body is what its JSON API answers.
    429: b'{"error": {"code": 429, "message": "The rate of requests is too high."}}',
}
# Upper bounds that keep every hold finite, whatever a caller configures.
MAX_LATENCY_MS = 60_000.0
MAX_STALL_SECONDS = 3_600.0
MAX_RECORDED = 100_000
CHUNK = 256 * 1024
PARENT_POLL_SECONDS = 0.5
START_TIMEOUT_SECONDS = 30.0
LOOPBACK = "127.0.0.1"


@dataclass
class ProxyConfig:
    """What the proxy does to each request; every field can change at runtime."""

    latency_ms: float = 0.0
    slowdown_fraction: float = 0.0
    slowdown_status: int = 503  # the throttling answer: 503 (S3, Azure, GCS) or 429 (GCS)
    drop_fraction: float = 0.0
    fail_path: str | None = None
    fail_status: int = 503
    stall_path: str | None = None
    stall_seconds: float = 300.0
    seed: int = 0
    record: bool = False  # keep a line per request (at most MAX_RECORDED), for GET /__proxy__/requests
    # > 0: every listing is asked for pages of this many entries, so a small directory spans
    # pages. S3 and Azure sign the query with a shared key: use it unsigned or with a SAS there.
    list_page_size: int = 0

    def updated(self, changes: dict[str, Any]) -> ProxyConfig:
        """A copy with ``changes`` applied; ValueError on an unknown key or a value out of range."""
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ValueError(f"unknown settings: {sorted(unknown)}")
        merged = {**asdict(self), **changes}
        new = ProxyConfig(
            latency_ms=float(merged["latency_ms"]),
            slowdown_fraction=float(merged["slowdown_fraction"]),
            slowdown_status=int(merged["slowdown_status"]),
            drop_fraction=float(merged["drop_fraction"]),
            fail_path=merged["fail_path"] or None,
            fail_status=int(merged["fail_status"]),
            stall_path=merged["stall_path"] or None,
            stall_seconds=float(merged["stall_seconds"]),
            seed=int(merged["seed"]),
            record=bool(merged["record"]),
            list_page_size=int(merged["list_page_size"]),
        )
        if not 0 <= new.latency_ms <= MAX_LATENCY_MS:
            raise ValueError(f"latency_ms must be within 0..{MAX_LATENCY_MS:g}")
        if not (0 <= new.slowdown_fraction <= 1 and 0 <= new.drop_fraction <= 1):
            raise ValueError("fractions must be within 0..1")
        if new.slowdown_fraction + new.drop_fraction > 1:
            raise ValueError("slowdown_fraction + drop_fraction must not exceed 1")
        if new.fail_status not in ERROR_BODIES or new.slowdown_status not in ERROR_BODIES:
            raise ValueError(f"fail_status and slowdown_status must be among {sorted(ERROR_BODIES)}")
        if new.list_page_size < 0:
            raise ValueError("list_page_size must be >= 0")
        if not 0 <= new.stall_seconds <= MAX_STALL_SECONDS:
            raise ValueError(f"stall_seconds must be within 0..{MAX_STALL_SECONDS:g}")
        return new


class Counters:
    """Requests seen since the last reset, and the time integral of requests in flight.

    Touched only from the event loop's thread, so it needs no lock."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.reset()

    def reset(self) -> None:
        now = time.monotonic()
        self.started = now
        self.last_change = now
        self.requests = 0
        self.by_method: Counter[str] = Counter()
        self.by_kind: Counter[str] = Counter()
        self.by_status: Counter[int] = Counter()
        self.faults: Counter[str] = Counter()
        self.upstream_errors = 0
        self.bytes_out = 0
        self.recorded: list[dict[str, Any]] = []
        # Requests in flight at a reset stay in flight (they finish later), but are not counted as requests.
        self.max_in_flight = self.in_flight
        self.in_flight_seconds = 0.0  # integral of in_flight over time
        self.busy_seconds = 0.0  # time with at least one request in flight

    def _advance(self, now: float) -> None:
        elapsed = now - self.last_change
        self.in_flight_seconds += self.in_flight * elapsed
        if self.in_flight:
            self.busy_seconds += elapsed
        self.last_change = now

    def arrived(self, method: str, kind: str) -> None:
        self._advance(time.monotonic())
        self.requests += 1
        self.by_method[method] += 1
        self.by_kind[kind] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def finished(self) -> None:
        self._advance(time.monotonic())
        self.in_flight -= 1

    def snapshot(self) -> dict[str, Any]:
        self._advance(time.monotonic())
        return {
            "requests": self.requests,
            "by_method": dict(sorted(self.by_method.items())),
            "by_kind": dict(sorted(self.by_kind.items())),
            "by_status": {str(k): v for k, v in sorted(self.by_status.items())},
            "faults": dict(sorted(self.faults.items())),
            "upstream_errors": self.upstream_errors,
            "bytes_out": self.bytes_out,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            # Averaged over busy time only: idle gaps between a client's requests say nothing of its concurrency.
            "avg_in_flight": self.in_flight_seconds / self.busy_seconds if self.busy_seconds else 0.0,
            "busy_seconds": self.busy_seconds,
            "elapsed_seconds": self.last_change - self.started,
        }


# -- the proxy server (runs in the subprocess) -------------------------------------------------------


# Each store's listing, by its query: the page-size parameter and the one that continues a listing.
LIST_PAGING = (
    ("list-type", "max-keys", "continuation-token"),  # S3 ListObjectsV2
    ("comp=list", "maxresults", "marker"),  # Azure Blob List Blobs
    ("/o?", "maxResults", "pageToken"),  # GCS JSON objects.list
)


def paged(raw_path: str, size: int) -> tuple[str, bool]:
    """``raw_path`` asking for pages of ``size`` entries if it is a listing, and whether it
    continues a listing (carries the token of a page before)."""
    from urllib.parse import parse_qsl, urlencode

    path, _, query = raw_path.partition("?")
    for marker, size_key, token_key in LIST_PAGING:
        if marker in raw_path and (marker != "/o?" or path.endswith("/o")):
            params = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != size_key]
            continued = any(k == token_key and v for k, v in params)
            return f"{path}?{urlencode([*params, (size_key, str(size))])}", continued
    return raw_path, False


def request_kind(method: str, path: str, ranged: bool) -> str:
    """``LIST`` for a GET of a bucket (path-style: no key), ``GET range`` for a ranged GET, else the method."""
    if method == "GET":
        if "/" not in path.strip("/"):
            return "LIST"
        return "GET range" if ranged else "GET"
    return method


class ProxyServer:
    def __init__(self, upstream: str, config: ProxyConfig) -> None:
        self.upstream = upstream.rstrip("/")
        self.config = config
        self.rng = random.Random(config.seed)
        self.counters = Counters()
        self.session: Any = None  # aiohttp.ClientSession, made inside the running loop

    async def handle(self, request: Any) -> Any:
        from aiohttp import web

        if request.path.startswith(CONTROL_PREFIX):
            return await self.control(request)
        config = self.config  # a request keeps the settings it arrived under
        draw = self.rng.random()  # drawn at arrival, so the sequence follows arrival order
        counters = self.counters
        counters.arrived(request.method, request_kind(request.method, request.path, "Range" in request.headers))
        arrived = time.monotonic()
        outcome: int | str = "cancelled"  # what the client got, for the record
        try:
            if config.latency_ms:
                await asyncio.sleep(config.latency_ms / 1000)
            path = request.raw_path
            if config.list_page_size and request.method == "GET":
                path, continued = paged(path, config.list_page_size)
                counters.faults["list_pages_continued"] += continued
            if config.stall_path and config.stall_path in path:
                counters.faults["stalled"] += 1
                await asyncio.sleep(config.stall_seconds)
            if config.fail_path and config.fail_path in path:
                counters.faults[f"failed_{config.fail_status}"] += 1
                outcome = config.fail_status
                return self.error(request, config.fail_status)
            if draw < config.drop_fraction:
                counters.faults["dropped"] += 1
                outcome = "dropped"
                request.transport.close()
                # The closed connection cancels this handler; what follows is never sent.
                await asyncio.sleep(5)
                return web.Response(status=500)
            if draw < config.drop_fraction + config.slowdown_fraction:
                counters.faults["slowdown"] += 1
                outcome = config.slowdown_status
                return self.error(request, config.slowdown_status)
            response = await self.forward(request, path)
            outcome = response.status
            return response
        finally:
            counters.finished()
            if config.record and len(counters.recorded) < MAX_RECORDED:
                counters.recorded.append(
                    {
                        "method": request.method,
                        "path": request.raw_path,
                        "range": request.headers.get("Range"),
                        "outcome": outcome,
                        "ms": round(1000 * (time.monotonic() - arrived), 3),
                        "arrived_ms": round(1000 * arrived, 3),  # monotonic: for the order requests wait on
                    }
                )

    def error(self, request: Any, status: int) -> Any:
        from aiohttp import web

        body = ERROR_BODIES[status]
        self.counters.by_status[status] += 1
        self.counters.bytes_out += len(body)
        kind = "application/json" if body.startswith(b"{") else "application/xml"
        return web.Response(status=status, body=body, content_type=kind)

    async def forward(self, request: Any, path: str) -> Any:
        import aiohttp
        from aiohttp import web
        from yarl import URL

        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP]
        body = await request.read()
        # encoded=True: the path goes out byte for byte as the client signed it.
        url = URL(self.upstream + path, encoded=True)
        try:
            async with self.session.request(
                request.method, url, headers=headers, data=body or None, allow_redirects=False
            ) as upstream:
                response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
                for key, value in upstream.headers.items():
                    if key.lower() not in HOP_BY_HOP:
                        response.headers.add(key, value)
                await response.prepare(request)
                async for chunk in upstream.content.iter_chunked(CHUNK):
                    await response.write(chunk)
                    self.counters.bytes_out += len(chunk)
                await response.write_eof()
                self.counters.by_status[upstream.status] += 1
                return response
        except (aiohttp.ClientError, asyncio.TimeoutError, ConnectionError) as exc:
            if request.transport is None or request.transport.is_closing():
                raise  # the client hung up: nothing to answer
            self.counters.upstream_errors += 1
            logging.getLogger(__name__).warning("upstream %s %s failed: %r", request.method, request.raw_path, exc)
            self.counters.by_status[502] += 1
            return web.Response(status=502, text=f"proxy: upstream failed: {exc!r}")

    async def control(self, request: Any) -> Any:
        from aiohttp import web

        action = request.path[len(CONTROL_PREFIX) :]
        if action == "stats" and request.method == "GET":
            return web.json_response(self.counters.snapshot())
        if action == "reset" and request.method == "POST":
            # The counters up to the reset: one call both reads and restarts them.
            before = self.counters.snapshot()
            self.counters.reset()
            return web.json_response(before)
        if action == "requests" and request.method == "GET":
            return web.json_response(self.counters.recorded)
        if action == "config" and request.method == "GET":
            return web.json_response(asdict(self.config))
        if action == "config" and request.method == "POST":
            try:
                changes = await request.json()
                if not isinstance(changes, dict):
                    raise ValueError("expected a JSON object")
                self.config = self.config.updated(changes)
            except (ValueError, TypeError) as exc:
                return web.json_response({"error": str(exc)}, status=400)
            if "seed" in changes:
                self.rng = random.Random(self.config.seed)
            return web.json_response(asdict(self.config))
        return web.json_response({"error": f"no control {request.method} {request.path}"}, status=404)


async def _watch_parent(parent_pid: int, stop: asyncio.Event) -> None:
    # Reparenting (to init or a subreaper) is the sign the parent died.
    while os.getppid() == parent_pid:
        await asyncio.sleep(PARENT_POLL_SECONDS)
    stop.set()


async def serve_proxy(upstream: str, host: str, port: int, config: ProxyConfig, parent_pid: int | None) -> None:
    import aiohttp
    from aiohttp import web

    server = ProxyServer(upstream, config)
    # No pool limit: the proxy must not cap the concurrency it measures. auto_decompress
    # off: bodies pass as the upstream encoded them.
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=120)
    async with aiohttp.ClientSession(
        connector=connector,
        timeout=timeout,
        auto_decompress=False,
        skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
    ) as session:
        server.session = session
        # handler_cancellation: a client that hangs up ends its request's hold, so stalls
        # and drops stop counting as in flight.
        low_level = web.Server(server.handle, handler_cancellation=True, access_log=None)
        runner = web.ServerRunner(low_level, shutdown_timeout=1.0)
        await runner.setup()
        # Bound here rather than by the site, to learn the port the system picked for port 0.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        bound = sock.getsockname()[1]
        site = web.SockSite(runner, sock, backlog=1024)
        await site.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        watcher = asyncio.create_task(_watch_parent(parent_pid, stop)) if parent_pid else None
        print(f"listening on http://{host}:{bound}", flush=True)
        try:
            await stop.wait()
        finally:
            if watcher:
                watcher.cancel()
            await runner.cleanup()


def _watch_parent_thread(parent_pid: int) -> None:
    """For servers that are not ours to stop (moto): end the process once its parent is gone."""

    def poll() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(0)

    threading.Thread(target=poll, name="parent-watch", daemon=True).start()


def serve_moto(host: str, port: int, parent_pid: int | None) -> None:
    from moto.server import main as moto_main

    if parent_pid:
        _watch_parent_thread(parent_pid)
    # werkzeug logs a line per request: CPU the measured runs would share.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    moto_main(["-H", host, "-p", str(port)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream", help="the S3 endpoint to forward to, e.g. http://127.0.0.1:5000")
    parser.add_argument("--moto", action="store_true", help="run a moto S3 server instead of the proxy")
    parser.add_argument("--host", default=LOOPBACK)
    parser.add_argument("--port", type=int, default=0, help="0: any free port (printed on stdout)")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parent-pid", type=int, default=None, help="exit when this process is no longer the parent")
    args = parser.parse_args(argv)
    if args.moto:
        serve_moto(args.host, args.port, args.parent_pid)
        return
    if not args.upstream:
        parser.error("--upstream is required (or --moto)")
    logging.basicConfig(level=logging.WARNING, format="s3proxy: %(message)s")
    # A client that hangs up mid-answer (a timed-out or cancelled request) is expected, not an error to print.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    config = ProxyConfig().updated({"latency_ms": args.latency_ms, "seed": args.seed})
    asyncio.run(serve_proxy(args.upstream, args.host, args.port, config, args.parent_pid))


# -- the API for tests and benchmarks (the parent process) ---------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def storage_options(endpoint: str, secret: str = "testing") -> dict[str, str]:
    """hudi-rs style storage options reaching a loopback S3 API (moto, or the proxy) at ``endpoint``."""
    return {
        "aws_access_key_id": "testing",
        "aws_secret_access_key": secret,
        "aws_region": "us-east-1",
        "aws_endpoint_url": endpoint,
        "aws_allow_http": "true",
    }


def _stop_process(proc: subprocess.Popen[bytes] | None, timeout: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def _wait_for_port(proc: subprocess.Popen[bytes], port: int, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode} before it listened on port {port}")
        try:
            with socket.create_connection((LOOPBACK, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    _stop_process(proc)
    raise RuntimeError(f"{what} did not listen on port {port} within {START_TIMEOUT_SECONDS:g} s")


# Control requests must reach loopback directly, whatever HTTP(S)_PROXY says.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class S3Proxy:
    """The latency and fault proxy in a subprocess of its own, and its controls.

    ``S3Proxy(upstream_url, **config)`` takes ``ProxyConfig``'s fields as the settings to
    start with; given an upstream, entering it as a context manager starts it.
    """

    def __init__(self, upstream_url: str | None = None, **config: Any) -> None:
        self.upstream_url = upstream_url
        self.initial = ProxyConfig().updated(config)
        self.proc: subprocess.Popen[bytes] | None = None
        self.url: str | None = None

    def start(self, upstream_url: str) -> str:
        """Start the proxy in front of ``upstream_url`` on a free loopback port; its URL once it answers."""
        if self.proc is not None:
            raise RuntimeError("proxy already started")
        cmd = [
            sys.executable,
            "-m",
            "hudi_testkit.s3proxy",
            "--upstream",
            upstream_url,
            "--port",
            "0",
            "--parent-pid",
            str(os.getpid()),
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        line = self._first_line(self.proc)
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"s3proxy did not start: {line!r}")
        self.url = line.split()[-1]
        self.configure(**asdict(self.initial))
        return self.url

    @staticmethod
    def _first_line(proc: subprocess.Popen[bytes]) -> str:
        # The child prints one line once it listens, and nothing after: the pipe never fills.
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT_SECONDS)
        if not ready:
            _stop_process(proc)
            raise RuntimeError(f"s3proxy did not start within {START_TIMEOUT_SECONDS:g} s")
        return proc.stdout.readline().decode().strip()

    def _call(self, method: str, action: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.url is None:
            raise RuntimeError("proxy not started")
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(f"{self.url}{CONTROL_PREFIX}{action}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with _OPENER.open(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise ValueError(f"s3proxy {action}: {exc.read().decode(errors='replace')}") from exc

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Change some settings (``ProxyConfig``'s fields); returns them all."""
        return self._call("POST", "config", changes)

    def configure_defaults(self) -> dict[str, Any]:
        """Every setting back to ``ProxyConfig``'s default (the generator restarts)."""
        return self.configure(**asdict(ProxyConfig()))

    def config(self) -> dict[str, Any]:
        return self._call("GET", "config")

    def requests(self) -> list[dict[str, Any]]:
        """With ``record=True``: one entry per finished request since the last reset, in order of
        finishing: ``method``, ``path`` (with the query), ``range``, ``outcome`` (the status, or
        ``dropped`` / ``cancelled``), ``ms`` from arrival to the end, and ``arrived_ms`` (the
        proxy's monotonic clock), which shows the requests that waited on others."""
        return self._call("GET", "requests")

    def stats(self) -> dict[str, Any]:
        """Counters since the last reset: ``requests``, ``by_method``, ``by_kind`` (``LIST``, ``GET``,
        ``GET range``, ``HEAD``, ...), ``by_status``, ``faults``, ``max_in_flight``, ``avg_in_flight``
        (over the time any request was in flight), ..."""
        return self._call("GET", "stats")

    def reset(self) -> dict[str, Any]:
        """Zero the counters; returns them as they were (what ``stats`` would have)."""
        return self._call("POST", "reset")

    def stop(self) -> None:
        _stop_process(self.proc)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None
        self.url = None

    def __enter__(self) -> S3Proxy:
        if self.proc is None and self.upstream_url is not None:
            self.start(self.upstream_url)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


_Server = TypeVar("_Server", bound="LoopbackServer")


class LoopbackServer:
    """A server in a subprocess (``python -m <module> <args> --port N --parent-pid P``) on a
    free loopback port, which exits with its parent; a context manager that starts it."""

    what = "server"
    module = "hudi_testkit.s3proxy"

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: int | None = None

    def _args(self) -> list[str]:
        raise NotImplementedError

    def start(self, attempts: int = 3) -> str:
        if self.proc is not None:
            raise RuntimeError(f"{self.what} already started")
        for attempt in range(attempts):
            port = free_port()  # another process may take it before the server binds: retry
            cmd = [sys.executable, "-m", self.module, *self._args(), "--port", str(port)]
            cmd += ["--parent-pid", str(os.getpid())]
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                _wait_for_port(self.proc, port, self.what)
            except RuntimeError:
                self.proc = None
                if attempt == attempts - 1:
                    raise
                continue
            self.port = port
            return self.url
        raise AssertionError("unreachable")

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError(f"{self.what} not started")
        return f"http://{LOOPBACK}:{self.port}"

    def stop(self) -> None:
        _stop_process(self.proc)
        self.proc = None
        self.port = None

    def __enter__(self: _Server) -> _Server:
        if self.proc is None:
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class MotoServer(LoopbackServer):
    """moto in server mode."""

    what = "moto server"

    def _args(self) -> list[str]:
        return ["--moto"]


if __name__ == "__main__":
    main()
