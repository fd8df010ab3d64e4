"""``read_hudi_spark`` on a RayDP session: Spark scans the base files that need no
merge, Ray reader tasks read the rest (``tests/spark_scan_cases.py``)."""

from __future__ import annotations

import pytest

from hudi_ray.spark import java_version
from tests.spark_scan_cases import (
    PARQUET_TABLES,
    case_evolved,
    case_floats,
    case_no_spark_scan,
    case_old_dates,
    case_paths_spark_would_misread,
    case_table,
    case_typed_filters,
)

pytest.importorskip("raydp")
pytestmark = pytest.mark.skipif(java_version() is None, reason="Spark needs Java 17")


@pytest.mark.parametrize("name", PARQUET_TABLES)
def test_every_table_equals_the_table_api(spark, name: str, table_path) -> None:
    case_table(spark, str(table_path(name)))


def test_files_unlike_the_schema(spark, tmp_path) -> None:
    case_evolved(spark, tmp_path)


def test_filters_with_nan_and_nulls(spark, tmp_path) -> None:
    case_floats(spark, tmp_path)


def test_dates_before_the_gregorian_switch(spark, tmp_path) -> None:
    case_old_dates(spark, tmp_path)


def test_roots_hadoop_would_misread() -> None:
    case_paths_spark_would_misread()


@pytest.mark.parametrize(
    "name", ["sample_table/cow/v6_nonpartitioned", "sample_table/cow/v8_simplekeygen_nonhivestyle"]
)
def test_filters_on_every_plain_type(spark, name: str, table_path) -> None:
    case_typed_filters(spark, str(table_path(name)))


def test_every_slice_through_ray(spark, table_path) -> None:
    case_no_spark_scan(spark, str(table_path("sample_table/mor/avro/v9_txns_simple_meta")))
