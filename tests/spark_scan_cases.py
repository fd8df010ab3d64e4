"""``read_hudi_spark`` on any SparkSession: the tests both Spark environments collect
(``tests/spark/test_read_hudi_spark.py``: a RayDP session on PySpark 3.5;
``tests/spark4/test_read_hudi_spark.py``: a plain PySpark 4 session without Ray), each
on its own ``spark`` fixture. Each compares the DataFrame with the table API's read of the
same table and options: rows, column names, Spark types and nullability."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hudi_ray
from hudi_ray.spark import read_hudi_spark
from hudi_ray.spark_types import spark_arrow_schema, spark_schema
from tests.spark_rows import arrow_rows, spark_rows
from tests.support import all_table_names

READ_OPTIMIZED = "hoodie.read.use.read_optimized.mode"
# Every real table but those with Lance base files (Spark has no Lance reader; those
# go through hudi-ray's reader, as the RayDP bridge test covers) and empty ones.
PARQUET_TABLES = [n for n in all_table_names() if "lance" not in n and not n.endswith("_empty")]
# What a RayDP session does differently from a plain one is how slices with log
# files reach Spark (Ray's hand-off, not mapInArrow); Spark's scan of base files
# is the same on both, and the plain session reads every table. So RayDP reads
# every merge-on-read table and a copy-on-write one of each table version.
HANDOFF_TABLES = [n for n in PARQUET_TABLES if "/mor/" in n] + [
    "sample_table/cow/v6_complexkeygen_hivestyle",
    "sample_table/cow/v8_simplekeygen_nonhivestyle",
    "sample_table/cow/v9_txns_simple_meta",
]


def expected(path: str, **options: Any) -> pa.Table:
    """The table API's read with ``read_hudi_spark``'s options."""
    table = hudi_ray.HudiTableBuilder.from_base_uri(path).build()
    read = hudi_ray.HudiReadOptions(
        filters=options.get("filters") or [], projection=options.get("columns"), hudi_options=options.get("hudi", {})
    )
    if options.get("query_type") == "incremental":
        read = read.with_query_type("incremental").with_start_timestamp(options["start_timestamp"])
    if options.get("as_of_timestamp"):
        read = read.with_as_of_timestamp(options["as_of_timestamp"])
    schema = table.get_read_schema()
    if options.get("columns"):
        schema = pa.schema([schema.field(c) for c in options["columns"]])
    return pa.Table.from_batches(list(table.read(read)), schema=schema)


def read(spark: Any, path: str, **options: Any) -> Any:
    hudi = options.pop("hudi", None)
    return read_hudi_spark(spark, path, hudi_options=hudi, **options)


def assert_same(spark: Any, path: str, **options: Any) -> Any:
    """The DataFrame equals the table API's read: rows, names, types, nullability."""
    want = expected(path, **dict(options))
    df = read(spark, path, **options)
    assert df.schema == spark_schema(spark_arrow_schema(want.schema)), (df.schema, want.schema)
    assert spark_rows(df) == arrow_rows(want)
    return df


def executed(df: Any) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def scans(df: Any) -> tuple[bool, bool]:
    """(Spark's Parquet reader scans files, hudi-ray's reader reads slices)."""
    plan = executed(df)
    return "FileScan parquet" in plan, "Scan ExistingRDD" in plan or "MapInArrow" in plan


def instants(path: str) -> list[str]:
    timeline = hudi_ray.HudiTableBuilder.from_base_uri(path).build().get_timeline()
    return [i.timestamp for i in timeline.get_completed_commits()]


