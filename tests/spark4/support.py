"""Row and type comparison of Spark DataFrames with the table API's Arrow, as
``tests/spark/test_spark.py`` compares them for the RayDP bridge."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa

from hudi_ray.spark_types import conform, spark_arrow_schema


def plain(value: Any) -> Any:
    """Spark Row values in the shape pyarrow's to_pylist gives."""
    if hasattr(value, "asDict"):
        return {k: plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return sorted((k, plain(v)) for k, v in value.items())
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    return value


def arrow_plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: arrow_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        if value and isinstance(value[0], tuple):  # map entries
            return sorted((k, arrow_plain(v)) for k, v in value)
        return [arrow_plain(v) for v in value]
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc)
        return value.replace(tzinfo=None)
    return value


def _key(row: dict) -> str:
    return repr(sorted(row.items()))


def spark_rows(df: Any) -> list[dict]:
    return sorted(({k: plain(v) for k, v in r.asDict().items()} for r in df.collect()), key=_key)


def arrow_rows(table: pa.Table) -> list[dict]:
    """The table's rows in the Arrow types Spark reads (time-millis as ints, ...)."""
    table = conform(table, spark_arrow_schema(table.schema))
    return sorted((arrow_plain(r) for r in table.to_pylist()), key=_key)


def assert_types(df: Any, schema: pa.Schema) -> None:
    """Every column has the Spark type the RayDP bridge gives it."""
    spark_types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert list(spark_types) == schema.names
    for field in schema:
        t, got = field.type, spark_types[field.name]
        if pa.types.is_decimal(t):
            assert got == f"decimal({t.precision},{t.scale})", field
        elif pa.types.is_timestamp(t):
            assert got == "timestamp", field
        elif pa.types.is_date(t):
            assert got == "date", field
        elif pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
            assert got == "binary", field
        elif pa.types.is_struct(t):
            assert got.startswith("struct<"), field
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            assert got.startswith("array<"), field
        elif pa.types.is_map(t):
            assert got.startswith("map<"), field
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            assert got == "string", field
        elif pa.types.is_int64(t):
            assert got == "bigint", field
        elif pa.types.is_int32(t):
            assert got == "int", field
        elif pa.types.is_boolean(t):
            assert got == "boolean", field
        elif pa.types.is_float64(t):
            assert got == "double", field
        elif pa.types.is_float32(t):
            assert got == "float", field
