"""Arrow file objects over bytes fetched by the storage layer.

Pyarrow's readers open files through a filesystem: these let them read bytes
fetched ahead from memory, and everything else through the storage's fetcher
(its cap on requests, timeouts and retries) instead of a client of their own.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs
else:
    pa = lazy_module("pyarrow")
    pafs = lazy_module("pyarrow.fs")


class RangeFile:
    """A read-only file of ``size`` bytes over byte ranges fetched before (``blobs``
    starting at the sorted ``starts``); reads outside them go to ``fallback``."""

    def __init__(self, size: int, starts: list[int], blobs: list[bytes], fallback: Callable[[int, int], bytes]) -> None:
        self._size = size
        self._starts = starts
        self._views = [memoryview(b) for b in blobs]
        self._fallback = fallback
        self._pos = 0
        self.closed = False

    def read(self, nbytes: int = -1) -> bytes | memoryview:
        start = self._pos
        end = self._size if nbytes is None or nbytes < 0 else min(self._size, start + nbytes)
        self._pos = end
        if end <= start:
            return b""
        i = bisect.bisect_right(self._starts, start) - 1
        if i >= 0:
            offset = start - self._starts[i]
            view = self._views[i]
            if offset + (end - start) <= len(view):
                return view[offset : offset + (end - start)]
        return self._fallback(start, end)

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = base + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def size(self) -> int:
        return self._size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


class OverlayHandler(pafs.FileSystemHandler):
    """An Arrow filesystem opening fetched Parquet files from memory and
    passing every other call to the real one."""

    def __init__(self, open_fetched: Callable[[str], pa.NativeFile | None], inner: pafs.FileSystem) -> None:
        self._open_fetched = open_fetched
        self._inner = inner

    # Arrow compares filesystems when datasets mix them: only this very one is equal.
    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return id(self)

    def get_type_name(self) -> str:
        return f"hudi-prefetch+{self._inner.type_name}"

    def normalize_path(self, path: str) -> str:
        return self._inner.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self._inner.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self._inner.get_file_info(selector)

    def open_input_file(self, path: str) -> pa.NativeFile:
        opened = self._open_fetched(path)
        return opened if opened is not None else self._inner.open_input_file(path)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self._inner.open_input_stream(path)

    # Readers never write; these exist because the handler interface requires them.
    def create_dir(self, path: str, recursive: bool) -> None:
        self._inner.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self._inner.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self._inner.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        self._inner.delete_dir_contents("/", accept_root_dir=True)

    def delete_file(self, path: str) -> None:
        self._inner.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self._inner.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self._inner.copy_file(src, dest)

    def open_output_stream(self, path: str, metadata: dict | None = None) -> pa.NativeFile:
        return self._inner.open_output_stream(path, metadata=metadata)

    def open_append_stream(self, path: str, metadata: dict | None = None) -> pa.NativeFile:
        return self._inner.open_append_stream(path, metadata=metadata)
