"""spark.read.format("hudi_ray") on PySpark 4: DataFrames equal the table API's
rows and types, pushdown never changes results, a DataFrame stays pinned to the
table state it was made on, and bad reads fail with the project's errors."""

from __future__ import annotations

import datetime as dt
import importlib.machinery
import json
import sys
import types
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import hudi_ray
from hudi_ray.core.exceptions import HudiUnsupportedError
from hudi_ray.spark4 import PUSHDOWN_CONF, pyspark_version, require_pyspark4
from tests.spark4.support import arrow_rows, assert_types, spark_rows
from tests.support import all_table_names, numbered_rows, write_numbered_table

# Lance base files need pylance, which the Spark 4 environment does not install.
TABLES = [n for n in all_table_names() if "lance" not in n]


def _api(path: str | Path, options: hudi_ray.HudiReadOptions | None = None) -> pa.Table:
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    batches = table.read(options)
    if batches:
        return pa.Table.from_batches(batches)
    return pa.Table.from_pylist([])


def _load(spark: Any, path: str | Path, **options: str) -> Any:
    reader = spark.read.format("hudi_ray")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


def _instants(path: str | Path) -> list[Any]:
    return hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build().get_timeline().data_instants


@pytest.mark.parametrize("name", TABLES)
def test_snapshot_equals_table_api(spark, table_path, name: str) -> None:
    path = table_path(name)
    expected = _api(path)
    df = _load(spark, path)
    if expected.num_columns:
        assert_types(df, expected.schema)
    rows = spark_rows(df)
    assert len(rows) == expected.num_rows
    assert rows == arrow_rows(expected)


def test_types_of_nested_and_logical_columns(spark, table_path) -> None:
    df = _load(spark, table_path("sample_table/cow/v6_nonpartitioned"))
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types["decimalField"] == "decimal(10,5)"
    assert types["dateField"] == "date"
    assert types["timestampField"] == "timestamp"
    assert types["binaryField"] == "binary"
    assert types["arrayField"] == "array<struct<arr_struct_f1:string,arr_struct_f2:int>>"
    assert types["mapField"].startswith("map<string,struct<map_field_value_struct_f1:double")
    assert types["structField"].startswith("struct<field1:string,field2:int,child_struct:struct<")
    row = df.filter("id = 2").collect()[0]
    assert row["decimalField"] == Decimal("67890.12345")
    assert row["dateField"] == dt.date(2023, 4, 2)
    assert row["binaryField"] == bytearray(b"more binary data")
    assert row["structField"]["child_struct"]["child_field1"] == 789.012


@pytest.mark.parametrize(
    "name",
    [
        "sample_table/cow/v9_txns_simple_meta",
        "sample_table/mor/avro/v9_txns_simple_nometa",
        "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
    ],
)
def test_time_travel(spark, table_path, name: str) -> None:
    path = table_path(name)
    instants = _instants(path)
    assert len(instants) >= 2
    for instant in (instants[0], instants[len(instants) // 2]):
        expected = _api(path, hudi_ray.HudiReadOptions().with_as_of_timestamp(instant.timestamp))
        df = _load(spark, path, as_of_timestamp=instant.timestamp)
        assert spark_rows(df) == arrow_rows(expected)
    # Before the latest commit the table looked different.
    assert spark_rows(_load(spark, path, as_of_timestamp=instants[0].timestamp)) != arrow_rows(_api(path))


@pytest.mark.parametrize(
    "name",
    [
        "sample_table/cow/v9_txns_simple_meta",
        "sample_table/mor/avro/v9_txns_simple_nometa",
        "quickstart_trips_table/mor/avro/v6_trips_8i1u",
    ],
)
def test_incremental(spark, table_path, name: str) -> None:
    path = table_path(name)
    instants = _instants(path)
    start = instants[0].completed_at
    end = instants[-1].completed_at
    options = (
        hudi_ray.HudiReadOptions().with_query_type("incremental").with_start_timestamp(start).with_end_timestamp(end)
    )
    expected = _api(path, options)
    df = _load(spark, path, query_type="incremental", start_timestamp=start, end_timestamp=end)
    assert expected.num_rows > 0
    assert spark_rows(df) == arrow_rows(expected)
    # Without an end, the read ends at the newest commit as of load().
    open_ended = _load(spark, path, query_type="incremental", start_timestamp=start)
    assert spark_rows(open_ended) == arrow_rows(expected)


def test_read_optimized_and_columns(spark, table_path) -> None:
    path = table_path("quickstart_trips_table/mor/avro/v6_trips_8i1u")
    ro = hudi_ray.HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "true"})
    expected = _api(path, ro)
    df = _load(spark, path, read_optimized="true")
    assert spark_rows(df) == arrow_rows(expected)
    assert spark_rows(df) != arrow_rows(_api(path))  # the log files change rows
    same = _load(spark, path, **{"hoodie.read.use.read_optimized.mode": "true"})
    assert spark_rows(same) == arrow_rows(expected)

    path = table_path("sample_table/mor/avro/v9_txns_simple_nometa")
    columns = _load(spark, path, columns="txn_id,amount", batch_size="2")
    assert columns.columns == ["txn_id", "amount"]
    assert spark_rows(columns) == arrow_rows(_api(path).select(["txn_id", "amount"]))


