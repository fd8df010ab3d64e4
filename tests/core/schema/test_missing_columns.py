"""A file's columns against the table's schema: a damaged column name (in a Parquet footer
or a log block's schema) or a required column a file lacks is an error naming the file;
an optional column a file lacks (schema evolution) reads as NULL."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_ray import HudiSchemaError, HudiTableBuilder
from tests.core.damage import TABLE, TRIPS_MOR, builds, damage_trips_log, listing, rewrite_avro_commit


def _flip_in_parquet_footer(parquet: Path, old: bytes, new: bytes) -> None:
    """Rename a column in the footer's schema, the name Arrow reads columns by."""
    raw = parquet.read_bytes()
    start = len(raw) - 8 - int.from_bytes(raw[-8:-4], "little")
    at = raw.index(old, start)
    parquet.write_bytes(raw[:at] + new + raw[at + len(old) :])


LATEST_COMMIT = "20260307162456179"  # TABLE's latest commit; the clustering before it is 20260307162454799


def _edit_commit_schemas(path: Path, edit) -> None:
    """Rewrite the writer schema of every data commit: ``edit(fields, instant time)``."""
    timeline = path / ".hoodie" / "timeline"
    for commit in [*timeline.glob("*_*.commit"), *timeline.glob("*_*.replacecommit")]:
        ts = commit.name.split("_")[0]

        def change(record: dict, ts: str = ts) -> None:
            extra = record.get("extraMetadata") or {}
            if extra.get("schema"):
                schema = json.loads(extra["schema"])
                schema["fields"] = edit(schema["fields"], ts)
                extra["schema"] = json.dumps(schema)

        rewrite_avro_commit(commit, change)


def _required_since(path: Path, column: str, since: str, **extra) -> None:
    """``column`` is absent from the schemas of commits before ``since`` and a
    non-nullable string without a default (plus ``extra``) from then on."""

    def edit(fields: list[dict], ts: str) -> list[dict]:
        if ts < since:
            return [f for f in fields if f["name"] != column]
        return [{"name": column, "type": "string", **extra} if f["name"] == column else f for f in fields]

    _edit_commit_schemas(path, edit)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # One flipped bit each: "i" 0x69 -> "a" 0x61, "e" 0x65 -> "g" 0x67.
        (b"_hoodie_commit_time", b"_hoodie_commit_tame"),
        (b"merchant_name", b"merchant_namg"),
    ],
)
def test_damaged_column_name_in_parquet_footer(copy_of, old: bytes, new: bytes) -> None:
    path = copy_of(TABLE)
    if old == b"merchant_name":
        # Only a column the file must hold is reported damaged (see below).
        _required_since(path, "merchant_name", LATEST_COMMIT)
    victim = next((path / "region=us").glob("*_20260307162456179.parquet"))
    _flip_in_parquet_footer(victim, old, new)
    for table in builds(path):
        match = rf"'{old.decode()}'.*{victim.name}.*'{new.decode()}'"
        with pytest.raises(HudiSchemaError, match=match):
            table.read()
        with pytest.raises(HudiSchemaError, match=match):
            list(table.read_stream())


def test_near_name_of_an_optional_column_reads_as_nulls(copy_of) -> None:
    """A table that dropped ``v1`` and added ``v2`` has old files holding
    ``v1`` and lacking ``v2``: schema evolution, not a damaged name."""
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob(f"*_{LATEST_COMMIT}.parquet"))
    _flip_in_parquet_footer(victim, b"merchant_name", b"merchant_namg")
    for table in builds(path):
        rows = pa.Table.from_batches(table.read())
        names = rows.filter(pc.equal(rows.column("_hoodie_file_name"), victim.name)).column("merchant_name")
        assert len(names) > 0 and names.null_count == len(names)
    # The same with the evolution in the table schema: the latest commit renamed the column.
    _flip_in_parquet_footer(victim, b"merchant_namg", b"merchant_name")
    _edit_commit_schemas(
        path,
        lambda fields, ts: [
            {**f, "name": "merchant_namf"} if f["name"] == "merchant_name" and ts == LATEST_COMMIT else f
            for f in fields
        ],
    )
    rows = pa.Table.from_batches(listing(path).read())
    assert "merchant_name" not in rows.column_names
    assert rows.column("merchant_namf").null_count == rows.num_rows


