"""Filters as Arrow compute expressions: the authoritative row mask and
partition pruning share this one translation."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from hudi_ray.core.exceptions import HudiFilterError
from hudi_ray.core.expr.columns import check_columns
from hudi_ray.core.expr.filter import ExprOperator, Filter


def cast_value(value: str, dtype: pa.DataType, field: str) -> pa.Scalar:
    """Cast a filter's string value to the column's Arrow type."""
    if pa.types.is_nested(dtype):
        raise HudiFilterError(f"Filters on nested column {field!r} of type {dtype} are not supported")
    try:
        if pa.types.is_boolean(dtype):
            low = value.strip().lower()
            if low not in ("true", "false"):
                raise ValueError("expected true or false")
            return pa.scalar(low == "true")
        if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
            return pa.scalar(value.encode("utf-8"), dtype)
        if pa.types.is_timestamp(dtype) and dtype.tz is not None:
            # Naive strings mean UTC, as Hudi stores instants in UTC.
            try:
                return pa.scalar(value, pa.string()).cast(pa.timestamp(dtype.unit)).cast(dtype)
            except pa.ArrowInvalid:
                pass  # has an offset: the direct cast below handles it
        return pa.scalar(value, pa.string()).cast(dtype)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OverflowError) as exc:
        raise HudiFilterError(
            f"Cannot parse filter value {value!r} for column {field!r} of type {dtype}: {exc}"
        ) from exc


def _one(f: Filter, dtype: pa.DataType) -> pc.Expression:
    ref = pc.field(f.field)
    if f.operator.is_list:
        values = pa.array([cast_value(v, dtype, f.field).as_py() for v in f.values], dtype)
        expr = ref.isin(values)
        return ~expr if f.operator is ExprOperator.NotIn else expr
    value = cast_value(f.values[0], dtype, f.field)
    op = f.operator
    if op is ExprOperator.Eq:
        return ref == value
    if op is ExprOperator.Ne:
        return ref != value
    if op is ExprOperator.Lt:
        return ref < value
    if op is ExprOperator.Lte:
        return ref <= value
    if op is ExprOperator.Gt:
        return ref > value
    return ref >= value


def filters_to_expression(filters: Sequence[Filter], schema: pa.Schema, where: str = "table") -> pc.Expression | None:
    """AND of all filters, values cast to ``schema``'s types; unknown columns raise."""
    check_columns([f.field for f in filters], schema.names, where, filters=True)
    expr: pc.Expression | None = None
    for f in filters:
        one = _one(f, schema.field(f.field).type)
        expr = one if expr is None else expr & one
    return expr


def prune_partitions(
    values: pa.Table, unparsed: pa.Array, filters: Sequence[Filter], partition_schema: pa.Schema
) -> list[bool]:
    """Which partitions may hold matching rows, one flag per row of ``values``.

    Only filters on partition fields take part. A partition is dropped only
    when its values are known and fail a filter.
    """
    relevant = [f for f in filters if partition_schema.get_field_index(f.field) >= 0]
    if not relevant or values.num_rows == 0:
        return [True] * values.num_rows
    expr = filters_to_expression(relevant, partition_schema, "partition schema")
    return evaluate(values, expr, unparsed).to_pylist()


def evaluate(values: pa.Table, expr: pc.Expression, force: pa.Array | None = None) -> pa.ChunkedArray:
    """Evaluate a predicate per row; null counts as false, ``force`` rows as true."""
    result = ds.dataset(values).to_table(columns={"keep": expr}).column("keep")
    keep = pc.fill_null(result, False)
    return pc.or_(keep, force) if force is not None else keep
