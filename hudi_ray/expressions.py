"""Ray Data expressions as Hudi filters.

A predicate pushed into ``read_hudi`` (``ds.filter(expr=...)``) is applied in
full to the rows read; the conjuncts of it that are exactly ``column op
literal`` (either way round), ``is_in``/``not_in`` of literals, or an OR of
equalities on one column, also become Hudi filters, which prune partitions
and files by footer stats and mask rows. A literal becomes a filter only when
Hudi compares it exactly as Arrow compares it with the column (same kind of
value, no widening); anything else is left to the row predicate, so results
never depend on what could be translated.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
from ray.data.expressions import BinaryExpr, ColumnExpr, Expr, LiteralExpr, Operation

from hudi_ray.core.exceptions import HudiFilterError
from hudi_ray.core.expr import ExprOperator, Filter, cast_value, filter_value_text

_COMPARISONS = {
    Operation.EQ: ExprOperator.Eq,
    Operation.NE: ExprOperator.Ne,
    Operation.LT: ExprOperator.Lt,
    Operation.LE: ExprOperator.Lte,
    Operation.GT: ExprOperator.Gt,
    Operation.GE: ExprOperator.Gte,
}
# ``lit op col`` is ``col flipped(op) lit``.
_FLIPPED = {
    ExprOperator.Eq: ExprOperator.Eq,
    ExprOperator.Ne: ExprOperator.Ne,
    ExprOperator.Lt: ExprOperator.Gt,
    ExprOperator.Lte: ExprOperator.Gte,
    ExprOperator.Gt: ExprOperator.Lt,
    ExprOperator.Gte: ExprOperator.Lte,
}


def referenced_columns(expr: Expr) -> list[str]:
    """Names of the columns an expression reads, in first-use order."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, ColumnExpr):
            out.append(node.name)
        elif isinstance(node, Expr):
            for f in dataclasses.fields(node):
                walk(getattr(node, f.name))
        elif isinstance(node, (list, tuple)):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for item in node.values():
                walk(item)

    walk(expr)
    return list(dict.fromkeys(out))


def _conjuncts(expr: Expr) -> list[Expr]:
    if isinstance(expr, BinaryExpr) and expr.op is Operation.AND:
        return _conjuncts(expr.left) + _conjuncts(expr.right)
    return [expr]


def _disjuncts(expr: Expr) -> list[Expr]:
    if isinstance(expr, BinaryExpr) and expr.op is Operation.OR:
        return _disjuncts(expr.left) + _disjuncts(expr.right)
    return [expr]


def _same_kind(value: Any, dtype: pa.DataType) -> bool:
    """Whether Arrow compares ``value`` with the column as a value of the column's
    own kind (numbers with numbers, text with text, ...), not after converting one side."""
    t = pa.types
    if isinstance(value, bool):
        return t.is_boolean(dtype)
    if isinstance(value, int):
        return t.is_integer(dtype) or t.is_floating(dtype) or t.is_decimal(dtype)
    if isinstance(value, float):
        return t.is_floating(dtype)
    if isinstance(value, decimal.Decimal):
        return t.is_decimal(dtype)
    if isinstance(value, str):
        return t.is_string(dtype) or t.is_large_string(dtype)
    if isinstance(value, bytes):
        return t.is_binary(dtype) or t.is_large_binary(dtype)
    if isinstance(value, dt.datetime):
        return t.is_timestamp(dtype)
    if isinstance(value, dt.date):
        return t.is_date(dtype)
    return False


def literal_text(value: Any, dtype: pa.DataType, column: str) -> str | None:
    """``value`` as a Hudi filter value for a column of type ``dtype``, or None
    when the filter would not compare exactly as Arrow compares the literal."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()  # numpy scalars compare as their Python values
    if not _same_kind(value, dtype):
        return None
    if isinstance(value, dt.datetime) and (value.tzinfo is None) != (dtype.tz is None):
        return None  # Arrow does not compare a naive time with a zoned one
    text = filter_value_text(value)
    if text is None:
        return None
    try:
        literal = pa.scalar(value)
        exact = literal.cast(dtype, safe=True)
        if not exact.cast(literal.type, safe=True).equals(literal):
            return None  # the column type cannot hold the literal: Arrow compares in a wider type
        parsed = cast_value(text, dtype, column)
    except (pa.ArrowException, HudiFilterError, ValueError, TypeError, OverflowError):
        return None
    return text if parsed.equals(exact) else None


def _column_literal(expr: BinaryExpr) -> tuple[str, Any, bool] | None:
    """(column, literal value, flipped) for ``col op lit`` or ``lit op col``."""
    if isinstance(expr.left, ColumnExpr) and isinstance(expr.right, LiteralExpr):
        return expr.left.name, expr.right.value, False
    if isinstance(expr.left, LiteralExpr) and isinstance(expr.right, ColumnExpr):
        return expr.right.name, expr.left.value, True
    return None


def _to_filter(expr: Expr, schema: pa.Schema) -> Filter | None:
    if not isinstance(expr, BinaryExpr):
        return None
    if expr.op is Operation.OR:
        # col = a OR col = b OR col IN (...) on one column is col IN (a, b, ...).
        parts = [_to_filter(d, schema) for d in _disjuncts(expr)]
        if not parts or any(p is None or p.operator not in (ExprOperator.Eq, ExprOperator.In) for p in parts):
            return None
        fields = {p.field for p in parts if p is not None}
        if len(fields) != 1:
            return None
        values = tuple(dict.fromkeys(v for p in parts if p is not None for v in p.values))
        return Filter(fields.pop(), ExprOperator.In, values)
    if expr.op in (Operation.IN, Operation.NOT_IN):
        if not isinstance(expr.left, ColumnExpr) or not isinstance(expr.right, LiteralExpr):
            return None
        name = expr.left.name
        idx = schema.get_field_index(name)
        raw = expr.right.value
        items = raw if isinstance(raw, list) else [raw]
        if idx < 0 or not items:
            return None
        texts = [literal_text(v, schema.field(idx).type, name) for v in items]
        if any(t is None for t in texts):
            return None
        op = ExprOperator.In if expr.op is Operation.IN else ExprOperator.NotIn
        return Filter(name, op, tuple(t for t in texts if t is not None))
    op = _COMPARISONS.get(expr.op)
    found = _column_literal(expr)
    if op is None or found is None:
        return None
    name, value, flipped = found
    idx = schema.get_field_index(name)
    if idx < 0:
        return None
    text = literal_text(value, schema.field(idx).type, name)
    if text is None:
        return None
    return Filter(name, _FLIPPED[op] if flipped else op, (text,))


def predicate_to_filters(expr: Expr, schema: pa.Schema) -> list[Filter]:
    """The conjuncts of ``expr`` that are exactly Hudi filters on ``schema``'s columns.

    Each returned filter keeps every row the predicate keeps (it is one of its
    conjuncts, compared as Arrow compares), so it may prune files and mask rows.
    """
    out: list[Filter] = []
    for conjunct in _conjuncts(expr):
        f = _to_filter(conjunct, schema)
        if f is not None and f not in out:
            out.append(f)
    return out