FILTERED = [
    ("sample_table/cow/v9_txns_simple_meta", "region = 'us'"),
    ("sample_table/cow/v9_txns_simple_meta", "amount >= 100 AND currency IN ('USD', 'EUR')"),
    ("sample_table/cow/v9_txns_simple_meta", "txn_date < DATE '2024-01-17' OR region = 'eu'"),
    ("sample_table/cow/v9_txns_simple_meta", "txn_datetime > TIMESTAMP '2024-03-01 00:00:00'"),
    ("sample_table/mor/avro/v9_txns_simple_meta", "region <> 'us' AND is_international"),
    ("sample_table/mor/avro/v9_txns_simple_meta", "fee_amount IS NULL OR fee_amount <= 1.5"),
    ("sample_table/cow/v6_nonpartitioned", "doubleField > 2.0 AND floatField <= 3.0"),
    ("sample_table/cow/v6_nonpartitioned", "byteField = 0 AND name LIKE 'B%'"),
    ("sample_table/cow/v6_nonpartitioned", "timestampField <= TIMESTAMP '2023-04-02 18:02:00' AND id IN (1, 2, 3)"),
    ("sample_table/mor/parquet/v6_complexkeygen_hivestyle", "shortField = 300 AND NOT (id = 1)"),
]


@pytest.mark.parametrize(("name", "where"), FILTERED)
def test_filters_with_and_without_pushdown(spark, table_path, name: str, where: str) -> None:
    path = table_path(name)
    everything = _load(spark, path)
    # The expected rows: every row of the table API's read, filtered by Spark itself.
    expected = spark.createDataFrame(everything.collect(), everything.schema).filter(where)
    want = spark_rows(expected)
    try:
        spark.conf.set(PUSHDOWN_CONF, "false")
        off = spark_rows(_load(spark, path).filter(where))
        spark.conf.set(PUSHDOWN_CONF, "true")
        on = spark_rows(_load(spark, path).filter(where))
    finally:
        spark.conf.set(PUSHDOWN_CONF, "true")
    assert off == want
    assert on == want
    assert len(want) < everything.count() or not want


def _scan_filter(df: Any) -> str:
    """The filter Spark still applies above the scan (empty when all was pushed)."""
    plan = df._jdf.queryExecution().executedPlan().toString()
    return "\n".join(line for line in plan.splitlines() if "Filter" in line)


