"""Avro commit metadata (timeline layout 2), decoded faster than fastavro alone.

A commit of a few thousand files holds as many write stats, and fastavro takes
about 12 µs to build each one: a third of planning a point lookup on such a table,
paid every time the table is opened. Here the write stats (``partitionToWriteStats``,
the record's first field in every Hudi version) are decoded by functions built once
per writer schema, and fastavro decodes the record's other fields. The result is
what fastavro gives for the whole record, value for value.

The fast path takes only what it reproduces exactly: one record in one container
block, and write stats of null, boolean, int, long, float, double, string, bytes,
records, arrays, maps and unions, without logical types. Anything else, and any
bytes it cannot decode, goes to fastavro, which then decodes the record or raises
its own error: the fast path never decides that metadata is malformed.
"""

from __future__ import annotations

import io
import json
import struct
import zlib
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import fastavro
else:
    fastavro = lazy_module("fastavro")

# (value, position after it) of the value at a position.
Reader = Callable[[bytes, int], tuple[Any, int]]

_STATS_FIELD = "partitionToWriteStats"
_DOUBLE = struct.Struct("<d").unpack_from
_FLOAT = struct.Struct("<f").unpack_from


class Unsupported(Exception):
    """A schema or container the fast path does not reproduce exactly."""


def _long(buf: bytes, pos: int) -> tuple[int, int]:
    """A zig-zag varint."""
    b = buf[pos]
    pos += 1
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos
    n = b & 0x7F
    shift = 7
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return (n >> 1) ^ -(n & 1), pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _string(buf: bytes, pos: int) -> tuple[str, int]:
    n, pos = _long(buf, pos)
    end = pos + n
    if n < 0 or end > len(buf):
        raise ValueError("string length outside the datum")
    return buf[pos:end].decode("utf-8"), end


def _bytes(buf: bytes, pos: int) -> tuple[bytes, int]:
    n, pos = _long(buf, pos)
    end = pos + n
    if n < 0 or end > len(buf):
        raise ValueError("bytes length outside the datum")
    return buf[pos:end], end


def _null(buf: bytes, pos: int) -> tuple[None, int]:
    return None, pos


def _boolean(buf: bytes, pos: int) -> tuple[bool, int]:
    b = buf[pos]
    if b > 1:
        raise ValueError("boolean byte out of range")
    return b == 1, pos + 1


def _double(buf: bytes, pos: int) -> tuple[float, int]:
    return _DOUBLE(buf, pos)[0], pos + 8


def _float(buf: bytes, pos: int) -> tuple[float, int]:
    return _FLOAT(buf, pos)[0], pos + 4


def _int(buf: bytes, pos: int) -> tuple[int, int]:
    value, pos = _long(buf, pos)
    if not -(2**31) <= value < 2**31:
        raise ValueError("int out of range")
    return value, pos


_PRIMITIVES: dict[str, Reader] = {
    "null": _null,
    "boolean": _boolean,
    "int": _int,
    "long": _long,
    "float": _float,
    "double": _double,
    "string": _string,
    "bytes": _bytes,
}


def _reader(schema: Any) -> Reader:
    """The decoding function of a schema node; ``Unsupported`` where it might differ from fastavro."""
    if isinstance(schema, str):
        found = _PRIMITIVES.get(schema)
        if found is None:
            raise Unsupported(f"named type {schema!r}")
        return found
    if isinstance(schema, list):
        return _union(schema)
    if not isinstance(schema, dict) or "logicalType" in schema:
        raise Unsupported("logical or unknown type")
    kind = schema.get("type")
    if kind == "record":
        return _record(schema)
    if kind == "array":
        return _repeated(_reader(schema.get("items")), None, schema.get("items"))
    if kind == "map":
        return _repeated(_reader(schema.get("values")), _string, schema.get("values"))
    if isinstance(kind, str) and kind in _PRIMITIVES:
        return _PRIMITIVES[kind]
    raise Unsupported(f"type {kind!r}")


