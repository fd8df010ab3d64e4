"""Files of the LSM history (timeline layout 2) read by byte ranges.

Most of such a file's bytes are its instants' metadata and plans. The index (instant
times, completion times, actions) is a few kilobytes at the file's start, the footer a
few at its end. Both are fetched in one wave of two ranged reads per file; a column
missing from them is fetched once the footer says where it lies. On an object store
the archive's index then costs one round trip after the manifest, not the transfer of
whole files.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Collection
from typing import TYPE_CHECKING

from hudi_ray.core.exceptions import HudiCorruptFileError, HudiStorageError
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.storage import Storage, parquet_chunk_ranges

if TYPE_CHECKING:
    import asyncio

    import pyarrow as pa
    import pyarrow.parquet as pq
else:
    asyncio = lazy_module("asyncio")
    pa = lazy_module("pyarrow")
    pq = lazy_module("pyarrow.parquet")

# Bytes read from each end of a file first: the index columns of a file of a few
# thousand instants, and its footer.
HEAD = 64 * 1024
TAIL = 64 * 1024
_MAGIC = b"PAR1"
_FOOTER_LENGTH = struct.Struct("<i")


class _NotThatSize(HudiCorruptFileError):
    """The file's bytes do not end where its manifest says."""


class LsmFile:
    """One file's bytes read so far, at their offsets in a zero-filled copy of the file.
    Columns are read from the copy only after every byte range they span was fetched."""

    def __init__(self, storage: Storage, rel: str, size: int) -> None:
        self._storage = storage
        self.rel = rel
        self.where = storage.uri(rel)
        self.size = size
        self._data = bytearray(size)
        self._have: list[tuple[int, int]] = []
        self._file: pq.ParquetFile | None = None
        self._lock = threading.RLock()  # pyarrow reads the copy while no fetch writes it

    @classmethod
    async def fetch(cls, storage: Storage, rel: str, size: int | None, columns: Collection[str]) -> LsmFile:
        """The file with its footer and ``columns`` fetched; read whole when its size is not known."""
        found = None
        if size is not None:
            found = cls(storage, rel, size)
            try:
                await found.open(columns)
            except (_NotThatSize, HudiStorageError):
                # The manifest's size is wrong (a store answers a range past the end with an
                # error): the file's own bytes decide.
                found = None
        if found is None:
            data = await storage.read_bytes_async(rel)
            found = cls(storage, rel, len(data))
            await found._fetched([(0, len(data))], [data])
        await found.load(columns)
        return found

    # -- fetching ----------------------------------------------------------------------------

    async def open(self, columns: Collection[str]) -> None:
        """Fetch the footer: both ends of the file at once (where ``columns`` of a small
        file lie), then what of the footer they did not cover."""
        if self.size <= HEAD + TAIL:
            await self._fetch([(0, self.size)])
        else:
            await self._fetch([(0, HEAD), (self.size - TAIL, self.size)])
        await self._fetch(self._missing([self._footer_range()]))

    async def load(self, columns: Collection[str]) -> None:
        """Fetch what ``columns`` span and is not held yet, ranges side by side."""
        await self._fetch(self._missing(self._column_ranges(columns)))

    async def _fetch(self, ranges: list[tuple[int, int]]) -> None:
        if not ranges:
            return
        pieces = await asyncio.gather(*(self._storage.read_range_async(self.rel, a, b) for a, b in ranges))
        await self._fetched(ranges, pieces)

    async def _fetched(self, ranges: list[tuple[int, int]], pieces: list[bytes]) -> None:
        with self._lock:
            for (a, b), data in zip(ranges, pieces):
                if len(data) != b - a:
                    raise _NotThatSize(
                        f"Archived timeline file {self.where} does not hold the {self.size} bytes its manifest "
                        f"says: {len(data)} at offset {a}, not {b - a}"
                    )
                self._data[a:b] = data
                self._have.append((a, b))
            self._file = None

    def _missing(self, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The parts of ``ranges`` not held, merged."""
        with self._lock:
            have = sorted(self._have)
        out: list[tuple[int, int]] = []
        for start, end in sorted(ranges):
            for a, b in have:
                if b <= start or a >= end:
                    continue
                if a <= start:
                    start = max(start, b)
                elif a < end:
                    out.append((start, a))
                    start = b
                if start >= end:
                    break
            if start < end:
                if out and out[-1][1] >= start:
                    out[-1] = (out[-1][0], max(out[-1][1], end))
                else:
                    out.append((start, end))
        return out

    # -- layout of the file --------------------------------------------------------------------

    def _footer_range(self) -> tuple[int, int]:
        tail = bytes(self._data[self.size - 8 :]) if self.size >= 8 else b""
        if len(tail) != 8 or tail[4:] != _MAGIC:
            raise _NotThatSize(
                f"Archived timeline file {self.where} has no Parquet footer at byte {self.size}, "
                "where its manifest says it ends"
            )
        length = _FOOTER_LENGTH.unpack_from(tail, 0)[0]
        if not 0 < length <= self.size - 12:
            raise HudiCorruptFileError(f"Archived timeline file {self.where} declares a footer of {length} bytes")
        return self.size - 8 - length, self.size

    def _parquet(self) -> pq.ParquetFile:
        with self._lock:
            if self._file is None:
                self._file = pq.ParquetFile(pa.BufferReader(pa.py_buffer(self._data)))
            return self._file

    @property
    def names(self) -> list[str]:
        try:
            return list(self._parquet().schema_arrow.names)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise HudiCorruptFileError(f"Cannot read archived timeline file {self.where}: {exc}") from exc

    @property
    def num_rows(self) -> int:
        return int(self._parquet().metadata.num_rows)

    def _column_ranges(self, columns: Collection[str]) -> list[tuple[int, int]]:
        try:
            ranges = parquet_chunk_ranges(self._parquet().metadata, set(columns))
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise HudiCorruptFileError(f"Cannot read archived timeline file {self.where}: {exc}") from exc
        for start, end in ranges:
            if not 0 <= start < end <= self.size:
                raise HudiCorruptFileError(
                    f"Archived timeline file {self.where} places a column at bytes {start}..{end}, "
                    f"outside its {self.size} bytes"
                )
        return ranges

    def read(self, columns: list[str]) -> pa.Table:
        """``columns`` of the file, from the bytes fetched (``load`` them first)."""
        if self._missing(self._column_ranges(columns)):
            raise HudiCorruptFileError(f"Columns {columns} of archived timeline file {self.where} were not fetched")
        try:
            with self._lock:
                return self._parquet().read(columns=columns)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise HudiCorruptFileError(f"Cannot read archived timeline file {self.where}: {exc}") from exc
