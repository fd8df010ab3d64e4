"""Hostile or malformed input: lying length fields, decompression bombs and
wrong option values end in the project's own errors, never in hangs, raw
Python exceptions or unbounded allocations."""

from __future__ import annotations

import io
import json
import re
import struct
import tracemalloc
import warnings
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray import HudiReadOptions, HudiTableBuilder
from hudi_ray.core.base_file import ParquetReader
from hudi_ray.core.exceptions import (
    HudiConfigError,
    HudiCoreError,
    HudiCorruptFileError,
    HudiSchemaError,
)
from hudi_ray.core.hfile import HFileReader
from hudi_ray.core.hfile.reader import HEADER_SIZE, _protobuf_fields, _varint
from hudi_ray.core.log_file.block import BlockType, LogBlock
from hudi_ray.core.log_file.content import decode_avro_block, decode_delete_block
from hudi_ray.core.schema.avro import avro_to_arrow_schema
from hudi_ray.core.storage import Storage
from hudi_testkit.hfile_writer import (
    CODEC_GZ,
    CODEC_NONE,
    _pb_field_bytes,
    _pb_field_varint,
    protobuf_varint,
    write_hfile,
)

TABLE = "sample_table/cow/v9_txns_simple_meta"

# -- HFile -----------------------------------------------------------------------------------------


def _first_data_block(data: bytes) -> int:
    offset = data.find(b"DATABLK*")
    assert offset >= 0
    return offset


@contextmanager
def _allocates_at_most(limit: int) -> Iterator[None]:
    """Fails the test when the block allocates ``limit`` bytes or more, whether or not it raises."""
    tracemalloc.start()
    try:
        yield
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < limit, f"allocated {peak} bytes"


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
    length, pos = _varint(data, trailer_at + 8)
    fields = _protobuf_fields(data[pos : pos + length])
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
        _allocates_at_most(8 * 1024 * 1024),
    ):
        list(reader.scan())


def test_hfile_block_declaring_gigabytes_is_refused() -> None:
    data = _bomb_hfile(declared=2**31 - 1, inflated=1024)
    reader = HFileReader.from_bytes(data, "mem://huge.hfile")
    with pytest.raises(HudiCorruptFileError, match=r"mem://huge\.hfile.*offset \d+.*declares 2147483647"):
        list(reader.scan())


# -- log blocks ------------------------------------------------------------------------------------

_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "r",
        "fields": [{"name": "k", "type": "string"}, {"name": "n", "type": ["null", "long"]}],
    }
)


@pytest.mark.parametrize("count", [2**31 - 1, 10**8])
def test_avro_block_with_huge_record_count_fails_without_allocating(count: int) -> None:
    content = struct.pack(">ii", 2, count) + struct.pack(">i", 3) + b"\x04ab\x00"
    block = LogBlock(BlockType.AVRO_DATA, {2: _SCHEMA}, content, "mem://log", 123)
    with (
        pytest.raises(HudiCorruptFileError, match=rf"byte 123 of mem://log.*{count}"),
        _allocates_at_most(8 * 1024 * 1024),
    ):
        decode_avro_block(block)


def test_avro_block_with_negative_record_length() -> None:
    content = struct.pack(">ii", 2, 2) + struct.pack(">i", -12) + b"\x04ab\x00"
    block = LogBlock(BlockType.AVRO_DATA, {2: _SCHEMA}, content, "mem://log", 7)
    with pytest.raises(HudiCorruptFileError, match=r"byte 7 of mem://log"):
        decode_avro_block(block)


# -- Avro schemas ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field_type", "match"),
    [
        ({"logicalType": "decimal", "precision": 10}, r"column d .*lacks 'type'"),
        ({"type": "bytes", "logicalType": "decimal"}, r"column d .*lacks 'precision'"),
        ({"type": "bytes", "logicalType": "decimal", "precision": "ten"}, r"column d .*precision='ten'"),
        ({"type": "bytes", "logicalType": "decimal", "precision": 0}, r"column d .*precision=0"),
        ({"type": "bytes", "logicalType": "decimal", "precision": 99}, r"column d .*precision 99"),
        ({"type": "fixed", "name": "f"}, r"column d .*lacks 'size'"),
        ({"type": "array"}, r"column d .*lacks 'items'"),
        ({"type": "map"}, r"column d .*lacks 'values'"),
        ({"type": {"type": "record", "name": "x"}}, r"."),
        ("r", r"Recursive Avro record 'r' at column d"),
    ],
)
def test_malformed_avro_schemas_raise_schema_errors(field_type: object, match: str) -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "d", "type": field_type}]}
    try:
        avro_to_arrow_schema(json.dumps(schema), "mem://schema")
    except HudiSchemaError as exc:
        assert re.search(match, str(exc)), str(exc)
        assert "mem://schema" in str(exc)
    else:
        assert match == r".", "expected a HudiSchemaError"


def test_avro_field_without_type_or_name() -> None:
    with pytest.raises(HudiSchemaError, match=r"column a in mem://s lacks 'type'"):
        avro_to_arrow_schema({"type": "record", "name": "r", "fields": [{"name": "a"}]}, "mem://s")
    with pytest.raises(HudiSchemaError, match=r"Field 0 of Avro record .* has no name"):
        avro_to_arrow_schema({"type": "record", "name": "r", "fields": [{"type": "int"}]}, "mem://s")


