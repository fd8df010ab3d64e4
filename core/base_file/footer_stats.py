"""Column stats of Parquet files, aggregated over each file's row groups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hudi_ray.core.expr.stats import StatsColumn
from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq
else:
    pa = lazy_module("pyarrow")
    pq = lazy_module("pyarrow.parquet")

# pyarrow's ArrowInvalid, ArrowTypeError and ArrowNotImplementedError, by their Python bases.
_CONVERSION_ERRORS = (NotImplementedError, TypeError, ValueError)


def _scalar(value: object, dtype: pa.DataType) -> pa.Scalar | None:
    try:
        return pa.scalar(value, dtype)
    except _CONVERSION_ERRORS:
        try:
            return pa.scalar(value).cast(dtype)
        except _CONVERSION_ERRORS:
            return None


def _all_null(group: pq.RowGroupMetaData, st: pq.Statistics | None) -> bool:
    """A row group without min/max bounds nothing only when it holds no
    values (``num_values`` counts the non-null ones)."""
    if not group.num_rows:
        return True
    return st is not None and st.has_null_count and st.null_count == group.num_rows


def _min_max(st: pq.Statistics | None) -> tuple[Any, Any] | None:
    """A row group's (min, max) of a column; None when absent or when the
    footer's bytes do not decode (a string bound that is not UTF-8): a damaged
    bound is unknown, so the file is kept and its rows are filtered as read."""
    if st is None or not st.has_min_max:
        return None
    try:
        return st.min, st.max
    except _CONVERSION_ERRORS:
        return None


def _raw_stats(metadata: pq.FileMetaData, j: int) -> tuple[object, object, int | None]:
    """Column ``j``'s (min, max, null count) over a file's row groups as the
    footer's own values; min and max are None when some row group holding
    values lacks them, the null count when some row group lacks it."""
    lo: object = None
    hi: object = None
    nulls: int | None = 0
    bounded = True
    for r in range(metadata.num_row_groups):
        group = metadata.row_group(r)
        st = group.column(j).statistics
        if st is None or not st.has_null_count:
            nulls = None
        elif nulls is not None:
            nulls += st.null_count
        bounds = _min_max(st)
        if bounds is None:
            bounded = bounded and _all_null(group, st)
            continue
        # Values of one column share a Python type ordered as Parquet orders
        # them (UTF-8 bytes sort as code points do); a NaN is never less.
        lo = bounds[0] if lo is None or bounds[0] < lo else lo
        hi = bounds[1] if hi is None or bounds[1] > hi else hi
    return (lo, hi, nulls) if bounded else (None, None, nulls)


def _as_array(values: list[object], dtype: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, dtype)
    except (*_CONVERSION_ERRORS, OverflowError):
        # A value that does not convert (schema evolution) leaves only its own bound unknown.
        scalars = [None if v is None else _scalar(v, dtype) for v in values]
        return pa.array([None if sc is None else sc.as_py() for sc in scalars], dtype)


def _column_index(metadata: pq.FileMetaData) -> dict[str, int] | None:
    """Column path -> position; None when a path is not UTF-8. Then no column
    of the file is bounded, so the file is kept, and its read reports a
    damaged schema naming the file (a footer alone does not know its file)."""
    if metadata.num_row_groups == 0:
        return {}
    first = metadata.row_group(0)
    try:
        return {first.column(j).path_in_schema: j for j in range(first.num_columns)}
    except UnicodeDecodeError:
        return None


def _column_indexes(metadatas: list[pq.FileMetaData]) -> list[dict[str, int]]:
    """``_column_index`` of each footer. Files of a table mostly share one
    Parquet schema: comparing it with the previous file's is far cheaper than
    walking the file's columns again."""
    out: list[dict[str, int]] = []
    last: tuple[pq.ParquetSchema, dict[str, int]] | None = None
    for md in metadatas:
        if md.num_row_groups == 0:
            out.append({})
            continue
        schema = md.schema
        if last is None or not last[0].equals(schema):
            index = _column_index(md)
            if index is None:
                out.append({})  # not kept as ``last``: files after it may share the schema, undamaged
                continue
            last = (schema, index)
        out.append(last[1])
    return out


def footer_bounds(
    metadatas: list[pq.FileMetaData], schema: pa.Schema, columns: set[str] | None = None
) -> dict[str, StatsColumn]:
    """Stats of the named top-level columns (None: all of ``schema``) in every
    file, one element per file in order. Bounds are null where a footer does
    not bound the column (absent, nested, no stats), so a file with no row
    groups has null bounds and a zero null count. Built column by column: one
    Arrow conversion per column, not one per value."""
    indexes = _column_indexes(metadatas)
    rows = pa.array([md.num_rows for md in metadatas], pa.int64())
    out: dict[str, StatsColumn] = {}
    for field in schema:
        if columns is not None and field.name not in columns:
            continue
        los: list[object] = []
        his: list[object] = []
        nulls: list[int | None] = []
        for md, index in zip(metadatas, indexes):
            j = index.get(field.name)
            if j is None:
                # No row groups: no values at all; otherwise the column is absent or nested.
                lo, hi, n = (None, None, 0 if md.num_row_groups == 0 else None)
            else:
                lo, hi, n = _raw_stats(md, j)
            los.append(lo)
            his.append(hi)
            nulls.append(n)
        out[field.name] = StatsColumn(
            mins=_as_array(los, field.type),
            maxs=_as_array(his, field.type),
            null_counts=pa.array(nulls, pa.int64()),
            value_counts=rows,
        )
    return out
