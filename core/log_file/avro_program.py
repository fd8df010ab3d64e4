"""The compiled Avro decoder's view of a writer schema: a small program of integers.

The compiled record walk (``avro_kernels``) knows no schemas: it reads one
row of ``program`` per top-level field (what the value is, which union branch
holds it, where its values go) and, to step over nested values, a table of
``nodes``. This module builds both from the schema; it never imports numba,
so planning a read costs nothing until a block is decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
else:
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")

# Value kinds, both of top-level fields (ops) and of nodes of nested values.
OP_NULL = 0
OP_BOOLEAN = 1
OP_INT = 2
OP_LONG = 3
OP_FLOAT = 4
OP_DOUBLE = 5
OP_BYTES = 6  # and strings: the same bytes, checked as UTF-8 afterwards
OP_FIXED = 7
OP_ENUM = 8
OP_NESTED = 9  # a record, array or map: stepped over by the node table
OP_BYTES_DECIMAL = 10
OP_FIXED_DECIMAL = 11
# Node kinds only.
NODE_RECORD = 12
NODE_ARRAY = 13
NODE_MAP = 14
NODE_UNION = 15

# Statuses of the compiled functions (``avro_kernels``).
OK = 0
PAST_RECORD = 1  # a value runs past the end of its record
PAST_BLOCK = 2  # a record (or its length prefix) runs past the end of the block
NEGATIVE_RECORD_LENGTH = 3
NEGATIVE_LENGTH = 4
VARINT_TOO_LONG = 5
BAD_BRANCH = 6
BAD_COUNT = 7  # an array's or map's block size runs past the record
INT_RANGE = 8
ENUM_RANGE = 9
DECIMAL_RANGE = 10
OVERFLOW = 11  # a bytes field's output region is full: the caller gives it more room

# Columns of a program row.
P_OP = 0
P_BRANCHES = 1  # union branch count; 0 when the field is not a union
P_VALUE_BRANCH = 2  # the branch holding a value (the other is null); -1 when every branch is null
P_ARG = 3  # fixed size, enum symbol count
P_WIDTH = 4  # a decimal's Arrow width in bytes (16 or 32)
P_SLOT = 5  # row of the field's output array (by kind); -1 when the field is only stepped over
P_VALID = 6  # row of the validity bitmaps; -1 when not wanted or not nullable
P_NODE = 7  # root node of a nested value
P_FIXED_AT = 8  # bytes per record of the fixed-width output before this field's
P_COLUMNS = 9

# Columns of a node row.
N_KIND = 0
N_ARG = 1  # fixed size; child count of records and unions
N_CHILD = 2  # first child in ``children`` (records, unions), or the item/value node (arrays, maps)
N_ZERO = 3  # 1 when the value always takes zero bytes (null, empty records, fixed(0), ...)
N_COLUMNS = 4

_PRIMITIVE_OPS = {
    "null": OP_NULL,
    "boolean": OP_BOOLEAN,
    "int": OP_INT,
    "long": OP_LONG,
    "float": OP_FLOAT,
    "double": OP_DOUBLE,
    "bytes": OP_BYTES,
    "string": OP_BYTES,
}


# What a type's "type" may say of itself; any other name is a reference to a named type.
_KINDS = frozenset((*_PRIMITIVE_OPS, "record", "error", "enum", "fixed", "array", "map"))


class UnsupportedSchema(Exception):
    """The schema has a shape the program cannot express (the caller decodes it with fastavro)."""


@dataclass(frozen=True)
class FieldPlan:
    """How one top-level field decodes."""

    name: str
    arrow: pa.DataType  # its logical Arrow type
    op: int
    branches: int
    value_branch: int
    arg: int
    width: int
    node: int
    symbols: tuple[str, ...] = ()  # an enum's

    @property
    def compiled(self) -> bool:
        """Whether the compiled walk builds its values (else fastavro does, from the whole records)."""
        return self.op != OP_NESTED


@dataclass(frozen=True, eq=False)
class SchemaProgram:
    fields: tuple[FieldPlan, ...]
    nodes: np.ndarray  # int64 (n, N_COLUMNS)
    children: np.ndarray  # int64
    depth: int  # frames a nested value can need: its levels of records, arrays and maps


class _Builder:
    def __init__(self) -> None:
        self.named: dict[str, Any] = {}
        self.nodes: list[list[int]] = []
        self.children: list[int] = []
        self.depth = 0

    def register(self, schema: dict[str, Any], namespace: str | None) -> str | None:
        """Record a named type; the namespace its own fields resolve names in."""
        name = schema.get("name")
        if not isinstance(name, str):
            return namespace
        ns = schema.get("namespace", namespace)
        full = name if "." in name or not ns else f"{ns}.{name}"
        self.named[full] = schema
        self.named.setdefault(name, schema)
        return full.rsplit(".", 1)[0] if "." in full else ns

    def resolve(self, t: Any, namespace: str | None) -> tuple[Any, str | None]:
        """A type with named references and ``{"type": <type>}`` wrappers looked through."""
        while True:
            if isinstance(t, str) and t not in _PRIMITIVE_OPS:
                found = self.named.get(t) or (namespace and self.named.get(f"{namespace}.{t}"))
                if found is None:
                    raise UnsupportedSchema(f"unknown named type {t!r}")
                t = found
                continue
            if isinstance(t, dict) and not isinstance(t.get("type"), str):
                t = t.get("type")
                continue
            if isinstance(t, dict) and t["type"] not in _KINDS and t["type"] in self.named:
                t = t["type"]
                continue
            return t, namespace

    def node(self, t: Any, namespace: str | None, level: int = 1) -> int:
        """The node of a value of type ``t`` (and of everything nested in it)."""
        t, namespace = self.resolve(t, namespace)
        if isinstance(t, list):
            branches = [self.node(b, namespace, level) for b in t]
            return self._add(NODE_UNION, len(branches), branches, zero=False)
        kind = t if isinstance(t, str) else t["type"]
        if kind in _PRIMITIVE_OPS:
            op = _PRIMITIVE_OPS[kind]
            return self._add(op, 0, [], zero=op == OP_NULL)
        if kind == "fixed":
            size = int(t["size"])
            self.register(t, namespace)
            return self._add(OP_FIXED, size, [], zero=size == 0)
        if kind == "enum":
            self.register(t, namespace)
            return self._add(OP_ENUM, len(t["symbols"]), [], zero=False)
        self.depth = max(self.depth, level)
        if kind in ("record", "error"):
            inner = self.register(t, namespace)
            fields = [self.node(f["type"], inner, level + 1) for f in t.get("fields", [])]
            zero = all(self.nodes[f][N_ZERO] for f in fields)
            return self._add(NODE_RECORD, len(fields), fields, zero=zero)
        if kind == "array":
            return self._add(NODE_ARRAY, 0, [self.node(t["items"], namespace, level + 1)], zero=False, inline=True)
        if kind == "map":
            return self._add(NODE_MAP, 0, [self.node(t["values"], namespace, level + 1)], zero=False, inline=True)
        raise UnsupportedSchema(f"type {kind!r}")

    def _add(self, kind: int, arg: int, children: list[int], *, zero: bool, inline: bool = False) -> int:
        if inline:
            child = children[0]
        else:
            child = len(self.children)
            self.children.extend(children)
        self.nodes.append([kind, arg, child, int(zero)])
        return len(self.nodes) - 1

    def field(self, f: dict[str, Any], arrow: pa.DataType, namespace: str | None) -> FieldPlan:
        t = f["type"]
        branches, value_branch = 0, 0
        resolved, ns = self.resolve(t, namespace)
        if isinstance(resolved, list):
            real = [i for i, b in enumerate(resolved) if b != "null"]
            if len(real) > 1:
                raise UnsupportedSchema("a union of more than one non-null type")
            branches = len(resolved)
            value_branch = real[0] if real else -1
            resolved, ns = self.resolve(resolved[real[0]], ns) if real else ("null", ns)
        name = f["name"]
        kind = resolved if isinstance(resolved, str) else resolved["type"]
        logical = resolved.get("logicalType") if isinstance(resolved, dict) else None
        width = 32 if pa.types.is_decimal256(arrow) else 16
        if kind in _PRIMITIVE_OPS:
            op = _PRIMITIVE_OPS[kind]
            if op == OP_BYTES and logical == "decimal" and pa.types.is_decimal(arrow):
                op = OP_BYTES_DECIMAL
            return FieldPlan(name, arrow, op, branches, value_branch, 0, width, -1)
        if kind == "fixed":
            self.register(resolved, ns)
            op = OP_FIXED_DECIMAL if pa.types.is_decimal(arrow) else OP_FIXED
            return FieldPlan(name, arrow, op, branches, value_branch, int(resolved["size"]), width, -1)
        if kind == "enum":
            self.register(resolved, ns)
            symbols = tuple(resolved["symbols"])
            return FieldPlan(name, arrow, OP_ENUM, branches, value_branch, len(symbols), width, -1, symbols)
        # Nested: the whole field (union included) is one node, stepped over by the walk.
        return FieldPlan(name, arrow, OP_NESTED, 0, 0, 0, width, self.node(t, namespace))


def build_program(record: dict[str, Any], arrow: pa.Schema) -> SchemaProgram:
    """The program of a record schema whose Arrow form is ``arrow`` (already checked by its conversion)."""
    builder = _Builder()
    namespace = builder.register(record, None)
    try:
        fields = tuple(builder.field(f, arrow.field(i).type, namespace) for i, f in enumerate(record.get("fields", [])))
    except (KeyError, TypeError, ValueError) as exc:
        raise UnsupportedSchema(str(exc)) from exc
    nodes = np.array(builder.nodes, dtype=np.int64).reshape(-1, N_COLUMNS)
    return SchemaProgram(fields, nodes, np.array(builder.children, dtype=np.int64), builder.depth)
