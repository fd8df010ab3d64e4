"""A read's bad options (unknown or unparseable filters and projections, an unknown query
type or flag, a start after the end, options of the wrong type) fail before any row is
read, naming what was wrong."""

from __future__ import annotations

import re

import pytest

from hudi_ray import HudiConfigError, HudiFilterError, HudiReadOptions, HudiSchemaError, HudiTableBuilder
from tests.core.damage import TABLE


def test_unknown_filter_column_errors_before_rows(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    opts = HudiReadOptions(filters=[("no_such_column", "=", "1")])
    with pytest.raises(HudiFilterError, match="no_such_column"):
        table.read(opts)
    with pytest.raises(HudiFilterError, match="no_such_column"):
        table.read_stream(opts)
    with pytest.raises(HudiFilterError, match="no_such_column"):
        table.get_file_slices(opts)


def test_unparseable_filter_value(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiFilterError, match=r"'abc'.*txn_ts.*int64"):
        table.read(HudiReadOptions(filters=[("txn_ts", ">", "abc")]))
    with pytest.raises(HudiFilterError, match="is_international"):
        table.read(HudiReadOptions(filters=[("is_international", "=", "maybe")]))


def test_unknown_projection_column(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiSchemaError, match="nope"):
        table.read(HudiReadOptions(projection=["txn_id", "nope"]))


def test_file_group_reader_validates_filters(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    fgr = table.create_file_group_reader_with_options()
    fs = table.get_file_slices()[0]
    with pytest.raises(HudiFilterError, match="nope"):
        fgr.read_file_slice(fs, HudiReadOptions(filters=[("nope", "=", "1")]))
    with pytest.raises(HudiFilterError, match="nope"):
        next(iter(fgr.read_file_slice_stream(fs, HudiReadOptions(filters=[("nope", "=", "1")]))))


def test_bad_query_type_and_read_optimized_flag(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiConfigError, match=r"hoodie\.read\.query\.type"):
        table.read(HudiReadOptions(hudi_options={"hoodie.read.query.type": "sideways"}))
    with pytest.raises(HudiConfigError, match=r"read_optimized"):
        table.read(HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "perhaps"}))


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
