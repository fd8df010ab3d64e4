"""Read HFile v3 files as Hudi writes them (HBase's writer for table version
6/8, Hudi's own writer for version 9).

Layout: data blocks, optional meta and intermediate index blocks, the
"load-on-open" section (root data index, meta index, file info) and a fixed
4096-byte trailer holding a protobuf message. Blocks have a 33-byte header and
a payload that is gzip-compressed when the codec is GZ. A key lookup reads the
root index once, then one block per index level and one data block. Lookups of
many keys or prefixes go in key order through one forward cursor, so a data
block is read and walked once however many of them fall in it.
"""

from __future__ import annotations

import bisect
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from hudi_ray.core.exceptions import HudiCorruptFileError, HudiUnsupportedError
from hudi_ray.core.hfile.encoding import hadoop_vlong, inflate, next_cell, protobuf_fields, row_of_key, varint
from hudi_ray.core.util.pools import cpu_map

TRAILER_SIZE = 4096
HEADER_SIZE = 33
_MAGIC_TRAILER = b'TRABLK"$'
_MAGIC_DATA = b"DATABLK*"
_MAGIC_ROOT = b"IDXROOT2"
_MAGIC_LEAF = b"IDXLEAF2"
_MAGIC_INTERMEDIATE = b"IDXINTE2"
_MAGIC_FILE_INFO = b"FILEINF2"
_CODEC_GZ = 1
_CODEC_NONE = 2
# Data blocks kept inflated per reader, and how many a lookup of many keys loads at once.
_CACHED_BLOCKS = 64
_AHEAD_BLOCKS = 32
# HBase's index grows a level per ~128x more blocks; 64 levels is beyond any real file.
_MAX_INDEX_LEVELS = 64


@dataclass(frozen=True)
class Trailer:
    file_info_offset: int
    load_on_open_offset: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    codec: int
    major: int
    minor: int


@dataclass(frozen=True)
class BlockRef:
    offset: int
    size: int  # on-disk, header and checksums included
    first_row: bytes


class _Source:
    """Random access to the file's bytes: in memory, or ranged reads from storage."""

    def __init__(self, size: int, read: Callable[[int, int], bytes]) -> None:
        self.size = size
        self._read = read

    def read(self, offset: int, length: int) -> bytes:
        end = min(offset + length, self.size)
        return self._read(offset, end) if offset < end else b""


