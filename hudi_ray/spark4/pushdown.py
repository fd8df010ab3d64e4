"""Spark's pushed filters as Hudi filters, only where the two agree on every row.

Spark drops a filter the source accepts from its own plan, so an accepted
filter must select exactly the rows Spark's would. Hudi filters are row masks
over the table's Arrow columns with the value parsed from a string
(``hudi_ray.core.expr.cast_value``); a Spark filter is taken only when

* it names one top-level column of a plain type (integers, floating point,
  booleans, strings, binaries, dates, decimals, timestamps coarser than
  nanoseconds: Spark sees nanoseconds truncated, Hudi would compare them whole);
* its value, written as a string, parses back to the same value in the
  column's Arrow type (so no rounding, overflow or time zone shift); and
* the operators agree on nulls and NaN. Both drop null rows for comparisons
  and IN; ``NOT IN`` is not taken (Arrow keeps null rows there, Spark does
  not), nor IS NULL (Hudi filters have none), nor ``>``/``>=``/``!=`` on
  floating point (Spark orders NaN above every number, Arrow compares it false).

Everything else goes back to Spark, which evaluates it on the rows read.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.expr import ExprOperator, Filter, cast_value, filter_value_text

_COMPARISONS = {
    "EqualTo": ExprOperator.Eq,
    "EqualNullSafe": ExprOperator.Eq,  # same as = for a non-null value; a null value is not taken
    "GreaterThan": ExprOperator.Gt,
    "GreaterThanOrEqual": ExprOperator.Gte,
    "LessThan": ExprOperator.Lt,
    "LessThanOrEqual": ExprOperator.Lte,
    "In": ExprOperator.In,
}
# Operators that agree with Spark on NaN for floating-point columns.
_FLOAT_SAFE = {ExprOperator.Eq, ExprOperator.Lt, ExprOperator.Lte, ExprOperator.In}


def _pushable_type(t: pa.DataType) -> bool:
    types = pa.types
    if types.is_timestamp(t):
        return t.unit != "ns"
    if types.is_floating(t):
        return not types.is_float16(t)
    return (
        types.is_integer(t)
        or types.is_boolean(t)
        or types.is_string(t)
        or types.is_large_string(t)
        or types.is_binary(t)
        or types.is_large_binary(t)
        or types.is_date32(t)
        or types.is_decimal(t)
    )


def _same(parsed: Any, value: Any) -> bool:
    if isinstance(value, dt.datetime) and isinstance(parsed, dt.datetime):
        if (parsed.tzinfo is None) != (value.tzinfo is None):
            # A naive Arrow column holds UTC wall times (Spark reads it as UTC instants).
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=dt.timezone.utc)
            else:
                value = value.replace(tzinfo=dt.timezone.utc)
        return parsed == value
    if isinstance(value, (bytes, bytearray)):
        return parsed == bytes(value)
    if isinstance(value, bool) or isinstance(parsed, bool):
        return type(parsed) is type(value) and parsed == value
    if isinstance(value, dt.datetime) or isinstance(parsed, dt.datetime):
        return False  # a date against a timestamp
    return parsed == value


def _value(value: Any, dtype: pa.DataType, column: str) -> str | None:
    """``value`` as a filter string that parses back to exactly ``value`` in ``dtype``."""
    if isinstance(value, float) and not math.isfinite(value):
        return None  # left to Spark, whose NaN orders above infinity (Arrow's compares false)
    text = filter_value_text(value)
    if text is None:
        return None
    try:
        parsed = cast_value(text, dtype, column).as_py()
    except HudiCoreError:
        return None
    return text if _same(parsed, value) else None


def to_hudi_filter(spark_filter: Any, schema: pa.Schema) -> Filter | None:
    """The Hudi filter selecting exactly the rows ``spark_filter`` selects, or None."""
    kind = type(spark_filter).__name__
    negate = False
    if kind == "Not":
        spark_filter = spark_filter.child
        kind = type(spark_filter).__name__
        negate = True
    op = _COMPARISONS.get(kind)
    if op is None:
        return None
    path = tuple(spark_filter.attribute)
    if len(path) != 1 or schema.get_field_index(path[0]) < 0:
        return None  # nested fields and names the read does not have
    column = path[0]
    dtype = schema.field(column).type
    if not _pushable_type(dtype):
        return None
    if negate:
        if op.is_list:
            return None  # NOT IN keeps null rows in Arrow, never in Spark
        op = op.negated()
    if pa.types.is_floating(dtype) and op not in _FLOAT_SAFE:
        return None
    raw = spark_filter.value
    values: Sequence[Any] = tuple(raw) if op.is_list else (raw,)
    if op.is_list and (not values or isinstance(raw, (str, bytes))):
        return None
    texts = [_value(v, dtype, column) for v in values]
    if any(t is None for t in texts):
        return None
    return Filter(column, op, tuple(t for t in texts if t is not None))


def split_filters(spark_filters: Iterable[Any], schema: pa.Schema) -> tuple[list[Filter], list[Any]]:
    """``(hudi_filters, rejected)``: the Hudi filters for the Spark filters that
    map exactly, and the Spark filters (the same objects) Spark must still apply."""
    taken: list[Filter] = []
    rejected: list[Any] = []
    for f in spark_filters:
        hudi = to_hudi_filter(f, schema)
        if hudi is None:
            rejected.append(f)
        elif hudi not in taken:
            taken.append(hudi)
    return taken, rejected
