"""Local-disk operations of a storage: listing, reading ranges by descriptor, writing aside."""

from __future__ import annotations

import os

from hudi_ray.core.storage.files import UNKNOWN_SIZE, FileInfo


def list_local(path: str, rel: str, sizes: bool = True) -> list[FileInfo]:
    """The entries of local directory ``path`` (``rel`` to the storage root): directories,
    and regular files with their sizes or, without ``sizes``, ``UNKNOWN_SIZE``. os.scandir,
    without fsspec's per-entry dicts (costly on partitions of thousands of small files) or
    the import of pyarrow a plan does not need. A missing directory is
    FileNotFoundError; a file is listed as nothing, as fsspec lists it."""
    prefix = f"{rel}/" if rel else ""
    try:
        # Through the directory's descriptor where the system allows: each entry's stat
        # then resolves one name, not the whole path.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if os.scandir in os.supports_fd else None
    except NotADirectoryError:
        return []
    try:
        try:
            entries = os.scandir(path if fd is None else fd)
        except NotADirectoryError:
            return []
        with entries:
            out = []
            for e in entries:
                try:
                    is_dir = e.is_dir()
                    if is_dir:
                        size = 0
                    elif not e.is_file():
                        continue  # not a regular file: a dangling link, a socket
                    else:
                        size = e.stat().st_size if sizes else UNKNOWN_SIZE
                except FileNotFoundError:
                    continue  # a dangling link names no file, as Arrow's listing has none
                out.append(FileInfo(e.name, prefix + e.name, size, is_dir))
            return out
    finally:
        if fd is not None:
            os.close(fd)


def pread_all(fd: int, start: int, length: int) -> bytes:
    """``length`` bytes from ``start`` (fewer at the file's end): one pread returns at
    most about 2 GiB. Where ``os`` has no pread (Windows), a seek and reads."""
    if not hasattr(os, "pread"):
        os.lseek(fd, start, os.SEEK_SET)
        parts, got = [], 0
        while got < length and (more := os.read(fd, length - got)):
            parts.append(more)
            got += len(more)
        return b"".join(parts)
    first = os.pread(fd, length, start)
    if len(first) == length or not first:
        return first
    parts = [first]
    got = len(first)
    while got < length and (more := os.pread(fd, length - got, start + got)):
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def written_aside(path: str, data: bytes) -> str:
    """``data`` written and synced to a new temporary file beside local ``path``; its path."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.urandom(16).hex()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return tmp
