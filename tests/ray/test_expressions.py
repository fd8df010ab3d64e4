"""Ray Data expressions as Hudi filters (``hudi_ray.expressions``), without a Ray
cluster: which conjuncts become filters, the text of their values, and that
pushing them never changes which rows a predicate keeps."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from ray.data.expressions import Expr, col, lit

from hudi_ray import ExprOperator, Filter
from hudi_ray.core.expr import filters_to_predicate
from hudi_ray.expressions import literal_text, predicate_to_filters, referenced_columns

SCHEMA = pa.schema(
    [
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("f", pa.float64()),
        ("s", pa.string()),
        ("b", pa.bool_()),
        ("d", pa.decimal128(12, 2)),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("local", pa.timestamp("ms")),
        ("bin", pa.binary()),
    ]
)
UTC = dt.timezone.utc


def _f(field: str, op: str, *values: str) -> Filter:
    return Filter(field, ExprOperator.parse(op), tuple(values))


def test_translates_column_op_literal_and_and() -> None:
    expr = (col("i") == 3) & (lit(5) < col("f")) & (col("s") != "x") & (col("b") == True)  # noqa: E712
    assert predicate_to_filters(expr, SCHEMA) == [
        _f("i", "=", "3"),
        _f("f", ">", "5"),
        _f("s", "!=", "x"),
        _f("b", "=", "true"),
    ]


def test_and_of_comparisons_keeps_order_and_drops_repeats() -> None:
    expr = (col("i") >= 1) & (col("i") < 10) & (col("s") == "x") & (col("i") >= 1) & (col("l") <= -4)
    assert predicate_to_filters(expr, SCHEMA) == [
        _f("i", ">=", "1"),
        _f("i", "<", "10"),
        _f("s", "=", "x"),
        _f("l", "<=", "-4"),
    ]
    # Nested the other way round, the conjuncts are the same.
    assert predicate_to_filters((col("i") >= 1) & ((col("i") < 10) & (col("s") == "x")), SCHEMA) == [
        _f("i", ">=", "1"),
        _f("i", "<", "10"),
        _f("s", "=", "x"),
    ]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (lit(3) < col("i"), _f("i", ">", "3")),
        (lit(3) <= col("i"), _f("i", ">=", "3")),
        (lit(3) > col("i"), _f("i", "<", "3")),
        (lit(3) >= col("i"), _f("i", "<=", "3")),
        (lit(3) == col("i"), _f("i", "=", "3")),
        (lit(3) != col("i"), _f("i", "!=", "3")),
        (lit("m") > col("s"), _f("s", "<", "m")),
    ],
)
def test_literal_on_the_left_flips_the_comparison(expr: Expr, expected: Filter) -> None:
    assert predicate_to_filters(expr, SCHEMA) == [expected]


def test_translates_isin_not_in_and_or_of_equalities() -> None:
    assert predicate_to_filters(col("s").is_in(["a", "b"]), SCHEMA) == [_f("s", "IN", "a", "b")]
    assert predicate_to_filters(col("i").not_in([1, 2]), SCHEMA) == [_f("i", "NOT IN", "1", "2")]
    either = (col("s") == "a") | (col("s") == "b") | col("s").is_in(["c"])
    assert predicate_to_filters(either, SCHEMA) == [_f("s", "IN", "a", "b", "c")]
    assert predicate_to_filters((col("s") == "a") | (col("i") == 1), SCHEMA) == []
    assert predicate_to_filters((col("s") == "a") | (col("s") > "b"), SCHEMA) == []


def test_in_lists() -> None:
    assert predicate_to_filters(col("i").is_in([3, 1, 2]), SCHEMA) == [_f("i", "IN", "3", "1", "2")]
    days = [dt.date(2024, 1, 31), dt.date(2024, 2, 29)]
    assert predicate_to_filters(col("day").is_in(days), SCHEMA) == [_f("day", "IN", "2024-01-31", "2024-02-29")]
    assert predicate_to_filters(col("d").not_in([Decimal("1.50"), Decimal("-2")]), SCHEMA) == [
        _f("d", "NOT IN", "1.50", "-2")
    ]
    # An OR of equalities and lists on one column is one list, without repeats.
    assert predicate_to_filters((col("i") == 2) | col("i").is_in([1, 2]) | (col("i") == 3), SCHEMA) == [
        _f("i", "IN", "2", "1", "3")
    ]
    # Nothing to compare with, or one item Hudi could not compare as Arrow does: the list stays unpushed.
    assert predicate_to_filters(col("s").is_in([]), SCHEMA) == []
    assert predicate_to_filters(col("s").is_in(["a", None]), SCHEMA) == []
    assert predicate_to_filters(col("i").is_in([1, 2.5]), SCHEMA) == []
    assert predicate_to_filters(col("s").is_in(["a", 1]), SCHEMA) == []


@pytest.mark.parametrize(
    "expr",
    [
        (col("i") == 1) | (col("l") == 2),  # OR across columns
        (col("i") < 1) | (col("i") > 5),  # OR of ranges
        ~(col("i") == 1),
        ~((col("i") == 1) & (col("s") == "a")),
        col("s").is_null(),
        col("s").is_not_null(),
        col("i") + 1 > 3,
        col("i") == col("l"),
        lit(1) == lit(1),
        col("s") != None,  # noqa: E711
    ],
)
def test_or_not_and_other_shapes_are_not_pushed(expr: Expr) -> None:
    assert predicate_to_filters(expr, SCHEMA) == []


def test_only_translatable_conjuncts_are_pushed() -> None:
    expr = (col("i") == 1) & ((col("s") == "a") | (col("l") == 3)) & ~(col("b") == True) & (col("f") < 2.5)  # noqa: E712
    assert predicate_to_filters(expr, SCHEMA) == [_f("i", "=", "1"), _f("f", "<", "2.5")]


@pytest.mark.parametrize(
    "expr",
    [
        col("i") > 1.5,  # Arrow compares as floats
        col("i") == 1.0,
        col("i") == "3",
        col("s") == 1,
        col("b") == 1,
        col("i") < 2**40,  # does not fit the column: Arrow widens it
        col("d") == Decimal("3.101"),  # more digits than the column's scale
        col("day") >= dt.datetime(2024, 2, 29),
        col("ts") > dt.datetime(2024, 1, 2),  # naive literal, zoned column
        col("local") == dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),  # zoned literal, naive column
        col("local") == dt.datetime(2024, 1, 2, 3, 4, 5, 123456),  # finer than the column's milliseconds
        col("bin") == b"\xff",  # not UTF-8: no text for it
        col("missing") == 1,
    ],
)
def test_literals_of_another_type_are_not_pushed(expr: Expr) -> None:
    assert predicate_to_filters(expr, SCHEMA) == []


def test_typed_literals_translate_exactly_or_not_at_all() -> None:
    assert predicate_to_filters(col("d") >= Decimal("1.5"), SCHEMA) == [_f("d", ">=", "1.5")]
    assert predicate_to_filters(col("day") < dt.date(2024, 1, 2), SCHEMA) == [_f("day", "<", "2024-01-02")]
    instant = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert predicate_to_filters(col("ts") > instant, SCHEMA) == [_f("ts", ">", "2024-01-02T01:04:05")]
    # Arrow would compare these in a wider type, or not at all: never pushed.
    assert predicate_to_filters(col("i") > 1.5, SCHEMA) == []
    assert predicate_to_filters(col("i") == "3", SCHEMA) == []
    assert predicate_to_filters(col("i") < 2**40, SCHEMA) == []
    assert predicate_to_filters(col("ts") > dt.datetime(2024, 1, 2), SCHEMA) == []
    assert predicate_to_filters(col("b") == 1, SCHEMA) == []
    assert predicate_to_filters(col("s").is_in(["a", None]), SCHEMA) == []
    assert predicate_to_filters(col("missing") == 1, SCHEMA) == []
    assert predicate_to_filters(col("i") == col("f"), SCHEMA) == []


@pytest.mark.parametrize(
    ("value", "dtype", "text"),
    [
        (
            dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
            pa.timestamp("us", tz="UTC"),
            "2024-01-02T03:04:05.123456",
        ),
        # Zoned literals are rendered in UTC, as Hudi reads a naive timestamp text for a zoned column.
        (
            dt.datetime(2024, 1, 1, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=5))),
            pa.timestamp("us", tz="UTC"),
            "2023-12-31T20:30:00",
        ),
        (dt.datetime(2024, 1, 2, 3, 4, 5), pa.timestamp("ms"), "2024-01-02T03:04:05"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 250000), pa.timestamp("us"), "2024-01-02T03:04:05.250000"),
        (dt.date(2024, 2, 29), pa.date32(), "2024-02-29"),
        (Decimal("3.10"), pa.decimal128(12, 2), "3.10"),
        (Decimal("-0.5"), pa.decimal128(12, 2), "-0.5"),
        (np.int64(7), pa.int64(), "7"),
        (-5, pa.int32(), "-5"),
        (2, pa.float64(), "2"),
        (2.5, pa.float64(), "2.5"),
        (False, pa.bool_(), "false"),
        ("x y", pa.string(), "x y"),
        (b"abc", pa.binary(), "abc"),
    ],
)
def test_literal_text_is_what_hudi_filters_take(value: object, dtype: pa.DataType, text: str) -> None:
    assert literal_text(value, dtype, "c") == text


def test_referenced_columns() -> None:
    expr = ((col("a") + col("b")) > 3) & ~col("c").is_null() & col("a").is_in([1])
    assert referenced_columns(expr) == ["a", "b", "c"]
    assert referenced_columns((col("b") > 1) & (col("a") == col("b"))) == ["b", "a"]
    assert referenced_columns(lit(1) == lit(1)) == []


# -- pushing never changes results ---------------------------------------------------

# ``row`` numbers the rows (NaN never equals itself, so rows are compared by number).
ROWS = pa.table(
    {
        "row": pa.array(range(7), pa.int32()),
        "i": pa.array([-5, 0, 1, 2, 3, 10, None], pa.int32()),
        "l": pa.array([1, 2, 3, 2**40, -4, 7, 0], pa.int64()),
        "f": pa.array([0.5, 1.0, 2.0, 2.5, 3.0, float("nan"), None], pa.float64()),
        "s": pa.array(["a", "b", "c", "m", "x", None, ""], pa.string()),
        "b": pa.array([True, False, True, None, False, True, False], pa.bool_()),
        "d": pa.array(
            [Decimal(v) for v in ["1.50", "3.10", "-2.00", "0.00", "9.99", "1.49", "3.11"]], pa.decimal128(12, 2)
        ),
        "day": pa.array([dt.date(2024, 1, d) for d in (1, 2, 3, 30, 31, 1, 2)], pa.date32()),
        "ts": pa.array(
            [dt.datetime(2024, 1, 2, h, tzinfo=UTC) for h in (0, 1, 2, 3, 4, 5, 6)], pa.timestamp("us", "UTC")
        ),
        "local": pa.array([dt.datetime(2024, 1, 2, 3, 4, s) for s in range(7)], pa.timestamp("ms")),
        "bin": pa.array([b"abc", b"", b"x", b"abd", None, b"ab", b"abc"], pa.binary()),
    }
)

PREDICATES = [
    (col("i") >= 1) & (col("i") < 10),
    lit(2) < col("i"),
    col("i").is_in([1, 3, 99]),
    col("i").not_in([0, 1]),
    (col("s") == "a") | (col("s") == "m"),
    (col("s") == "a") | (col("i") == 10),
    ~(col("s") == "a"),
    col("s") != "b",
    (col("f") > 1) & (col("l") < 2**40),
    col("f") > 2,
    col("i") > 1.5,
    col("d") >= Decimal("1.5"),
    col("d") == Decimal("3.10"),
    col("day") < dt.date(2024, 1, 30),
    col("ts") > dt.datetime(2024, 1, 2, 4, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    col("local") <= dt.datetime(2024, 1, 2, 3, 4, 3),
    col("b") == True,  # noqa: E712
    col("bin") == b"abc",
    (col("i") == 3) & ((col("s") == "x") | col("s").is_null()),
]


# Indexes of PREDICATES that push no filter (OR across columns, NOT, an int column against a float).
NOT_PUSHED = {5, 6, 10}


@pytest.mark.parametrize("index", range(len(PREDICATES)))
def test_pushed_filters_keep_every_row_the_predicate_keeps(index: int) -> None:
    """What the datasource does: the pushed filters mask rows, then the whole
    predicate applies; the rows are those of the predicate alone."""
    expr = PREDICATES[index]
    predicate = expr.to_pyarrow()
    expected = ROWS.filter(predicate)
    pushed = filters_to_predicate(predicate_to_filters(expr, SCHEMA), SCHEMA)
    assert (pushed is None) == (index in NOT_PUSHED)
    masked = ROWS if pushed is None else pushed.keep(ROWS)
    assert masked.filter(predicate)["row"].to_pylist() == expected["row"].to_pylist()
