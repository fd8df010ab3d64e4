"""Damaged log block contents (invalid UTF-8 in Avro and Parquet blocks, lying record
counts and lengths, delete blocks whose length leaves their content) end in a
``HudiCorruptFileError`` naming the block and its file, without allocating what a lying
length asks for."""

from __future__ import annotations

import io
import json
import re
import struct

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray import HudiCorruptFileError, HudiTableBuilder
from hudi_ray.core.log_file.block import BlockType, HeaderKey, LogBlock
from hudi_ray.core.log_file.content import decode_avro_block, decode_delete_block, decode_parquet_block
from tests.core.damage import TRIPS_MOR, allocates_at_most, damage_trips_log

# -- invalid UTF-8 ---------------------------------------------------------------------------------


def test_invalid_utf8_in_avro_log_block(copy_of) -> None:
    path = copy_of(TRIPS_MOR)
    # Same length, so the block's structure stays intact and only the text is bad.
    log_file = damage_trips_log(path, b"rider-G", b"rider\xff\xfe")
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    where = rf"AVRO_DATA block at byte \d+ of .*{re.escape(log_file.name)}.*'rider'.*UTF-8"
    with pytest.raises(HudiCorruptFileError, match=where):
        table.read()
    with pytest.raises(HudiCorruptFileError, match=where):
        list(table.read_stream())


def _avro_block(schema: dict, record: dict, old: bytes, new: bytes) -> LogBlock:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    datum = buf.getvalue().replace(old, new)
    content = struct.pack(">iii", 3, 1, len(datum)) + datum
    header = {HeaderKey.SCHEMA: json.dumps(schema)}
    return LogBlock(BlockType.AVRO_DATA, header, content, "file:///t/p/.f-0_1.log.1_0-1-1", 42)


@pytest.mark.parametrize("nested", [False, True])
def test_invalid_utf8_in_both_avro_decoders(nested: bool) -> None:
    fields = [{"name": "s", "type": ["null", "string"]}]
    record: dict = {"s": "abc"}
    if nested:
        # A nested record takes the fastavro path instead of the columnar one.
        fields.append(
            {"name": "n", "type": {"type": "record", "name": "inner", "fields": [{"name": "x", "type": "int"}]}}
        )
        record["n"] = {"x": 1}
    schema = {"type": "record", "name": "r", "fields": fields}
    block = _avro_block(schema, record, b"abc", b"a\xff\xfe")
    with pytest.raises(HudiCorruptFileError, match=r"AVRO_DATA block at byte 42 of .*\.f-0_1\.log"):
        decode_avro_block(block)
    assert decode_avro_block(_avro_block(schema, record, b"abc", b"xyz")).column("s").to_pylist() == ["xyz"]


def test_invalid_utf8_in_parquet_log_block() -> None:
    buf = io.BytesIO()
    pq.write_table(pa.table({"s": ["abcdefgh"]}), buf, compression="NONE", use_dictionary=False, write_statistics=False)
    content = buf.getvalue().replace(b"abcdefgh", b"ab\xff\xfeefgh")
    block = LogBlock(BlockType.PARQUET_DATA, {}, content, "file:///t/p/.f-0_1.log.1_0-1-1", 7)
    with pytest.raises(HudiCorruptFileError, match=r"PARQUET_DATA block at byte 7 of .*\.f-0_1\.log.*UTF8"):
        decode_parquet_block(block)


def test_parquet_block_checks_utf8_of_string_columns_only() -> None:
    from hudi_ray.core.log_file.content import _holds_strings

    assert _holds_strings(pa.list_(pa.struct([("a", pa.string())])))
    assert _holds_strings(pa.map_(pa.string(), pa.int32()))
    assert _holds_strings(pa.dictionary(pa.int32(), pa.string()))
    assert not _holds_strings(pa.struct([("a", pa.int64()), ("b", pa.binary())]))
    # Invalid UTF-8 nested in a list of strings is still found; binary bytes are not text.
    buf = io.BytesIO()
    table = pa.table({"l": [["abcdefgh"]], "b": [b"\xff\xfe"]})
    pq.write_table(table, buf, compression="NONE", use_dictionary=False, write_statistics=False)
    block = LogBlock(BlockType.PARQUET_DATA, {}, buf.getvalue(), "file:///t/p/.f-0_1.log.1_0-1-1", 7)
    assert decode_parquet_block(block).column("b").to_pylist() == [b"\xff\xfe"]
    bad = buf.getvalue().replace(b"abcdefgh", b"ab\xff\xfeefgh")
    block = LogBlock(BlockType.PARQUET_DATA, {}, bad, "file:///t/p/.f-0_1.log.1_0-1-1", 7)
    with pytest.raises(HudiCorruptFileError, match=r"PARQUET_DATA block at byte 7"):
        decode_parquet_block(block)


# -- lying counts and lengths ----------------------------------------------------------------------


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
        allocates_at_most(8 * 1024 * 1024),
    ):
        decode_avro_block(block)


def test_avro_block_with_negative_record_length() -> None:
    content = struct.pack(">ii", 2, 2) + struct.pack(">i", -12) + b"\x04ab\x00"
    block = LogBlock(BlockType.AVRO_DATA, {2: _SCHEMA}, content, "mem://log", 7)
    with pytest.raises(HudiCorruptFileError, match=r"byte 7 of mem://log"):
        decode_avro_block(block)


def test_negative_record_length_in_columnar_avro_block() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": ["null", "string"]}]}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), {"s": "abc"})
    datum = buf.getvalue()
    content = struct.pack(">iii", 3, 2, len(datum)) + datum + struct.pack(">i", -3) + datum
    block = LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: json.dumps(schema)}, content, "file:///t/.f-0_1.log.1", 9)
    with pytest.raises(HudiCorruptFileError, match=r"record 1 has negative length -3 at content offset"):
        decode_avro_block(block)


def test_avro_block_with_huge_string_length_fails_without_allocating() -> None:
    record = b"\xfc\xff\xff\xff\x0f" + b"ab" + b"\x00"  # string length 2**31 - 2 (zigzag varint)
    content = struct.pack(">ii", 2, 1) + struct.pack(">i", len(record)) + record
    block = LogBlock(BlockType.AVRO_DATA, {2: _SCHEMA}, content, "mem://log", 55)
    with (
        pytest.raises(HudiCorruptFileError, match=r"byte 55 of mem://log.*past the end"),
        allocates_at_most(8 * 1024 * 1024),
    ):
        decode_avro_block(block)


@pytest.mark.parametrize("length", [-5, 2**31 - 1])
def test_delete_block_length_outside_its_content(length: int) -> None:
    content = struct.pack(">ii", 3, length) + b"\x00" * 4
    block = LogBlock(BlockType.DELETE, {}, content, "mem://log", 77)
    with pytest.raises(HudiCorruptFileError, match=rf"byte 77 of mem://log declares {length} bytes"):
        decode_delete_block(block)