def _union(branches: list[Any]) -> Reader:
    readers = [_reader(b) for b in branches]
    if len(readers) == 2 and readers[0] is _null:
        value = readers[1]

        def optional(buf: bytes, pos: int) -> tuple[Any, int]:
            b = buf[pos]
            if b == 0:
                return None, pos + 1
            if b == 2:
                return value(buf, pos + 1)
            raise ValueError("union branch out of range")

        return optional

    def union(buf: bytes, pos: int) -> tuple[Any, int]:
        index, pos = _long(buf, pos)
        if not 0 <= index < len(readers):
            raise ValueError("union branch out of range")
        return readers[index](buf, pos)

    return union


def _zero_width(schema: Any) -> bool:
    """True when a value of ``schema`` may take no bytes (a block count then bounds nothing)."""
    if schema == "null" or (isinstance(schema, dict) and schema.get("type") == "null"):
        return True
    if isinstance(schema, dict) and schema.get("type") == "record":
        return all(_zero_width(f.get("type")) for f in schema.get("fields") or [])
    return False


def _repeated(item: Reader, key: Reader | None, item_schema: Any) -> Reader:
    """An array (``key`` None) or a map: blocks of items, a count of 0 ends them."""
    if _zero_width(item_schema) and key is None:
        raise Unsupported("array of zero-width items")

    def repeated(buf: bytes, pos: int) -> tuple[Any, int]:
        out: Any = {} if key is not None else []
        while True:
            count, pos = _long(buf, pos)
            if count == 0:
                return out, pos
            if count < 0:
                count = -count
                _, pos = _long(buf, pos)  # the block's size in bytes
            # Every item takes a byte at least: a larger count is damage, not a long loop.
            if count > len(buf) - pos:
                raise ValueError("block count past the end of the datum")
            for _ in range(count):
                if key is None:
                    value, pos = item(buf, pos)
                    out.append(value)
                else:
                    name, pos = key(buf, pos)
                    out[name], pos = item(buf, pos)

    return repeated


# How a record decodes a field: through its reader, or inline for the optional
# longs and strings that make up most of a write stat.
_CALL, _OPTIONAL_LONG, _OPTIONAL_STRING = 0, 1, 2


def _optional_of(schema: Any) -> str | None:
    """``"long"``/``"int"``/``"string"`` for a ``["null", T]`` union of those, else None."""
    if not isinstance(schema, list) or len(schema) != 2 or schema[0] != "null":
        return None
    inner = schema[1]
    if isinstance(inner, dict) and set(inner) <= {"type", "avro.java.string"}:
        inner = inner["type"]
    return inner if inner in ("long", "int", "string") else None


