"""What storage hands out: a listing's entries, and the interface readers use."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import pyarrow.fs as pafs

    from hudi_ray.core.storage.fetch import IOTunables

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One entry of a directory listing (slotted: planning holds one per file)."""

    name: str
    path: str  # relative to the storage root
    size: int  # UNKNOWN_SIZE where a local listing was asked not to read it
    is_dir: bool


# The size of a file a local listing did not stat (``list_dir(rel, sizes=False)``).
UNKNOWN_SIZE = -1


class StorageLike(Protocol):
    """What readers use of a table's storage. :class:`Storage` is the fsspec-backed
    one; wrappers (``PrefetchingStorage``) implement it around an inner storage
    and hand every call they do not serve themselves to it."""

    @property
    def options(self) -> Mapping[str, str]: ...

    @property
    def protocol(self) -> str: ...

    @property
    def root(self) -> str: ...

    @property
    def base_url(self) -> str: ...

    @property
    def is_local(self) -> bool: ...

    def child(self, rel: str) -> StorageLike: ...

    def relative(self, rel: str) -> str: ...

    def full_path(self, rel: str) -> str: ...

    def uri(self, rel: str) -> str: ...

    def list_dir(self, rel: str = "", *, sizes: bool = True) -> list[FileInfo]: ...

    async def list_dir_async(self, rel: str = "") -> list[FileInfo]: ...

    def exists(self, rel: str) -> bool: ...

    def size(self, rel: str) -> int: ...

    def read_bytes(self, rel: str) -> bytes: ...

    def read_range(self, rel: str, start: int, end: int) -> bytes: ...

    async def read_bytes_async(self, rel: str) -> bytes: ...

    async def read_range_async(self, rel: str, start: int, end: int) -> bytes: ...

    async def size_async(self, rel: str) -> int: ...

    def read_many(self, rels: Sequence[str]) -> list[bytes]: ...

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]: ...

    @property
    def io(self) -> IOTunables: ...

    @property
    def arrow_fs(self) -> pafs.FileSystem: ...

    def arrow_path(self, rel: str) -> str: ...