@dataclass
class HFileReader:
    """An HFile read block by block: a lookup costs the trailer, the load-on-open
    section, one block per index level and one data block, whatever the file size."""

    source: _Source
    where: str
    trailer: Trailer = field(init=False)
    file_info: dict[bytes, bytes] = field(init=False)
    _root: list[BlockRef] = field(init=False)
    _blocks: list[BlockRef] | None = field(init=False, default=None)
    _tail: bytes = field(init=False, default=b"")
    _tail_offset: int = field(init=False, default=0)
    _cache: dict[int, bytes] = field(init=False, default_factory=dict)
    _root_rows: list[bytes] = field(init=False, default_factory=list)
    _index_cache: dict[int, tuple[list[BlockRef], list[bytes]]] = field(init=False, default_factory=dict)

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> HFileReader:
        return cls(_Source(len(data), lambda start, end: data[start:end]), where)

    @classmethod
    def from_range_reader(cls, size: int, read: Callable[[int, int], bytes], where: str) -> HFileReader:
        """``read(start, end)`` returns bytes ``[start, end)`` of the file."""
        return cls(_Source(size, read), where)

    def __post_init__(self) -> None:
        try:
            self.trailer = self._read_trailer()
            # One read covers the whole load-on-open section up to the trailer.
            self._tail_offset = self.trailer.load_on_open_offset
            self._tail = self.source.read(self._tail_offset, self.source.size - self._tail_offset)
            if self.trailer.codec not in (_CODEC_GZ, _CODEC_NONE):
                raise HudiUnsupportedError(f"HFile compression codec {self.trailer.codec} in {self.where}")
            pos = self.trailer.load_on_open_offset
            root, pos = self._block(pos, _MAGIC_ROOT)
            self._root = self._root_entries(root, self.trailer.data_index_count)
            self._root_rows = [r.first_row for r in self._root]
            _, pos = self._block(pos, _MAGIC_ROOT)  # meta index: only the bloom filter
            info, _ = self._block(self.trailer.file_info_offset, _MAGIC_FILE_INFO)
            self.file_info = self._file_info(info)
        except (HudiCorruptFileError, HudiUnsupportedError):
            raise
        except (ValueError, struct.error, IndexError, zlib.error) as exc:
            raise HudiCorruptFileError(f"Cannot read HFile {self.where}: {exc}") from exc

    # -- structure -------------------------------------------------------------

    def _read_trailer(self) -> Trailer:
        size = self.source.size
        if size < TRAILER_SIZE:
            raise HudiCorruptFileError(f"HFile {self.where} is {size} bytes, shorter than its trailer")
        t = memoryview(self.source.read(size - TRAILER_SIZE, TRAILER_SIZE))
        if bytes(t[:8]) != _MAGIC_TRAILER:
            raise HudiCorruptFileError(f"HFile {self.where} has no trailer magic")
        (version,) = struct.unpack_from(">I", t, TRAILER_SIZE - 4)
        major, minor = version & 0x00FFFFFF, version >> 24
        if major != 3:
            raise HudiUnsupportedError(f"HFile major version {major} in {self.where}; only version 3 is supported")
        length, pos = varint(t, 8)
        f = protobuf_fields(t[pos : pos + length])

        def get(n: int, default: int = 0) -> int:
            v = f.get(n, [default])[-1]
            return v if isinstance(v, int) else default

        trailer = Trailer(
            file_info_offset=get(1),
            load_on_open_offset=get(2),
            data_index_count=get(5),
            meta_index_count=get(6),
            entry_count=get(7),
            index_levels=get(8, 1),
            first_data_block_offset=get(9),
            last_data_block_offset=get(10),
            codec=get(12, _CODEC_NONE),
            major=major,
            minor=minor,
        )
        if not 0 <= trailer.index_levels <= _MAX_INDEX_LEVELS:
            # Walking a bogus depth would loop for as many levels as the varint claims.
            raise HudiCorruptFileError(
                f"HFile {self.where}: trailer at offset {size - TRAILER_SIZE} declares "
                f"{trailer.index_levels} index levels"
            )
        for name, off in (("file info", trailer.file_info_offset), ("load-on-open", trailer.load_on_open_offset)):
            if not 0 <= off < size - TRAILER_SIZE:
                raise HudiCorruptFileError(f"HFile {self.where}: {name} offset {off} lies outside the file")
        return trailer

    def _raw(self, offset: int, length: int) -> bytes:
        if self._tail and offset >= self._tail_offset:
            start = offset - self._tail_offset
            return self._tail[start : start + length]
        return self.source.read(offset, length)

    def _block(self, offset: int, magic: bytes | None, size_hint: int | None = None) -> tuple[bytes, int]:
        """Payload of the block at ``offset`` (decompressed) and the next block's offset."""
        raw = self._raw(offset, size_hint if size_hint and size_hint >= HEADER_SIZE else HEADER_SIZE)
        return self._block_from(raw, offset, magic)

    def _block_from(self, raw: bytes, offset: int, magic: bytes | None) -> tuple[bytes, int]:
        """``_block`` on ``raw``, the file's bytes from ``offset`` (read further if too short)."""
        h = raw[:HEADER_SIZE]
        if len(h) < HEADER_SIZE:
            raise HudiCorruptFileError(f"HFile {self.where}: block header at {offset} is truncated")
        if magic is not None and h[:8] != magic:
            raise HudiCorruptFileError(f"HFile {self.where}: expected a {magic!r} block at {offset}, found {h[:8]!r}")
        on_disk, uncompressed = struct.unpack_from(">ii", h, 8)
        (data_with_header,) = struct.unpack_from(">i", h, 29)
        end = offset + HEADER_SIZE + on_disk
        if on_disk < 0 or not HEADER_SIZE <= data_with_header <= HEADER_SIZE + on_disk or end > self.source.size:
            raise HudiCorruptFileError(f"HFile {self.where}: block at {offset} runs past the end of the file")
        if len(raw) < data_with_header:
            raw = self._raw(offset, data_with_header)
        payload = raw[HEADER_SIZE:data_with_header]
        if self.trailer.codec == _CODEC_GZ:
            payload = inflate(payload, uncompressed, self.where, offset)
        if len(payload) != uncompressed:
            raise HudiCorruptFileError(f"HFile {self.where}: block at {offset} decodes to the wrong size")
        return payload, end

    def _root_entries(self, payload: bytes, count: int) -> list[BlockRef]:
        out: list[BlockRef] = []
        pos = 0
        for _ in range(count):
            offset, size = struct.unpack_from(">qi", payload, pos)
            pos += 12
            start = pos
            key_len, pos = hadoop_vlong(payload, pos)
            if (key_len < 0 or pos + key_len > len(payload)) and self.trailer.minor == 0:
                # Early native writers wrote this length as a protobuf varint.
                key_len, pos = varint(payload, start)
            out.append(BlockRef(offset, size, row_of_key(payload[pos : pos + key_len])))
            pos += key_len
        return out

    def _non_root_entries(self, payload: bytes, block_offset: int) -> list[BlockRef]:
        """The entries of the non-root index block at ``block_offset``."""

        def corrupt(detail: str) -> HudiCorruptFileError:
            return HudiCorruptFileError(f"HFile {self.where}: index block at offset {block_offset} {detail}")

        if len(payload) < 4:
            raise corrupt(f"has {len(payload)} bytes, too few for its entry count")
        (n,) = struct.unpack_from(">i", payload, 0)
        if n < 0 or 4 + 4 * (n + 1) > len(payload):
            raise corrupt(f"declares {n} entries in {len(payload)} bytes")
        offsets = struct.unpack_from(f">{n + 1}i", payload, 4)
        base = 4 + 4 * (n + 1)
        out = []
        for i in range(n):
            start = base + offsets[i]
            end = base + offsets[i + 1]
            # Each entry is a block offset (8 bytes), size (4) and first key.
            if offsets[i] < 0 or start + 12 > end or end > len(payload):
                raise corrupt(f"entry {i} spans bytes {start} to {end}, outside its {len(payload)}-byte block")
            offset, size = struct.unpack_from(">qi", payload, start)
            out.append(BlockRef(offset, size, row_of_key(payload[start + 12 : end])))
        return out

    @staticmethod
    def _file_info(payload: bytes) -> dict[bytes, bytes]:
        if payload[:4] != b"PBUF":
            raise ValueError("file info block lacks its PBUF marker")
        length, pos = varint(payload, 4)
        info: dict[bytes, bytes] = {}
        for entry in protobuf_fields(payload[pos : pos + length]).get(1, []):
            pair = protobuf_fields(entry)  # type: ignore[arg-type]
            key = pair.get(1, [b""])[0]
            value = pair.get(2, [b""])[0]
            info[key] = value  # type: ignore[index,assignment]
        return info

    # -- index -------------------------------------------------------------------

    def _children(self, ref: BlockRef) -> list[BlockRef]:
        return self._index_level(ref)[0]

    def _index_level(self, ref: BlockRef) -> tuple[list[BlockRef], list[bytes]]:
        """The entries of the index block ``ref`` and their first rows (for bisecting)."""
        # Lookups in key order descend the same index blocks again and again.
        level = self._index_cache.get(ref.offset)
        if level is None:
            payload, _ = self._block(ref.offset, None, ref.size)
            children = self._non_root_entries(payload, ref.offset)
            level = self._index_cache[ref.offset] = (children, [r.first_row for r in children])
        return level

    def data_blocks(self) -> list[BlockRef]:
        """Every data block in key order (walks all index levels)."""
        if self._blocks is None:
            level = self._root
            for _ in range(max(0, self.trailer.index_levels - 1)):
                level = [child for ref in level for child in self._children(ref)]
            self._blocks = level
        return self._blocks

    def _locate(self, row: bytes) -> Iterator[BlockRef]:
        """Data blocks from the one that may hold ``row`` onwards, in key order.

        Descends one index path to the first block, then walks on lazily: a
        lookup reads one block per level, a prefix scan continues into the
        following leaves only as far as it is consumed.
        """
        depth = max(0, self.trailer.index_levels - 1)

        def walk(level: list[BlockRef], start: int, remaining: int) -> Iterator[BlockRef]:
            for ref in level[start:]:
                if remaining == 0:
                    yield ref
                else:
                    children, rows = self._index_level(ref)
                    first = max(bisect.bisect_right(rows, row) - 1, 0)
                    # For later siblings every child key exceeds ``row``, so this is 0.
                    yield from walk(children, first, remaining - 1)

        if not self._root:
            return iter(())
        first = max(bisect.bisect_right(self._root_rows, row) - 1, 0)
        return walk(self._root, first, depth)

    # -- records -------------------------------------------------------------------

    def _data_block(self, ref: BlockRef) -> bytes:
        payload = self._cache.get(ref.offset)
        if payload is None:
            payload, _ = self._block(ref.offset, _MAGIC_DATA, ref.size)
            if len(self._cache) >= _CACHED_BLOCKS:
                self._cache.clear()
            self._cache[ref.offset] = payload
        return payload

    def _windows(self, keys: list[bytes]) -> dict[bytes, list[BlockRef]]:
        """For a lookup of the sorted ``keys``: runs of up to ``_AHEAD_BLOCKS`` of the blocks
        the index places them in, by the key before whose seek each run is loaded. (A key
        past its block's last cell walks on into the next block, read when entered.)"""
        out: dict[bytes, list[BlockRef]] = {}
        run: list[BlockRef] = []
        for key in keys:
            ref = next(self._locate(key), None)
            if ref is None:
                break
            if run and ref.offset == run[-1].offset:
                continue
            if len(run) == _AHEAD_BLOCKS:
                run = []
            if not run:
                out[key] = run
            run.append(ref)
        return out

    def _load_ahead(self, refs: list[BlockRef]) -> None:
        """Cache the data blocks ``refs`` (in file order, at most ``_AHEAD_BLOCKS``) before a
        walk enters them: runs of adjacent blocks are read as one range, and the blocks are
        inflated at once (zlib lets go of the GIL), as a lookup of thousands of keys touches
        every block of a metadata file."""
        refs = [r for r in refs if r.offset not in self._cache]
        if len(refs) < 2:
            return
        runs: list[list[BlockRef]] = [[refs[0]]]
        for ref in refs[1:]:
            last = runs[-1][-1]
            if ref.offset == last.offset + last.size:
                runs[-1].append(ref)
            else:
                runs.append([ref])
        raw: list[tuple[BlockRef, bytes]] = []
        for run in runs:
            start = run[0].offset
            data = self._raw(start, run[-1].offset + run[-1].size - start)
            raw.extend((ref, data[ref.offset - start : ref.offset - start + ref.size]) for ref in run)
        payloads = cpu_map(lambda item: self._block_from(item[1], item[0].offset, _MAGIC_DATA)[0], raw)
        if len(self._cache) + len(payloads) > _CACHED_BLOCKS:
            self._cache.clear()
        for (ref, _), payload in zip(raw, payloads):
            self._cache[ref.offset] = payload

    def _cells(self, ref: BlockRef) -> Iterator[tuple[bytes, bytes]]:
        payload = self._data_block(ref)
        pos = 0
        while (cell := next_cell(payload, pos, b"", self.where, ref.offset)) is not None:
            _, row, value, pos = cell
            yield row, value

    def _guard(self, it: Iterator[tuple[bytes, bytes]]) -> Iterator[tuple[bytes, bytes]]:
        try:
            yield from it
        except (HudiCorruptFileError, HudiUnsupportedError):
            raise
        except (ValueError, struct.error, IndexError, zlib.error) as exc:
            raise HudiCorruptFileError(f"Cannot read HFile {self.where}: {exc}") from exc

    def scan(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (row key, value) in key order."""

        def gen() -> Iterator[tuple[bytes, bytes]]:
            for ref in self.data_blocks():
                yield from self._cells(ref)

        return self._guard(gen())

    def get(self, key: bytes) -> bytes | None:
        """The value stored under exactly ``key``, or None."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """The value of each of ``keys`` the file holds (keys it lacks are left out)."""

        def gen() -> Iterator[tuple[bytes, bytes]]:
            if self.trailer.entry_count == 0:
                return
            cursor = _Cursor(self)
            wanted = sorted(set(keys))
            windows = self._windows(wanted) if len(wanted) > 1 else {}
            for key in wanted:
                window = windows.get(key)
                if window is not None:
                    self._load_ahead(window)
                cell = cursor.seek(key)
                if cell is None:
                    return
                if cell[0] == key:
                    yield cell

        return dict(self._guard(gen()))

    def scan_prefix(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Every (row, value) whose row starts with ``prefix``, in key order."""
        return self.scan_prefixes([prefix])

    def scan_prefixes(self, prefixes: Iterable[bytes]) -> Iterator[tuple[bytes, bytes]]:
        """Every (row, value) whose row starts with one of ``prefixes``, once, in key order."""
        kept: list[bytes] = []
        for p in sorted(set(prefixes)):
            # Sorted, a prefix that extends a kept one follows it; its rows are among that one's.
            if not kept or not p.startswith(kept[-1]):
                kept.append(p)

        def gen() -> Iterator[tuple[bytes, bytes]]:
            if self.trailer.entry_count == 0:
                return
            cursor = _Cursor(self)
            for prefix in kept:
                cell = cursor.seek(prefix)
                while cell is not None and cell[0].startswith(prefix):
                    yield cell
                    cell = cursor.advance()

        return self._guard(gen())

    @property
    def entry_count(self) -> int:
        return self.trailer.entry_count

    @property
    def avro_schema(self) -> str | None:
        raw = self.file_info.get(b"schema")
        return raw.decode("utf-8") if raw else None


class _Cursor:
    """A forward-only position among a file's cells, for targets in ascending order.

    Every row before the position is below the targets sought so far, so a later
    (greater) target is sought from there on: within the current data block, or
    from the block the index names for it when that lies further on.
    """

    def __init__(self, reader: HFileReader) -> None:
        self._reader = reader
        self._blocks: Iterator[BlockRef] = iter(())  # the data blocks after the current one
        self._ref: BlockRef | None = None
        self._payload = b""
        self._pos = 0  # of the current cell
        self._after = 0  # the byte after the current cell

    def seek(self, target: bytes) -> tuple[bytes, bytes] | None:
        """The first cell whose row is at least ``target``, made current."""
        blocks = self._reader._locate(target)
        first = next(blocks, None)
        if first is None:
            return None
        if self._ref is None or first.offset > self._ref.offset:
            self._enter(first, blocks)
        return self._first_from(self._pos, target)

    def advance(self) -> tuple[bytes, bytes] | None:
        """The cell after the current one, made current."""
        return self._first_from(self._after, b"")

    def _enter(self, ref: BlockRef, following: Iterator[BlockRef]) -> None:
        self._ref, self._blocks = ref, following
        self._payload = self._reader._data_block(ref)
        self._pos = self._after = 0

    def _first_from(self, pos: int, target: bytes) -> tuple[bytes, bytes] | None:
        while self._ref is not None:
            cell = next_cell(self._payload, pos, target, self._reader.where, self._ref.offset)
            if cell is not None:
                self._pos, row, value, self._after = cell
                return row, value
            self._pos = self._after = pos = len(self._payload)
            ref = next(self._blocks, None)
            if ref is None:
                return None  # past the last block: every later target is absent too
            self._enter(ref, self._blocks)
            pos = 0
        return None
