"""HFiles that lie (a negative cell length, an index block declaring too many entries or
pointing outside itself, a gzip bomb, a block declaring gigabytes) end in a
``HudiCorruptFileError`` naming the file and the offset, never in a hang or an unbounded
allocation."""

from __future__ import annotations

import struct
import zlib

import pytest

from hudi_ray import HudiCorruptFileError
from hudi_ray.core.hfile import HFileReader
from hudi_ray.core.hfile.encoding import protobuf_fields, varint
from hudi_ray.core.hfile.reader import HEADER_SIZE
from hudi_testkit.hfile_writer import (
    CODEC_GZ,
    CODEC_NONE,
    _pb_field_bytes,
    _pb_field_varint,
    protobuf_varint,
    write_hfile,
)
from tests.core.damage import allocates_at_most


def _first_data_block(data: bytes) -> int:
    offset = data.find(b"DATABLK*")
    assert offset >= 0
    return offset


def test_hfile_cell_with_negative_key_length_fails_instead_of_looping() -> None:
    data = bytearray(write_hfile([(b"a", b"1"), (b"b", b"2")], codec=CODEC_NONE))
    cell = _first_data_block(data) + HEADER_SIZE
    struct.pack_into(">i", data, cell, -8)  # moves the cursor back onto the same cell
    reader = HFileReader.from_bytes(bytes(data), "mem://neg.hfile")
    with pytest.raises(HudiCorruptFileError, match=r"mem://neg\.hfile.*cell at byte 0.*key length -8"):
        list(reader.scan())


def _leaf_index_hfile() -> tuple[bytearray, int]:
    """An uncompressed HFile with leaf index blocks, and the offset of its first leaf index block."""
    cells = [(f"k{i}".encode(), b"v") for i in range(6)]
    data = bytearray(write_hfile(cells, codec=CODEC_NONE, block_size=1, max_root_entries=2, index_fanout=2))
    leaf = data.find(b"IDXLEAF2")
    assert leaf >= 0
    assert HFileReader.from_bytes(bytes(data), "mem://idx.hfile").trailer.index_levels >= 2
    return data, leaf


def test_hfile_index_block_declaring_too_many_entries() -> None:
    data, leaf = _leaf_index_hfile()
    struct.pack_into(">i", data, leaf + HEADER_SIZE, 1000)
    reader = HFileReader.from_bytes(bytes(data), "mem://idx.hfile")
    with pytest.raises(HudiCorruptFileError, match=rf"mem://idx\.hfile: index block at offset {leaf} declares 1000"):
        reader.data_blocks()


def test_hfile_index_entry_outside_its_block() -> None:
    data, leaf = _leaf_index_hfile()
    struct.pack_into(">i", data, leaf + HEADER_SIZE + 8, 2**30)  # where entry 0 ends
    reader = HFileReader.from_bytes(bytes(data), "mem://idx.hfile")
    with pytest.raises(HudiCorruptFileError, match=rf"mem://idx\.hfile: index block at offset {leaf} entry 0 spans"):
        list(reader.scan())


def _gzip(payload: bytes) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    return comp.compress(payload) + comp.flush()


def _bomb_hfile(declared: int, inflated: int) -> bytes:
    """An HFile whose single data block holds a gzip member of ``inflated`` zero bytes
    while its header declares ``declared`` uncompressed bytes."""
    data = bytearray(write_hfile([(b"a", b"1")], codec=CODEC_GZ))
    block = _first_data_block(data)
    (on_disk,) = struct.unpack_from(">i", data, block + 8)
    bomb = _gzip(b"\x00" * inflated)
    header = bytearray(data[block : block + HEADER_SIZE])
    struct.pack_into(">ii", header, 8, len(bomb), declared)
    struct.pack_into(">i", header, 29, HEADER_SIZE + len(bomb))
    rest = data[block + HEADER_SIZE + on_disk :]
    shift = len(bomb) - on_disk
    out = bytes(data[:block]) + bytes(header) + bomb + bytes(rest)
    # The index and trailer point past the block: move their offsets by the size change.
    return _shift_offsets(out, shift)


def _shift_offsets(data: bytes, shift: int) -> bytes:
    """Move the trailer's file-info and load-on-open offsets (fields 1 and 2) by ``shift`` bytes."""
    trailer_at = len(data) - 4096
    length, pos = varint(data, trailer_at + 8)
    fields = protobuf_fields(data[pos : pos + length])
    body = b""
    for number, values in sorted(fields.items()):
        for v in values:
            if isinstance(v, bytes):
                body += _pb_field_bytes(number, v)
            else:
                body += _pb_field_varint(number, v + shift if number in (1, 2) else v)
    message = protobuf_varint(len(body)) + body
    trailer = data[trailer_at : trailer_at + 8] + message
    return data[:trailer_at] + trailer + bytes(4096 - len(trailer) - 4) + data[-4:]


def test_gzip_bomb_in_hfile_block_is_refused_without_inflating_it() -> None:
    data = _bomb_hfile(declared=64, inflated=64 * 1024 * 1024)
    reader = HFileReader.from_bytes(data, "mem://bomb.hfile")
    with (
        pytest.raises(HudiCorruptFileError, match=r"mem://bomb\.hfile.*offset \d+.*declared 64 bytes"),
        allocates_at_most(8 * 1024 * 1024),
    ):
        list(reader.scan())


def test_hfile_block_declaring_gigabytes_is_refused() -> None:
    data = _bomb_hfile(declared=2**31 - 1, inflated=1024)
    reader = HFileReader.from_bytes(data, "mem://huge.hfile")
    with pytest.raises(HudiCorruptFileError, match=r"mem://huge\.hfile.*offset \d+.*declares 2147483647"):
        list(reader.scan())


def _many_blocks() -> tuple[list[tuple[bytes, bytes]], bytes]:
    cells = [(b"key-%05d" % i, b"value %d " % i * 20) for i in range(2000)]
    return cells, write_hfile(cells, codec=CODEC_GZ, block_size=4096)


def test_a_lookup_of_many_keys_reads_adjacent_blocks_as_one_range() -> None:
    cells, data = _many_blocks()
    reads: list[tuple[int, int]] = []

    def read(start: int, end: int) -> bytes:
        reads.append((start, end))
        return data[start:end]

    reader = HFileReader.from_range_reader(len(data), read, "mem://many.hfile")
    blocks = len(reader.data_blocks())
    opened = len(reads)
    wanted = [row for row, _ in cells[::3]]
    assert reader.get_many(wanted) == dict(cells[::3])
    assert blocks > 100
    # A range per 32 blocks, and a few for keys that walk past the end of their block.
    assert len(reads) - opened <= blocks // 32 + 8, (len(reads) - opened, blocks)


def test_a_damaged_block_met_by_a_lookup_of_many_keys_names_it() -> None:
    cells, data = _many_blocks()
    reader = HFileReader.from_bytes(data, "mem://many.hfile")
    block = reader.data_blocks()[40]
    damaged = bytearray(data)
    damaged[block.offset + HEADER_SIZE + 12 : block.offset + HEADER_SIZE + 40] = bytes(28)
    reader = HFileReader.from_bytes(bytes(damaged), "mem://many.hfile")
    with pytest.raises(HudiCorruptFileError, match=r"mem://many\.hfile"):
        reader.get_many(row for row, _ in cells)
