"""Column stats of a Parquet file, aggregated over its row groups."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ray.core.expr.stats import ColumnStats


def _scalar(value: object, dtype: pa.DataType) -> pa.Scalar | None:
    try:
        return pa.scalar(value, dtype)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
        try:
            return pa.scalar(value).cast(dtype)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
            return None


def footer_column_stats(metadata: pq.FileMetaData, schema: pa.Schema, columns: set[str]) -> dict[str, ColumnStats]:
    """Stats for the named top-level primitive columns; a column any row group
    lacks stats for is reported with unknown bounds."""
    out: dict[str, ColumnStats] = {}
    if metadata.num_row_groups == 0:
        return {c: ColumnStats(None, None, 0, 0) for c in columns if schema.get_field_index(c) >= 0}
    first = metadata.row_group(0)
    index = {first.column(j).path_in_schema: j for j in range(first.num_columns)}
    for name in columns:
        fi = schema.get_field_index(name)
        j = index.get(name)
        if fi < 0 or j is None:
            continue
        dtype = schema.field(fi).type
        lo: pa.Scalar | None = None
        hi: pa.Scalar | None = None
        nulls = 0
        known = True
        for r in range(metadata.num_row_groups):
            st = metadata.row_group(r).column(j).statistics
            if st is None or not st.has_null_count:
                nulls = None  # type: ignore[assignment]
            elif nulls is not None:
                nulls += st.null_count
            if st is None or not st.has_min_max:
                if metadata.row_group(r).num_rows and (st is None or st.null_count != st.num_values):
                    known = False
                continue
            smin, smax = _scalar(st.min, dtype), _scalar(st.max, dtype)
            if smin is None or smax is None:
                known = False
                continue
            lo = smin if lo is None or pc.less(smin, lo).as_py() else lo
            hi = smax if hi is None or pc.greater(smax, hi).as_py() else hi
        out[name] = ColumnStats(
            min=lo if known else None,
            max=hi if known else None,
            null_count=nulls,
            value_count=metadata.num_rows,
        )
    return out
