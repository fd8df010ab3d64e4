"""Helpers shared by every test folder: where the shared tables are, hudi-rs as an
oracle, row comparison, rows for the SQL-expectation tests, small generated tables
and the S3 upload used by the loopback S3 tests."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import hudi
import pyarrow as pa

import hudi_ray

REPO = Path(__file__).resolve().parent.parent
TABLES_DIR = Path(os.environ.get("HUDI_TABLES_DIR", REPO.parent / "shared" / "hudi-tables"))

# The type of the ``table_path`` fixture: table name -> extracted table directory.
TablePath = Callable[[str], Path]


def all_table_names() -> list[str]:
    """Table names as INDEX.md lists them, e.g. ``sample_table/cow/v6_empty``."""
    return sorted(str(p.relative_to(TABLES_DIR).with_suffix("")) for p in TABLES_DIR.rglob("*.zip"))


def table_kind(name: str) -> str:
    return "mor" if "/mor/" in name else "cow"


# -- comparing rows ---------------------------------------------------------------


def _canon(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canon(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, Decimal):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def row_set(batches: Sequence[pa.RecordBatch] | pa.Table) -> list[str]:
    """Rows as canonical JSON strings, sorted: order-free equality."""
    table = batches if isinstance(batches, pa.Table) else pa.Table.from_batches(list(batches))
    return sorted(json.dumps(_canon(r), sort_keys=True) for r in table.to_pylist())


def to_table(batches: Sequence[pa.RecordBatch], schema: pa.Schema | None = None) -> pa.Table:
    batches = list(batches)
    if not batches:
        return pa.table({}) if schema is None else schema.empty_table()
    return pa.Table.from_batches(batches)


def assert_reads_as_local(remote: Any, local: Any, what: str) -> None:
    """``remote`` (a table on a store) has ``local``'s completed instants, base files and
    rows; ``_hoodie_file_name`` aside, which a store's copy may name alike anyway."""

    def rows(t: Any) -> list[str]:
        table = to_table(t.read())
        return row_set(table.drop_columns([c for c in table.column_names if c == "_hoodie_file_name"]))

    instants = [i.timestamp for i in local.get_timeline().data_instants]
    assert [i.timestamp for i in remote.get_timeline().data_instants] == instants, what
    files = sorted(s.base_file_name for s in local.get_file_slices())
    assert sorted(s.base_file_name for s in remote.get_file_slices()) == files, what
    assert rows(remote) == rows(local), what


# -- hudi-rs as an oracle -----------------------------------------------------------


def rs_options(
    filters: list[tuple[str, str, str]] | None = None,
    projection: list[str] | None = None,
    hudi_options: dict[str, str] | None = None,
) -> hudi.HudiReadOptions:
    return hudi.HudiReadOptions(filters=filters, projection=projection, hudi_options=hudi_options)


def ours_options(
    filters: list[tuple[str, str, str]] | None = None,
    projection: list[str] | None = None,
    hudi_options: dict[str, str] | None = None,
) -> hudi_ray.HudiReadOptions:
    return hudi_ray.HudiReadOptions(filters=filters, projection=projection, hudi_options=hudi_options)


def snapshot_opts(as_of: str | None = None, **kw: Any) -> dict[str, Any]:
    opts = dict(kw.pop("hudi_options", None) or {})
    if as_of:
        opts["hoodie.read.as.of.timestamp"] = as_of
    return {"hudi_options": opts, **kw}


def incremental_opts(start: str, end: str, **kw: Any) -> dict[str, Any]:
    opts = dict(kw.pop("hudi_options", None) or {})
    opts.update(
        {
            "hoodie.read.query.type": "incremental",
            "hoodie.read.start.timestamp": start,
            "hoodie.read.end.timestamp": end,
        }
    )
    return {"hudi_options": opts, **kw}


def table_pair(path: str) -> tuple[hudi_ray.HudiTable, hudi.HudiTable]:
    """The same table opened by hudi-ray and by hudi-rs."""
    return hudi_ray.HudiTableBuilder.from_base_uri(path).build(), hudi.HudiTableBuilder.from_base_uri(path).build()


def assert_same_as_hudi_rs(ours: hudi_ray.HudiTable, theirs: hudi.HudiTable, **kw: object) -> int:
    """Both readers return the same rows and schema for the same options; the row count."""
    a = to_table(ours.read(ours_options(**kw)))
    b = to_table(theirs.read(rs_options(**kw)))
    assert a.num_rows == b.num_rows, kw
    if b.num_rows:
        assert a.schema.equals(b.schema), f"{kw}\nours: {a.schema}\nhudi-rs: {b.schema}"
    assert row_set(a) == row_set(b), kw
    return a.num_rows


