"""Filters: parsing, casting to column types, row masks and partition pruning."""

from hudi_ray.core.expr.arrow import (
    ColumnTest,
    RowPredicate,
    cast_value,
    column_test,
    filters_to_predicate,
    prune_partitions,
)
from hudi_ray.core.expr.columns import check_columns
from hudi_ray.core.expr.filter import (
    ExprOperator,
    Filter,
    col,
    from_str_tuples,
    split_values,
)
from hudi_ray.core.expr.literal import filter_value_text

__all__ = [
    "ExprOperator",
    "Filter",
    "cast_value",
    "check_columns",
    "col",
    "filter_value_text",
    "filters_to_predicate",
    "ColumnTest",
    "RowPredicate",
    "column_test",
    "from_str_tuples",
    "prune_partitions",
    "split_values",
]
