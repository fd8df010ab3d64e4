"""Split a log file into blocks, tolerating corrupt blocks as Hudi does.

A block is ``#HUDI#``, an int64 size, an int32 log format version, then (for
version 1) an int32 type, a header map, an int64 content length, the content,
a footer map and an int64 trailing length (size + 6). A block whose size runs
past the end of the file, whose trailing length disagrees, or that is not
followed by another magic is corrupt: it is skipped with a warning and reading
resumes at the next magic, so the rest of the file is still read.
"""

from __future__ import annotations

import logging
import struct

from hudi_ray.core.exceptions import HudiCorruptFileError
from hudi_ray.core.log_file.block import MAGIC, BlockType, LogBlock

log = logging.getLogger(__name__)

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class _Truncated(Exception):
    pass


class _Cursor:
    def __init__(self, data: memoryview, pos: int, end: int) -> None:
        self.data = data
        self.pos = pos
        self.end = end

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > self.end:
            raise _Truncated
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def i32(self) -> int:
        return _I32.unpack(self.take(4))[0]

    def i64(self) -> int:
        return _I64.unpack(self.take(8))[0]

    def metadata(self) -> dict[int, str]:
        count = self.i32()
        if count < 0 or count > 1024:
            raise _Truncated
        out: dict[int, str] = {}
        for _ in range(count):
            key = self.i32()
            length = self.i32()
            out[key] = bytes(self.take(length)).decode("utf-8")
        return out


def _next_magic(data: bytes, start: int) -> int:
    idx = data.find(MAGIC, start)
    return len(data) if idx < 0 else idx


def _block_is_sound(data: memoryview, start: int, size: int) -> bool:
    """Java's corruption checks: size within the file, trailing length agrees,
    and the next bytes are a magic or the end of the file."""
    end = start + 8 + size
    if size < 0 or end > len(data):
        return False
    trailing = _I64.unpack(data[end - 8 : end])[0]
    if trailing - 6 != size:
        return False
    following = bytes(data[end : end + len(MAGIC)])
    return not following or following == MAGIC


def read_log_blocks(data: bytes, where: str) -> list[LogBlock]:
    """Every block of a log file's bytes, corrupt ones replaced by CORRUPT blocks.

    Raises :class:`HudiCorruptFileError` when the file does not start with a
    magic (it is not a log file at all).
    """
    data = bytes(data)
    view = memoryview(data)
    blocks: list[LogBlock] = []
    pos = 0
    if view and bytes(view[: len(MAGIC)]) != MAGIC:
        raise HudiCorruptFileError(f"Not a Hudi log file (no #HUDI# magic at byte 0): {where}")
    while pos < len(view):
        if bytes(view[pos : pos + len(MAGIC)]) != MAGIC:
            nxt = _next_magic(data, pos)
            log.warning("Skipping %d unreadable bytes at byte %d of log file %s", nxt - pos, pos, where)
            pos = nxt
            continue
        start = pos + len(MAGIC)
        block = None
        try:
            cur = _Cursor(view, start, len(view))
            size = cur.i64()
            if _block_is_sound(view, start, size):
                block = _parse_block(view, start, size, where)
        except (_Truncated, UnicodeDecodeError, ValueError):
            block = None
        if block is None:
            nxt = _next_magic(data, start)
            log.warning("Corrupt log block at byte %d of %s (%d bytes skipped)", pos, where, nxt - pos)
            blocks.append(LogBlock(BlockType.CORRUPT, {}, view[start:nxt], where, pos))
            pos = nxt
            continue
        blocks.append(block)
        pos = start + 8 + size
    return blocks


def _parse_block(view: memoryview, start: int, size: int, where: str) -> LogBlock | None:
    end = start + 8 + size
    cur = _Cursor(view, start + 8, end)
    version = cur.i32()
    if version == 0:
        # Legacy layout: no type or header; nothing current writes it.
        return None
    type_code = cur.i32()
    if type_code not in BlockType._value2member_map_:
        return None
    header = cur.metadata()
    length = cur.i64()
    content = cur.take(length)
    footer: dict[int, str] = {}
    if version == 1:
        footer = cur.metadata()
        cur.i64()  # trailing length, already checked
    return LogBlock(BlockType(type_code), header, content, where, start - len(MAGIC), version, footer)
