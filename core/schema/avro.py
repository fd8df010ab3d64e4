"""Avro schema to Arrow schema, the one place this mapping lives."""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any, NoReturn

from hudi_ray.core.exceptions import HudiSchemaError
from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

RECORD_KEY = "_hoodie_record_key"
META_FIELDS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    RECORD_KEY,
    "_hoodie_partition_path",
    "_hoodie_file_name",
)


@functools.cache
def _primitives() -> dict[str, pa.DataType]:
    return {
        "boolean": pa.bool_(),
        "int": pa.int32(),
        "long": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "bytes": pa.binary(),
        "string": pa.string(),
    }


def parse_avro_schema(text: str, where: str) -> dict[str, Any]:
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HudiSchemaError(f"Malformed Avro schema in {where}: {exc}") from exc
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise HudiSchemaError(f"Avro schema in {where} is not a record schema")
    check_avro_names(schema, where)
    return schema


# Names as the Avro spec defines them, and as hudi-rs (apache-avro) enforces them:
# a damaged name must not be read as another column. A type's name may carry its
# namespace (a leading dot meaning none); a namespace may be empty.
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = rf"{_NAME}(?:\.{_NAME})*"
_SIMPLE_NAME = re.compile(_NAME)
_TYPE_NAME = re.compile(rf"(?:(?:{_DOTTED})?\.)?{_NAME}")
_NAMESPACE = re.compile(rf"(?:{_DOTTED})?")
_NAMED_TYPES = ("record", "error", "enum", "fixed")


def check_avro_names(schema: Any, where: str) -> None:
    """Refuse type names, namespaces, field names and enum symbols the Avro spec
    does not allow. Names that are not strings, and anything else malformed,
    are left to the conversion, which reports them."""

    def refuse(what: str, value: str, path: str) -> NoReturn:
        at = f"column {path}" if path else "the top-level record"
        if what == "field name":
            at = f"the record at column {path}" if path else "the top-level record"
        raise HudiSchemaError(
            f"Invalid Avro {what} {value!r} in {at} of {where}: Avro names match [A-Za-z_][A-Za-z0-9_]*"
            + (", dot-separated in namespaces" if what in ("namespace", "type name") else "")
        )

    # Iterative: a deeply nested schema must not overflow the interpreter's stack.
    pending: list[tuple[Any, str]] = [(schema, "")]
    while pending:
        node, path = pending.pop()
        if isinstance(node, list):
            pending.extend((branch, path) for branch in node)
            continue
        if not isinstance(node, dict):
            continue  # a primitive or a reference to a named type
        typ = node.get("type")
        if typ in _NAMED_TYPES:
            name, namespace = node.get("name"), node.get("namespace")
            if isinstance(name, str) and not _TYPE_NAME.fullmatch(name):
                refuse("type name", name, path)
            if isinstance(namespace, str) and not _NAMESPACE.fullmatch(namespace):
                refuse("namespace", namespace, path)
        if typ in ("record", "error") and isinstance(node.get("fields"), list):
            for field in node["fields"]:
                name = field.get("name") if isinstance(field, dict) else None
                if not isinstance(name, str):
                    continue
                if not _SIMPLE_NAME.fullmatch(name):
                    refuse("field name", name, path)
                pending.append((field.get("type"), f"{path}.{name}" if path else name))
        elif typ == "enum" and isinstance(node.get("symbols"), list):
            for symbol in node["symbols"]:
                if isinstance(symbol, str) and not _SIMPLE_NAME.fullmatch(symbol):
                    refuse("enum symbol", symbol, path)
        elif typ == "array":
            pending.append((node.get("items"), f"{path}.element"))
        elif typ == "map":
            pending.append((node.get("values"), f"{path}.value"))
        elif isinstance(typ, (dict, list)):
            pending.append((typ, path))