def test_log_block_with_schema_lacking_precision() -> None:
    schema = json.dumps(
        {"type": "record", "name": "r", "fields": [{"name": "d", "type": {"type": "bytes", "logicalType": "decimal"}}]}
    )
    block = LogBlock(BlockType.AVRO_DATA, {2: schema}, struct.pack(">ii", 2, 0), "mem://log", 9)
    with pytest.raises(HudiCoreError, match=r"precision"):
        decode_avro_block(block)


# -- Parquet ---------------------------------------------------------------------------------------


def test_parquet_column_name_that_is_not_utf8(tmp_path: Path) -> None:
    buf = io.BytesIO()
    pq.write_table(pa.table({"txn_id": ["a", "b"], "n": [1, 2]}), buf)
    (tmp_path / "f.parquet").write_bytes(buf.getvalue().replace(b"txn_id", b"txn_\xff\xfe"))
    reader = ParquetReader(Storage(str(tmp_path), {}))
    with pytest.raises(HudiCorruptFileError, match=r"f\.parquet.*not UTF-8"):
        reader.read("f.parquet")


# -- table options ---------------------------------------------------------------------------------

MOR = "sample_table/mor/avro/v9_txns_simple_meta"


def test_ordering_field_absent_from_data_reads_rows_like_hudi_rs(table_path) -> None:
    path = str(table_path(MOR))
    table = HudiTableBuilder.from_base_uri(path).build()
    # An instant whose slices still have log files to merge.
    merging = [
        i.timestamp
        for i in table.get_timeline().instants
        if any(s.log_file_names for s in table.get_file_slices(HudiReadOptions().with_as_of_timestamp(i.timestamp)))
    ]
    assert merging
    opts = HudiReadOptions().with_as_of_timestamp(merging[-1])
    expected = hudi.HudiTableBuilder.from_base_uri(path).with_hudi_option("hoodie.table.ordering.fields", "nope")
    want = pa.Table.from_batches(expected.build().read(hudi.HudiReadOptions().with_as_of_timestamp(merging[-1])))
    ours = HudiTableBuilder.from_base_uri(path).with_hudi_option("hoodie.table.ordering.fields", "nope").build()
    got = pa.Table.from_batches(ours.read(opts))
    key = "_hoodie_record_key"
    assert sorted(got.column(key).to_pylist()) == sorted(want.column(key).to_pylist())
    assert got.num_rows > 0


@pytest.mark.parametrize("bad", [123, None, b"/tmp", ""])
def test_base_uri_must_be_a_string(bad: object) -> None:
    with pytest.raises(HudiConfigError, match=r"base_uri .*" + re.escape(repr(bad))):
        HudiTableBuilder.from_base_uri(bad).build()  # type: ignore[arg-type]


def test_file_group_reader_options_must_be_read_options(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiConfigError, match=r"read_options must be a HudiReadOptions, got dict"):
        table.create_file_group_reader_with_options({"hoodie.read.query.type": "snapshot"})  # type: ignore[arg-type]


def test_incremental_start_after_end(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    opts = (
        HudiReadOptions()
        .with_query_type("incremental")
        .with_start_timestamp("20991231000000000")
        .with_end_timestamp("20000101000000000")
    )
    with pytest.raises(HudiConfigError, match=r"hoodie\.read\.start\.timestamp='20991231000000000' is after"):
        table.read(opts)


def test_metadata_enable_must_be_boolean(table_path) -> None:
    builder = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).with_hudi_option("hoodie.metadata.enable", "maybe")
    with pytest.raises(HudiConfigError, match=r"hoodie\.metadata\.enable .*'maybe'"):
        builder.build()


def test_unknown_hoodie_key_warns_once_with_closest_key(table_path) -> None:
    path = str(table_path(TABLE))
    key = "hoodie.metadata.enabel"
    with pytest.warns(UserWarning, match=r"hoodie\.metadata\.enabel.*did you mean 'hoodie\.metadata\.enable'"):
        HudiTableBuilder.from_base_uri(path).with_hudi_option(key, "false").build()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HudiTableBuilder.from_base_uri(path).with_hudi_option(key, "false").build()
        HudiReadOptions(hudi_options={key: "x"})
    with pytest.warns(UserWarning, match=r"hoodie\.read\.as\.of\.timestamps.*'hoodie\.read\.as\.of\.timestamp'"):
        HudiReadOptions().with_hudi_option("hoodie.read.as.of.timestamps", "1")


def test_avro_block_with_huge_string_length_fails_without_allocating() -> None:
    record = b"\xfc\xff\xff\xff\x0f" + b"ab" + b"\x00"  # string length 2**31 - 2 (zigzag varint)
    content = struct.pack(">ii", 2, 1) + struct.pack(">i", len(record)) + record
    block = LogBlock(BlockType.AVRO_DATA, {2: _SCHEMA}, content, "mem://log", 55)
    with (
        pytest.raises(HudiCorruptFileError, match=r"byte 55 of mem://log.*past the end"),
        _allocates_at_most(8 * 1024 * 1024),
    ):
        decode_avro_block(block)


@pytest.mark.parametrize("length", [-5, 2**31 - 1])
def test_delete_block_length_outside_its_content(length: int) -> None:
    content = struct.pack(">ii", 3, length) + b"\x00" * 4
    block = LogBlock(BlockType.DELETE, {}, content, "mem://log", 77)
    with pytest.raises(HudiCorruptFileError, match=rf"byte 77 of mem://log declares {length} bytes"):
        decode_delete_block(block)
