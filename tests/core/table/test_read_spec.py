"""The rules every engine's entry point shares, owned by the core: integer
options, filter value texts, unknown columns and a read's settings (``ReadSpec``)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from hudi_ray.core.config import ENGINE_TUNABLES, int_option
from hudi_ray.core.config import HudiReadConfig as R
from hudi_ray.core.exceptions import HudiConfigError, HudiFilterError, HudiSchemaError
from hudi_ray.core.expr import cast_value, check_columns, filter_value_text
from hudi_ray.core.table import HudiQueryType, ReadSpec

# -- integer options -----------------------------------------------------------------


@pytest.mark.parametrize("value", [3, np.int64(3), np.int32(3)])
def test_int_option_takes_integers_of_any_kind(value: object) -> None:
    assert int_option(value, "n", minimum=0, strings=False) == 3


@pytest.mark.parametrize("value", [True, np.bool_(True), "3", 3.0, None])
def test_int_option_without_strings_takes_no_booleans_texts_or_floats(value: object) -> None:
    with pytest.raises(HudiConfigError, match=r"^n must be an integer >= 0, got "):
        int_option(value, "n", minimum=0, strings=False)


def test_int_option_takes_the_text_of_an_integer_where_options_are_text() -> None:
    assert int_option(" 7 ", "n", minimum=1) == 7
    for value in ("True", True, np.bool_(False), "1.5", ""):
        with pytest.raises(HudiConfigError, match="must be an integer > 0"):
            int_option(value, "n", minimum=1)


def test_int_option_names_hudi_configs_as_hudi_rs_does() -> None:
    key = R.INPUT_PARTITIONS.value
    with pytest.raises(HudiConfigError, match=rf"^Failed to parse 'x' for config {key}: not an integer$"):
        int_option("x", key, minimum=0)
    with pytest.raises(HudiConfigError, match=rf"^Config {key} must be >= 0, got -1 \(reading t\)$"):
        int_option("-1", key, minimum=0, where=" (reading t)")


# -- filter value texts --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (np.bool_(False), "false"),
        (-5, "-5"),
        (np.int64(7), "7"),
        (0.1, "0.1"),
        (1e300, "1e+300"),
        (Decimal("1E+2"), "100"),
        (Decimal("3.10"), "3.10"),
        ("x, y", "x, y"),
        (b"abc", "abc"),
        (dt.date(2024, 2, 29), "2024-02-29"),
        (dt.datetime(2024, 1, 1, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=5))), "2023-12-31T20:30:00"),
        (pa.scalar(2.5), "2.5"),
        (pa.scalar(dt.date(2024, 1, 2)), "2024-01-02"),
    ],
)
def test_filter_value_text(value: object, text: str) -> None:
    assert filter_value_text(value) == text


@pytest.mark.parametrize("value", [None, pa.scalar(None, pa.int32()), [1], Decimal("NaN"), b"\xff", object()])
def test_values_without_a_filter_text(value: object) -> None:
    assert filter_value_text(value) is None


def test_float_texts_parse_back_to_the_same_float() -> None:
    for value in (0.1, 1 / 3, 2.0**-1074, 1.7976931348623157e308, -0.0):
        text = filter_value_text(value)
        assert text is not None
        assert cast_value(text, pa.float64(), "f").as_py() == value


# -- unknown columns -----------------------------------------------------------------


def test_unknown_columns_and_filter_fields_are_schema_errors() -> None:
    check_columns(["a"], ["a", "b"], "table t")
    with pytest.raises(HudiSchemaError, match=r"^Projected columns \['x'\] not found in the schema of table t$"):
        check_columns(["a", "x"], ["a"], "table t")
    with pytest.raises(HudiFilterError, match=r"^Filter field 'x' not found in the schema of table t$"):
        check_columns(["x"], ["a"], "table t", filters=True)
    with pytest.raises(HudiFilterError, match=r"Filter fields \['x', 'y'\]"):
        check_columns(["x", "a", "y"], {"a"}, "table t", filters=True)


# -- a read's settings ---------------------------------------------------------------


def test_read_spec_splits_configs_and_resolves_the_read() -> None:
    spec = ReadSpec.of(
        "s3://user:secret@bucket/t",
        query_type="incremental",
        filters=[("a", "=", "1")],
        hudi_options={
            "hoodie.metadata.enable": "false",
            "hoodie.read.file_group.start_timestamp": "20240101000000000",  # hudi-rs 0.2's name
            R.INPUT_PARTITIONS.value: "3",
        },
        columns=["a"],
        end_timestamp="20240102000000000",
    )
    assert spec.table_options == {"hoodie.metadata.enable": "false"}
    assert spec.read_options.query_type() is HudiQueryType.Incremental
    assert spec.read_options.start_timestamp() == "20240101000000000"
    assert spec.read_options.end_timestamp() == "20240102000000000"
    assert spec.read_options.filters == [("a", "=", "1")]
    assert spec.columns == ["a"] and spec.num_partitions == 3 and spec.prefetch
    assert "secret" not in spec.shown_uri and "secret" not in repr(spec)
    local = ReadSpec.of("/data/table", hudi_options={R.STREAM_BATCH_SIZE.value: "10"}, num_partitions="2", strings=True)
    assert (local.batch_size, local.num_partitions, local.prefetch) == (10, 2, False)
    assert local.read_options.query_type() is HudiQueryType.Snapshot


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"query_type": "incremental", "as_of_timestamp": "1"}, "as_of_timestamp applies to snapshot reads"),
        ({"start_timestamp": "1"}, "start_timestamp and end_timestamp apply to incremental reads"),
        ({"columns": "a"}, "columns must be a list of column names"),
        ({"batch_size": "5"}, "batch_size must be an integer > 0, got '5'"),
        ({"num_partitions": 0, "names": {"num_partitions": "override_num_blocks"}}, "override_num_blocks must be"),
        ({"hudi_options": {R.FILE_SLICE_READ_CONCURRENCY.value: "0"}}, "must be > 0"),
    ],
)
def test_read_spec_rejects_bad_settings(kwargs: dict, match: str) -> None:
    with pytest.raises(HudiConfigError, match=match):
        ReadSpec.of("/data/table", **kwargs)


def test_entry_points_take_the_read_arguments_by_name() -> None:
    """``ReadArgs`` names the read arguments once; an entry point passes what it was
    given, and a name that is none of them is the project's error, naming the entry point."""
    spec = ReadSpec.of_args(
        "s3://bucket/warehouse/t",
        {"columns": ["a"], "filters": [("a", "=", "1")], "batch_size": 10, "prefetch_depth": 3},
        "read_hudi",
    )
    assert spec.columns == ["a"] and spec.batch_size == 10 and spec.prefetch_depth == 3
    assert [f.field for f in spec.read_options.parsed_filters] == ["a"]
    with pytest.raises(
        HudiConfigError, match=r"colums: not an argument of read_hudi \(reading s3://bucket/warehouse/t\)"
    ):
        ReadSpec.of_args("s3://bucket/warehouse/t", {"colums": ["a"]}, "read_hudi")
    # Defaults the engines share: one prefetch depth for every entry point.
    assert ReadSpec.of_args("s3://bucket/warehouse/t", {}, "read_hudi").prefetch_depth == ENGINE_TUNABLES.prefetch_depth