def test_pushdown_prunes_files(spark, tmp_path) -> None:
    """Pushed filters reach Hudi's planning: fewer file slices, fewer partitions."""
    if pyspark_version() < (4, 1):
        pytest.skip("pushFilters arrived in PySpark 4.1")
    path = write_numbered_table(tmp_path / "numbered", rows=6_000, rows_per_file=500, partitioned=True)
    opts = {"partition_bytes": "1"}  # one file slice per partition, to count slices
    everything = _load(spark, path, **opts)
    assert everything.rdd.getNumPartitions() == 12
    region = everything.filter("region = 'us'")
    assert region.rdd.getNumPartitions() == 6
    assert "= us" not in _scan_filter(region)  # pushed: only Spark's own isnotnull(region) is left
    ids = everything.filter("id >= 5500 AND region = 'eu'")
    assert ids.rdd.getNumPartitions() == 1  # footer stats prune by id range
    assert sorted(r["id"] for r in ids.collect()) == list(range(5501, 6000, 2))
    # Not exact in Hudi filters: left to Spark (and still correct).
    kept = everything.filter("name LIKE 'name-1%' AND value IS NOT NULL")
    assert "name" in _scan_filter(kept)
    assert kept.count() == sum(1 for i in range(6_000) if str(i).startswith("1"))
    try:
        spark.conf.set(PUSHDOWN_CONF, "false")
        off = _load(spark, path, **opts).filter("region = 'us'")
        assert off.rdd.getNumPartitions() == 12
        assert "= us" in _scan_filter(off)
        assert off.count() == 3_000
    finally:
        spark.conf.set(PUSHDOWN_CONF, "true")


def test_only_the_pushdown_worker_gets_a_reader_taking_filters(monkeypatch) -> None:
    """PySpark asks for filters in a worker of its own module; a reader taking
    them anywhere else fails while pushdown is off."""
    from hudi_ray.spark4 import source

    assert not source.in_pushdown_worker()  # this test process serves no PySpark worker
    worker = "pyspark.sql.worker.data_source_pushdown_filters"
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, worker, types.ModuleType(worker))  # as PySpark's worker daemon imports it
        assert source.in_pushdown_worker()
    main = types.ModuleType("__main__")
    main.__spec__ = importlib.machinery.ModuleSpec(worker, None)  # as python -m runs it without the daemon
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert source.in_pushdown_worker()


def test_partitions_balanced_by_estimated_size(spark, tmp_path) -> None:
    path = write_numbered_table(tmp_path / "numbered", rows=20_000, rows_per_file=1_000)
    exact = _load(spark, path, num_partitions="3")
    assert exact.rdd.getNumPartitions() == 3
    sizes = exact.rdd.mapPartitions(lambda rows: [sum(1 for _ in rows)]).collect()
    assert sum(sizes) == 20_000 and max(sizes) - min(sizes) <= 1_000
    assert _load(spark, path, **{"hoodie.read.input.partitions": "4"}).rdd.getNumPartitions() == 4
    one = _load(spark, path, min_partitions="1")
    assert one.rdd.getNumPartitions() == 1
    assert one.agg({"id": "sum"}).collect()[0][0] == sum(range(20_000))


def test_dataframe_is_pinned_to_its_planning_instant(spark, tmp_path) -> None:
    from hudi_testkit import upsert_cow_table

    path = write_numbered_table(tmp_path / "numbered", rows=1_000, rows_per_file=250)
    before = _api(path)
    df = _load(spark, path)
    incremental = _load(spark, path, query_type="incremental", start_timestamp="0")
    upsert_cow_table(path, numbered_rows(900, 200))  # updates 900..999, inserts 1000..1099
    assert _api(path).num_rows == 1_100
    assert df.count() == 1_000
    assert spark_rows(df) == arrow_rows(before)
    assert incremental.count() == 1_000
    assert _load(spark, path).count() == 1_100  # a new DataFrame sees the commit


