"""The files data instants wrote, as columns: what the index guards ask of every write.

The guards need, of every commit a table ever made, its operation and each write
stat's partition, file id, file name and insert count. A long-lived table has
thousands of commits in its archive, and decoding their metadata whole in Python
takes seconds. Here the metadata of many commits (Avro records of one writer schema)
is walked by one compiled loop (``write_kernels``) that reports where those fields
lie, and the columns are built from that with numpy and Arrow.

The compiled path takes only metadata that the full decode and its checks
(``timeline.validate_commit_metadata``) would accept unchanged. Anything else, a
schema it does not know or a value those checks would look at twice, is left to the
full decode, which then answers or raises the project's error: this module never
decides that metadata is malformed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file.avro_program import (
    NODE_ARRAY,
    NODE_MAP,
    NODE_RECORD,
    NODE_UNION,
    OK,
    OP_ENUM,
    OP_INT,
    OP_LONG,
    OP_NULL,
    OVERFLOW,
    UnsupportedSchema,
    _Builder,
)
from hudi_ray.core.util import compiled

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")

STATS_FIELD = "partitionToWriteStats"
# The counts ``validate_commit_metadata`` checks are non-negative.
_COUNTS = ("numWrites", "numDeletes", "numUpdateWrites", "numInserts", "totalWriteBytes", "fileSizeInBytes")

# Marks of the nodes whose values the walk reports.
_STATS = 0  # the map of partitions to write stats: its start, then each key
_STAT = 1  # a write stat's start
_FILE_ID = 2
_PATH = 3
_PARTITION = 4
_OPERATION = 5
_COUNT = 6  # numWrites, ... numInserts: _COUNT + their place in _COUNTS
_INSERTS = _COUNT + _COUNTS.index("numInserts")
_STRINGS = {"fileId": _FILE_ID, "path": _PATH, "partitionPath": _PARTITION}

_KERNELS = "hudi_ray.core.timeline.write_kernels"
# Paths the checks would refuse (a scheme, an absolute path, a "." or ".." part), and
# more (any ":"): those commits go to the checks.
_UNSAFE = r"(^/)|:|(^|/)\.\.?(/|$)"
_MAX_DEPTH = 32


@dataclass(frozen=True)
class WriteFiles:
    """A row per write stat naming a file, over a sequence of instants (rows of one
    instant in the order of its stats; instants' rows in no particular order)."""

    operations: tuple[str | None, ...]  # per instant, its operationType
    instant: np.ndarray  # int64: the row's instant, as its place in the sequence
    partition: list[str]
    file_id: list[str]
    name: list[str]  # the file's name, the last part of its path
    inserts: np.ndarray  # int64: numInserts; -1 where the stat has none

    @staticmethod
    def of_stats(operations: Sequence[str | None], stats: Sequence[Sequence[dict[str, Any]]]) -> WriteFiles:
        """From decoded and checked write stats (``HudiTimeline.write_stats``), per instant."""
        rows = [(i, s) for i, per in enumerate(stats) for s in per]
        inserts = [s.get("numInserts") for _, s in rows]
        return WriteFiles(
            operations=tuple(operations),
            instant=np.array([i for i, _ in rows], dtype=np.int64),
            partition=[s["partitionPath"] for _, s in rows],
            file_id=[s["fileId"] for _, s in rows],
            name=[s["path"].rsplit("/", 1)[-1] for _, s in rows],
            inserts=np.array([-1 if n is None else n for n in inserts], dtype=np.int64),
        )

    def subset(self, keep: np.ndarray) -> WriteFiles:
        """The instants where ``keep`` (bool, per instant) holds, in their order."""
        place = np.cumsum(keep) - 1
        rows = keep[self.instant]
        at = np.flatnonzero(rows).tolist()
        return WriteFiles(
            operations=tuple(op for op, k in zip(self.operations, keep.tolist()) if k),
            instant=place[self.instant[rows]],
            partition=[self.partition[r] for r in at],
            file_id=[self.file_id[r] for r in at],
            name=[self.name[r] for r in at],
            inserts=self.inserts[rows],
        )

    @staticmethod
    def assemble(count: int, parts: Sequence[tuple[Sequence[int], WriteFiles]]) -> WriteFiles:
        """Of ``count`` instants, from parts covering each of them once: (where in the
        sequence each of its instants is, its files). Rows keep the parts' order."""
        operations: list[str | None] = [None] * count
        for places, part in parts:
            for place, op in zip(places, part.operations):
                operations[place] = op
        empty = np.zeros(0, np.int64)
        return WriteFiles(
            operations=tuple(operations),
            instant=np.concatenate([np.asarray(places, np.int64)[p.instant] for places, p in parts] or [empty]),
            partition=[x for _, p in parts for x in p.partition],
            file_id=[x for _, p in parts for x in p.file_id],
            name=[x for _, p in parts for x in p.name],
            inserts=np.concatenate([p.inserts for _, p in parts] or [empty]),
        )


# -- the program ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Program:
    root: int
    nodes: np.ndarray
    children: np.ndarray
    marks: np.ndarray
    text: np.ndarray  # uint8 per node: 1 for strings, checked as UTF-8
    depth: int
    operation_symbols: tuple[str, ...] | None  # operationType as an enum: its symbols


class _Marker(_Builder):
    """The node table of a schema, marking the nodes of the fields the guards need: those
    under ``prefix`` + partitionToWriteStats, and ``prefix`` + operationType. It refuses
    (``UnsupportedSchema``) any shape of those, or of extraMetadata, that the full decode
    would read as something its checks look at: those schemas go to the full decode."""

    def __init__(self, prefix: tuple[str, ...]) -> None:
        super().__init__()
        self.stats = (*prefix, STATS_FIELD)
        self.operation = (*prefix, "operationType")
        self.extra = (*prefix, "extraMetadata")
        self.marks: dict[int, int] = {}
        self.text: set[int] = set()  # string nodes: checked as UTF-8 as fastavro decodes them
        self.symbols: tuple[str, ...] | None = None
        self.levels = 0

    def walk(self, t: Any, namespace: str | None, path: tuple[str, ...], level: int, role: str = "") -> int:
        """The node of a value of type ``t`` at field path ``path``; ``role`` says what
        in the write stats' map it is ("values", "items"), where that matters."""
        if len(path) > _MAX_DEPTH:
            raise UnsupportedSchema("nested too deep")
        self.levels = max(self.levels, level)
        t, namespace = self.resolve(t, namespace)
        at_stats = path == self.stats
        if isinstance(t, list):
            if at_stats and role:
                raise UnsupportedSchema(f"a union as the {role} of {STATS_FIELD}")
            branches = [self.walk(b, namespace, path, level) for b in t]
            return self._add(NODE_UNION, len(branches), branches, zero=False)
        kind = t if isinstance(t, str) else t["type"]
        logical = t.get("logicalType") if isinstance(t, dict) else None
        checked = path[:-1] == self.stats and path[-1] in (*_STRINGS, *_COUNTS)
        if (checked or path in (self.operation, self.extra)) and logical is not None:
            raise UnsupportedSchema(f"{path[-1]} with logical type {logical}")
        if kind in ("record", "error"):
            if checked or path in (self.operation, self.extra) or (at_stats and role != "items"):
                raise UnsupportedSchema(f"{path[-1]} as a record")
            inner = self.register(t, namespace)
            fields = [self.walk(f["type"], inner, (*path, f["name"]), level + 1) for f in t.get("fields", [])]
            zero = all(self.nodes[f][3] for f in fields)
            at = self._add(NODE_RECORD, len(fields), fields, zero=zero)
            if at_stats:
                self.marks[at] = _STAT
            return at
        if kind == "array":
            if checked or path in (self.operation, self.extra) or (at_stats and role != "values"):
                raise UnsupportedSchema(f"{path[-1]} as an array")
            items = self.walk(t["items"], namespace, path, level + 1, "items" if at_stats else "")
            return self._add(NODE_ARRAY, 0, [items], zero=False, inline=True)
        if kind == "map":
            if checked or path == self.operation or (at_stats and role) or (path == self.extra and role):
                raise UnsupportedSchema(f"{path[-1]} as a map")
            inner_role = "values" if at_stats or path == self.extra else ""
            values = self.walk(t["values"], namespace, path, level + 1, inner_role)
            at = self._add(NODE_MAP, 0, [values], zero=False, inline=True)
            if at_stats:
                self.marks[at] = _STATS
            return at
        at = self.node(t, namespace, level)  # a primitive, enum or fixed: no nesting
        op = self.nodes[at][0]
        if kind == "string":
            self.text.add(at)
        if at_stats and role:
            raise UnsupportedSchema(f"{kind} as the {role} of {STATS_FIELD}")
        if checked and op != OP_NULL:
            name = path[-1]
            if name in _STRINGS and kind == "string":
                self.marks[at] = _STRINGS[name]
            elif name in _COUNTS and op in (OP_INT, OP_LONG):
                self.marks[at] = _COUNT + _COUNTS.index(name)
            else:
                raise UnsupportedSchema(f"write stat field {name} of type {kind}")
        elif path == self.operation and op != OP_NULL:
            if kind == "string":
                self.marks[at] = _OPERATION
            elif op == OP_ENUM:
                self.marks[at] = _OPERATION
                self.symbols = tuple(t["symbols"])
            else:
                raise UnsupportedSchema(f"operationType of type {kind}")
        elif path == self.extra and op != OP_NULL and (kind != "string" or not role):
            raise UnsupportedSchema(f"extraMetadata holding {kind}")
        return at


@lru_cache(maxsize=32)
def _program(schema_text: str, prefix: tuple[str, ...]) -> _Program | None:
    """The walk of records of ``schema_text``; None where it does not apply."""
    import json

    try:
        schema = json.loads(schema_text)
        marker = _Marker(prefix)
        namespace = marker.register(schema, None) if isinstance(schema, dict) else None
        root = marker.walk(schema, namespace, (), 1)
    except (UnsupportedSchema, KeyError, TypeError, ValueError):
        return None
    if _STATS not in marker.marks.values() or _STAT not in marker.marks.values():
        return None
    return _Program(
        root=root,
        nodes=np.array(marker.nodes, dtype=np.int64).reshape(-1, 4),
        children=np.array(marker.children, dtype=np.int64),
        marks=np.array([marker.marks.get(i, -1) for i in range(len(marker.nodes))], dtype=np.int64),
        text=np.array([i in marker.text for i in range(len(marker.nodes))], dtype=np.uint8),
        depth=marker.levels + 2,
        operation_symbols=marker.symbols,
    )


# -- the walk ---------------------------------------------------------------------------------


def extract(records: Sequence[bytes], schema_text: str, prefix: tuple[str, ...] = ()) -> WriteFiles | None:
    """The files written by instants whose metadata are ``records`` (Avro datums of
    ``schema_text``, the commit metadata at field path ``prefix``), or None when any of
    them is left to the full decode."""
    program = _program(schema_text, prefix)
    if program is None:
        return None
    sizes = np.array([len(r) for r in records], dtype=np.int64)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    buf = np.frombuffer(b"".join(records), dtype=np.uint8)
    events = _walk(program, buf, starts, ends)
    if events is None:
        return None
    return _columns(program, buf, events, len(records))


def _walk(program: _Program, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    k = compiled.load(_KERNELS)
    stack = np.zeros((program.depth, 2), dtype=np.int64)
    parts: list[np.ndarray] = []
    first = 0
    capacity = max(1024, 48 * len(starts))
    while True:
        events = np.empty((capacity, 4), dtype=np.int64)
        status, record, _, n = k.extract(
            buf,
            starts,
            ends,
            first,
            program.root,
            program.nodes,
            program.children,
            program.marks,
            program.text,
            stack,
            events,
        )
        parts.append(events[:n])
        if status == OK:
            return np.concatenate(parts)
        if status != OVERFLOW:
            return None  # bytes that do not decode: the full decode says what is wrong
        first = record
        capacity *= 2


def _strings(buf: np.ndarray, at: np.ndarray, size: np.ndarray) -> pa.Array:
    """The strings at ``at`` (None where negative) of ``size`` bytes, checked as UTF-8."""
    valid = at >= 0
    size = np.where(valid, size, 0)
    offsets = np.zeros(len(at) + 1, dtype=np.int64)
    np.cumsum(size, out=offsets[1:])
    total = int(offsets[-1])
    gather = np.repeat(np.where(valid, at, 0) - offsets[:-1], size) + np.arange(total, dtype=np.int64)
    data = buf[gather]
    mask = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    out = pa.LargeStringArray.from_buffers(
        len(at), pa.py_buffer(offsets), pa.py_buffer(data), mask, null_count=int((~valid).sum())
    )
    out.validate(full=True)
    return out


def _columns(program: _Program, buf: np.ndarray, ev: np.ndarray, count: int) -> WriteFiles | None:
    mark, a, b, record = ev[:, 0], ev[:, 1], ev[:, 2], ev[:, 3]
    # Every record holding metadata must hold the map of write stats (the checks refuse a null one).
    starts_of_maps = (mark == _STATS) & (a < 0)
    if np.unique(record[starts_of_maps]).size != count:
        return None
    is_stat = mark == _STAT
    stat_of = np.cumsum(is_stat) - 1
    n = int(is_stat.sum())
    # Each stat's partition: the key read last before it.
    keys = (mark == _STATS) & (a >= 0)
    last_key = np.maximum.accumulate(np.where(keys, np.arange(len(mark)), -1))[is_stat]

    def field(m: int) -> tuple[np.ndarray, np.ndarray]:
        at = np.full(n, -1, dtype=np.int64)
        size = np.zeros(n, dtype=np.int64)
        sel = mark == m
        at[stat_of[sel]] = a[sel]
        size[stat_of[sel]] = b[sel]
        return at, size

    def value(m: int) -> tuple[np.ndarray, np.ndarray]:
        got = np.zeros(n, dtype=np.bool_)
        out = np.full(n, -1, dtype=np.int64)
        sel = mark == m
        got[stat_of[sel]] = True
        out[stat_of[sel]] = a[sel]
        return got, out

    try:
        file_id = _strings(buf, *field(_FILE_ID))
        path = _strings(buf, *field(_PATH))
        stated = _strings(buf, *field(_PARTITION))
        if (last_key < 0).any():
            return None
        partition = _strings(buf, a[last_key], b[last_key])
        every_key = _strings(buf, a[keys], b[keys])
        op_at = np.full(count, -1, dtype=np.int64)
        op_size = np.zeros(count, dtype=np.int64)
        sel = mark == _OPERATION
        op_at[record[sel]] = a[sel]
        op_size[record[sel]] = b[sel]
        operations = _operations(program, buf, op_at, op_size)
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    # Every partition is checked, named files or not; a partition listed twice in one
    # commit is decoded as its last listing alone.
    if pc.any(pc.match_substring_regex(every_key, _UNSAFE)).as_py():
        return None
    listed = pa.table({"record": record[keys], "key": every_key})
    if listed.group_by(["record", "key"]).aggregate([]).num_rows != listed.num_rows:
        return None
    for i in range(len(_COUNTS)):
        got, counts = value(_COUNT + i)
        if (got & (counts < 0)).any():
            return None
    _, inserts = value(_INSERTS)
    # Stats naming no file are left out, as the checks leave them out.
    names_file = pc.and_(file_id.is_valid(), pc.invert(pc.or_kleene(path.is_null(), pc.equal(path, "")))).to_numpy(
        zero_copy_only=False
    )
    if not names_file.any():
        return _result(operations, record[is_stat], names_file, partition, file_id, path, inserts)
    # What the checks would look at twice goes to them: an empty file id, a stated
    # partition that is not the map's key, a path or partition that could leave the
    # table, a file name that does not carry the stat's file id.
    kept_id, kept_path = file_id.filter(names_file), path.filter(names_file)
    if pc.any(pc.equal(kept_id, "")).as_py():
        return None
    kept_stated, kept_partition = stated.filter(names_file), partition.filter(names_file)
    if pc.any(pc.and_(kept_stated.is_valid(), pc.not_equal(kept_stated, kept_partition))).as_py():
        return None
    if pc.any(pc.match_substring_regex(kept_path, _UNSAFE)).as_py():
        return None
    k = compiled.load(_KERNELS)
    path_at, path_size = field(_PATH)
    id_at, id_size = field(_FILE_ID)
    named = k.names_file_id(buf, path_at[names_file], path_size[names_file], id_at[names_file], id_size[names_file])
    if not named.all():
        return None
    return _result(operations, record[is_stat], names_file, partition, file_id, path, inserts)


def _operations(program: _Program, buf: np.ndarray, at: np.ndarray, size: np.ndarray) -> tuple[str | None, ...]:
    if program.operation_symbols is not None:
        symbols = program.operation_symbols
        return tuple(symbols[i] if 0 <= i < len(symbols) else None for i in at.tolist())
    return tuple(_strings(buf, at, size).to_pylist())


def _result(
    operations: tuple[str | None, ...],
    stat_record: np.ndarray,
    keep: np.ndarray,
    partition: pa.Array,
    file_id: pa.Array,
    path: pa.Array,
    inserts: np.ndarray,
) -> WriteFiles:
    kept_path = path.filter(keep)
    names = pc.replace_substring_regex(kept_path, r"(?s)^.*/", "")
    return WriteFiles(
        operations=operations,
        instant=stat_record[keep],
        partition=partition.filter(keep).to_pylist(),
        file_id=file_id.filter(keep).to_pylist(),
        name=names.to_pylist(),
        inserts=inserts[keep],
    )
