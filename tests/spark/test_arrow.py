"""Arrow as Spark's Arrow reader takes it: type mapping, casts and IPC streams (no Spark needed)."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest

from hudi_ray.core.exceptions import HudiUnsupportedError
from hudi_ray.spark.arrow import conform, ipc_stream, spark_arrow_schema, spark_arrow_type

pytest.importorskip("pyspark")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (pa.timestamp("ms"), pa.timestamp("us", tz="UTC")),
        (pa.timestamp("ns", tz="UTC"), pa.timestamp("us", tz="UTC")),
        (pa.timestamp("us", tz="Asia/Tokyo"), pa.timestamp("us", tz="Asia/Tokyo")),
        (pa.date64(), pa.date32()),
        (pa.time32("ms"), pa.int32()),  # Avro time-millis: an int, as Hudi's Spark reader gives it
        (pa.time64("us"), pa.int64()),
        (pa.binary(16), pa.binary()),  # Avro fixed
        (pa.large_string(), pa.string()),
        (pa.large_binary(), pa.binary()),
        (pa.uint8(), pa.int16()),
        (pa.uint32(), pa.int64()),
        (pa.uint64(), pa.decimal128(20, 0)),
        (pa.float16(), pa.float32()),
        (pa.dictionary(pa.int32(), pa.string()), pa.string()),
        (pa.decimal128(10, 2), pa.decimal128(10, 2)),
        (pa.large_list(pa.timestamp("ms")), pa.list_(pa.timestamp("us", tz="UTC"))),
        (
            pa.map_(pa.large_string(), pa.struct([("t", pa.time32("ms"))])),
            pa.map_(pa.string(), pa.struct([("t", pa.int32())])),
        ),
        (pa.int64(), pa.int64()),
        (pa.string(), pa.string()),
    ],
)
def test_spark_arrow_type(given: pa.DataType, expected: pa.DataType) -> None:
    assert spark_arrow_type(given) == expected


def test_unsupported_types_name_the_column() -> None:
    with pytest.raises(HudiUnsupportedError, match=r"'big'.*38 digits"):
        spark_arrow_schema(pa.schema([("big", pa.decimal256(50, 2))]))
    with pytest.raises(HudiUnsupportedError, match="'u'"):
        spark_arrow_type(pa.union([pa.field("a", pa.int32())], "sparse"), "u")


def test_ipc_stream_conforms_every_batch() -> None:
    table = pa.table(
        {
            "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 678000)], pa.timestamp("ms")),
            "amount": pa.array([decimal.Decimal("1.25")], pa.decimal128(6, 2)),
            "tags": pa.array([[b"ab"]], pa.list_(pa.binary(2))),
            "name": pa.array(["x"], pa.large_string()),
        }
    )
    schema = spark_arrow_schema(table.schema)
    data = ipc_stream([table, table.slice(0, 0), table], schema)
    back = pa.ipc.open_stream(data).read_all()
    assert back.schema == schema
    assert back.num_rows == 2
    assert back.column("ts")[0].as_py() == dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.timezone.utc)
    assert back.column("tags").to_pylist() == [[b"ab"], [b"ab"]]
    # A chunk with no rows is still a stream Spark reads as an empty partition.
    empty = pa.ipc.open_stream(ipc_stream([], schema)).read_all()
    assert empty.num_rows == 0 and empty.schema == schema


def test_conform_truncates_nanoseconds_only() -> None:
    table = pa.table({"ts": pa.array([1_000_001_999], pa.timestamp("ns"))})
    out = conform(table, spark_arrow_schema(table.schema))
    assert out.column("ts").cast(pa.int64()).to_pylist() == [1_000_001]
