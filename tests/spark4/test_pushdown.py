"""Spark filters to Hudi filters: only those that select exactly the same rows (no Spark session)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from pyspark.sql import datasource as sds

from hudi_ray.core.expr import ExprOperator, Filter
from hudi_ray.spark4.pushdown import split_filters, to_hudi_filter

pytestmark = pytest.mark.skipif(not hasattr(sds, "Filter"), reason="Spark filters arrived in PySpark 4.1")

SCHEMA = pa.schema(
    [
        ("i", pa.int32()),
        ("s", pa.string()),
        ("d", pa.float64()),
        ("dec", pa.decimal128(10, 2)),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("ts_ns", pa.timestamp("ns")),
        ("b", pa.bool_()),
        ("st", pa.struct([("x", pa.int32())])),
    ]
)


@pytest.mark.parametrize(
    ("spark_filter", "expected"),
    [
        (sds.EqualTo(("i",), 5), Filter("i", ExprOperator.Eq, ("5",))),
        (sds.EqualNullSafe(("s",), " sf "), Filter("s", ExprOperator.Eq, (" sf ",))),  # spaces kept
        (sds.In(("s",), ("a,b", "c")), Filter("s", ExprOperator.In, ("a,b", "c"))),
        (sds.Not(sds.EqualTo(("i",), 5)), Filter("i", ExprOperator.Ne, ("5",))),
        (sds.Not(sds.GreaterThan(("i",), 5)), Filter("i", ExprOperator.Lte, ("5",))),
        (sds.LessThan(("d",), 1.5), Filter("d", ExprOperator.Lt, ("1.5",))),
        (sds.GreaterThanOrEqual(("dec",), Decimal("1.25")), Filter("dec", ExprOperator.Gte, ("1.25",))),
        (sds.LessThanOrEqual(("day",), dt.date(2024, 1, 2)), Filter("day", ExprOperator.Lte, ("2024-01-02",))),
        (
            sds.GreaterThan(("ts",), dt.datetime(2024, 1, 2, 9, 0, tzinfo=dt.timezone(dt.timedelta(hours=9)))),
            Filter("ts", ExprOperator.Gt, ("2024-01-02T00:00:00",)),
        ),
        (sds.EqualTo(("b",), True), Filter("b", ExprOperator.Eq, ("true",))),
    ],
)
def test_exact_filters_are_taken(spark_filter: object, expected: Filter) -> None:
    assert to_hudi_filter(spark_filter, SCHEMA) == expected


@pytest.mark.parametrize(
    "spark_filter",
    [
        sds.IsNull(("i",)),  # Hudi filters have no IS NULL
        sds.IsNotNull(("i",)),
        sds.Not(sds.In(("i",), (1, 2))),  # Arrow keeps null rows in NOT IN
        sds.GreaterThan(("d",), 1.0),  # Spark orders NaN above every number
        sds.EqualTo(("d",), float("nan")),
        sds.In(("i",), (1, None)),
        sds.EqualNullSafe(("i",), None),
        sds.EqualTo(("i",), 2**40),  # does not fit the column's type
        sds.EqualTo(("ts_ns",), dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)),  # Spark sees truncated ns
        sds.EqualTo(("st", "x"), 1),  # nested
        sds.EqualTo(("missing",), 1),
        sds.StringStartsWith(("s",), "a"),
        sds.EqualTo(("day",), dt.datetime(2024, 1, 2, 3, 4)),
    ],
)
def test_inexact_filters_go_back_to_spark(spark_filter: object) -> None:
    assert to_hudi_filter(spark_filter, SCHEMA) is None


def test_split_keeps_the_objects_spark_gave() -> None:
    taken_f, left_f = sds.EqualTo(("i",), 1), sds.IsNotNull(("i",))
    taken, rejected = split_filters([taken_f, left_f, sds.EqualTo(("i",), 1)], SCHEMA)
    assert taken == [Filter("i", ExprOperator.Eq, ("1",))]
    assert rejected == [left_f] and rejected[0] is left_f
