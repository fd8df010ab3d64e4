"""The HFile writer: files it writes read back through the HFile reader, whatever the block
size and index shape (one level, or root + leaf + intermediate levels)."""

from __future__ import annotations

import random
import struct
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_ray.core.hfile import HFileReader
from hudi_ray.core.hfile.encoding import hadoop_vlong as read_hadoop_vlong
from hudi_testkit.hfile_writer import (
    BYTES_PER_CHECKSUM,
    CODEC_GZ,
    CODEC_NONE,
    HFileWriter,
    encode_block,
    hadoop_vlong,
    write_hfile,
)

Cells = list[tuple[bytes, bytes]]

# Rows of every length class: short, around the 126-byte VLong boundary of index keys, long.
rows = st.one_of(
    st.binary(min_size=1, max_size=12),
    st.binary(min_size=120, max_size=140),
    st.binary(min_size=1, max_size=400),
)
cell_lists = st.dictionaries(rows, st.binary(max_size=300), min_size=0, max_size=120).map(lambda d: sorted(d.items()))
layouts = st.fixed_dictionaries(
    {
        "block_size": st.integers(min_value=1, max_value=3000),
        "max_root_entries": st.integers(min_value=1, max_value=6),
        "index_fanout": st.integers(min_value=2, max_value=5),
        "codec": st.sampled_from([CODEC_GZ, CODEC_NONE]),
    }
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _read(cells: Cells, layout: dict[str, int]) -> HFileReader:
    data = write_hfile(cells, {b"schema": b'"string"'}, create_time_ms=0, **layout)
    return HFileReader.from_bytes(data, "t.hfile")


def _expected_prefix(cells: Cells, prefix: bytes) -> Cells:
    return [c for c in cells if c[0].startswith(prefix)]


def _prefixes(cells: Cells, data: st.DataObject) -> list[bytes]:
    """Prefixes of stored rows (so scans match several rows), random bytes and the empty prefix."""
    out = [b""]
    for row, _ in cells[:: max(1, len(cells) // 8)]:
        out.append(row[: data.draw(st.integers(min_value=0, max_value=len(row)))])
    out += data.draw(st.lists(st.binary(max_size=3), max_size=3))
    return out


@SETTINGS
@given(cells=cell_lists, layout=layouts, data=st.data())
def test_every_cell_reads_back_in_order_and_by_key(cells: Cells, layout: dict[str, int], data: st.DataObject) -> None:
    reader = _read(cells, layout)
    assert reader.entry_count == len(cells)
    assert list(reader.scan()) == cells
    for row, value in cells:
        assert reader.get(row) == value
    stored = {r for r, _ in cells}
    for probe in data.draw(st.lists(st.binary(max_size=150), max_size=10)):
        if probe not in stored:
            assert reader.get(probe) is None
    for row, _ in cells[:5]:
        for missing in (row + b"\x00", row[:-1]):
            if missing not in stored:
                assert reader.get(missing) is None


@SETTINGS
@given(cells=cell_lists, layout=layouts, data=st.data())
def test_prefix_scans_single_level(cells: Cells, layout: dict[str, int], data: st.DataObject) -> None:
    reader = _read(cells, {**layout, "max_root_entries": 1 << 20})
    assert reader.trailer.index_levels == 1
    for prefix in _prefixes(cells, data):
        assert list(reader.scan_prefix(prefix)) == _expected_prefix(cells, prefix), prefix


@SETTINGS
@given(cells=cell_lists, layout=layouts, data=st.data())
def test_prefix_scans_multi_level(cells: Cells, layout: dict[str, int], data: st.DataObject) -> None:
    reader = _read(cells, layout)
    for prefix in _prefixes(cells, data):
        assert list(reader.scan_prefix(prefix)) == _expected_prefix(cells, prefix), prefix


@SETTINGS
@given(cells=cell_lists, layout=layouts, data=st.data())
def test_batched_lookups_equal_one_by_one(cells: Cells, layout: dict[str, int], data: st.DataObject) -> None:
    """Keys and prefixes sought together, in any order and with repeats, through the one
    forward cursor find what each finds alone, once each and in key order."""
    reader = _read(cells, layout)
    stored = dict(cells)
    probes = [r for r, _ in cells if data.draw(st.booleans())] + data.draw(
        st.lists(st.binary(max_size=150), max_size=10)
    )
    probes += probes[:3]
    random.Random(len(probes)).shuffle(probes)
    assert reader.get_many(probes) == {p: stored[p] for p in probes if p in stored}
    prefixes = _prefixes(cells, data)
    prefixes = data.draw(st.lists(st.sampled_from(prefixes), max_size=6)) if prefixes else []
    expected = [c for c in cells if any(c[0].startswith(p) for p in prefixes)]
    assert list(reader.scan_prefixes(prefixes)) == expected, prefixes


def test_batched_lookups_across_blocks_and_index_levels() -> None:
    cells = [(b"key-%05d" % i, b"v%d" % i) for i in range(0, 3000, 3)]
    reader = HFileReader.from_bytes(
        write_hfile(cells, block_size=200, max_root_entries=3, index_fanout=4), "deep.hfile"
    )
    assert reader.trailer.index_levels >= 3
    wanted = [b"key-%05d" % i for i in range(0, 3000, 7)]
    assert reader.get_many(wanted) == {k: v for k, v in cells if k in set(wanted)}
    prefixes = [b"key-000", b"key-0001", b"key-01", b"key-1", b"key-29", b"key-3", b"nothing"]
    assert list(reader.scan_prefixes(prefixes)) == [
        c for c in cells if c[0].startswith((b"key-000", b"key-01", b"key-1", b"key-29"))
    ]
    assert reader.get_many([]) == {} and list(reader.scan_prefixes([])) == []


def test_multi_level_layout_is_what_hbase_writes() -> None:
    """Leaf index blocks inline after the data blocks they index, intermediate blocks after the
    data section, mid-key metadata after the root entries; every level walks to the same blocks."""
    cells = [(b"key-%05d" % i, b"v" * (i % 7)) for i in range(500)]
    data = write_hfile(cells, block_size=64, max_root_entries=3, index_fanout=4, create_time_ms=0)
    reader = HFileReader.from_bytes(data, "deep.hfile")
    assert reader.trailer.index_levels >= 3
    assert reader.trailer.data_index_count <= 3
    magics = []
    pos = 0
    while pos < reader.trailer.load_on_open_offset:
        magics.append(data[pos : pos + 8])
        (on_disk,) = struct.unpack_from(">i", data, pos + 8)
        pos += 33 + on_disk
    first_leaf = magics.index(b"IDXLEAF2")
    assert set(magics[:first_leaf]) == {b"DATABLK*"} and first_leaf == 4  # a leaf after every 4 data blocks
    first_intermediate = magics.index(b"IDXINTE2")
    assert set(magics[first_intermediate:]) == {b"IDXINTE2"}  # after the data section
    assert len(reader.data_blocks()) == magics.count(b"DATABLK*")
    assert list(reader.scan()) == cells


def test_trailer_blocks_and_file_info_follow_the_native_writer() -> None:
    cells = [(b"__all_partitions__", b"\x00" * 13), (b"region=us", b"x" * 7)]
    data = write_hfile(cells, {b"schema": b"{}"}, create_time_ms=1234)
    reader = HFileReader.from_bytes(data, "t.hfile")
    t = reader.trailer
    assert (t.major, t.minor, t.codec, t.index_levels, t.meta_index_count) == (3, 0, CODEC_GZ, 1, 0)
    assert data[-4:] == b"\x00\x00\x00\x03"
    header = data[:33]
    assert header[:8] == b"DATABLK*"
    on_disk, uncompressed, prev, checksum_type, per_checksum, with_header = struct.unpack(">iiqBii", header[8:])
    assert (prev, checksum_type, per_checksum) == (-1, 0, BYTES_PER_CHECKSUM)
    assert on_disk == with_header - 33 + 4 and data[with_header : with_header + 4] == b"\x00" * 4
    payload = zlib.decompress(data[33:with_header], 31)
    assert len(payload) == uncompressed
    # One cell: key and value lengths, row, family 0, latest timestamp, Put, MVCC 0.
    key_len, value_len = struct.unpack_from(">ii", payload)
    assert key_len == len(cells[0][0]) + 12 and value_len == 13
    assert payload[8 + 2 + 18 :][:10] == b"\x00" + b"\x7f" + b"\xff" * 7 + b"\x04"
    info = reader.file_info
    assert info[b"hfile.LASTKEY"] == b"\x00\x09region=us"
    assert info[b"KEY_VALUE_VERSION"] == b"\x00\x00\x00\x01"
    assert info[b"MAX_MEMSTORE_TS_KEY"] == b"\x00" * 8
    assert info[b"hfile.AVG_KEY_LEN"] == struct.pack(">i", (18 + 9) // 2)
    assert info[b"hfile.AVG_VALUE_LEN"] == struct.pack(">i", 10)
    assert info[b"hfile.CREATE_TIME_TS"] == struct.pack(">q", 1234)
    assert info[b"schema"] == b"{}"


def test_empty_file() -> None:
    reader = HFileReader.from_bytes(write_hfile([]), "empty.hfile")
    assert reader.entry_count == 0 and reader.trailer.first_data_block_offset == (1 << 64) - 1
    assert list(reader.scan()) == [] and reader.get(b"a") is None and list(reader.scan_prefix(b"")) == []
    assert reader.file_info[b"hfile.LASTKEY"] == b""


def test_rows_must_increase() -> None:
    writer = HFileWriter()
    writer.append(b"b", b"")
    with pytest.raises(ValueError, match="strictly increasing"):
        writer.append(b"a", b"")
    with pytest.raises(ValueError, match="strictly increasing"):
        writer.append(b"b", b"")


@given(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1))
def test_hadoop_vlong_round_trips(value: int) -> None:
    encoded = hadoop_vlong(value)
    assert read_hadoop_vlong(encoded, 0) == (value, len(encoded))


def test_index_key_lengths_past_126_bytes_use_hadoop_vlongs() -> None:
    row = b"r" * 200  # index key length 202: two VLong bytes (0x8f 0xca), not a protobuf varint
    data = write_hfile([(row, b"v")])
    reader = HFileReader.from_bytes(data, "long.hfile")
    start = reader.trailer.load_on_open_offset
    (with_header,) = struct.unpack_from(">i", data, start + 29)
    root = zlib.decompress(data[start + 33 : start + with_header], 31)
    assert root[12:14] == b"\x8f\xca"
    assert reader.get(row) == b"v"


def test_gzip_blocks_never_straddle_a_checksum_chunk_boundary() -> None:
    """hudi-rs counts checksum chunks from the on-disk size with checksums, Java from the size
    without: the writer pads the gzip header so both agree and both find the payload's end."""
    rng = random.Random(7)
    padded = 0
    for size in range(BYTES_PER_CHECKSUM - 120, BYTES_PER_CHECKSUM + 20):
        payload = rng.randbytes(size)  # incompressible: the block grows with the payload
        block = encode_block(b"DATABLK*", payload, CODEC_GZ)
        on_disk, _, _, _, per_checksum, with_header = struct.unpack(">iiqBii", block[8:33])
        chunks_java = -(-with_header // per_checksum)
        chunks_rs = -(-(33 + on_disk) // per_checksum)
        assert chunks_java == chunks_rs and on_disk == with_header - 33 + 4 * chunks_java
        assert zlib.decompress(block[33:with_header], 31) == payload
        padded += bool(block[33 + 3] & 0x04)  # FEXTRA flag of the gzip header
    assert padded > 0
