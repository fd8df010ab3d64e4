"""Row and type comparison of Spark DataFrames with the table API's Arrow, as
``tests/spark/test_spark.py`` compares them for the RayDP bridge."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from tests.spark_rows import arrow_rows, spark_rows

__all__ = ["arrow_rows", "assert_types", "spark_rows"]


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