class _Converter:
    def __init__(self, where: str) -> None:
        self.where = where
        self.named: dict[str, Any] = {}
        self._open: set[int] = set()

    def _register(self, schema: dict[str, Any], namespace: str | None) -> str | None:
        name = schema.get("name")
        if not name:
            return namespace
        if not isinstance(name, str) or not isinstance(schema.get("namespace", ""), (str, type(None))):
            raise HudiSchemaError(f"Avro type name {name!r} in {self.where} is not a string")
        ns = schema.get("namespace", namespace)
        full = name if "." in name or not ns else f"{ns}.{name}"
        self.named[full] = schema
        self.named.setdefault(name, schema)
        return full.rsplit(".", 1)[0] if "." in full else ns

    def field_type(self, schema: Any, namespace: str | None, path: str) -> tuple[pa.DataType, bool]:
        """Arrow type and nullability for an Avro type."""
        if isinstance(schema, list):
            branches = [b for b in schema if b != "null"]
            nullable = len(branches) < len(schema)
            if len(branches) != 1:
                raise HudiSchemaError(f"Unsupported Avro union {json.dumps(schema)} at column {path} in {self.where}")
            dtype, inner_nullable = self.field_type(branches[0], namespace, path)
            return dtype, nullable or inner_nullable
        if isinstance(schema, str):
            if schema in _primitives():
                return _primitives()[schema], False
            if schema == "null":
                return pa.null(), True
            named = self.named.get(schema) or (namespace and self.named.get(f"{namespace}.{schema}"))
            if named is None:
                raise HudiSchemaError(f"Unknown Avro type {schema!r} at column {path} in {self.where}")
            return self.field_type(named, namespace, path)
        if not isinstance(schema, dict):
            raise HudiSchemaError(f"Malformed Avro type at column {path} in {self.where}")
        typ = self._attr(schema, "type", path)
        logical = schema.get("logicalType")
        if typ in ("record", "error"):
            ns = self._register(schema, namespace)
            if id(schema) in self._open:
                # Arrow has no recursive types; following the reference would never end.
                raise HudiSchemaError(f"Recursive Avro record {schema.get('name')!r} at column {path} in {self.where}")
            self._open.add(id(schema))
            try:
                return pa.struct(self.fields(schema, ns, path)), False
            finally:
                self._open.discard(id(schema))
        if typ == "enum":
            self._register(schema, namespace)
            return pa.string(), False
        if typ == "fixed":
            self._register(schema, namespace)
            if logical == "decimal":
                return _decimal(schema, self, path), False
            if logical == "duration":
                return pa.month_day_nano_interval(), False
            return pa.binary(self._int_attr(schema, "size", path, minimum=0)), False
        if typ == "array":
            items = self._attr(schema, "items", path)
            item, item_null = self.field_type(items, namespace, f"{path}.element")
            return pa.list_(pa.field("element", item, nullable=item_null)), False
        if typ == "map":
            values = self._attr(schema, "values", path)
            value, value_null = self.field_type(values, namespace, f"{path}.value")
            return pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", value, value_null)), False
        if isinstance(typ, str) and typ in _primitives():
            return _logical(typ, logical, schema, self, path), False
        if isinstance(typ, (dict, list)) or (isinstance(typ, str) and typ in self.named):
            return self.field_type(typ, namespace, path)
        raise HudiSchemaError(f"Unsupported Avro type {typ!r} at column {path} in {self.where}")

    def _attr(self, schema: dict[str, Any], key: str, path: str) -> Any:
        if key not in schema:
            raise HudiSchemaError(f"Avro schema of column {path or '<record>'} in {self.where} lacks {key!r}")
        return schema[key]

    def _int_attr(self, schema: dict[str, Any], key: str, path: str, minimum: int, default: int | None = None) -> int:
        raw = schema.get(key, default) if default is not None else self._attr(schema, key, path)
        if not isinstance(raw, int) or isinstance(raw, bool) or raw < minimum:
            raise HudiSchemaError(
                f"Avro schema of column {path} in {self.where} has {key}={raw!r}; expected an integer >= {minimum}"
            )
        return raw

    def fields(self, record: dict[str, Any], namespace: str | None, prefix: str) -> list[pa.Field]:
        out = []
        fields = record.get("fields", [])
        if not isinstance(fields, list):
            raise HudiSchemaError(f"Avro record {prefix or record.get('name')!r} in {self.where} has no field list")
        for i, f in enumerate(fields):
            if not isinstance(f, dict) or not isinstance(f.get("name"), str):
                raise HudiSchemaError(
                    f"Field {i} of Avro record {prefix or record.get('name')!r} in {self.where} has no name"
                )
            name = f["name"]
            path = f"{prefix}.{name}" if prefix else name
            dtype, nullable = self.field_type(self._attr(f, "type", path), namespace, path)
            out.append(pa.field(name, dtype, nullable=nullable))
        return out


def _decimal(schema: dict[str, Any], conv: _Converter, path: str) -> pa.DataType:
    precision = conv._int_attr(schema, "precision", path, minimum=1)
    scale = conv._int_attr(schema, "scale", path, minimum=0, default=0)
    if precision > 76 or scale > precision:
        raise HudiSchemaError(
            f"Avro decimal at column {path} in {conv.where} has precision {precision} and scale {scale}; "
            "expected 1 <= precision <= 76 and scale <= precision"
        )
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def _logical(typ: str, logical: str | None, schema: dict[str, Any], conv: _Converter, path: str) -> pa.DataType:
    if logical == "decimal" and typ == "bytes":
        return _decimal(schema, conv, path)
    if typ == "int":
        if logical == "date":
            return pa.date32()
        if logical == "time-millis":
            return pa.time32("ms")
    if typ == "long":
        if logical == "time-micros":
            return pa.time64("us")
        if logical == "timestamp-millis":
            return pa.timestamp("ms", tz="UTC")
        if logical == "timestamp-micros":
            return pa.timestamp("us", tz="UTC")
        if logical == "timestamp-nanos":
            return pa.timestamp("ns", tz="UTC")
        if logical == "local-timestamp-millis":
            return pa.timestamp("ms")
        if logical == "local-timestamp-micros":
            return pa.timestamp("us")
        if logical == "local-timestamp-nanos":
            return pa.timestamp("ns")
    return _primitives()[typ]


def avro_to_arrow_schema(schema: dict[str, Any] | str, where: str = "schema") -> pa.Schema:
    """Convert an Avro record schema (dict or JSON text) to an Arrow schema.

    Hudi's meta fields are typed ``string not null``: every row written with
    meta fields has them set, whatever the Avro union says.
    """
    record = parse_avro_schema(schema, where) if isinstance(schema, str) else schema
    conv = _Converter(where)
    ns = conv._register(record, None)
    fields = conv.fields(record, ns, "")
    fields = [pa.field(f.name, pa.string(), nullable=False) if f.name in META_FIELDS else f for f in fields]
    return pa.schema(fields)


def avro_schema_with_meta_fields(record: dict[str, Any]) -> dict[str, Any]:
    """The record with Hudi's meta fields prepended (unless already present)."""
    existing = {f["name"] for f in record.get("fields", [])}
    meta = [{"name": n, "type": ["null", "string"], "default": None} for n in META_FIELDS if n not in existing]
    return {**record, "fields": meta + list(record.get("fields", []))}


def avro_schema_without_meta_fields(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "fields": [f for f in record.get("fields", []) if f["name"] not in META_FIELDS]}