def test_required_column_added_later(copy_of) -> None:
    """A non-nullable column without a default, added by the latest commit:
    older files lack it and read it as NULL; files the commit wrote must hold it."""
    path = copy_of(TABLE)
    _required_since(path, "merchant_name", LATEST_COMMIT)
    older = [*path.glob("region=*/*_20260307162454799.parquet")]
    for victim in older:
        pq.write_table(pq.read_table(victim).drop_columns(["merchant_name"]), victim)
    rows = pa.Table.from_batches(listing(path).read())
    from_older = rows.filter(pc.is_in(rows.column("_hoodie_file_name"), pa.array([v.name for v in older])))
    assert from_older.num_rows > 0 and from_older.column("merchant_name").null_count == from_older.num_rows
    victim = next((path / "region=us").glob(f"*_{LATEST_COMMIT}.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["merchant_name"]), victim)
    match = rf"Required column 'merchant_name' \(not nullable and without a default.*\).*{victim.name}"
    with pytest.raises(HudiSchemaError, match=match):
        listing(path).read()
    with pytest.raises(HudiSchemaError, match=match):
        list(listing(path).read_stream())


def test_required_column_in_every_schema_and_the_create_schema(copy_of) -> None:
    """No commit lacks the column and the table was created with it: every file must hold it."""
    path = copy_of(TABLE)
    _required_since(path, "merchant_name", "0")
    victim = next(path.glob("region=*/*_20260307162454799.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["merchant_name"]), victim)
    with pytest.raises(HudiSchemaError, match=rf"Required column 'merchant_name'.*{victim.name}"):
        listing(path).read()


def test_non_nullable_column_with_a_default_reads_as_nulls(copy_of) -> None:
    """Avro defaults are not materialised: a missing column with one reads as NULL."""
    path = copy_of(TABLE)
    _required_since(path, "merchant_name", "0", default="none")
    victim = next((path / "region=us").glob(f"*_{LATEST_COMMIT}.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["merchant_name"]), victim)
    rows = pa.Table.from_batches(listing(path).read())
    names = rows.filter(pc.equal(rows.column("_hoodie_file_name"), victim.name)).column("merchant_name")
    assert len(names) > 0 and names.null_count == len(names)


def test_meta_field_missing_when_the_table_does_not_populate_them(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob(f"*_{LATEST_COMMIT}.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["_hoodie_record_key"]), victim)
    table = (
        HudiTableBuilder.from_base_uri(str(path))
        .with_hudi_option("hoodie.metadata.enable", "false")
        .with_hudi_option("hoodie.populate.meta.fields", "false")
        .build()
    )
    assert sum(b.num_rows for b in table.read()) > 0


def test_near_name_in_log_block_of_an_optional_column_reads_as_nulls(copy_of) -> None:
    path = copy_of(TRIPS_MOR)
    damage_trips_log(path, b'"name":"rider"', b'"name":"rhder"')
    rows = pa.Table.from_batches(HudiTableBuilder.from_base_uri(str(path)).build().read())
    assert rows.column("rider").null_count > 0


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # The block's other columns are not decoded, yet the near name is still found in its schema.
        (
            b'"name":"_hoodie_commit_seqno"',
            b'"name":"_hoodie_commit_seqnp"',
            r"'_hoodie_commit_seqno' is missing from .*which has a column '_hoodie_commit_seqnp' .*damaged",
        ),
        # Not a near miss: the column is simply absent, and it is required.
        (b'"name":"_hoodie_file_name"', b'"name":"_xxxxxx_xxxx_xxxx"', r"Required column '_hoodie_file_name'"),
    ],
)
def test_damaged_column_name_in_log_block_schema(copy_of, old: bytes, new: bytes, message: str) -> None:
    path = copy_of(TRIPS_MOR)
    log_file = damage_trips_log(path, old, new)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiSchemaError, match=message) as caught:
        table.read()
    assert re.search(rf"AVRO_DATA block at byte \d+ of .*{re.escape(log_file.name)}", str(caught.value))


def test_required_column_missing_from_parquet_file(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob("*_20260307162456179.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["_hoodie_record_key"]), victim)
    table = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()
    with pytest.raises(HudiSchemaError, match=rf"Required column '_hoodie_record_key'.*{victim.name}"):
        table.read()


def test_nullable_column_added_later_still_reads_as_nulls(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob("*_20260307162456179.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["txn_metadata"]), victim)
    table = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()
    rows = pa.Table.from_batches(table.read())
    assert rows.column("txn_metadata").null_count > 0
