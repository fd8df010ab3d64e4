"""Filters as row predicates evaluated with Arrow compute kernels: the
authoritative row mask and partition pruning share this one translation.

Kernels are called directly, not through ``pc.Expression``: evaluating an
expression runs Acero, whose import brings pyarrow.dataset and pandas (a
quarter second of every process that filters). The semantics are the
expression's: a test of a null is null, tests combine with Kleene AND, and a
null row is not kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hudi_ray.core.exceptions import HudiFilterError
from hudi_ray.core.expr.columns import check_columns
from hudi_ray.core.expr.filter import ExprOperator, Filter
from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")


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


# Comparison operators and the kernels that test them.
_KERNELS = {
    ExprOperator.Eq: "equal",
    ExprOperator.Ne: "not_equal",
    ExprOperator.Lt: "less",
    ExprOperator.Lte: "less_equal",
    ExprOperator.Gt: "greater",
    ExprOperator.Gte: "greater_equal",
}


@dataclass(frozen=True)
class ColumnTest:
    """One column compared with a value (``kernel``: a comparison kernel's name), or
    tested for membership in ``value`` (``is_in``, negated when ``negate``)."""

    column: str
    kernel: str
    value: Any  # pa.Scalar, or pa.Array for is_in
    negate: bool = False

    def evaluate(self, data: pa.Table) -> pa.ChunkedArray:
        values = data.column(self.column)
        if self.kernel == "is_in":
            found = pc.is_in(values, value_set=self.value)
            return pc.invert(found) if self.negate else found
        return pc.call_function(self.kernel, [values, self.value])


@dataclass(frozen=True)
class RowPredicate:
    """An AND of one or more column tests (picklable: plans carry it to reader tasks);
    no filters make no predicate (``filters_to_predicate`` gives None)."""

    tests: tuple[ColumnTest, ...]

    def __and__(self, other: RowPredicate) -> RowPredicate:
        return RowPredicate(self.tests + other.tests)

    def evaluate(self, data: pa.Table) -> pa.ChunkedArray:
        """Per row, true, false or null (a test of a null)."""
        result = self.tests[0].evaluate(data)
        for test in self.tests[1:]:
            result = pc.and_kleene(result, test.evaluate(data))
        return result

    def keep(self, data: pa.Table) -> pa.Table:
        """The rows the predicate is true for (null rows are dropped)."""
        return data.filter(self.evaluate(data))


def column_test(column: str, operator: ExprOperator | str, values: Sequence[Any], dtype: pa.DataType) -> ColumnTest:
    """``column operator values`` on a column of type ``dtype``; values already of that type."""
    op = ExprOperator(operator) if isinstance(operator, str) else operator
    if op.is_list:
        return ColumnTest(column, "is_in", pa.array(list(values), dtype), op is ExprOperator.NotIn)
    return ColumnTest(column, _KERNELS[op], pa.scalar(values[0], dtype))


def _one(f: Filter, dtype: pa.DataType) -> ColumnTest:
    if f.operator.is_list:
        values = [cast_value(v, dtype, f.field).as_py() for v in f.values]
        return column_test(f.field, f.operator, values, dtype)
    return ColumnTest(f.field, _KERNELS[f.operator], cast_value(f.values[0], dtype, f.field))


def filters_to_predicate(filters: Sequence[Filter], schema: pa.Schema, where: str = "table") -> RowPredicate | None:
    """AND of all filters, values cast to ``schema``'s types; unknown columns raise."""
    check_columns([f.field for f in filters], schema.names, where, filters=True)
    if not filters:
        return None
    return RowPredicate(tuple(_one(f, schema.field(f.field).type) for f in filters))


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
    predicate = filters_to_predicate(relevant, partition_schema, "partition schema")
    assert predicate is not None
    keep = pc.or_(pc.fill_null(predicate.evaluate(values), False), unparsed)
    return keep.to_pylist()
