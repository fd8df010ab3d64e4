"""Requests to storage, many in flight, on one event loop per process.

Object stores answer each request after tens of milliseconds whatever its
size, so a reader that sends one request after another reads at requests times
latency. A :class:`Fetcher` runs a storage's requests as coroutines on the
process's I/O event loop (fsspec's: async filesystems such as s3fs keep their
HTTP sessions there), at most ``max_requests`` at once. Every request has a
timeout, and one that failed in a way worth trying again (throttling, a dropped
connection, a timeout) is tried again after a jittered exponential backoff;
any other failure, or the last try's, reaches the caller as it was raised.
"""

from __future__ import annotations

import concurrent.futures
import inspect
import random
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import fsspec

from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_module("asyncio")


T = TypeVar("T")


@dataclass(frozen=True)
class IOTunables:
    """How a table's files are fetched (``hoodie.io.*`` keys, parsed by the config layer).

    Knobs of speed and memory only: no value changes which rows a read returns.
    """

    # Requests in flight at once, per table; the HTTP connection pool is sized to match.
    max_requests: int = 64
    # Bytes a read fetches ahead of its decoding: fetching waits above it.
    max_bytes_in_flight: int = 256 << 20
    # Seconds a request may take before it is abandoned (and tried again).
    request_timeout: float = 60.0
    # Tries of one request; then the read fails naming the file.
    max_attempts: int = 5
    # The wait before try n is uniform in [0, min(cap, base * 2**n)] seconds:
    # the jitter spreads the retries of many requests throttled together.
    backoff_base: float = 0.05
    backoff_cap: float = 5.0


IO_TUNABLES = IOTunables()


class RequestFailed(Exception):
    """A request that failed on every try; ``cause`` is the last try's error."""

    def __init__(self, cause: BaseException, attempts: int) -> None:
        super().__init__(f"{type(cause).__name__}: {cause} ({attempts} tries)")
        self.cause = cause
        self.attempts = attempts


class RequestTimeout(TimeoutError):
    """A request that did not finish within the timeout."""


# Failures that another try cannot mend.
_FINAL = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError, FileExistsError)
# Client errors (aiohttp, botocore, urllib3) that mean the connection or the
# server failed, named so that no client has to be imported to recognise them.
_TRANSIENT_NAMES = frozenset(
    {
        "ClientConnectionError",
        "ClientPayloadError",
        "ServerDisconnectedError",
        "ServerTimeoutError",
        "EndpointConnectionError",
        "ConnectionClosedError",
        "ReadTimeoutError",
        "ConnectTimeoutError",
        "HTTPClientError",
        "IncompleteRead",
        "ResponseParserError",
        "ProtocolError",
        # Azure's SDK: no response, or a response cut short.
        "ServiceRequestError",
        "ServiceResponseError",
        "IncompleteReadError",
    }
)
_THROTTLING_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "503"})


def is_transient(exc: BaseException) -> bool:
    """Whether a failed request is worth trying again."""
    if isinstance(exc, _FINAL):
        return False
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return True
    names = {c.__name__ for c in type(exc).__mro__}
    if names & _TRANSIENT_NAMES:
        return True
    response = getattr(exc, "response", None)
    if isinstance(response, dict):  # botocore's ClientError
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        code = str(response.get("Error", {}).get("Code", ""))
        return status >= 500 or status == 429 or code in _THROTTLING_CODES
    # gcsfs's HttpError (``code``) and Azure's HttpResponseError (``status_code``) carry the status.
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else getattr(exc, "code", None)
    if isinstance(status, int) and not isinstance(status, bool) and 400 <= status < 600:
        return status >= 500 or status in (408, 429)
    # s3fs turns server errors it has no exception for (a 503 SlowDown, a 500)
    # into a plain OSError; its missing files and refusals stay typed.
    return isinstance(exc, OSError)


def io_loop() -> asyncio.AbstractEventLoop:
    """The process's I/O event loop (fsspec's, on its own daemon thread; made
    anew in a forked child)."""
    import fsspec.asyn

    return fsspec.asyn.get_loop()


class Fetcher:
    """Requests of one filesystem, run on the I/O loop, ``max_requests`` at a time."""

    def __init__(self, fs: fsspec.AbstractFileSystem, tunables: IOTunables = IO_TUNABLES) -> None:
        self._fs = fs
        self.tunables = tunables
        self._async = bool(getattr(fs, "async_impl", False))
        # A whole file in one GET: without this, s3fs asks for the size first.
        self._whole = {"max_concurrency": 1} if self._async and _takes(fs._cat_file, "max_concurrency") else {}
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self._random = random.Random()
        self._lock = threading.Lock()
        self.requests = 0  # requests sent, retries included
        # The deepest chain of requests seen: a request started after one of
        # depth d finished has depth d + 1 (an upper bound of the round trips
        # a caller waited for one after another).
        self._depth = 0

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._fs.loop if self._async else io_loop()

    # -- running coroutines ----------------------------------------------------------

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``coro`` on the I/O loop; its future can be waited on from any other thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """``coro``'s result, waited for on the calling thread (never the I/O loop's own)."""
        return self.submit(coro).result()

    def mark(self) -> tuple[int, int]:
        """Where the counters stand, for ``since``."""
        return self.requests, self._depth

    def since(self, mark: tuple[int, int]) -> tuple[int, int]:
        """Requests sent and round trips waited for since ``mark``."""
        return self.requests - mark[0], self._depth - mark[1]

    # -- one request -------------------------------------------------------------------

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        slots = self._slots
        if slots is None or slots[0] is not loop:
            slots = self._slots = (loop, asyncio.Semaphore(self.tunables.max_requests))
        return slots[1]

    async def request(self, make: Callable[[], Awaitable[T]]) -> T:
        """``make()``'s result: one request, run when a slot is free, timed out,
        and tried again while it fails transiently, up to ``max_attempts`` tries."""
        t = self.tunables
        semaphore = self._semaphore()
        attempt = 0
        while True:
            attempt += 1
            async with semaphore:
                self.requests += 1
                depth = self._depth + 1
                try:
                    result = await asyncio.wait_for(make(), t.request_timeout)
                    self._depth = max(self._depth, depth)
                    return result
                except asyncio.TimeoutError:
                    failure: BaseException = RequestTimeout(f"no answer within {t.request_timeout:g} s")
                except Exception as exc:
                    failure = exc
            if not is_transient(failure):
                raise failure
            if attempt >= t.max_attempts:
                raise RequestFailed(failure, attempt) from failure
            with self._lock:
                wait = self._random.uniform(0, min(t.backoff_cap, t.backoff_base * 2**attempt))
            await asyncio.sleep(wait)

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Callable[[], Awaitable[Any]]:
        if self._async:
            method = getattr(self._fs, f"_{name}")
            return lambda: method(*args, **kwargs)
        method = getattr(self._fs, name)
        return lambda: asyncio.to_thread(method, *args, **kwargs)

    # -- filesystem calls ---------------------------------------------------------------

    async def cat(self, path: str, start: int | None = None, end: int | None = None) -> bytes:
        """Bytes ``[start, end)`` of a file (all of it by default), in one request."""
        if start is None and end is None:
            return await self.request(self._call("cat_file", path, **self._whole))
        return await self.request(self._call("cat_file", path, start=start, end=end))

    async def ls(self, path: str) -> list[dict[str, Any]]:
        return await self.request(self._call("ls", path, detail=True))

    async def info(self, path: str) -> dict[str, Any]:
        return await self.request(self._call("info", path))

    async def exists(self, path: str) -> bool:
        return bool(await self.request(self._call("exists", path)))


def _takes(fn: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
