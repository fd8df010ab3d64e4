"""Spark through RayDP: DataFrames equal the table API's rows and types."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal

import pyarrow as pa
import pytest

import hudi_ray
from hudi_ray.spark import init_spark, java_version, read_hudi_spark, stop_spark

from ray_fixtures import ray_session  # noqa: F401

pytest.importorskip("raydp")
pytestmark = pytest.mark.skipif(java_version() is None, reason="the Spark bridge needs Java 17")

TABLES = [
    "sample_table/cow/v6_nonpartitioned",  # nested types, decimal, date, timestamp, binary, map
    "sample_table/cow/v9_txns_simple_meta",
    "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
]


@pytest.fixture(scope="module")
def spark(ray_session) -> Iterator[object]:
    session = init_spark(app_name="hudi-ray-tests", executor_memory="700M")
    yield session
    stop_spark()


def _plain(value: object) -> object:
    """Spark Row values in the shape pyarrow's to_pylist gives."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return sorted((k, _plain(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    return value


def _arrow_plain(value: object) -> object:
    if isinstance(value, dict):
        return {k: _arrow_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        if value and isinstance(value[0], tuple):  # map entries
            return sorted((k, _arrow_plain(v)) for k, v in value)
        return [_arrow_plain(v) for v in value]
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def _key(row: dict) -> str:
    return repr(sorted(row.items()))


@pytest.mark.parametrize("name", TABLES)
def test_dataframe_equals_table_api(spark, name: str, table_path) -> None:
    path = str(table_path(name))
    expected = pa.Table.from_batches(hudi_ray.HudiTableBuilder.from_base_uri(path).build().read())
    df = read_hudi_spark(spark, path)
    # Types carry over: decimals stay decimals, timestamps stay timestamps, nesting stays.
    spark_types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    for field in expected.schema:
        if pa.types.is_decimal(field.type):
            assert spark_types[field.name] == f"decimal({field.type.precision},{field.type.scale})"
        elif pa.types.is_timestamp(field.type):
            assert spark_types[field.name] == "timestamp"
        elif pa.types.is_date32(field.type):
            assert spark_types[field.name] == "date"
        elif pa.types.is_struct(field.type):
            assert spark_types[field.name].startswith("struct<")
        elif pa.types.is_list(field.type):
            assert spark_types[field.name].startswith("array<")
        elif pa.types.is_map(field.type):
            assert spark_types[field.name].startswith("map<")
    got = sorted(({k: _plain(v) for k, v in r.asDict().items()} for r in df.collect()), key=_key)
    want = sorted((_arrow_plain(r) for r in expected.to_pylist()), key=_key)
    assert got == want


def test_filters_and_spark_sql(spark, table_path) -> None:
    path = str(table_path("sample_table/cow/v9_txns_simple_meta"))
    df = read_hudi_spark(spark, path, filters=[("region", "=", "us")], columns=["txn_id", "amount", "region"])
    df.createOrReplaceTempView("txns")
    total = spark.sql("SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM txns GROUP BY region").collect()
    assert [(r["region"], r["n"]) for r in total] == [("us", 5)]
    assert isinstance(total[0]["total"], Decimal)