def _record(schema: dict[str, Any]) -> Reader:
    fields = schema.get("fields")
    if not isinstance(fields, list):
        raise Unsupported("record without fields")
    plan: list[tuple[str, int, Reader]] = []
    for f in fields:
        read = _reader(f["type"])
        optional = _optional_of(f["type"])
        how = _OPTIONAL_LONG if optional == "long" else _OPTIONAL_STRING if optional == "string" else _CALL
        plan.append((f["name"], how, read))

    def record(buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        for name, how, read in plan:
            if how == _CALL:
                out[name], pos = read(buf, pos)
                continue
            branch = buf[pos]
            if branch == 0:
                out[name] = None
                pos += 1
            elif branch != 2:
                raise ValueError("union branch out of range")
            elif how == _OPTIONAL_LONG:
                b = buf[pos + 1]
                if b < 0x80:
                    out[name] = (b >> 1) ^ -(b & 1)
                    pos += 2
                else:
                    out[name], pos = _long(buf, pos + 1)
            else:
                b = buf[pos + 1]
                if b < 0x80 and not b & 1:  # a length under 64, in one byte
                    start = pos + 2
                    pos = start + (b >> 1)
                    if pos > len(buf):
                        raise ValueError("string length outside the datum")
                    out[name] = buf[start:pos].decode("utf-8")
                else:
                    out[name], pos = _string(buf, pos + 1)
        return out, pos

    return record


def value_reader(schema: Any) -> Reader | None:
    """A decoding function for values of ``schema`` (a parsed JSON schema node), giving
    what fastavro gives; None where the fast path does not reproduce fastavro exactly."""
    try:
        return _reader(schema)
    except Unsupported:
        return None


@lru_cache(maxsize=32)
def _plan(schema_json: str) -> tuple[Reader, Any] | str:
    """For a writer schema: the write stats' reader and the parsed schema of the other
    fields, or why the fast path does not take it (kept too: most instants' schemas,
    cleans' and rollbacks', are not taken)."""
    try:
        return _plan_of(schema_json)
    except Unsupported as exc:
        return str(exc)


def _plan_of(schema_json: str) -> tuple[Reader, Any]:
    try:
        schema = json.loads(schema_json)
    except ValueError as exc:
        raise Unsupported("writer schema is not JSON") from exc
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise Unsupported("not a record")
    fields = schema.get("fields") or []
    if not fields or fields[0].get("name") != _STATS_FIELD:
        raise Unsupported(f"{_STATS_FIELD} is not the first field")
    stats = _reader(fields[0].get("type"))
    # The other fields alone: fastavro parses them without the write stats' types,
    # so a later field naming one of those types is Unsupported here.
    try:
        rest = fastavro.parse_schema({**schema, "fields": fields[1:]})
    except Exception as exc:  # fastavro raises several types for a schema it cannot parse
        raise Unsupported(f"the fields after {_STATS_FIELD}: {exc}") from exc
    return stats, rest


_MAGIC = b"Obj\x01"


def container_record(raw: bytes) -> tuple[str, bytes]:
    """The writer schema and the one block's decoded bytes of an Avro container holding
    one record (codec null or deflate), read without fastavro's header parsing, which
    parses the schema anew for every container: a table's history is thousands of them."""
    if not raw.startswith(_MAGIC):
        raise Unsupported("not an Avro container")
    pos = len(_MAGIC)
    meta: dict[str, bytes] = {}
    while True:
        count, pos = _long(raw, pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = _long(raw, pos)  # the block's size in bytes
        for _ in range(count):
            key, pos = _string(raw, pos)
            meta[key], pos = _bytes(raw, pos)
    sync = raw[pos : pos + 16]
    pos += 16
    records, pos = _long(raw, pos)
    size, pos = _long(raw, pos)
    end = pos + size
    if records != 1 or len(sync) != 16 or raw[end : end + 16] != sync or end + 16 != len(raw):
        raise Unsupported("not one record in one block")
    body = raw[pos:end]
    codec = meta.get("avro.codec", b"null")
    if codec == b"deflate":
        body = zlib.decompress(body, -15)
    elif codec != b"null":
        raise Unsupported(f"codec {codec!r}")
    schema = meta.get("avro.schema")
    if schema is None:
        raise Unsupported("no writer schema")
    return schema.decode("utf-8"), body


def decode_commit_record(raw: bytes) -> dict[str, Any]:
    """The one record of an Avro container of commit metadata, as fastavro decodes it.

    Raises ``Unsupported`` (never anything else) when the fast path does not apply or
    cannot decode the bytes; the caller then decodes with fastavro.
    """
    try:
        schema_json, body = container_record(raw)
        plan = _plan(schema_json)
        if isinstance(plan, str):
            raise Unsupported(plan)
        stats, rest = plan
        value, pos = stats(body, 0)
        others = fastavro.schemaless_reader(io.BytesIO(body[pos:]), rest)
        if not isinstance(others, dict):
            raise Unsupported("the other fields are not a record")
        return {_STATS_FIELD: value, **others}
    except Unsupported:
        raise
    except Exception as exc:  # damage or anything unforeseen: fastavro decides
        raise Unsupported(str(exc)) from exc