def test_commit_in_flight_at_load_stays_invisible(spark, tmp_path) -> None:
    from hudi_testkit import upsert_cow_table

    path = write_numbered_table(tmp_path / "numbered", rows=300, rows_per_file=100)
    b = upsert_cow_table(path, numbered_rows(300, 100)).instant_time
    upsert_cow_table(path, numbered_rows(400, 100))
    # B back in flight while C, started after it, is complete: the pinned
    # instant (C's) is newer than B, so only the load-time timeline hides B.
    (done,) = (path / ".hoodie").glob(f"{b}.commit")
    aside = done.rename(tmp_path / done.name)
    before = _api(path)
    df = _load(spark, path)
    incremental = _load(spark, path, query_type="incremental", start_timestamp="0")
    aside.rename(done)  # B completes
    assert _api(path).num_rows == 500
    assert sorted(r["id"] for r in df.select("id").collect()) == [*range(300), *range(400, 500)]
    assert spark_rows(df) == arrow_rows(before)
    assert incremental.count() == 400
    assert _load(spark, path).count() == 500  # a new DataFrame sees B


def test_empty_table(spark, table_path) -> None:
    df = _load(spark, table_path("sample_table/cow/v8_empty"))
    assert df.count() == 0
    assert df.collect() == []


def _error(exc: pytest.ExceptionInfo[BaseException]) -> str:
    return str(exc.value)


def test_missing_table(spark, tmp_path) -> None:
    with pytest.raises(Exception, match="HudiTableNotFoundError") as exc:
        _load(spark, tmp_path / "no_such_table")
    assert "no_such_table" in _error(exc)


def test_bad_options(spark, table_path) -> None:
    path = table_path("sample_table/cow/v9_txns_simple_meta")
    with pytest.raises(Exception, match=r"HudiConfigError.*Unknown option\(s\) \['batchsize'\]"):
        _load(spark, path, batchSize="10")
    with pytest.raises(Exception, match=r"HudiConfigError.*batch_size must be an integer > 0"):
        _load(spark, path, batch_size="0")
    with pytest.raises(Exception, match=r"HudiConfigError.*incremental"):
        _load(spark, path, start_timestamp="0")
    with pytest.raises(Exception, match="HudiTimestampError"):
        _load(spark, path, as_of_timestamp="yesterday")
    with pytest.raises(Exception, match=r"HudiConfigError.*query"):
        _load(spark, path, query_type="streaming")


def test_unknown_columns(spark, table_path) -> None:
    path = table_path("sample_table/cow/v9_txns_simple_meta")
    with pytest.raises(Exception, match=r"HudiSchemaError.*\['nope'\]"):
        _load(spark, path, columns="txn_id,nope")
    with pytest.raises(Exception, match=r"HudiFilterError.*'nope'"):
        _load(spark, path, filters=json.dumps([["nope", "=", "1"]])).collect()
    with pytest.raises(Exception, match=r"HudiSchemaError.*\['nope'\]"):
        spark.read.format("hudi_ray").schema("txn_id STRING, nope INT").load(str(path)).collect()
    with pytest.raises(Exception, match="nope"):  # Spark's own analysis error
        _load(spark, path).select("nope")


def test_filters_option(spark, table_path) -> None:
    path = table_path("sample_table/cow/v9_txns_simple_meta")
    filters = [["region", "=", "us"], ["currency", "IN", "USD,EUR"]]
    expected = _api(path, hudi_ray.HudiReadOptions(filters=[tuple(f) for f in filters]))
    assert spark_rows(_load(spark, path, filters=json.dumps(filters))) == arrow_rows(expected)


def test_credentials_never_shown(spark, tmp_path) -> None:
    secret = "s3cr3t-value-never-shown"
    with pytest.raises(Exception) as exc:
        _load(spark, tmp_path / "missing", storage_options=json.dumps({"aws_secret_access_key": secret}))
    assert "HudiTableNotFoundError" in _error(exc)
    assert secret not in _error(exc)
    with pytest.raises(Exception) as exc:
        _load(spark, tmp_path / "missing", storage_options="{not json " + secret)
    assert "HudiConfigError" in _error(exc)
    assert secret not in _error(exc)


def test_old_pyspark_is_refused(monkeypatch) -> None:
    import pyspark

    assert require_pyspark4() >= (4, 0)
    monkeypatch.setattr(pyspark, "__version__", "3.5.6")
    with pytest.raises(HudiUnsupportedError, match=r"pyspark 4\.0 or newer"):
        require_pyspark4()
