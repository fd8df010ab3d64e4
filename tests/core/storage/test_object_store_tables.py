"""Every shared table, uploaded to a loopback S3 server (moto) and read through
``s3://``, reads like the same table on local disk: snapshot, time travel to the
first data instant, incremental from a middle instant, a filter with a projection,
and ``read_stream`` against ``read``. A read that fails locally must fail through
S3 with the same error type."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from hudi_ray import HudiCoreError, HudiQueryType, HudiReadOptions, HudiTable, HudiTableBuilder
from tests.support import TablePath, all_table_names, row_set, to_table, upload

TABLES = all_table_names()

# What a read gave: its rows, or the type of the hudi-ray error it raised.
Outcome = pa.Table | type[HudiCoreError]


@pytest.fixture(scope="module")
def bucket(s3_endpoint: str, table_path: TablePath) -> str:
    # One upload for the module: the tables hold ~3,000 small files in all.
    return upload(s3_endpoint, "object-store-tables", TABLES, table_path)


def _read(table: HudiTable, opts: HudiReadOptions | None = None) -> Outcome:
    try:
        return to_table(table.read(opts))
    except HudiCoreError as exc:
        return type(exc)


def _stream(table: HudiTable, opts: HudiReadOptions) -> Outcome:
    """All batches of ``read_stream``; errors may come from the call or from iterating."""
    try:
        return to_table(list(table.read_stream(opts)))
    except HudiCoreError as exc:
        return type(exc)


def _assert_same(got: Outcome, expected: Outcome, what: str) -> None:
    if not isinstance(expected, pa.Table) or not isinstance(got, pa.Table):
        # Exact types: a storage error where the local read found a bad table would be a bug.
        assert got is expected, f"{what}: got {got!r}, expected {expected!r}"
        return
    assert got.num_rows == expected.num_rows, what
    if expected.num_rows:
        assert got.schema.equals(expected.schema), f"{what}\ngot: {got.schema}\nexpected: {expected.schema}"
    # _hoodie_file_name is kept: the same files are read, so it must match too.
    assert row_set(got) == row_set(expected), what


def _filter_column(everything: pa.Table) -> tuple[str, Any] | None:
    """The first data column whose values render exactly as filter strings, preferring one
    with two distinct values (so the filter keeps some rows and drops others), and its
    smallest value; None when no column qualifies."""
    found: list[tuple[str, Any, int]] = []
    for field in everything.schema:
        dtype = field.type
        if field.name.startswith("_hoodie_") or not (
            pa.types.is_string(dtype) or pa.types.is_integer(dtype) or pa.types.is_date32(dtype)
        ):
            continue
        values = {v for v in everything[field.name].to_pylist() if v is not None}
        if values:
            found.append((field.name, min(values), len(values)))
    if not found:
        return None
    name, value, _ = next((f for f in found if f[2] > 1), found[0])
    return name, value


def _reads(local: HudiTable, everything: Outcome) -> list[tuple[str, HudiReadOptions]]:
    """The reads to compare, chosen from the local table's timeline and rows."""
    reads = [("snapshot", HudiReadOptions())]
    instants = local.get_timeline().data_instants
    if instants:
        reads.append(("time travel", HudiReadOptions().with_as_of_timestamp(instants[0].timestamp)))
    if len(instants) >= 2:
        # Completion times bound incremental reads (instant times on v6, where they are equal):
        # starting at a middle instant leaves at least the last one in range.
        start = instants[(len(instants) - 1) // 2].completed_at
        incremental = HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp(start)
        reads.append((f"incremental from {start}", incremental))
    picked = _filter_column(everything) if isinstance(everything, pa.Table) else None
    if picked is not None:
        column, value = picked
        data = [f.name for f in everything.schema if not f.name.startswith("_hoodie_")]
        projection = list(dict.fromkeys([column, *data[:2]]))
        filters = [(column, "!=", str(value))]
        reads.append(
            (f"filter {filters} projection {projection}", HudiReadOptions(filters=filters, projection=projection))
        )
    return reads


@pytest.mark.parametrize("name", TABLES)
def test_s3_reads_equal_local_reads(
    name: str, bucket: str, storage_options: dict[str, str], table_path: TablePath
) -> None:
    uri = f"s3://{bucket}/{name}"
    try:
        local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    except HudiCoreError as exc:
        with pytest.raises(type(exc)):
            HudiTableBuilder.from_base_uri(uri).with_storage_options(storage_options).build()
        return
    remote = HudiTableBuilder.from_base_uri(uri).with_storage_options(storage_options).build()

    def timeline(t: HudiTable) -> list[tuple[str, str, str]]:
        return [(i.timestamp, i.completed_at, i.action) for i in t.get_timeline().data_instants]

    assert timeline(remote) == timeline(local)

    everything = _read(local)
    for what, opts in _reads(local, everything):
        expected = everything if what == "snapshot" else _read(local, opts)
        got = _read(remote, opts)
        _assert_same(got, expected, f"{name}: read, {what}")
        # Streams fail where the read does not (incremental queries): the local stream decides.
        streamed = _stream(remote, opts)
        local_streamed = _stream(local, opts)
        _assert_same(streamed, local_streamed, f"{name}: read_stream, {what}")
        if isinstance(streamed, pa.Table):
            _assert_same(streamed, got, f"{name}: read_stream against read, {what}")


@pytest.mark.parametrize("name", [n for n in TABLES if not n.endswith(("_empty", "_no_metafields"))])
def test_s3_key_lookups_keep_what_local_ones_keep(
    name: str, bucket: str, storage_options: dict[str, str], table_path: TablePath
) -> None:
    """Record-key lookups over S3 (footers, bloom filters included, fetched together on the
    I/O loop) keep the same file slices and return the same rows as on local disk."""
    local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    remote = HudiTableBuilder.from_base_uri(f"s3://{bucket}/{name}").with_storage_options(storage_options).build()
    everything = to_table(local.read())
    keys = [*sorted(set(everything["_hoodie_record_key"].to_pylist()))[:3], "no-such-key"]
    for key in keys:
        opts = HudiReadOptions(filters=[("_hoodie_record_key", "=", key)])
        assert {s.file_id for s in remote.get_file_slices(opts)} == {s.file_id for s in local.get_file_slices(opts)}
        _assert_same(_read(remote, opts), _read(local, opts), f"{name}: {key}")
