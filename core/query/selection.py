"""What one read selects: columns to read, the row mask, columns to hand back.

One ``ReadSelection`` serves every slice of a read (it depends on a slice only
through whether its base file is older than the range's end), so the file
group reader builds it once per read and keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hudi_ray.core.base_file import base_file_instant
from hudi_ray.core.expr import ExprOperator, Filter, RowPredicate, check_columns, column_test, filters_to_predicate
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.query.read_options import HudiReadOptions

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

COMMIT_TIME = "_hoodie_commit_time"


def instant_of(base_rel: str) -> str | None:
    """The instant that wrote a base file, from its name."""
    return base_file_instant(base_rel.rsplit("/", 1)[-1])


class ReadSelection:
    """Columns to read, the row mask and the columns to hand back, for one read."""

    def __init__(
        self,
        schema: pa.Schema,
        options: HudiReadOptions,
        commit_times: frozenset[str] | None,
        commit_range: tuple[str | None, str | None],
        where: str,
        merge_columns: Sequence[str] = (),
        base_instant: str | None = None,
    ) -> None:
        filters: list[Filter] = options.parsed_filters
        names = schema.names
        check_columns([f.field for f in filters], names, where, filters=True)
        if options.projection is not None:
            check_columns(options.projection, names, where)
            output = list(dict.fromkeys(options.projection))
        else:
            output = names
        has_commit_time = COMMIT_TIME in names
        lo, hi = commit_range
        if hi is not None and base_instant is not None and base_instant <= hi:
            # Rows of a base file are no newer than the file, and log blocks are
            # bounded by visibility: the upper bound cannot drop anything.
            hi = None
        self.filters = list(filters)
        self.commit_times = commit_times if has_commit_time else None
        self.commit_range = (lo, hi) if has_commit_time and (lo or hi) else None
        extra = [f.field for f in filters] + [c for c in merge_columns if c in names]
        if self.commit_times is not None or self.commit_range is not None:
            extra.append(COMMIT_TIME)
        read = list(dict.fromkeys(output + [c for c in extra if c not in output]))
        self.read_schema = pa.schema([schema.field(c) for c in read])
        self.output = output
        self.narrow = len(read) != len(output)
        self.output_schema = pa.schema([schema.field(c) for c in output])
        tests = []
        if self.commit_times is not None:
            tests.append(column_test(COMMIT_TIME, ExprOperator.In, sorted(self.commit_times), pa.string()))
        if self.commit_range is not None:
            if lo:
                tests.append(column_test(COMMIT_TIME, ExprOperator.Gt, [lo], pa.string()))
            if hi:
                tests.append(column_test(COMMIT_TIME, ExprOperator.Lte, [hi], pa.string()))
        mask = filters_to_predicate(filters, self.read_schema, where)
        if tests:
            mask = RowPredicate(tuple(tests)) if mask is None else mask & RowPredicate(tuple(tests))
        self.mask = mask

    def apply(self, data: pa.Table) -> pa.Table:
        if self.mask is not None:
            data = self.mask.keep(data)
        if self.narrow:
            data = data.select(self.output)
        return data
