"""Damaged instant metadata (empty or malformed commit files, write stats naming the wrong
file, extraMetadata of the wrong types, malformed clean metadata) ends in a
``HudiTimelineError`` naming the instant and its file, or, where Hudi itself skips the
damaged part, in the undamaged rows: never in a raw Python exception or in different rows."""

from __future__ import annotations

import json
import re

import fastavro
import pyarrow as pa
import pytest

from hudi_ray import HudiReadOptions, HudiTableBuilder, HudiTimelineError
from tests.core.damage import (
    OVERWRITE_TABLE,
    TABLE,
    V6,
    V6_TABLE,
    V9,
    V9_LATEST,
    build,
    edit_json_commit,
    fails_on_schema_and_read,
    incremental,
    rewrite_avro_commit,
)
from tests.support import row_set

# -- empty and malformed instant files -------------------------------------------------------------


def test_zero_byte_commit_fails_incremental_and_snapshot(copy_of) -> None:
    path = copy_of(TABLE)
    commit = next((path / ".hoodie" / "timeline").glob("20260307162456179_*.commit"))
    commit.write_bytes(b"")
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=r"20260307162456179.*empty"):
        table.read(incremental())
    with pytest.raises(HudiTimelineError, match=r"20260307162456179.*empty"):
        table.read()


@pytest.mark.parametrize("name", [OVERWRITE_TABLE, TABLE])
def test_zero_byte_replacecommit_does_not_resurrect_file_groups(copy_of, name: str) -> None:
    path = copy_of(name)
    replace = sorted((path / ".hoodie" / "timeline").glob("*_*.replacecommit"))[-1]
    replace.write_bytes(b"")
    for listing in ("true", "false"):
        table = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", listing).build()
        with pytest.raises(HudiTimelineError, match=replace.name.split("_")[0]):
            table.read()


def test_replacecommit_without_replaced_ids(copy_of) -> None:
    path = copy_of(OVERWRITE_TABLE)
    replace = next((path / ".hoodie" / "timeline").glob("*_*.replacecommit"))
    rewrite_avro_commit(replace, lambda r: r.update(partitionToReplaceFileIds=None))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=r"partitionToReplaceFileIds"):
        table.read()


def test_malformed_commit_file_v9(copy_of) -> None:
    path = copy_of(TABLE)
    commit = next((path / ".hoodie" / "timeline").glob("20260307162456179_*.commit"))
    commit.write_bytes(b"Obj\x01" + b"\x00" * 20)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=commit.name):
        table.read()


def test_malformed_commit_file_v6(copy_of) -> None:
    path = copy_of(V6_TABLE)
    commit = path / ".hoodie" / "20240418172804498.commit"
    commit.write_text('{"partitionToWriteStats": {')
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=commit.name):
        table.get_schema()
    with pytest.raises(HudiTimelineError, match=commit.name):
        table.get_timeline().get_instant_metadata_in_json(table.get_timeline().get_completed_commits()[-1])


@pytest.mark.parametrize(("schema", "record"), [("string", "commit"), ({"type": "array", "items": "long"}, [1, 2])])
def test_avro_commit_file_holding_no_record(copy_of, schema: object, record: object) -> None:
    path = copy_of(V9)
    commit = next((path / ".hoodie" / "timeline").glob(f"{V9_LATEST}_*.commit"))
    with commit.open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), [record])
    match = rf"{re.escape(commit.name)}.*expected an Avro record, got {type(record).__name__}"
    with pytest.raises(HudiTimelineError, match=match):
        build(path).read()


# -- write stats -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [("fileId", "00000000-0000-0000-0000-000000000000-0"), ("partitionPath", "")],
)
def test_write_stat_with_changed_identity(copy_of, field: str, value) -> None:
    path = copy_of(TABLE)
    commit = next((path / ".hoodie" / "timeline").glob("20260307162456179_*.commit"))

    def change(record: dict) -> None:
        for stats in record["partitionToWriteStats"].values():
            stats[0][field] = value

    rewrite_avro_commit(commit, change)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=rf"20260307162456179.*{field}"):
        table.read(incremental("20260307162454799"))


def _row_set(batches: list[pa.RecordBatch]) -> list[str]:
    return row_set(batches) if batches else []


def test_write_stat_without_partition_path_is_listed_under_its_map_key(copy_of) -> None:
    """Hudi's own readers take the partition from the map key."""
    path = copy_of(TABLE)
    expected = [_row_set(HudiTableBuilder.from_base_uri(str(path)).build().read(o)) for o in (None, incremental())]
    commit = next((path / ".hoodie" / "timeline").glob("20260307162456179_*.commit"))

    def change(record: dict) -> None:
        for stats in record["partitionToWriteStats"].values():
            for stat in stats:
                stat["partitionPath"] = None

    rewrite_avro_commit(commit, change)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert [_row_set(table.read(o)) for o in (None, incremental())] == expected


