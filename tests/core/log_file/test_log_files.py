"""Log files: block framing, corrupt and truncated blocks, bad schemas, and
log blocks from instants that are not on the timeline."""

from __future__ import annotations

import io
import logging
import shutil
import struct
from pathlib import Path

import fastavro
import pytest

from hudi_ray import HudiCorruptFileError, HudiReadOptions, HudiSchemaError, HudiTableBuilder
from hudi_ray.core.log_file import BlockType, HeaderKey, read_log_blocks
from hudi_ray.core.log_file.block import MAGIC, LogBlock
from hudi_ray.core.log_file.content import DELETE_RECORD_LIST_SCHEMA, decode_avro_block, decode_delete_block
from tests.support import row_set, to_table

V6 = "quickstart_trips_table/mor/avro/v6_trips_8i1u"
V9 = "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle"


def _block(block_type: int, header: dict[int, str], content: bytes, *, trailing_delta: int = 0) -> bytes:
    """Frame one version-1 block the way Hudi's writer does."""
    head = struct.pack(">i", len(header))
    for k, v in header.items():
        b = v.encode()
        head += struct.pack(">ii", k, len(b)) + b
    body = struct.pack(">ii", 1, block_type) + head + struct.pack(">q", len(content)) + content + struct.pack(">i", 0)
    size = len(body) + 8
    return MAGIC + struct.pack(">q", size) + body + struct.pack(">q", size + 6 + trailing_delta)


def _logs(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob(".*.log.*") if "/.hoodie/" not in str(p))


def test_real_blocks_decode(table_path) -> None:
    path = table_path(V9)
    kinds = []
    for f in _logs(path):
        for b in read_log_blocks(f.read_bytes(), str(f)):
            kinds.append(b.block_type)
            assert b.instant_time and len(b.instant_time) == 17
            if b.block_type is BlockType.AVRO_DATA:
                assert decode_avro_block(b).column("_hoodie_record_key").to_pylist() == ["TXN-003"]
            if b.block_type is BlockType.DELETE:
                d = decode_delete_block(b)
                assert d.keys == ["TXN-002"] and d.commit_time_delete == [True]
    assert sorted(kinds) == [BlockType.DELETE, BlockType.AVRO_DATA]


def test_corrupt_block_is_skipped_and_the_rest_read(table_path, caplog) -> None:
    f = _logs(table_path(V6))[0]
    good = f.read_bytes()
    # A block whose trailing length disagrees, then the real block again.
    bad = _block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: "20250331030645735"}, b"xx", trailing_delta=3)
    with caplog.at_level(logging.WARNING):
        blocks = read_log_blocks(good + bad + good, "test.log")
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA, BlockType.CORRUPT, BlockType.AVRO_DATA]
    assert "Corrupt log block" in caplog.text


def test_truncated_last_block_is_corrupt(table_path) -> None:
    f = _logs(table_path(V6))[0]
    data = f.read_bytes()
    blocks = read_log_blocks(data + data[:-10], "t.log")
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA, BlockType.CORRUPT]


def test_block_with_wrong_length_field(table_path) -> None:
    f = _logs(table_path(V6))[0]
    data = bytearray(f.read_bytes())
    size = struct.unpack(">q", data[6:14])[0]
    data[6:14] = struct.pack(">q", size + 100)  # runs past the end of the file
    blocks = read_log_blocks(bytes(data) + f.read_bytes(), "t.log")
    assert [b.block_type for b in blocks] == [BlockType.CORRUPT, BlockType.AVRO_DATA]


def test_not_a_log_file() -> None:
    with pytest.raises(HudiCorruptFileError, match=r"no #HUDI# magic.*x\.log"):
        read_log_blocks(b"PAR1 this is not a log", "x.log")


def _snapshot(path: Path) -> list[str]:
    return row_set(to_table(HudiTableBuilder.from_base_uri(str(path)).build().read()))


def test_truncated_log_file_in_a_table(copy_of, table_path) -> None:
    """The update in a truncated log block is lost as Hudi loses it: the block
    is skipped (with a warning) and the base row is returned, never garbage."""
    path = copy_of(V6)
    log = _logs(path)[0]
    log.write_bytes(log.read_bytes()[:-20])
    ro = to_table(
        HudiTableBuilder.from_base_uri(str(path))
        .build()
        .read(HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "true"}))
    )
    assert _snapshot(path) == row_set(ro)
    assert _snapshot(path) != _snapshot(table_path(V6))


def test_corrupt_block_appended_to_a_table_log(copy_of, table_path) -> None:
    path = copy_of(V6)
    log = _logs(path)[0]
    log.write_bytes(log.read_bytes() + b"#HUDI#\x00\x00\x00\x00\x00\x00\x00\x09garbage!!")
    assert _snapshot(path) == _snapshot(table_path(V6))


def test_log_block_from_instant_not_on_timeline_is_ignored(copy_of, table_path) -> None:
    """A v6 log block written by an instant that never completed is not read."""
    path = copy_of(V6)
    log = _logs(path)[0]
    blocks = read_log_blocks(log.read_bytes(), str(log))
    b = blocks[0]
    header = dict(b.header)
    header[HeaderKey.INSTANT_TIME] = "20990101000000000"
    log.write_bytes(log.read_bytes() + _block(BlockType.AVRO_DATA, header, bytes(b.content)))
    assert _snapshot(path) == _snapshot(table_path(V6))


