"""Stats pruning: can a file whose columns have these min/max/null counts hold
a row that passes the filters? Used with Parquet footers now and with the
metadata table's column stats later; it only ever answers False when the
stats prove it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ray.core.exceptions import HudiFilterError
from hudi_ray.core.expr.arrow import cast_value
from hudi_ray.core.expr.filter import ExprOperator, Filter


@dataclass(frozen=True)
class ColumnStats:
    """Stats of one column in one file; None means unknown."""

    min: pa.Scalar | None
    max: pa.Scalar | None
    null_count: int | None
    value_count: int | None  # rows, nulls included


def _cmp(fn: str, a: pa.Scalar, b: pa.Scalar) -> bool | None:
    try:
        out = getattr(pc, fn)(a, b)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    return out.as_py() if out.is_valid else None


def _is_nan(s: pa.Scalar) -> bool:
    return pa.types.is_floating(s.type) and s.is_valid and s.as_py() != s.as_py()


def _may_match_one(f: Filter, stats: ColumnStats, dtype: pa.DataType) -> bool:
    if stats.value_count is not None and stats.null_count is not None and stats.null_count >= stats.value_count:
        return False  # only nulls: no comparison is true for them
    lo, hi = stats.min, stats.max
    if lo is None or hi is None or not lo.is_valid or not hi.is_valid or _is_nan(lo) or _is_nan(hi):
        return True
    try:
        values = [cast_value(v, dtype, f.field) for v in f.values]
    except HudiFilterError:
        return True  # the row mask will report it; never prune on it
    op = f.operator

    def within(v: pa.Scalar) -> bool:
        below = _cmp("less", v, lo)
        above = _cmp("greater", v, hi)
        return not (below is True or above is True)

    if op is ExprOperator.Eq:
        return within(values[0])
    if op is ExprOperator.In:
        return any(within(v) for v in values)
    if op in (ExprOperator.Ne, ExprOperator.NotIn):
        single = _cmp("equal", lo, hi)
        if single is not True:
            return True
        return not any(_cmp("equal", lo, v) is True for v in values)
    v = values[0]
    if op is ExprOperator.Lt:
        return _cmp("less", lo, v) is not False
    if op is ExprOperator.Lte:
        return _cmp("less_equal", lo, v) is not False
    if op is ExprOperator.Gt:
        return _cmp("greater", hi, v) is not False
    return _cmp("greater_equal", hi, v) is not False


def may_match(filters: Sequence[Filter], stats: Mapping[str, ColumnStats], schema: pa.Schema) -> bool:
    """False only when some filter provably rejects every row of the file."""
    for f in filters:
        s = stats.get(f.field)
        idx = schema.get_field_index(f.field)
        if s is None or idx < 0:
            continue
        if not _may_match_one(f, s, schema.field(idx).type):
            return False
    return True
