"""fsspec-backed storage rooted at a table's base URI.

Paths given to :class:`Storage` are relative to the base URI. Parquet reads go
through a pyarrow filesystem: the native one for local disk (fastest), an
fsspec handler otherwise.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from hudi_ray.core.exceptions import (
    HudiCoreError,
    HudiFileNotFoundError,
    HudiStorageError,
    HudiUnsafePathError,
)
from hudi_ray.core.storage.early import EarlyAnswers
from hudi_ray.core.storage.fetch import IO_TUNABLES, Fetcher, IOTunables, RequestFailed
from hudi_ray.core.storage.files import FileInfo
from hudi_ray.core.storage.local import list_local, pread_all, written_aside
from hudi_ray.core.storage.options import AZURE_PROTOCOLS, fsspec_kwargs, open_filesystem
from hudi_ray.core.storage.paths import (
    REDACTED,
    contained_path,
    is_secret_key,
    move_credentials,
    redact_options,
    redact_text,
)
from hudi_ray.core.storage.uris import (
    FS_PROTOCOL,
    URL_ROOTS,
    azure_root,
    missing_filesystem,
    normalize_base_uri,
    url_kwargs,
)

if TYPE_CHECKING:  # fsspec loads with a remote store, or a local write: not to read a local table
    import fsspec

from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import asyncio

    import pyarrow as pa
    import pyarrow.fs as pafs
else:
    asyncio = lazy_module("asyncio")
    pa = lazy_module("pyarrow")
    pafs = lazy_module("pyarrow.fs")


T = TypeVar("T")

_LIST = "list"
_READ = "read"


def _join(root: str, rel: str) -> str:
    return f"{root}/{rel}" if rel else root


class Storage:
    """Listing and reading of files under one root, sync and async (a :class:`StorageLike`).

    Local files are read directly. Every other request goes through the
    storage's :class:`Fetcher`, with its cap on requests in flight, timeout and
    retries; the ``*_async`` methods and ``read_many`` run them on the
    process's I/O loop (coroutines of a storage run there: ``submit``).
    """

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None, io: IOTunables | None = None) -> None:
        # Object stores take credentials as options; other clients (aiohttp,
        # WebHDFS) authenticate from the URI, which keeps them: ``base_url``
        # and every message built from it redact them.
        base_uri, self.options = move_credentials(base_uri, options or {})
        self.protocol, self.root = normalize_base_uri(base_uri, keep_credentials=True)
        if self.protocol.lower() in AZURE_PROTOCOLS:
            self.root, self.options = azure_root(self.root, self.options)
        fs_protocol = FS_PROTOCOL.get(self.protocol.lower(), self.protocol)
        self.io = io or IO_TUNABLES
        self._early = EarlyAnswers()
        try:
            kwargs = fsspec_kwargs(self.protocol, self.options, self.io)
            if self.protocol.lower() in URL_ROOTS:
                kwargs = {**url_kwargs(fs_protocol, base_uri), **kwargs}
            self._fs_args = (fs_protocol, kwargs)
            if not self.is_local:
                self.__dict__["fs"] = open_filesystem(fs_protocol, kwargs)
        except ImportError as exc:
            raise missing_filesystem(self.protocol, self.base_url, exc) from exc
        except HudiCoreError:
            raise
        except Exception as exc:  # a client refusing its arguments: a bad key, a malformed credential
            detail = redact_text(str(exc))
            for key, value in self.options.items():
                if is_secret_key(str(key)) and isinstance(value, str) and value:
                    detail = detail.replace(value, REDACTED)
            raise HudiStorageError(
                f"Cannot open storage for {self.base_url!r}: {type(exc).__name__}: {detail}"
            ) from exc

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r}, options={redact_options(self.options)!r})"

    @property
    def base_url(self) -> str:
        """The root as a URI safe to show: any user info is redacted."""
        if self.protocol == "file":
            return f"file://{self.root}"
        if self.protocol.lower() in URL_ROOTS:
            return redact_text(self.root)
        return redact_text(f"{self.protocol}://{self.root}")

    @property
    def is_local(self) -> bool:
        return self.protocol == "file"

    @cached_property
    def fs(self) -> fsspec.AbstractFileSystem:
        """The fsspec filesystem. An object store's is made with the storage (a missing
        library is reported there); a local disk's on first use: reads go through ``os``
        and Arrow, and fsspec's import (a tenth of a second) is for writes."""
        return open_filesystem(*self._fs_args)

    def child(self, rel: str) -> Storage:
        """A storage rooted at ``rel`` below this one, sharing the filesystem."""
        other = object.__new__(Storage)
        other.options = self.options
        other.protocol = self.protocol
        other.root = self.full_path(rel)
        other._fs_args = self._fs_args
        if "fs" in self.__dict__:
            other.__dict__["fs"] = self.fs
        other.io = self.io
        other._early = self._early  # the table's answers asked for early, whoever takes them
        if not self.is_local or "fetcher" in self.__dict__:
            other.__dict__["fetcher"] = self.fetcher  # one cap on requests (and one count) for the whole table
        return other

    def relative(self, rel: str) -> str:
        """``rel`` normalised; every path this storage touches goes through here.

        Paths come from table metadata, so one that leads outside the root
        (``..`` above it, a URI of another bucket) is refused, whatever the
        caller checked before.
        """
        resolved = contained_path(rel)
        if resolved is None:
            raise HudiUnsafePathError(f"Path {redact_text(rel)!r} leads outside the table at {self.base_url}")
        return resolved

    def full_path(self, rel: str) -> str:
        return _join(self.root, self.relative(rel))

    def uri(self, rel: str) -> str:
        resolved = self.relative(rel)
        return f"{self.base_url}/{resolved}" if resolved else self.base_url

    def _describe(self, rel: str) -> str:
        return self.uri(rel)

    @contextmanager
    def _errors(self, what: str, rel: str, missing: str = "File not found") -> Iterator[None]:
        """Map any storage client failure to an error naming the URI.

        Object store clients raise their own exception types (botocore's are
        not OSErrors), so everything that is not already ours is wrapped.
        """
        try:
            yield
        except HudiCoreError:
            raise
        except RequestFailed as exc:
            cause = exc.cause
            detail = redact_text(str(cause))
            raise HudiStorageError(
                f"Cannot {what} {self._describe(rel)}: {type(cause).__name__}: {detail} (failed {exc.attempts} times)"
            ) from exc
        except FileNotFoundError as exc:
            raise HudiFileNotFoundError(f"{missing}: {self._describe(rel)}") from exc
        except IsADirectoryError as exc:
            raise HudiStorageError(f"Expected a file, found a directory: {self._describe(rel)}") from exc
        except Exception as exc:
            detail = redact_text(str(exc))
            raise HudiStorageError(f"Cannot {what} {self._describe(rel)}: {type(exc).__name__}: {detail}") from exc

    # -- listing -------------------------------------------------------------

    def list_dir(self, rel: str = "", *, sizes: bool = True) -> list[FileInfo]:
        """The entries of directory ``rel``. Without ``sizes``, a local listing leaves
        files' sizes ``UNKNOWN_SIZE``: each is a stat, most of a large listing's time,
        and a caller may learn them elsewhere. An object store's listing has them anyway."""
        path = self.full_path(rel)
        if self.is_local:
            return self._list_local(rel, path, sizes)
        return self.fetcher.run(self.list_dir_async(rel))

    def _infos(self, rel: str, path: str, entries: list[dict]) -> list[FileInfo]:
        # Object stores list a "directory" path that names a file as that file.
        return [self._info(rel, e) for e in entries if e["name"].rstrip("/") != path]

    def _list_local(self, rel: str, path: str, sizes: bool = True) -> list[FileInfo]:
        with self._errors("list", rel, "Directory not found"):
            return list_local(path, rel.strip("/"), sizes)

    async def list_dir_async(self, rel: str = "") -> list[FileInfo]:
        if self.is_local:
            return await asyncio.to_thread(self.list_dir, rel)
        early = self._early.take(self._early_key(_LIST, rel))
        if early is not None:
            return await asyncio.wrap_future(early)
        return await self._list_remote(rel)

    async def _list_remote(self, rel: str) -> list[FileInfo]:
        path = self.full_path(rel)
        with self._errors("list", rel, "Directory not found"):
            entries = await self.fetcher.ls(path)
        return self._infos(rel, path, entries)

    # -- asking early ----------------------------------------------------------

    def ask_early(self, listings: Sequence[str] = (), reads: Sequence[str] = ()) -> None:
        """On an object store, start listing ``listings`` and reading ``reads`` now.

        Loading a table asks one question after another (its configs, its timeline, its
        partitions), and on a store each answer is a round trip; asked early, several come
        back in one. Each answer is taken once, by the next ``list_dir`` or ``read_bytes``
        of that path (or their async forms), and replaces any earlier one not taken.
        Failures are reported to the caller that takes the answer, as if it had asked
        itself. ``forget_early`` drops answers nobody took (a table's load starts so).
        """
        if self.is_local:
            return
        for rel in listings:
            self._early.put(self._early_key(_LIST, rel), self.submit(self._list_remote(rel)))
        for rel in reads:
            self._early.put(self._early_key(_READ, rel), self.submit(self._read_remote(rel)))

    def ask_early_new(self, listings: Sequence[str]) -> None:
        """``ask_early`` for those of ``listings`` not asked early already: the walk
        (``ask_early_tree``) may have asked some, and asking again would be a request spent."""
        if self.is_local or not listings:
            return
        keys = [(rel, self._early_key(_LIST, rel)) for rel in listings]
        generation = self._early.generation

        async def ask() -> None:
            for rel, key in keys:
                self._early.put_asked(key, self._asker(_LIST, rel), generation)

        self.submit(ask())

    def forget_early(self) -> None:
        """Drop the answers asked early that nobody took: a table loaded again must not
        take listings made for its earlier load."""
        self._early.clear()

    def ask_early_after(self, after: Sequence[str], listings: Sequence[str]) -> None:
        """``ask_early`` for ``listings`` once the listings of ``after`` asked early have
        arrived, not before: a folder listed before a timeline could miss the files of an
        instant the timeline shows completed."""
        if self.is_local or not listings:
            return
        waits = [f for rel in after if (f := self._early.peek(self._early_key(_LIST, rel))) is not None]
        generation = self._early.generation

        async def then() -> None:
            for wait in waits:
                with suppress(HudiCoreError):  # the one who takes that listing reports it
                    await asyncio.wrap_future(wait)
            for rel in listings:  # the walk may have asked already (``ask_early_tree``)
                self._early.put_asked(self._early_key(_LIST, rel), self._asker(_LIST, rel), generation)

        self.submit(then())

    def ask_early_following(self, rel: str, choose: Callable[[list[FileInfo]], list[str]]) -> None:
        """Once the listing of ``rel`` asked early arrives, ``ask_early`` to read the files
        ``choose`` picks from it: a chain of two round trips started as one."""
        early = self._early.peek(self._early_key(_LIST, rel))
        if self.is_local or early is None:
            return
        generation = self._early.generation

        async def follow() -> None:
            try:
                entries = await asyncio.wrap_future(early)
            except HudiCoreError:  # the one who takes the listing reports it
                return
            for path in choose(entries):
                self._early.put_asked(self._early_key(_READ, path), self._asker(_READ, path), generation, replace=True)

        self.submit(follow())

    def ask_early_tree(self, levels: int) -> None:
        """``ask_early`` for the listings of every directory in the ``levels`` top levels
        of the tree (the root is the first; hidden folders aside), each as soon as its
        parent's listing shows it: the walk that finds a table's partitions, done ahead
        of the scan. The partitions' own listings are left to the scan, which lists only
        those its filters keep. The root's listing asked early is used if there is one."""
        if self.is_local or levels < 1:
            return
        self.submit(self._early_tree("", levels, self._early.generation))

    async def _early_tree(self, rel: str, levels: int, generation: int) -> None:
        early = self._early.put_asked(self._early_key(_LIST, rel), self._asker(_LIST, rel), generation)
        if early is None or levels == 1:  # a later load has started: its own walk asks
            return
        try:
            entries = await asyncio.wrap_future(early)
        except HudiCoreError:  # the walk asks again, and reports it
            return
        await asyncio.gather(
            *(
                self._early_tree(e.path, levels - 1, generation)
                for e in entries
                if e.is_dir and not e.name.startswith(".")
            )
        )

    def _asker(self, kind: str, rel: str) -> Callable[[], concurrent.futures.Future[Any]]:
        """What asks for ``rel`` early from a coroutine already on the I/O loop."""
        loop = asyncio.get_running_loop()
        ask = self._list_remote if kind == _LIST else self._read_remote
        return lambda: asyncio.run_coroutine_threadsafe(ask(rel), loop)

    def _early_key(self, kind: str, rel: str) -> tuple[str, str, str]:
        # The asking storage's root is part of the key: a listing's entries are
        # relative to the storage that listed.
        return kind, self.root, self.relative(rel)

    def _info(self, rel: str, entry: dict) -> FileInfo:
        name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
        child = f"{rel.strip('/')}/{name}" if rel.strip("/") else name
        return FileInfo(
            name=name,
            path=child,
            size=int(entry.get("size") or 0),
            is_dir=entry.get("type") == "directory",
        )

    def exists(self, rel: str) -> bool:
        path = self.full_path(rel)
        with self._errors("stat", rel):
            if self.is_local:
                return os.path.exists(path)
            return self.fetcher.run(self.fetcher.exists(path))

    def size(self, rel: str) -> int:
        if not self.is_local:
            return self.fetcher.run(self.size_async(rel))
        with self._errors("stat", rel):
            return os.stat(self.full_path(rel)).st_size

    # -- reading -------------------------------------------------------------

    def read_bytes(self, rel: str) -> bytes:
        if not self.is_local:
            return self.fetcher.run(self.read_bytes_async(rel))
        with self._errors("read", rel), open(self.full_path(rel), "rb") as f:
            return f.read()

    def read_range(self, rel: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of a file; negative ``start`` counts from the end."""
        if not self.is_local:
            return self.fetcher.run(self.read_range_async(rel, start, end))
        with self._errors("read", rel):
            # A descriptor and pread, not fsspec's opener or a buffered file: planning reads
            # thousands of footers, and each of those costs more than the bytes.
            fd = os.open(self.full_path(rel), os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                if start < 0 or end < 0:
                    size = os.fstat(fd).st_size
                    start, end = (max(0, size + start) if start < 0 else start), (size + end if end < 0 else end)
                return pread_all(fd, start, max(0, end - start))
            finally:
                os.close(fd)

    async def read_bytes_async(self, rel: str) -> bytes:
        if self.is_local:
            return await asyncio.to_thread(self.read_bytes, rel)
        early = self._early.take(self._early_key(_READ, rel))
        if early is not None:
            return await asyncio.wrap_future(early)
        return await self._read_remote(rel)

    async def _read_remote(self, rel: str) -> bytes:
        path = self.full_path(rel)
        with self._errors("read", rel):
            return await self.fetcher.cat(path)

    async def read_range_async(self, rel: str, start: int, end: int) -> bytes:
        if self.is_local:
            return await asyncio.to_thread(self.read_range, rel, start, end)
        if start < 0 or end < 0:
            # Offsets from the end, which not every store takes (Azure, GCS emulators), made absolute.
            size = await self.size_async(rel)
            start, end = (max(0, size + start) if start < 0 else start), (size + end if end < 0 else end)
        path = self.full_path(rel)
        with self._errors("read", rel):
            return await self.fetcher.cat(path, start, end)

    async def size_async(self, rel: str) -> int:
        if self.is_local:
            return await asyncio.to_thread(self.size, rel)
        path = self.full_path(rel)
        with self._errors("stat", rel):
            return int((await self.fetcher.info(path))["size"])

    def read_many(self, rels: Sequence[str]) -> list[bytes]:
        """Whole files, in order, fetched together (one round trip, not one per file)."""
        if self.is_local or len(rels) <= 1:
            return [self.read_bytes(rel) for rel in rels]

        async def all_of() -> list[bytes]:
            return list(await asyncio.gather(*(self.read_bytes_async(rel) for rel in rels)))

        return self.fetcher.run(all_of())

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` (made of this storage's ``*_async`` calls) on the I/O loop."""
        return self.fetcher.submit(coro)

    @cached_property
    def fetcher(self) -> Fetcher:
        return Fetcher(self.fs, self.io)

    # -- small writes ----------------------------------------------------------
    # The reader never writes tables; these serve small files of its own
    # (an incremental job's checkpoint and lease), each written whole.

    def write_atomic(self, rel: str, data: bytes) -> None:
        """Replace a small file's content at once: a reader sees the old bytes
        or the new, never part. Local files are written aside and renamed over;
        an object store takes one PUT, which it makes visible whole."""
        path = self.full_path(rel)
        with self._errors("write", rel):
            if self.is_local:
                tmp = written_aside(path, data)
                try:
                    os.replace(tmp, path)
                finally:
                    if os.path.exists(tmp):
                        os.unlink(tmp)
                return
            self.fs.pipe_file(path, data)

    def create_exclusive(self, rel: str, data: bytes) -> bool:
        """Create a small file only if none exists (False when one does),
        atomically where the store allows: a hard link of a written file on
        local disk, a conditional PUT (If-None-Match) on S3; elsewhere a check
        then a write, which two writers racing can both pass."""
        path = self.full_path(rel)
        with self._errors("create", rel):
            if self.is_local:
                tmp = written_aside(path, data)
                try:
                    os.link(tmp, path)  # fails when the file exists: content and creation at once
                    return True
                except FileExistsError:
                    return False
                finally:
                    os.unlink(tmp)
            if self.protocol.lower() in ("s3", "s3a"):
                try:
                    self.fs.pipe_file(path, data, mode="create")
                    return True
                except FileExistsError:
                    return False
                except Exception as exc:
                    if "PreconditionFailed" in str(exc) or "412" in str(exc):
                        return False
                    raise
            if self.fs.exists(path):
                return False
            self.fs.pipe_file(path, data)
            return True

    def delete(self, rel: str) -> bool:
        """Remove a file; False when there was none."""
        path = self.full_path(rel)
        with self._errors("delete", rel):
            try:
                self.fs.rm_file(path)
            except FileNotFoundError:
                return False
            return True

    # -- pyarrow -------------------------------------------------------------

    @cached_property
    def arrow_fs(self) -> pafs.FileSystem:
        if self.is_local:
            return pafs.LocalFileSystem()
        from hudi_ray.core.storage.arrow_files import OverlayHandler

        # Files open over the fetcher (its timeouts and retries); only listing goes to fsspec's handler.
        return pafs.PyFileSystem(OverlayHandler(self._open_remote, pafs.PyFileSystem(pafs.FSSpecHandler(self.fs))))

    def _open_remote(self, path: str) -> pa.NativeFile:
        prefix = self.root + "/"
        rel = path[len(prefix) :] if path.startswith(prefix) else path
        size = self.size(rel)
        from hudi_ray.core.storage.arrow_files import RangeFile

        return pa.PythonFile(RangeFile(size, [], [], lambda start, end: self.read_range(rel, start, end)), mode="r")

    def arrow_path(self, rel: str) -> str:
        return self.full_path(rel)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("arrow_fs", None)
        state.pop("fetcher", None)
        return state
