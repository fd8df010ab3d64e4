"""Filters: parsing, casting to column types, row masks and partition pruning."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
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

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.expr.arrow": (
            "ColumnTest",
            "RowPredicate",
            "cast_value",
            "column_test",
            "filters_to_predicate",
            "prune_partitions",
        ),
        "hudi_ray.core.expr.columns": ("check_columns",),
        "hudi_ray.core.expr.filter": ("ExprOperator", "Filter", "col", "from_str_tuples", "split_values"),
        "hudi_ray.core.expr.literal": ("filter_value_text",),
    },
)
