"""Metadata of the right syntax but the wrong types (a list where a map belongs,
a number where a schema belongs, a name Avro does not allow, bytes that are not
UTF-8 in a Parquet footer) ends in the project's own errors naming the file,
or, where the damaged part only narrows a read, in the undamaged answer: never
in a raw Python exception or in different rows."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray import (
    HudiCorruptFileError,
    HudiReadOptions,
    HudiSchemaError,
    HudiTable,
    HudiTableBuilder,
    HudiTimelineError,
)
from hudi_ray.core.base_file import footer_bounds
from tests.support import row_set

# JSON commits (layout 1) whose writer schema nests a record ``child_struct`` in ``structField``.
V6 = "sample_table/cow/v6_nonpartitioned"
V6_LATEST = "20240418173551906"
# Avro commits (layout 2) and Parquet base files with string and decimal columns.
V9 = "sample_table/cow/v9_txns_simple_meta"
V9_LATEST = "20260307162456179"


def _build(path: Path, metadata_table: str = "true") -> HudiTable:
    return HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", metadata_table).build()


def _edit_json_commit(path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    commit = path / ".hoodie" / f"{V6_LATEST}.commit"
    meta = json.loads(commit.read_text())
    change(meta)
    commit.write_text(json.dumps(meta))
    return commit


def _edit_writer_schema(path: Path, old: str, new: str) -> Path:
    """Replace the one occurrence of ``old`` in the latest commit's writer schema text."""

    def change(meta: dict[str, Any]) -> None:
        text = meta["extraMetadata"]["schema"]
        assert text.count(old) == 1
        meta["extraMetadata"]["schema"] = text.replace(old, new)

    return _edit_json_commit(path, change)


def _fails_on_schema_and_read(path: Path, error: type[Exception], match: str) -> None:
    table = _build(path)
    with pytest.raises(error, match=match):
        table.get_schema()
    with pytest.raises(error, match=match):
        table.read()


# -- extraMetadata -----------------------------------------------------------------------------------


@pytest.mark.parametrize("extra", [[{"schema": "{}"}], "schema", 7])
def test_extra_metadata_that_is_not_a_map(copy_of, extra: object) -> None:
    path = copy_of(V6)
    commit = _edit_json_commit(path, lambda m: m.update(extraMetadata=extra))
    match = rf"{re.escape(commit.name)}.*extraMetadata must be a map, got {type(extra).__name__}"
    _fails_on_schema_and_read(path, HudiTimelineError, match)


@pytest.mark.parametrize("schema", [5, {"type": "record", "name": "r", "fields": []}, ["x"], True])
def test_writer_schema_that_is_not_a_string(copy_of, schema: object) -> None:
    path = copy_of(V6)
    commit = _edit_json_commit(path, lambda m: m["extraMetadata"].update(schema=schema))
    match = rf"{re.escape(commit.name)}.*extraMetadata\.schema must be a string.*got {type(schema).__name__}"
    _fails_on_schema_and_read(path, HudiTimelineError, match)


def test_null_writer_schema_falls_back_to_an_earlier_commit(copy_of) -> None:
    """As an absent schema: the table's schema is the latest one a commit
    carries (here the first commit's, the same schema)."""
    path = copy_of(V6)
    expected = _build(path)
    schema, rows = expected.get_schema(), row_set(expected.read())
    _edit_json_commit(path, lambda m: m["extraMetadata"].update(schema=None))
    table = _build(path)
    assert table.get_schema().equals(schema)
    assert row_set(table.read()) == rows


# -- Avro names in the writer schema -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "what", "bad"),
    [
        # One flipped bit each: "c" 0x63 -> "#" 0x23, "s" 0x73 -> "3" 0x33.
        ('"name":"child_struct","type"', '"name":"#hild_struct","type"', "field name", "#hild_struct"),
        ('"name":"child_struct","namespace"', '"name":"#hild_struct","namespace"', "type name", "#hild_struct"),
        (
            '"namespace":"hoodie.v6_nonpartitioned.v6_nonpartitioned_record.structField"',
            '"namespace":"hoodie.v6_nonpartitioned.v6_nonpartitioned_record.3tructField"',
            "namespace",
            "hoodie.v6_nonpartitioned.v6_nonpartitioned_record.3tructField",
        ),
    ],
)
def test_invalid_avro_name_in_writer_schema(copy_of, old: str, new: str, what: str, bad: str) -> None:
    """A damaged name is not read as another column (it was, as ``#hild_struct``)."""
    path = copy_of(V6)
    commit = _edit_writer_schema(path, old, new)
    where = rf"the writer schema .*{V6_LATEST}.*{re.escape(commit.name)}"
    match = rf"Invalid Avro {what} '{re.escape(bad)}' .*structField.* of {where}"
    _fails_on_schema_and_read(path, HudiSchemaError, match)