def test_v9_log_file_of_unknown_instant_is_ignored(copy_of, table_path) -> None:
    path = copy_of(V9)
    src = next(p for p in _logs(path) if "20260403183906731" in p.name)
    fake = src.with_name(src.name.replace("20260403183906731", "20260403183999999"))
    shutil.copy(src, fake)
    assert _snapshot(path) == _snapshot(table_path(V9))


def test_unresolvable_block_schema(copy_of) -> None:
    path = copy_of(V6)
    log = _logs(path)[0]
    b = read_log_blocks(log.read_bytes(), str(log))[0]
    header = dict(b.header)
    header[HeaderKey.SCHEMA] = '{"type": "record", "name": "r", "fields": [{"name": "x", "type": "nosuchtype"}]}'
    log.write_bytes(_block(BlockType.AVRO_DATA, header, bytes(b.content)))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiSchemaError, match=r"nosuchtype|log block"):
        table.read()


def test_avro_block_with_garbage_records(copy_of) -> None:
    path = copy_of(V6)
    log = _logs(path)[0]
    b = read_log_blocks(log.read_bytes(), str(log))[0]
    content = struct.pack(">ii", 3, 5) + b"\x00\x00\x00\x02\xff\xff"
    log.write_bytes(_block(BlockType.AVRO_DATA, dict(b.header), content))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiCorruptFileError, match=log.name):
        table.read()


def _delete_block(instant: str, key: str, partition: str) -> bytes:
    buf = io.BytesIO()
    record = {"deleteRecordList": [{"recordKey": key, "partitionPath": partition, "orderingVal": None}]}
    fastavro.schemaless_writer(buf, DELETE_RECORD_LIST_SCHEMA, record)
    payload = buf.getvalue()
    content = struct.pack(">ii", 3, len(payload)) + payload
    return _block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: instant}, content)


def test_rollback_command_block_discards_the_rolled_back_blocks(copy_of, table_path) -> None:
    """A rollback command block (as 0.x writers append) removes the earlier
    blocks of its target instant."""
    path = copy_of(V6)
    log = _logs(path)[0]
    original = log.read_bytes()
    key = decode_avro_block(read_log_blocks(original, str(log))[0]).column("_hoodie_record_key")[0].as_py()
    target = "20250331030645999"
    timeline = path / ".hoodie"
    # T is a completed delta commit, so only the rollback can hide its delete.
    (timeline / f"{target}.deltacommit").write_bytes((timeline / "20250331030645735.deltacommit").read_bytes())
    delete = _delete_block(target, key, "city=san_francisco")
    log.write_bytes(original + delete)
    deleted = HudiTableBuilder.from_base_uri(str(path)).build()
    keys = to_table(deleted.read()).column("_hoodie_record_key").to_pylist()
    assert key not in keys
    rollback = {
        HeaderKey.INSTANT_TIME: "20250331030646000",
        HeaderKey.TARGET_INSTANT_TIME: target,
        HeaderKey.COMMAND_BLOCK_TYPE: "0",
    }
    log.write_bytes(original + delete + _block(BlockType.COMMAND, rollback, b""))
    assert _snapshot(path) == _snapshot(table_path(V6))


def test_delete_block_ordering_values_of_every_wrapper() -> None:
    """Each wrapper's value comes back as written; only a null or an IntWrapper 0 marks a
    delete without an ordering value (Apache Hudi's ``OrderingValues.isDefault``)."""
    ns = "org.apache.hudi.avro.model."
    values = [
        None,
        (ns + "IntWrapper", {"value": 0}),
        (ns + "IntWrapper", {"value": 7}),
        (ns + "LongWrapper", {"value": 0}),
        (ns + "LongWrapper", {"value": 2**40}),
        (ns + "BooleanWrapper", {"value": False}),
        (ns + "DoubleWrapper", {"value": -1.5}),
        (ns + "FloatWrapper", {"value": 0.0}),
        (ns + "StringWrapper", {"value": "b"}),
        (ns + "BytesWrapper", {"value": b"\x00"}),
        (ns + "DateWrapper", {"value": 0}),
        (ns + "TimestampMicrosWrapper", {"value": 5}),
    ]
    records = [
        {"recordKey": f"k{i}", "partitionPath": None if i % 2 else "p", "orderingVal": v} for i, v in enumerate(values)
    ]
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, DELETE_RECORD_LIST_SCHEMA, {"deleteRecordList": records})
    payload = buf.getvalue()
    block = LogBlock(BlockType.DELETE, {}, struct.pack(">ii", 3, len(payload)) + payload, "f.log", 0)
    decoded = decode_delete_block(block)
    assert decoded.keys == [f"k{i}" for i in range(len(values))]
    assert decoded.partitions == [None if i % 2 else "p" for i in range(len(values))]
    assert decoded.ordering == [None if v is None else v[1]["value"] for v in values]
    assert decoded.commit_time_delete == [True, True] + [False] * (len(values) - 2)
