"""Arrow schema to Avro schema, named the way Spark's Hudi writer names things.

Hudi stores a table's schema as Avro JSON (``hoodie.table.create.schema``, the
``schema`` of every commit and ``parquet.avro.schema`` in base files). Each
Arrow type maps to one Avro type, and each Avro type stands for one Arrow type:
:func:`avro_compatible_schema` gives that Arrow type, which is what the writer
puts in Parquet files so the data matches the schema it declares (an ``int8``
column is declared Avro ``int`` and written as ``int32``, as parquet-avro does).
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from hudi_testkit.errors import SchemaError, UnsupportedTypeError

AvroType = str | list[Any] | dict[str, Any]

_AVRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def decimal_fixed_size(precision: int) -> int:
    """Fewest bytes of a two's complement integer holding every ``precision``-digit unscaled value."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def record_name_and_namespace(table_name: str) -> tuple[str, str]:
    """Hudi's top-level record naming: ``<table>_record`` in namespace ``hoodie.<table>``."""
    # Avro names allow [A-Za-z0-9_] only; table names such as "my-table" would not parse.
    safe = re.sub(r"[^A-Za-z0-9_]", "_", table_name)
    if not safe or safe[0].isdigit():
        safe = f"_{safe}"
    return f"{safe}_record", f"hoodie.{safe}"


def _check_name(name: str, where: str) -> None:
    if not _AVRO_NAME.match(name):
        raise SchemaError(f"Column name {where!r} is not a valid Avro name ([A-Za-z_][A-Za-z0-9_]*)")


def _convert(dtype: pa.DataType, nullable: bool, name: str, namespace: str, where: str) -> tuple[AvroType, pa.DataType]:
    """(Avro type, the Arrow type it stands for) of one value.

    ``name`` and ``namespace`` follow Spark's SchemaConverters: a struct is a
    record named after its field, in the namespace of its parent record; a
    decimal is a fixed named ``fixed`` in the namespace ``<parent>.<field>``,
    so equal names never clash.
    """
    avro, arrow = _convert_non_null(dtype, name, namespace, where)
    if nullable:
        return ["null", avro], arrow
    return avro, arrow


def _convert_non_null(dtype: pa.DataType, name: str, namespace: str, where: str) -> tuple[AvroType, pa.DataType]:
    t = pa.types
    if t.is_dictionary(dtype):
        return _convert_non_null(dtype.value_type, name, namespace, where)
    if t.is_boolean(dtype):
        return "boolean", pa.bool_()
    if t.is_int8(dtype) or t.is_int16(dtype) or t.is_int32(dtype) or t.is_uint8(dtype) or t.is_uint16(dtype):
        return "int", pa.int32()
    if t.is_int64(dtype) or t.is_uint32(dtype):
        return "long", pa.int64()
    if t.is_float16(dtype) or t.is_float32(dtype):
        return "float", pa.float32()
    if t.is_float64(dtype):
        return "double", pa.float64()
    if t.is_string(dtype) or t.is_large_string(dtype) or t.is_string_view(dtype):
        return "string", pa.string()
    if t.is_binary(dtype) or t.is_large_binary(dtype) or t.is_binary_view(dtype) or t.is_fixed_size_binary(dtype):
        return "bytes", pa.binary()
    if t.is_date(dtype):
        return {"type": "int", "logicalType": "date"}, pa.date32()
    if t.is_timestamp(dtype):
        if dtype.unit == "ns":
            raise UnsupportedTypeError(
                f"Column {where!r}: nanosecond timestamps have no Hudi Avro type; cast to 'us' first"
            )
        unit = "us" if dtype.unit == "us" else "ms"  # seconds widen to millis losslessly
        logical = "timestamp" if dtype.tz is not None else "local-timestamp"
        suffix = "micros" if unit == "us" else "millis"
        arrow = pa.timestamp(unit, tz="UTC" if dtype.tz is not None else None)
        return {"type": "long", "logicalType": f"{logical}-{suffix}"}, arrow
    if t.is_time32(dtype) and dtype.unit == "ms":
        return {"type": "int", "logicalType": "time-millis"}, pa.time32("ms")
    if t.is_time64(dtype) and dtype.unit == "us":
        return {"type": "long", "logicalType": "time-micros"}, pa.time64("us")
    if t.is_decimal(dtype):
        fixed = {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": decimal_fixed_size(dtype.precision),
            "logicalType": "decimal",
            "precision": dtype.precision,
            "scale": dtype.scale,
        }
        arrow = pa.decimal128(dtype.precision, dtype.scale) if dtype.precision <= 38 else dtype
        return fixed, arrow
    if t.is_list(dtype) or t.is_large_list(dtype) or t.is_fixed_size_list(dtype) or t.is_list_view(dtype):
        item = dtype.value_field
        avro, arrow = _convert(item.type, item.nullable, name, namespace, f"{where}.element")
        return {"type": "array", "items": avro}, pa.list_(pa.field("element", arrow, item.nullable))
    if t.is_map(dtype):
        if not (t.is_string(dtype.key_type) or t.is_large_string(dtype.key_type)):
            raise UnsupportedTypeError(f"Column {where!r}: Avro map keys are strings, got {dtype.key_type}")
        item = dtype.item_field
        avro, arrow = _convert(item.type, item.nullable, name, namespace, f"{where}.value")
        key = pa.field("key", pa.string(), nullable=False)
        return {"type": "map", "values": avro}, pa.map_(key, pa.field("value", arrow, item.nullable))
    if t.is_struct(dtype):
        child_namespace = f"{namespace}.{name}"
        fields: list[dict[str, Any]] = []
        arrow_fields: list[pa.Field] = []
        for child in dtype:
            avro_field, arrow_field = _field(child, child_namespace, f"{where}.{child.name}")
            fields.append(avro_field)
            arrow_fields.append(arrow_field)
        record = {"type": "record", "name": name, "namespace": namespace, "fields": fields}
        return record, pa.struct(arrow_fields)
    raise UnsupportedTypeError(f"Column {where!r}: Arrow type {dtype} has no Hudi Avro type")


def _field(field: pa.Field, namespace: str, where: str) -> tuple[dict[str, Any], pa.Field]:
    _check_name(field.name, where)
    avro, arrow = _convert(field.type, field.nullable, field.name, namespace, where)
    out: dict[str, Any] = {"name": field.name, "type": avro}
    if field.nullable:
        out["default"] = None
    return out, pa.field(field.name, arrow, nullable=field.nullable)


def _convert_schema(schema: pa.Schema, table_name: str) -> tuple[dict[str, Any], pa.Schema]:
    name, namespace = record_name_and_namespace(table_name)
    child_namespace = f"{namespace}.{name}"
    pairs = [_field(f, child_namespace, f.name) for f in schema]
    record = {"type": "record", "name": name, "namespace": namespace, "fields": [p[0] for p in pairs]}
    return record, pa.schema([p[1] for p in pairs])


def arrow_to_avro_schema(schema: pa.Schema, table_name: str) -> dict[str, Any]:
    """The Avro record schema Hudi would record for a table with this Arrow schema.

    Nullable fields are ``["null", T]`` unions with ``"default": null``, the form
    Hudi writes into commit metadata.
    """
    return _convert_schema(schema, table_name)[0]


def avro_compatible_schema(schema: pa.Schema) -> pa.Schema:
    """The Arrow schema data must have to match :func:`arrow_to_avro_schema` exactly."""
    return _convert_schema(schema, "t")[1]
