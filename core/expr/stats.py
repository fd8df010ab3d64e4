"""Stats pruning: can a file whose columns have these min/max/null counts hold
a row that passes the filters? Used with Parquet footers now and with the
metadata table's column stats later; it only ever answers False when the
stats prove it."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_ray.core.exceptions import HudiFilterError
from hudi_ray.core.expr.arrow import cast_value
from hudi_ray.core.expr.filter import ExprOperator, Filter
from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")


@dataclass(frozen=True)
class ColumnStats:
    """Stats of one column in one file; None means unknown."""

    min: pa.Scalar | None
    max: pa.Scalar | None
    null_count: int | None
    value_count: int | None  # rows, nulls included


@dataclass(frozen=True)
class StatsColumn:
    """One column's stats in many files, one element per file; a null is unknown."""

    mins: pa.Array
    maxs: pa.Array
    null_counts: pa.Array  # int64
    value_counts: pa.Array  # int64, rows with nulls included


def _cmp(fn: str, a: pa.Scalar, b: pa.Scalar) -> bool | None:
    try:
        out = getattr(pc, fn)(a, b)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    return out.as_py() if out.is_valid else None


def _is_nan(s: pa.Scalar) -> bool:
    return pa.types.is_floating(s.type) and s.is_valid and s.as_py() != s.as_py()


@functools.lru_cache(maxsize=256)
def _cast_values(values: tuple[str, ...], dtype: pa.DataType, field: str) -> tuple[list[pa.Scalar], pa.Array] | None:
    """A filter's values cast to the column's type, as scalars and as one array; None when
    one does not cast. Cast once per filter: the same filter is tested against every file."""
    try:
        scalars = [cast_value(v, dtype, field) for v in values]
    except HudiFilterError:
        return None
    return scalars, pa.array([x.as_py() for x in scalars], dtype) if scalars else pa.array([], dtype)


def _may_match_one(f: Filter, stats: ColumnStats, dtype: pa.DataType) -> bool:
    if stats.value_count is not None and stats.null_count is not None and stats.null_count >= stats.value_count:
        return False  # only nulls: no comparison is true for them
    lo, hi = stats.min, stats.max
    if lo is None or hi is None or not lo.is_valid or not hi.is_valid or _is_nan(lo) or _is_nan(hi):
        return True
    cast = _cast_values(tuple(f.values), dtype, f.field)
    if cast is None:
        return True  # the row mask will report it; never prune on it
    values, array = cast
    op = f.operator

    def within(v: pa.Scalar) -> bool:
        below = _cmp("less", v, lo)
        above = _cmp("greater", v, hi)
        return not (below is True or above is True)

    if op is ExprOperator.Eq:
        return within(values[0])
    if op is ExprOperator.In:
        below = _holds("less", array, lo)
        above = _holds("greater", array, hi)
        if below is None or above is None:
            return True
        return bool((~below & ~above).any())
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


def _holds(fn: str, a: pa.Array | pa.Scalar, b: pa.Array | pa.Scalar) -> np.ndarray | None:
    """Where ``fn(a, b)`` is true (a null result is not); None when the two
    cannot be compared, which proves nothing."""
    try:
        out = getattr(pc, fn)(a, b)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    return pc.fill_null(out, False).to_numpy(zero_copy_only=False)


def _is_nan_each(values: pa.Array) -> np.ndarray:
    if not pa.types.is_floating(values.type):
        return np.zeros(len(values), dtype=bool)
    return pc.fill_null(pc.is_nan(values), False).to_numpy(zero_copy_only=False)


def _excluded_by(f: Filter, col: StatsColumn, dtype: pa.DataType) -> np.ndarray:
    """Files where the stats prove no row passes ``f``: ``_may_match_one``'s
    rules, each comparison made once over every file."""
    n = len(col.mins)
    only_nulls = _holds("greater_equal", col.null_counts, col.value_counts)
    if only_nulls is None:
        only_nulls = np.zeros(n, dtype=bool)
    lo, hi = col.mins, col.maxs
    bounded = (
        lo.is_valid().to_numpy(zero_copy_only=False)
        & hi.is_valid().to_numpy(zero_copy_only=False)
        & ~_is_nan_each(lo)
        & ~_is_nan_each(hi)
    )
    try:
        values = [cast_value(v, dtype, f.field) for v in f.values]
    except HudiFilterError:
        return only_nulls  # the row mask will report it; never prune on it
    op = f.operator

    def held(fn: str, a: pa.Array | pa.Scalar, b: pa.Array | pa.Scalar) -> np.ndarray:
        out = _holds(fn, a, b)
        return np.zeros(n, dtype=bool) if out is None else out

    def false(fn: str, a: pa.Array | pa.Scalar, b: pa.Array | pa.Scalar) -> np.ndarray:
        # Where ``fn`` is false; a null result (unbounded file) is masked by ``bounded``.
        out = _holds(fn, a, b)
        return np.zeros(n, dtype=bool) if out is None else ~out

    def outside(v: pa.Scalar) -> np.ndarray:
        return held("less", v, lo) | held("greater", v, hi)

    if op is ExprOperator.Eq:
        proven = outside(values[0])
    elif op is ExprOperator.In:
        proven = np.ones(n, dtype=bool)
        for v in values:
            proven &= outside(v)
    elif op in (ExprOperator.Ne, ExprOperator.NotIn):
        hit = np.zeros(n, dtype=bool)
        for v in values:
            hit |= held("equal", lo, v)
        proven = held("equal", lo, hi) & hit
    elif op is ExprOperator.Lt:
        proven = false("less", lo, values[0])
    elif op is ExprOperator.Lte:
        proven = false("less_equal", lo, values[0])
    elif op is ExprOperator.Gt:
        proven = false("greater", hi, values[0])
    else:
        proven = false("greater_equal", hi, values[0])
    return only_nulls | (bounded & proven)


def may_match_each(filters: Sequence[Filter], stats: Mapping[str, StatsColumn], schema: pa.Schema) -> np.ndarray:
    """``may_match`` for many files at once: per file, False only when some
    filter provably rejects every row of it."""
    sizes = {len(col.mins) for col in stats.values()}
    if len(sizes) > 1:
        raise ValueError(f"stats columns disagree on the number of files: {sorted(sizes)}")
    keep = np.ones(sizes.pop() if sizes else 0, dtype=bool)
    for f in filters:
        col = stats.get(f.field)
        idx = schema.get_field_index(f.field)
        if col is None or idx < 0:
            continue
        keep &= ~_excluded_by(f, col, schema.field(idx).type)
    return keep