def a_filter(path: str) -> tuple[str, str, str]:
    """An equality filter on a data column, with a value some rows hold."""
    table = expected(path)
    for field in table.schema:
        if field.name.startswith("_hoodie") or not pa.types.is_string(field.type):
            continue
        values = [v for v in table.column(field.name).to_pylist() if v is not None]
        if values:
            return (field.name, "=", sorted(values)[len(values) // 2])
    raise AssertionError(f"{path} has no string column with values")


# -- tables written here ----------------------------------------------------------------


def evolved_table(tmp: Path) -> Path:
    """A COW table whose files differ from its schema: some lack ``name`` (a column
    added later), some hold ``value`` as int32 (a type promoted later). Its path holds
    characters Spark's reader would take as a glob."""
    from hudi_testkit import write_cow_table

    rows = pa.table(
        {
            "id": pa.array(range(600), pa.int64()),
            "value": pa.array([i * 10 for i in range(600)], pa.int64()),
            "name": pa.array([f"name-{i}" for i in range(600)]),
            "region": pa.array(["us" if i % 2 == 0 else "eu" for i in range(600)]),
        }
    )
    path = tmp / "glob [a]{b}*" / "evolved"
    write_cow_table(
        path,
        rows,
        table_name="evolved",
        record_key="id",
        partition_field=None,
        precombine_field="value",
        rows_per_file=100,
    )
    files = sorted(path.rglob("*.parquet"))
    pq.write_table(pq.read_table(files[0]).drop_columns(["name"]), files[0])
    promoted = pq.read_table(files[1])
    at = promoted.schema.get_field_index("value")
    pq.write_table(promoted.set_column(at, "value", promoted["value"].cast(pa.int32())), files[1])
    return path


def float_table(tmp: Path) -> Path:
    """A COW table with NaN, nulls and numbers in a double column, for filters
    whose Arrow and Spark semantics differ."""
    from hudi_testkit import write_cow_table

    # -0.0 equals 0 for Arrow, but Parquet's dictionary filter tells them apart.
    values = [float("nan"), None, 1.5, -2.0, 0.0, float("inf"), 3.25, float("nan"), None, 7.0, -0.0, -float("nan")]
    rows = pa.table(
        {
            "id": pa.array(range(len(values)), pa.int64()),
            "x": pa.array(values, pa.float64()),
            "s": pa.array([None if i % 4 == 0 else f"s{i}" for i in range(len(values))]),
        }
    )
    path = tmp / "floats"
    write_cow_table(path, rows, table_name="floats", record_key="id", partition_field=None, rows_per_file=4)
    return path


FLOAT_FILTERS = [[("x", op, v)] for op in ("=", "!=", "<", "<=", ">", ">=") for v in ("1.5", "NaN", "0", "inf")] + [
    [("x", "IN", "1.5,NaN")],
    [("x", "NOT IN", "1.5,NaN")],
    [("x", "NOT IN", "7")],
    [("x", "IN", "0")],
    [("x", "NOT IN", "0,-0")],
    [("x", "<=", "-0")],
    [("x", ">", "-0")],
    [("s", "NOT IN", "s1,s2")],
    [("s", "IN", "s1,s5")],
    [("s", "!=", "s3")],
]


# -- the cases ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", PARQUET_TABLES)
def test_every_table_equals_the_table_api(spark: Any, name: str, table_path: Any) -> None:
    """Snapshot, filtered and projected, read-optimized, time travel and incremental reads."""
    equals_the_table_api(spark, str(table_path(name)))


@pytest.mark.parametrize("name", HANDOFF_TABLES)
def test_handoff_tables_equal_the_table_api(spark: Any, name: str, table_path: Any) -> None:
    """``test_every_table_equals_the_table_api`` on ``HANDOFF_TABLES``."""
    equals_the_table_api(spark, str(table_path(name)))


def equals_the_table_api(spark: Any, path: str) -> None:
    table = hudi_ray.HudiTableBuilder.from_base_uri(path).build()
    slices = table.get_file_slices()
    df = assert_same(spark, path)
    spark_scans, _ = scans(df)
    assert spark_scans == any(not s.log_file_names for s in slices), executed(df)
    field, op, value = a_filter(path)
    data = [c for c in expected(path).schema.names if not c.startswith("_hoodie")]
    other = next(c for c in data if c != field)
    assert_same(spark, path, filters=[(field, op, value)], columns=[other, field])
    assert_same(
        spark,
        path,
        columns=["_hoodie_commit_time", data[-1]] if "_hoodie_commit_time" in expected(path).schema.names else data[:2],
    )
    if any(s.log_file_names for s in slices):
        optimized = assert_same(spark, path, hudi={READ_OPTIMIZED: "true"})
        assert scans(optimized) == (True, False), executed(optimized)
    times = instants(path)
    if len(times) > 1:
        assert_same(spark, path, as_of_timestamp=times[len(times) // 2])
        assert_same(spark, path, query_type="incremental", start_timestamp=times[0])


def test_files_unlike_the_schema(spark: Any, tmp_path: Path) -> None:
    """Files lacking a column or holding it in another type go through hudi-ray's
    reader; the others through Spark's; together they equal the table API."""
    path = str(evolved_table(tmp_path))
    df = assert_same(spark, path)
    assert scans(df) == (True, True), executed(df)
    assert_same(spark, path, filters=[("value", ">=", "500")], columns=["id", "name"])


def test_filters_with_nan_and_nulls(spark: Any, tmp_path: Path) -> None:
    """Filters keep the rows the table API keeps, NaN and nulls included."""
    path = str(float_table(tmp_path))
    for filters in FLOAT_FILTERS:
        df = assert_same(spark, path, filters=filters)
        # Arrow's IN matches floats by their bits (-0.0 is not in [0]): left to hudi-ray.
        by_bits = filters[0][0] == "x" and filters[0][1] in ("IN", "NOT IN")
        if expected(path, filters=filters).num_rows:
            assert scans(df) == (not by_bits, by_bits), (filters, executed(df))


def test_every_slice_through_hudi_ray(spark: Any, table_path: Any) -> None:
    path = str(table_path("sample_table/mor/avro/v9_txns_simple_meta"))
    df = assert_same(spark, path, spark_scan="never")
    assert scans(df) == (False, True), executed(df)


def test_filters_on_every_plain_type(spark: Any, table_path: Any) -> None:
    """Filters on a column of each plain type (numbers, decimals, dates, timestamps,
    text, binary, booleans) keep the rows the table API keeps. The second table
    (another version, partitioned) is tried on the types the first lacks, and on
    its partition column: each filter is a Spark job of its own."""
    types: set[pa.DataType] = set()
    first = _filters_on_every_plain_type(spark, str(table_path("sample_table/cow/v6_nonpartitioned")), types)
    assert first >= 3, f"only {first} columns of plain types"
    second = _filters_on_every_plain_type(
        spark, str(table_path("sample_table/cow/v8_simplekeygen_nonhivestyle")), types
    )
    assert second >= 1, "the partitioned table's partition column was not tried"


def _filters_on_every_plain_type(spark: Any, path: str, types: set[pa.DataType]) -> int:
    table = expected(path)
    partition_fields = set(hudi_ray.HudiTableBuilder.from_base_uri(path).build().get_partition_schema().names)
    tried = 0
    for field in table.schema:
        if field.type in types and field.name not in partition_fields:
            continue
        plain = (
            pa.types.is_integer(field.type)
            or pa.types.is_floating(field.type)
            or pa.types.is_decimal(field.type)
            or (pa.types.is_temporal(field.type) and not pa.types.is_time(field.type))
            or pa.types.is_string(field.type)
            or pa.types.is_binary(field.type)
            or pa.types.is_boolean(field.type)
        )
        if not plain or field.name.startswith("_hoodie"):
            continue
        column = table.column(field.name).drop_null()
        if pa.types.is_binary(field.type):
            texts = [v.decode("utf-8", "replace") for v in column.to_pylist()]
        else:
            texts = column.cast(pa.string()).to_pylist()
        if not texts:
            continue
        texts = sorted(set(texts))
        middle, other = texts[len(texts) // 2], texts[0]
        for op, value in (("=", middle), ("<", middle), (">=", middle), ("!=", middle)):
            assert_same(spark, path, filters=[(field.name, op, value)])
        if "," not in middle + other:
            assert_same(spark, path, filters=[(field.name, "IN", f"{middle},{other}")])
            assert_same(spark, path, filters=[(field.name, "NOT IN", f"{middle},{other}")])
        types.add(field.type)
        tried += 1
    return tried


def old_dates_table(tmp: Path) -> Path:
    """Dates and timestamps before the Gregorian switch (1582) and 1900, which Spark
    refuses or shifts unless told to read them as written; one file marked as Spark 2
    wrote it (its values Julian), which only hudi-ray reads as the table API does."""
    from hudi_testkit import write_cow_table

    days = [dt.date(1, 1, 1), dt.date(1500, 6, 1), dt.date(1899, 12, 31), dt.date(2024, 2, 29)] * 3
    rows = pa.table(
        {
            "id": pa.array(range(len(days)), pa.int64()),
            "day": pa.array(days, pa.date32()),
            # PySpark cannot hand timestamps of the first centuries to Python: from 1000 on.
            "at": pa.array(
                [dt.datetime(max(d.year, 1000), d.month, d.day, 12, 30, tzinfo=dt.timezone.utc) for d in days],
                pa.timestamp("us", tz="UTC"),
            ),
        }
    )
    path = tmp / "old_dates"
    write_cow_table(path, rows, table_name="old_dates", record_key="id", partition_field=None, rows_per_file=4)
    marked = sorted(path.rglob("*.parquet"))[0]
    data = pq.read_table(marked)
    legacy = {**(data.schema.metadata or {}), b"org.apache.spark.version": b"2.4.8"}
    pq.write_table(data.replace_schema_metadata(legacy), marked)
    return path


def test_dates_before_the_gregorian_switch(spark: Any, tmp_path: Path) -> None:
    path = str(old_dates_table(tmp_path))
    df = assert_same(spark, path)
    assert scans(df) == (True, True), executed(df)
    assert_same(spark, path, filters=[("day", "<", "1582-10-15")])


def test_roots_hadoop_would_misread() -> None:
    """Roots whose URIs Hadoop reads as other places get no Spark scan."""
    from types import SimpleNamespace

    from hudi_ray.spark.scan import _spark_prefix

    for protocol, root in (
        ("https", "https://user:secret@host/table"),
        ("webhdfs", "host:9870/table"),
        ("hdfs", "user@namenode/table"),
        ("abfs", "container/table"),
    ):
        storage = SimpleNamespace(protocol=protocol, root=root, relative=lambda rel: rel)
        assert _spark_prefix(None, storage) is None, protocol
    local = SimpleNamespace(protocol="file", root="/data/t [1]", relative=lambda rel: rel)
    prefix = _spark_prefix(None, local)
    assert prefix is not None and prefix("p/f.parquet") == "file:///data/t \\[1\\]/p/f.parquet"