def both_read(path: str, **kw: Any) -> tuple[pa.Table, pa.Table]:
    """Read with hudi-rs and hudi-ray using the same options; returns (ours, theirs)."""
    rs = hudi.HudiTableBuilder.from_base_uri(path).build()
    ours = hudi_ray.HudiTableBuilder.from_base_uri(path).build()
    theirs_b = rs.read(rs_options(**kw))
    ours_b = ours.read(ours_options(**kw))
    return to_table(ours_b), to_table(theirs_b)


# -- rows for the SQL-expectation tests ----------------------------------------------

READ_OPTIMIZED = {"hoodie.read.use.read_optimized.mode": "true"}


def open_table(table_path: TablePath, name: str) -> hudi_ray.HudiTable:
    return hudi_ray.HudiTableBuilder.from_base_uri(str(table_path(name))).build()


def rows_of(batches: list[pa.RecordBatch]) -> list[dict[str, Any]]:
    if not batches:
        return []
    return pa.Table.from_batches(batches).to_pylist()


def read_rows(
    table: hudi_ray.HudiTable,
    *,
    as_of_instant: int | None = None,
    filters: list[tuple[str, str, str]] | None = None,
    read_optimized: bool = False,
) -> list[dict[str, Any]]:
    """Rows of a snapshot read, optionally as of the ``as_of_instant``-th data instant."""
    options = hudi_ray.HudiReadOptions(filters=filters, hudi_options=READ_OPTIMIZED if read_optimized else None)
    if as_of_instant is not None:
        options = options.with_as_of_timestamp(table.get_timeline().data_instants[as_of_instant].timestamp)
    return rows_of(table.read(options))


def keys(rows: list[dict[str, Any]], column: str = "_hoodie_record_key") -> list[Any]:
    """Sorted key list (duplicates kept, so a duplicated key shows up)."""
    return sorted(r[column] for r in rows)


def by_key(rows: list[dict[str, Any]], column: str = "_hoodie_record_key") -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for r in rows:
        assert r[column] not in out, f"duplicate key {r[column]!r}"
        out[r[column]] = r
    return out


def assert_columns(row: dict[str, Any], expected: dict[str, Any]) -> None:
    for column, value in expected.items():
        assert row[column] == value, (row["_hoodie_record_key"], column, row[column], value)
        assert type(row[column]) is type(value), (row["_hoodie_record_key"], column, type(row[column]))


def actions(table: hudi_ray.HudiTable) -> list[str]:
    return [i.action for i in table.get_timeline().data_instants]


# -- small generated tables ---------------------------------------------------------


def api_table(path: str | Path, options: hudi_ray.HudiReadOptions | None = None) -> pa.Table | None:
    """The table API's read of a table (None when it returns no batches)."""
    batches = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build().read(options)
    return pa.Table.from_batches(batches) if batches else None


def dataset_table(ds: Any) -> pa.Table | None:
    """All rows of a Ray dataset as one Arrow table (None when it has no rows)."""
    import ray

    tables = [t for t in ray.get(ds.to_arrow_refs()) if t.num_rows]
    return pa.concat_tables(tables) if tables else None


def numbered_rows(start: int, count: int) -> pa.Table:
    ids = pa.array(range(start, start + count), pa.int64())
    return pa.table(
        {
            "id": ids,
            "value": pa.array([i * 10 for i in range(start, start + count)], pa.int64()),
            "name": pa.array([f"name-{i}" for i in range(start, start + count)]),
            "region": pa.array(["us" if i % 2 == 0 else "eu" for i in range(start, start + count)]),
        }
    )


def write_numbered_table(path: Path, rows: int, rows_per_file: int, partitioned: bool = False) -> Path:
    """A COW table of ``rows`` rows with ids 0..rows-1 in files of ``rows_per_file``
    consecutive ids (so a range filter on ``id`` can prune files by footer stats)."""
    from hudi_testkit import write_cow_table

    write_cow_table(
        path,
        numbered_rows(0, rows),
        table_name="numbered",
        record_key="id",
        partition_field="region" if partitioned else None,
        precombine_field="value",
        rows_per_file=rows_per_file,
    )
    return path


# -- S3 on loopback ---------------------------------------------------------------


def upload(s3_endpoint: str, bucket: str, tables: list[str], table_path: TablePath) -> str:
    """Copy shared tables into ``bucket`` under their names; returns the bucket."""
    import s3fs

    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": s3_endpoint})
    fs.mkdir(bucket)
    for name in tables:
        fs.put(str(table_path(name)), f"{bucket}/{name}", recursive=True)
    return bucket