@pytest.mark.parametrize(
    "ghost",
    [
        {"fileId": None, "path": "30/ghost.parquet", "partitionPath": "30", "numWrites": 1},
        {"fileId": "ghost-0", "path": None, "partitionPath": "30", "numWrites": 1},
        {"fileId": "ghost-0", "path": "", "partitionPath": "30"},
        {"partitionPath": "30"},
    ],
)
def test_write_stat_naming_no_file_is_skipped(copy_of, ghost: dict) -> None:
    """Hudi skips stats with a null fileId or path (they name no file); so does the reader."""
    path = copy_of(V6_TABLE)
    expected = [_row_set(HudiTableBuilder.from_base_uri(str(path)).build().read(o)) for o in (None, incremental())]
    commit = path / ".hoodie" / "20240418172804498.commit"
    meta = json.loads(commit.read_text())
    meta["partitionToWriteStats"]["30"].append(ghost)
    commit.write_text(json.dumps(meta))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert [_row_set(table.read(o)) for o in (None, incremental())] == expected
    stats = table.get_timeline().write_stats(table.get_timeline().find("20240418172804498"))
    assert all(st["fileId"] and st["path"] for st in stats)


@pytest.mark.parametrize(
    ("field", "value"),
    [("fileId", 7), ("path", 7), ("partitionPath", 30), ("fileId", ""), ("partitionPath", "10")],
)
def test_write_stat_with_wrong_field(copy_of, field: str, value) -> None:
    path = copy_of(V6_TABLE)
    commit = path / ".hoodie" / "20240418172804498.commit"
    meta = json.loads(commit.read_text())
    meta["partitionToWriteStats"]["30"][0][field] = value
    commit.write_text(json.dumps(meta))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=rf"20240418172804498.*{field}"):
        table.read()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda m: m.update(partitionToWriteStats=list(m["partitionToWriteStats"].values())), "must be a map"),
        (lambda m: m.update(partitionToWriteStats={"30": "oops"}), "must be a list"),
        (lambda m: m.update(partitionToWriteStats={"30": ["oops"]}), "not a record"),
        (lambda m: m["partitionToWriteStats"]["30"][0].update(numWrites="1"), "numWrites"),
        (lambda m: m["partitionToWriteStats"]["30"][0].update(numWrites=-1), "numWrites"),
        (lambda m: m.pop("partitionToWriteStats"), "partitionToWriteStats"),
    ],
)
def test_malformed_json_commit_metadata(copy_of, damage, message: str) -> None:
    path = copy_of(V6_TABLE)
    commit = path / ".hoodie" / "20240418172804498.commit"
    meta = json.loads(commit.read_text())
    damage(meta)
    commit.write_text(json.dumps(meta))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=rf"20240418172804498.*{message}"):
        table.read(incremental())
    with pytest.raises(HudiTimelineError, match=rf"20240418172804498.*{message}"):
        table.read()


# -- extraMetadata ---------------------------------------------------------------------------------


@pytest.mark.parametrize("extra", [[{"schema": "{}"}], "schema", 7])
def test_extra_metadata_that_is_not_a_map(copy_of, extra: object) -> None:
    path = copy_of(V6)
    commit = edit_json_commit(path, lambda m: m.update(extraMetadata=extra))
    match = rf"{re.escape(commit.name)}.*extraMetadata must be a map, got {type(extra).__name__}"
    fails_on_schema_and_read(path, HudiTimelineError, match)


@pytest.mark.parametrize("schema", [5, {"type": "record", "name": "r", "fields": []}, ["x"], True])
def test_writer_schema_that_is_not_a_string(copy_of, schema: object) -> None:
    path = copy_of(V6)
    commit = edit_json_commit(path, lambda m: m["extraMetadata"].update(schema=schema))
    match = rf"{re.escape(commit.name)}.*extraMetadata\.schema must be a string.*got {type(schema).__name__}"
    fails_on_schema_and_read(path, HudiTimelineError, match)


def test_null_writer_schema_falls_back_to_an_earlier_commit(copy_of) -> None:
    """As an absent schema: the table's schema is the latest one a commit
    carries (here the first commit's, the same schema)."""
    path = copy_of(V6)
    expected = build(path)
    schema, rows = expected.get_schema(), row_set(expected.read())
    edit_json_commit(path, lambda m: m["extraMetadata"].update(schema=None))
    table = build(path)
    assert table.get_schema().equals(schema)
    assert row_set(table.read()) == rows


# -- clean metadata --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("partition_metadata", "message"),
    [
        ([{"partitionPath": "us"}], "partitionMetadata must be a map, got list"),
        ({"us": "deleted"}, "metadata of partition 'us' must be a record, got str"),
        ({"us": {"successDeleteFiles": "{victim}"}}, "successDeleteFiles of partition 'us' must be a list"),
        ({"us": {"successDeleteFiles": [7]}}, "successDeleteFiles of partition 'us' must be a list"),
        # A string read as a truth value would mark the partition deleted and hide the missing file.
        ({"us": {"isPartitionDeleted": "false"}}, "isPartitionDeleted of partition 'us' must be a boolean, got str"),
    ],
)
def test_malformed_clean_metadata(copy_of, partition_metadata: object, message: str) -> None:
    """Cleans are read when a file is missing: a file a clean deleted is not damage."""
    path = copy_of(OVERWRITE_TABLE)
    victim = next((path / "us").glob("fbafeb04-*_20260403183955124.parquet"))
    victim.unlink()
    before_replace = HudiReadOptions().with_as_of_timestamp("20260403183959838")
    text = json.dumps({"partitionMetadata": partition_metadata}).replace("{victim}", victim.name)
    clean = path / ".hoodie" / "timeline" / "20260403184010000_20260403184011000.clean"
    clean.write_text(text)
    with pytest.raises(HudiTimelineError, match=rf"Malformed clean metadata in .*{re.escape(clean.name)}.*{message}"):
        build(path).read(before_replace)
