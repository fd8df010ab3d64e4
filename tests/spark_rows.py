"""Spark DataFrame rows and Arrow tables in one comparable shape: every Spark test
compares a DataFrame with the table API's Arrow this way."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pyarrow as pa

from hudi_ray.spark_types import conform, spark_arrow_schema


def plain(value: Any) -> Any:
    if hasattr(value, "asDict"):  # a Spark struct, as Arrow gives a dict
        return plain(value.asDict())
    if isinstance(value, dict):
        return sorted((k, plain(v)) for k, v in value.items())
    if isinstance(value, list):
        if value and isinstance(value[0], tuple) and not hasattr(value[0], "asDict"):  # Arrow map entries
            return sorted((k, plain(v)) for k, v in value)
        return [plain(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
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
    return sorted(({k: plain(v) for k, v in r.items()} for r in table.to_pylist()), key=_key)
