"""Arrow as Spark reads it: one type mapping for both Spark integrations.

Spark reads Arrow as microsecond timestamps, 32-bit dates, signed integers,
decimals up to 38 digits, (non-large) strings and binaries, lists, structs and
maps. Every other type the table API can return is mapped to the Spark type
Apache Hudi's own Spark reader gives it (``time-millis`` as an int, ``fixed``
as binary, ...), by a cast done once per batch where the rows are read.

The RayDP bridge (``hudi_ray.spark``, pyspark 3.5) and the Spark 4 data
source (``hudi_ray.spark4``) both use this module, so a column has the same
Spark type whichever way it reaches Spark. It imports neither Ray nor
pyspark at module level: the two live in different environments.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from hudi_ray.core.exceptions import HudiSchemaError, HudiUnsupportedError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType

_UNSIGNED = {8: pa.int16(), 16: pa.int32(), 32: pa.int64()}


def spark_arrow_type(t: pa.DataType, column: str = "") -> pa.DataType:
    """The Arrow type Spark reads ``t`` as (``t`` itself when Spark reads it already)."""
    types = pa.types
    if types.is_timestamp(t):
        # Spark timestamps are microseconds since the epoch, UTC.
        return pa.timestamp("us", tz=t.tz or "UTC")
    if types.is_date64(t):
        return pa.date32()
    if types.is_time32(t):
        return pa.int32()
    if types.is_time64(t):
        return pa.int64()
    if types.is_fixed_size_binary(t) or types.is_large_binary(t) or types.is_binary_view(t):
        return pa.binary()
    if types.is_large_string(t) or types.is_string_view(t):
        return pa.string()
    if types.is_unsigned_integer(t):
        return _UNSIGNED.get(t.bit_width, pa.decimal128(20, 0))
    if types.is_float16(t):
        return pa.float32()
    if types.is_decimal(t):
        if t.precision > 38:
            raise HudiUnsupportedError(f"Column {column!r}: Spark decimals hold at most 38 digits, not {t}")
        return pa.decimal128(t.precision, t.scale)
    if types.is_dictionary(t):
        return spark_arrow_type(t.value_type, column)
    if types.is_duration(t):
        return pa.duration("us")
    if types.is_map(t):
        key = spark_arrow_type(t.key_type, column)
        item = t.item_field
        return pa.map_(key, item.with_type(spark_arrow_type(item.type, column)))
    if types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t) or types.is_list_view(t):
        value = t.value_field
        return pa.list_(value.with_type(spark_arrow_type(value.type, column)))
    if types.is_struct(t):
        return pa.struct([f.with_type(spark_arrow_type(f.type, f"{column}.{f.name}")) for f in t])
    if (
        types.is_boolean(t)
        or types.is_signed_integer(t)
        or types.is_floating(t)
        or types.is_string(t)
        or types.is_binary(t)
        or types.is_date32(t)
        or types.is_null(t)
    ):
        return t
    raise HudiUnsupportedError(f"Column {column!r} has type {t}, which Spark cannot read")


def spark_arrow_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every column as Spark's Arrow reader takes it (metadata dropped)."""
    return pa.schema([f.with_type(spark_arrow_type(f.type, f.name)) for f in schema])


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` in ``schema`` (from ``spark_arrow_schema`` of its own schema)."""
    if table.schema.equals(schema, check_metadata=False):
        return table
    if table.schema.names != schema.names:
        raise HudiSchemaError(f"Batch columns {table.schema.names} differ from the DataFrame's {schema.names}")
    # Unsafe only where Spark holds less than Arrow: nanoseconds truncate to microseconds.
    return table.cast(schema, safe=False)


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of a ``spark_arrow_schema``."""
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(f.name, from_arrow_type(f.type), nullable=f.nullable) for f in schema])


def spark_batches(tables: Iterable[pa.Table], schema: StructType) -> Iterator[pa.RecordBatch]:
    """The tables' batches in PySpark's own Arrow mapping of ``schema``, which the batches a
    Python source or ``mapInArrow`` yields must match exactly."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        target = to_arrow_schema(schema, timezone="UTC")  # type: ignore[call-arg]  # PySpark 4
    except TypeError:  # PySpark 3.5 takes no time zone
        target = to_arrow_schema(schema)
    for table in tables:
        for batch in table.to_batches():
            if not batch.schema.equals(target):
                # Unsafe only where Spark holds less: nanoseconds truncate to microseconds.
                batch = batch.cast(target, safe=False)
            yield batch