def test_invalid_avro_field_name_is_refused_by_hudi_rs_too(copy_of) -> None:
    path = copy_of(V6)
    _edit_writer_schema(path, '"name":"child_struct","type"', '"name":"#hild_struct","type"')
    with pytest.raises(Exception, match=r"Invalid field name #hild_struct"):
        hudi.HudiTableBuilder.from_base_uri(str(path)).build().read()


# -- the instant file's record -----------------------------------------------------------------------


@pytest.mark.parametrize(("schema", "record"), [("string", "commit"), ({"type": "array", "items": "long"}, [1, 2])])
def test_avro_commit_file_holding_no_record(copy_of, schema: object, record: object) -> None:
    path = copy_of(V9)
    commit = next((path / ".hoodie" / "timeline").glob(f"{V9_LATEST}_*.commit"))
    with commit.open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), [record])
    match = rf"{re.escape(commit.name)}.*expected an Avro record, got {type(record).__name__}"
    with pytest.raises(HudiTimelineError, match=match):
        _build(path).read()


# -- clean metadata ----------------------------------------------------------------------------------

OVERWRITE_TABLE = "sample_table/cow/v9_txns_simple_overwrite"


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
        _build(path).read(before_replace)


# -- Parquet footers ---------------------------------------------------------------------------------


def _footer_start(raw: bytes) -> int:
    return len(raw) - 8 - int.from_bytes(raw[-8:-4], "little")


def _victim(path: Path) -> Path:
    return next((path / "region=us").glob(f"*_{V9_LATEST}.parquet"))


def _damage_footer(parquet: Path, text: bytes, which: list[int] | None = None) -> None:
    """Set the first byte of occurrences of ``text`` in the footer (all, or the
    ``which``-th ones) to 0xff: lengths stay, the text is no longer UTF-8."""
    raw = bytearray(parquet.read_bytes())
    found = [m.start() for m in re.finditer(re.escape(text), raw[_footer_start(raw) :])]
    assert found
    for i in which if which is not None else range(len(found)):
        raw[_footer_start(raw) + found[i]] = 0xFF
    parquet.write_bytes(bytes(raw))


def _filtered(column: str, op: str, value: str) -> HudiReadOptions:
    return HudiReadOptions().with_filters([(column, op, value)])


@pytest.mark.parametrize("metadata_table", ["true", "false"])
def test_column_path_not_utf8_in_parquet_footer(copy_of, metadata_table: str) -> None:
    """Without the metadata table, footer stats prune the filtered read; the
    damaged file is kept (its bounds unknown) and its read names it."""
    path = copy_of(V9)
    victim = _victim(path)
    _damage_footer(victim, b"amount")
    with pytest.raises(HudiCorruptFileError, match=rf"{re.escape(victim.name)}.*not UTF-8"):
        _build(path, metadata_table).read(_filtered("amount", ">", "10"))


def test_column_chunk_path_not_utf8_reads_like_undamaged(copy_of) -> None:
    """Only a column chunk's own path damaged, the schema intact: pyarrow reads
    columns by the schema, so the file reads as before (as hudi-rs reads it);
    the footer bounds nothing of it, and files after it keep their bounds."""
    path = copy_of(V9)
    options = _filtered("txn_id", "<", "TXN-010")
    expected = row_set(_build(path, "false").read(options))
    victim = _victim(path)
    healthy = pq.read_metadata(victim)
    _damage_footer(victim, b"txn_id", which=[1])  # the first occurrence is the schema's
    damaged = pq.read_metadata(victim)
    j = damaged.schema.names.index("txn_id")  # the schema still decodes
    with pytest.raises(UnicodeDecodeError):
        _ = damaged.row_group(0).column(j).path_in_schema
    schema = pa.schema([pa.field("txn_id", pa.string())])
    bounds = footer_bounds([damaged, healthy], schema)["txn_id"]
    assert bounds.mins.to_pylist() == [None, "TXN-017"]
    assert bounds.maxs.to_pylist() == [None, "TXN-017"]
    assert row_set(_build(path, "false").read(options)) == expected


def test_string_bound_not_utf8_in_parquet_footer(copy_of) -> None:
    """A damaged bound is unknown, not an error: the file is read and filtered by its data."""
    path = copy_of(V9)
    options = _filtered("merchant_name", "=", "Apple Store")
    expected = row_set(_build(path, "false").read(options))
    assert expected
    victim = _victim(path)
    _damage_footer(victim, b"Apple Store")  # the column chunk's min and max
    md = pq.read_metadata(victim)
    stats = md.row_group(0).column(md.schema.names.index("merchant_name")).statistics
    with pytest.raises(UnicodeDecodeError):
        _ = stats.min
    assert row_set(_build(path, "false").read(options)) == expected
