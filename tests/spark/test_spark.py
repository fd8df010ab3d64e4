"""Spark through RayDP: DataFrames equal the table API's rows and types, read by
Spark's JVM from Arrow IPC streams in Ray's object store (never through pandas).
``read_hudi_spark``'s own cases (Spark scanning base files) are in
``test_read_hudi_spark.py``."""

from __future__ import annotations

import gc
from decimal import Decimal

import pyarrow as pa
import pytest
import ray

import hudi_ray
from hudi_ray.core.exceptions import HudiTableNotFoundError, HudiUnsupportedError
from hudi_ray.spark import handoffs, java_version, read_hudi_spark, release, to_spark
from hudi_ray.spark import session as spark_session
from tests.spark_rows import arrow_rows, spark_rows
from tests.support import numbered_rows, write_numbered_table

pytest.importorskip("raydp")
pytestmark = pytest.mark.skipif(java_version() is None, reason="the Spark bridge needs Java 17")

TABLES = [
    "sample_table/cow/v6_nonpartitioned",  # nested types, decimal, date, timestamp, binary, map
    "sample_table/cow/v8_simplekeygen_nonhivestyle",  # arrays of structs, maps of structs, nested structs
    "sample_table/cow/v9_txns_simple_meta",
    "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
    "sample_table/mor/parquet/v6_complexkeygen_hivestyle",  # merge-on-read with nested types and maps
    "sample_table/cow/v9_lance_nonpartitioned",  # Lance base files, an array column
]


def _executed_plan(df: object) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("name", TABLES)
def test_dataframe_equals_table_api(spark, name: str, table_path) -> None:
    path = str(table_path(name))
    expected = pa.Table.from_batches(hudi_ray.HudiTableBuilder.from_base_uri(path).build().read())
    df = to_spark(hudi_ray.read_hudi(path), spark)
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
    assert spark_rows(df) == arrow_rows(expected)
    # Spark's JVM reads the Arrow streams itself: no Python worker, no pandas.
    plan = _executed_plan(df)
    assert "Scan ExistingRDD" in plan
    assert "MapInPandas" not in plan and "Python" not in plan


def test_filters_and_spark_sql(spark, table_path) -> None:
    path = str(table_path("sample_table/cow/v9_txns_simple_meta"))
    df = read_hudi_spark(spark, path, filters=[("region", "=", "us")], columns=["txn_id", "amount", "region"])
    df.createOrReplaceTempView("txns")
    total = spark.sql("SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM txns GROUP BY region").collect()
    assert [(r["region"], r["n"]) for r in total] == [("us", 5)]
    assert isinstance(total[0]["total"], Decimal)


def test_empty_table(spark, table_path) -> None:
    path = str(table_path("sample_table/cow/v8_empty"))
    df = read_hudi_spark(spark, path)
    assert df.count() == 0
    assert df.rdd.getNumPartitions() == 0


def test_dataframe_outlives_every_python_reference(spark, table_path) -> None:
    """The streams stay in the object store while the DataFrame is usable, however
    many actions run on it and on DataFrames derived from it."""
    path = str(table_path("sample_table/cow/v8_simplekeygen_nonhivestyle"))
    expected = arrow_rows(pa.Table.from_batches(hudi_ray.HudiTableBuilder.from_base_uri(path).build().read()))
    ds = hudi_ray.read_hudi(path)
    df = to_spark(ds, spark)
    derived = df.select("*")
    del ds, df
    gc.collect()
    assert derived.count() == len(expected)
    assert spark_rows(derived) == expected
    cached = derived.cache()
    assert cached.count() == len(expected)
    cached.unpersist()
    joined = derived.alias("a").join(derived.alias("b"), "_hoodie_record_key")
    assert joined.count() == len(expected)


def test_any_dataset_and_release(spark) -> None:
    """Datasets that are not a plain read_hudi go through block conversion tasks;
    ``release`` drops the driver's hold on a DataFrame's data."""
    source = ray.data.from_arrow(numbered_rows(0, 5_000)).map_batches(
        lambda t: t.append_column("double", pa.compute.multiply(t["value"], 2)), batch_format="pyarrow"
    )
    df = to_spark(source, spark, partition_bytes=1 << 20)
    rows = df.orderBy("id").collect()
    assert [r["id"] for r in rows] == list(range(5_000))
    assert all(r["double"] == r["value"] * 2 for r in rows)
    held = {h.handoff_id for h in handoffs()}
    assert df._hudi_ray_handoff_id in held
    assert release(df) is True
    assert release(df) is False
    assert df._hudi_ray_handoff_id not in {h.handoff_id for h in handoffs()}


def test_partitions_follow_the_plan(spark, tmp_path) -> None:
    """A few hundred thousand rows arrive in a handful of partitions sized by the
    planner's estimates, never one tiny task per Ray block."""
    path = write_numbered_table(tmp_path / "numbered", rows=300_000, rows_per_file=10_000)
    # Every slice through Ray's reader tasks: Spark would scan these base files itself.
    df = read_hudi_spark(spark, str(path), spark_scan="never")
    assert 1 <= df.rdd.getNumPartitions() <= 4
    assert df.count() == 300_000
    # Smaller partitions when asked for, still whole file slices (30 of them).
    small = read_hudi_spark(spark, str(path), partition_bytes=1 << 20, spark_scan="never")
    assert 4 < small.rdd.getNumPartitions() <= 30
    assert small.count() == 300_000
    exact = read_hudi_spark(spark, str(path), override_num_blocks=3, spark_scan="never")
    assert exact.rdd.getNumPartitions() == 3
    assert exact.agg({"id": "sum"}).collect()[0][0] == sum(range(300_000))


def test_ray_data_leaves_spark_its_cpus(spark) -> None:
    """While Spark is up, Ray Data plans reads for the CPUs its executors leave free."""
    excluded = ray.data.DataContext.get_current().execution_options.exclude_resources
    assert excluded.cpu >= spark_session.held_cpus() == 1


def test_missing_table_is_a_hudi_error(spark, tmp_path) -> None:
    missing = tmp_path / "no_such_table"
    with pytest.raises(HudiTableNotFoundError, match="no_such_table"):
        read_hudi_spark(spark, str(missing))


@pytest.mark.parametrize(
    ("line", "ok"),
    [
        (None, False),
        ('java version "1.8.0_392"', False),
        ('openjdk version "11.0.21" 2023-10-17', False),
        ('openjdk version "17.0.15" 2025-04-15', True),
        ('openjdk version "21" 2023-09-19', True),
    ],
)
def test_java_check(monkeypatch, line: str | None, ok: bool) -> None:
    monkeypatch.setattr(spark_session, "java_version", lambda: line)
    if ok:
        spark_session.require_java()
    else:
        with pytest.raises(HudiUnsupportedError, match="Java 17"):
            spark_session.require_java()
