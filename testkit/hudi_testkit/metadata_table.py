"""The metadata table (MDT) of tables this package writes: ``.hoodie/metadata``.

The MDT is a MERGE_ON_READ table of HFile base files, laid out as Spark's
Hudi 1.x writer lays it out, with one simplification: each data commit's
``deltacommit`` (same instant time as the data commit) writes a new base
HFile for every MDT file group whose records changed, instead of HFile log
blocks plus periodic compactions. So a file group's latest slice is one base
file and readers never merge MDT records. Partitions:

* ``files``: ``__all_partitions__`` and, per data partition, file name -> size
  of every committed file on storage (older base file versions included, until a
  clean of :mod:`hudi_testkit.services` deletes them);
* ``column_stats``: per file and indexed column min/max/null/value counts and
  sizes, keyed by ``colId + partId + fileId`` (table version 9 records carry
  the ``valueType``); a cleaned file's stats go with it, as in Hudi;
* ``partition_stats`` (partitioned tables): per partition and column, the
  aggregate over the files of the latest file slices, ``isTightBound``;
* ``record_index``: record key -> partition, file id (UUID bits + index) and
  the epoch millis of the commit that wrote it; record keys must be unique
  across partitions, as the index is global;
* ``secondary_index_<name>`` (with the record index): one record per row, keyed
  by the row's escaped column value, ``$`` and its escaped record key (a backslash
  escapes a backslash, ``$`` and NUL; a null value is a lone NUL), payload
  ``isDeleted``; values are rendered as Java renders them (strings as they are,
  integers in decimal, dates as day numbers). Each is declared in the index
  definitions file as an identity index over its column.

Keys are routed to file groups with Java's ``String.hashCode``; secondary index
keys of table version 9 (index version 2) by their value part and separator, so a
value's records share one file group. Creating the MDT writes the bootstrap delta
commits ``00000000000000000`` (files), ``…001`` (column_stats), ``…002``
(record_index), ``…003`` (partition_stats) and ``…004`` onwards (one per secondary
index) with their empty init log files, and lists the partitions in the data
table's ``hoodie.properties``.

Table services (:mod:`hudi_testkit.services`) update the MDT as Hudi does: a
compaction, clustering or clean is a delta commit of its own instant time, and the
rollback of a failed write whose delta commit completed rolls that delta commit
back (``checkpoint``, ``failed`` and ``roll_back``).
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ray.core.file_group import parse_base_file_name, parse_log_file_name
from hudi_ray.core.hfile import HFileReader
from hudi_ray.core.log_file import BlockType
from hudi_ray.core.metadata import column_stats_key as _column_stats_key
from hudi_ray.core.metadata import file_group_index, partition_stats_key
from hudi_ray.core.metadata.hashing import bloom_filter_key
from hudi_ray.core.schema import META_FIELDS
from hudi_ray.core.timeline import DATA_ACTIONS, HudiInstant, timeline_to_epoch_millis
from hudi_testkit.common import (
    latest_time,
    list_instants,
    next_instant_time,
    parse_instant_time,
    write_atomic,
    write_properties,
)
from hudi_testkit.errors import InvalidRowsError, SchemaError, TableExistsError, UnsupportedTableError, WriteSpecError
from hudi_testkit.hfile_writer import (
    DEFAULT_BLOCK_SIZE,
    DEFAULT_INDEX_FANOUT,
    DEFAULT_MAX_ROOT_ENTRIES,
    HFileWriter,
    key_value,
)
from hudi_testkit.log_writer import block_header, delete_block_content, frame_block
from hudi_testkit.metadata import (
    NULL_COMMIT,
    WriteStat,
    commit_metadata_avro,
    partition_metadata,
    table_checksum,
)

# Column stats keys are hashes, taken again for every file of a partition whenever its partition
# stats are: remembered once taken.
column_stats_key = functools.lru_cache(maxsize=1 << 18)(_column_stats_key)

FILES = "files"
COLUMN_STATS = "column_stats"
PARTITION_STATS = "partition_stats"
RECORD_INDEX = "record_index"
BLOOM_FILTERS = "bloom_filters"
METADATA_DIR = ".hoodie/metadata"
INDEX_DEFS_PATH = ".hoodie/.index_defs/index.json"
MAX_INDEXED_COLUMNS = 32

# MDT partition -> (file id prefix, bootstrap instant).
_LAYOUT = {
    FILES: ("files-", "00000000000000000"),
    COLUMN_STATS: ("col-stats-", "00000000000000001"),
    RECORD_INDEX: ("record-index-", "00000000000000002"),
    PARTITION_STATS: ("partition-stats-", "00000000000000003"),
    BLOOM_FILTERS: ("bloom-filters-", "00000000000000900"),
}
_BOOTSTRAP_PREFIX = "00000000000000"
SECONDARY_INDEX_PREFIX = "secondary_index_"
_SI_ESCAPED = ("\\", "$", "\x00")
_SI_NULL = "\x00"
_ALL_PARTITIONS = "__all_partitions__"
_NON_PARTITIONED = "."
_NAMESPACE = "org.apache.hudi.avro.model"
_META_COLUMNS = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key")
_TYPE_PARTITION_LIST, _TYPE_FILES, _TYPE_COLUMN_STATS, _TYPE_RECORD_INDEX, _TYPE_PARTITION_STATS = 1, 2, 3, 5, 6
_TYPE_BLOOM_FILTER, _TYPE_SECONDARY_INDEX = 4, 7
_FILE_ID = re.compile(r"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})-(\d+)$")

# ValueType ordinals (org.apache.hudi.stats.ValueType) of table version 9 column stats.
VT_NULL, VT_BOOLEAN, VT_INT, VT_LONG, VT_FLOAT, VT_DOUBLE, VT_STRING, VT_BYTES = 1, 2, 3, 4, 5, 6, 7, 8
VT_DECIMAL, VT_DATE, VT_TIME_MILLIS, VT_TIME_MICROS = 10, 12, 13, 14
VT_TIMESTAMP_MILLIS, VT_TIMESTAMP_MICROS, VT_LOCAL_TIMESTAMP_MILLIS, VT_LOCAL_TIMESTAMP_MICROS = 15, 16, 18, 19

# Wrapper record (value union branch) of each value type: v9 stores values in the primitive wrapper of
# the type's physical value; v8 picks the wrapper from the Java value class instead.
_V9_WRAPPER = {
    VT_BOOLEAN: "BooleanWrapper",
    VT_INT: "IntWrapper",
    VT_LONG: "LongWrapper",
    VT_FLOAT: "FloatWrapper",
    VT_DOUBLE: "DoubleWrapper",
    VT_STRING: "StringWrapper",
    VT_BYTES: "BytesWrapper",
    VT_DECIMAL: "BytesWrapper",
    VT_DATE: "IntWrapper",
    VT_TIME_MILLIS: "IntWrapper",
    VT_TIME_MICROS: "LongWrapper",
    VT_TIMESTAMP_MILLIS: "LongWrapper",
    VT_TIMESTAMP_MICROS: "LongWrapper",
    VT_LOCAL_TIMESTAMP_MILLIS: "LongWrapper",
    VT_LOCAL_TIMESTAMP_MICROS: "LongWrapper",
}
_V8_WRAPPER = {
    **_V9_WRAPPER,
    VT_DECIMAL: "DecimalWrapper",
    VT_DATE: "DateWrapper",
    VT_TIME_MICROS: "TimeMicrosWrapper",
    VT_TIMESTAMP_MILLIS: "TimestampMicrosWrapper",
    VT_TIMESTAMP_MICROS: "TimestampMicrosWrapper",
    VT_LOCAL_TIMESTAMP_MILLIS: "TimestampMicrosWrapper",
    VT_LOCAL_TIMESTAMP_MICROS: "TimestampMicrosWrapper",
}


def _layout(partition: str, secondary: Sequence[str] = ()) -> tuple[str, str]:
    """(file id prefix, bootstrap instant) of an MDT partition; ``secondary``: the table's
    secondary index partitions in creation order."""
    if partition.startswith(SECONDARY_INDEX_PREFIX):
        name = partition[len(SECONDARY_INDEX_PREFIX) :]
        order = list(secondary).index(partition) if partition in secondary else 0
        return f"secondary-index-{name.replace('_', '-')}-", f"{_BOOTSTRAP_PREFIX}{4 + order:03d}"
    return _LAYOUT[partition]


# -- secondary index keys ------------------------------------------------------------------------------


def _si_escape(text: str) -> str:
    return "".join("\\" + c if c in _SI_ESCAPED else c for c in text)


def secondary_index_texts(values: pa.Array | pa.ChunkedArray) -> list[str]:
    """Escaped index texts of column values, as Hudi renders them."""
    dtype = values.type
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_integer(dtype):
        py = values.to_pylist()
    elif pa.types.is_date32(dtype):
        py = pc.cast(values, pa.int32()).to_pylist()
    else:
        raise SchemaError(f"A secondary index on a column of type {dtype} is not supported")
    return [_SI_NULL if v is None else _si_escape(str(v)) for v in py]


def secondary_index_key(escaped_value: str, record_key: str) -> str:
    return f"{escaped_value}${_si_escape(record_key)}"


def _si_split(key: str) -> tuple[str, str]:
    """(escaped value, escaped record key) of a secondary index key."""
    i, n = 0, len(key)
    while i < n:
        if key[i] == "\\":
            i += 2
            continue
        if key[i] == "$":
            return key[:i], key[i + 1 :]
        i += 1
    raise UnsupportedTableError(f"Secondary index key {key!r} has no separator")


def _si_unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        out.append(text[i])
        i += 1
    return "".join(out)


# -- the HoodieMetadataRecord schema ---------------------------------------------------------------


def _java_string() -> dict[str, str]:
    return {"type": "string", "avro.java.string": "String"}


def _optional(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None}


def _wrapper(name: str, value_type: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": [{"name": "value", "type": value_type}]}


def metadata_record_schema(table_version: int) -> dict[str, Any]:
    """``HoodieMetadataRecord`` as Hudi embeds it in MDT HFiles (docs left out); version 9 adds
    ``ArrayWrapper`` and ``valueType``."""
    wrappers = [
        _wrapper("BooleanWrapper", "boolean"),
        _wrapper("IntWrapper", "int"),
        _wrapper("LongWrapper", "long"),
        _wrapper("FloatWrapper", "float"),
        _wrapper("DoubleWrapper", "double"),
        _wrapper("BytesWrapper", "bytes"),
        _wrapper("StringWrapper", _java_string()),
        _wrapper("DateWrapper", "int"),
        _wrapper("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
        _wrapper("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
        _wrapper("TimestampMicrosWrapper", "long"),
        _wrapper("LocalDateWrapper", "int"),
    ]
    names = [w["name"] for w in wrappers]
    if table_version >= 9:
        items = {"type": "array", "items": ["null", *names]}
        wrappers.append({"type": "record", "name": "ArrayWrapper", "fields": [_optional("wrappedValues", items)]})
        names.append("ArrayWrapper")
    stats_fields = [
        _optional("fileName", _java_string()),
        _optional("columnName", _java_string()),
        {"name": "minValue", "type": ["null", *wrappers], "default": None},
        {"name": "maxValue", "type": ["null", *names], "default": None},
        _optional("valueCount", "long"),
        _optional("nullCount", "long"),
        _optional("totalSize", "long"),
        _optional("totalUncompressedSize", "long"),
        {"name": "isDeleted", "type": "boolean"},
        {"name": "isTightBound", "type": "boolean", "default": False},
    ]
    if table_version >= 9:
        value_type = {
            "type": "record",
            "name": "HoodieValueTypeInfo",
            "fields": [{"name": "typeOrdinal", "type": "int"}, _optional("additionalInfo", _java_string())],
        }
        stats_fields.append(_optional("valueType", value_type))
    file_info = {
        "type": "record",
        "name": "HoodieMetadataFileInfo",
        "fields": [{"name": "size", "type": "long"}, {"name": "isDeleted", "type": "boolean"}],
    }
    bloom = {
        "type": "record",
        "name": "HoodieMetadataBloomFilter",
        "fields": [
            {"name": "type", "type": _java_string()},
            {"name": "timestamp", "type": _java_string()},
            {"name": "bloomFilter", "type": "bytes"},
            {"name": "isDeleted", "type": "boolean"},
        ],
    }
    record_index = {
        "type": "record",
        "name": "HoodieRecordIndexInfo",
        "fields": [
            _optional("partitionName", _java_string()),
            _optional("fileIdHighBits", "long"),
            _optional("fileIdLowBits", "long"),
            _optional("fileIndex", "int"),
            _optional("fileId", _java_string()),
            _optional("instantTime", "long"),
            {"name": "fileIdEncoding", "type": "int", "default": 0},
            _optional("position", "long"),
        ],
    }
    secondary = {
        "type": "record",
        "name": "HoodieSecondaryIndexInfo",
        "fields": [{"name": "isDeleted", "type": "boolean"}],
    }
    return {
        "type": "record",
        "name": "HoodieMetadataRecord",
        "namespace": _NAMESPACE,
        "fields": [
            *(_optional(n, "string") for n in META_FIELDS),
            {"name": "key", "type": _java_string()},
            {"name": "type", "type": "int"},
            {
                "name": "filesystemMetadata",
                "type": ["null", {"type": "map", "values": file_info, "avro.java.string": "String"}],
            },
            _optional("BloomFilterMetadata", bloom),
            _optional(
                "ColumnStatsMetadata", {"type": "record", "name": "HoodieMetadataColumnStats", "fields": stats_fields}
            ),
            _optional("recordIndexMetadata", record_index),
            _optional("SecondaryIndexMetadata", secondary),
        ],
    }


# -- column ranges -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnRange:
    """Stats of one column over one file (or one partition): values in their wrapper's form
    (epoch days, epoch micros/millis, unscaled decimal ints, ...); None bounds are unknown."""

    column: str
    min: Any
    max: Any
    null_count: int
    value_count: int
    total_size: int = 0
    total_uncompressed_size: int = 0
    value_type: int = VT_NULL
    additional_info: str | None = None


def value_type_of(dtype: pa.DataType) -> tuple[int, str | None] | None:
    """(ValueType ordinal, additional info) of a column type the index covers; None otherwise."""
    t = pa.types
    if t.is_boolean(dtype):
        return VT_BOOLEAN, None
    if t.is_int8(dtype) or t.is_int16(dtype) or t.is_int32(dtype) or t.is_uint8(dtype) or t.is_uint16(dtype):
        return VT_INT, None
    if t.is_int64(dtype) or t.is_uint32(dtype):
        return VT_LONG, None
    if t.is_float32(dtype):
        return VT_FLOAT, None
    if t.is_float64(dtype):
        return VT_DOUBLE, None
    if t.is_string(dtype) or t.is_large_string(dtype):
        return VT_STRING, None
    if t.is_binary(dtype) or t.is_large_binary(dtype):
        return VT_BYTES, None
    if t.is_decimal(dtype):
        return VT_DECIMAL, f"{dtype.precision},{dtype.scale}"
    if t.is_date32(dtype):
        return VT_DATE, None
    if t.is_time32(dtype) and dtype.unit == "ms":
        return VT_TIME_MILLIS, None
    if t.is_time64(dtype) and dtype.unit == "us":
        return VT_TIME_MICROS, None
    if t.is_timestamp(dtype) and dtype.unit in ("ms", "us"):
        millis = dtype.unit == "ms"
        if dtype.tz is not None:
            return (VT_TIMESTAMP_MILLIS if millis else VT_TIMESTAMP_MICROS), None
        return (VT_LOCAL_TIMESTAMP_MILLIS if millis else VT_LOCAL_TIMESTAMP_MICROS), None
    return None


def column_range(name: str, values: pa.Array | pa.ChunkedArray, sizes: tuple[int, int] = (0, 0)) -> ColumnRange:
    """Exact stats of a written column, as Hudi collects them from the records it writes."""
    vt = value_type_of(values.type)
    assert vt is not None, values.type
    ordinal, info = vt
    n, nulls = len(values), values.null_count
    lo = hi = None
    if n > nulls:
        t = values.type
        if pa.types.is_floating(t) and pc.any(pc.is_nan(values)).as_py():
            pass  # a NaN makes no bound safe to prune on: "x != 1" holds for NaN rows
        elif pa.types.is_decimal(t):
            r = pc.min_max(values)
            lo, hi = (int(r[k].as_py().scaleb(t.scale)) for k in ("min", "max"))
        else:
            if pa.types.is_temporal(t):  # epoch days, millis or micros, as the wrappers hold them
                values = values.cast(pa.int32() if t.bit_width == 32 else pa.int64())
            r = pc.min_max(values)
            lo, hi = r["min"].as_py(), r["max"].as_py()
    if lo is None:
        ordinal, info = VT_NULL, None
    return ColumnRange(name, lo, hi, nulls, n, sizes[0], sizes[1], ordinal, info)


def merge_ranges(column: str, ranges: Iterable[ColumnRange]) -> ColumnRange:
    """The aggregate of several files' stats of one column: a partition's stats."""
    lo = hi = None
    nulls = count = size = unc = 0
    vt, info = VT_NULL, None
    for r in ranges:
        nulls += r.null_count
        count += r.value_count
        size += r.total_size
        unc += r.total_uncompressed_size
        if r.min is not None and r.max is not None:
            lo = r.min if lo is None or r.min < lo else lo
            hi = r.max if hi is None or r.max > hi else hi
            vt, info = r.value_type, r.additional_info
    return ColumnRange(column, lo, hi, nulls, count, size, unc, vt, info)


def _unscaled_bytes(unscaled: int) -> bytes:
    """Minimal big-endian two's complement, as Java's BigInteger.toByteArray."""
    return unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True)


def _wrap(value: Any, r: ColumnRange, table_version: int) -> tuple[str, dict[str, Any]] | None:
    if value is None or r.value_type == VT_NULL:
        return None
    table = _V9_WRAPPER if table_version >= 9 else _V8_WRAPPER
    name = table[r.value_type]
    if r.value_type == VT_DECIMAL:
        if table_version >= 9:
            value = _unscaled_bytes(value)
        else:  # DecimalWrapper: decimal(30, 15)
            from decimal import Decimal

            scale = int((r.additional_info or "0,0").split(",")[1])
            value = Decimal(value).scaleb(-scale).quantize(Decimal(1).scaleb(-15))
    elif table_version < 9 and r.value_type in (VT_TIMESTAMP_MILLIS, VT_LOCAL_TIMESTAMP_MILLIS):
        value *= 1000  # v8 keeps timestamps as micros
    return f"{_NAMESPACE}.{name}", {"value": value}


def _unwrap(wrapped: Any, value_type: int, info: str | None) -> Any:
    if wrapped is None:
        return None
    name, record = wrapped if isinstance(wrapped, tuple) else ("", wrapped)
    value = record["value"]
    if value_type == VT_DECIMAL:
        if isinstance(value, bytes):
            return int.from_bytes(value, "big", signed=True)
        scale = int((info or "0,0").split(",")[1])
        return int(value.scaleb(scale))
    if name.endswith("TimestampMicrosWrapper") and value_type in (VT_TIMESTAMP_MILLIS, VT_LOCAL_TIMESTAMP_MILLIS):
        return value // 1000
    return value


# -- options -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetadataTableOptions:
    """Which MDT partitions to keep and how to lay them out.

    ``column_stats_columns`` None indexes the record key, partition path and
    commit time meta columns and the data columns of primitive types, at
    most 32 columns in all (Hudi's default). HFile settings apply to every
    base file written; small blocks and a small ``max_root_entries`` give
    multi-level HFile indexes.
    """

    column_stats: bool = True
    partition_stats: bool = True  # never on a non-partitioned table, as in Hudi
    record_index: bool = True
    column_stats_columns: tuple[str, ...] | None = None
    column_stats_file_groups: int = 2
    partition_stats_file_groups: int = 1
    record_index_file_groups: int = 10
    # (index name, column): ``CREATE INDEX <name> ON t (<column>)``, partition ``secondary_index_<name>``.
    secondary_indexes: tuple[tuple[str, str], ...] = ()
    secondary_index_file_groups: int = 10
    # The bloom_filters partition: each base file's bloom filter (from its footer) by file.
    bloom_filters: bool = False
    bloom_filters_file_groups: int = 1
    hfile_block_size: int = DEFAULT_BLOCK_SIZE
    hfile_max_root_entries: int = DEFAULT_MAX_ROOT_ENTRIES
    hfile_index_fanout: int = DEFAULT_INDEX_FANOUT
    # GZ level of the HFile blocks: any level reads the same; lower ones write faster.
    hfile_compression_level: int = 6
    # The bootstrap delta commits complete just after this instant time (yyyyMMddHHmmssSSS) instead
    # of now: for data tables written on a clock of their own, whose first commit comes after it.
    created_at: str | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.hfile_compression_level <= 9:
            raise WriteSpecError("hfile_compression_level must be between 0 and 9")
        if self.created_at is not None:
            parse_instant_time(self.created_at)
        counts = (
            self.column_stats_file_groups,
            self.partition_stats_file_groups,
            self.record_index_file_groups,
            self.secondary_index_file_groups,
        )
        if min(counts) < 1 or max(counts) > 9999:
            raise WriteSpecError("MDT file group counts must be between 1 and 9999")
        if self.secondary_indexes and not self.record_index:
            raise WriteSpecError("Secondary indexes need the record index")
        names = [n for n, _ in self.secondary_indexes]
        if len(set(names)) != len(names) or not all(re.fullmatch(r"[a-z0-9_]+", n) for n in names):
            raise WriteSpecError(f"Secondary index names must be distinct lowercase words, got {names}")


# -- the writer ------------------------------------------------------------------------------------


@dataclass
class _Records:
    """One MDT partition's encoded records, by file group (keys routed once, when stored)."""

    groups: list[dict[str, bytes]]
    by_value: bool = False  # secondary index version 2: routed by the value part and separator
    # key -> (value, HFile cell of key and value): cells are encoded once, not on every rewrite.
    cells: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)

    def group_cells(self, g: int) -> list[tuple[bytes, bytes, int]]:
        """(row, cell, value size) of every record of file group ``g``, in row order; cells come
        from the cache while a key's value is the one cached."""
        values, cells = self.groups[g], self.cells
        out = []
        for key in sorted(values):  # code point order: the UTF-8 byte order of HFile rows
            value = values[key]
            cached = cells.get(key)
            if cached is None or cached[0] is not value:
                cached = (value, key_value(key.encode("utf-8"), value))
                cells[key] = cached
            out.append((key.encode("utf-8"), cached[1], len(value)))
        return out

    def copy(self) -> _Records:
        return _Records([dict(g) for g in self.groups], self.by_value, dict(self.cells))

    def _group(self, key: str) -> int:
        route = _si_split(key)[0] + "$" if self.by_value else key
        return file_group_index(route, len(self.groups))

    def put(self, key: str, value: bytes) -> int:
        g = self._group(key)
        self.groups[g][key] = value
        return g

    def __contains__(self, key: str) -> bool:
        return key in self.groups[self._group(key)]

    def pop(self, key: str) -> int:
        g = self._group(key)
        self.groups[g].pop(key, None)
        self.cells.pop(key, None)
        return g

    def items(self) -> Iterable[tuple[str, bytes]]:
        for group in self.groups:
            yield from group.items()


class _CellWriter(HFileWriter):
    """An HFile writer fed cells encoded before (``_Records.cell``), in row order: the
    MDT rewrites whole file groups on every commit, and most of their cells are unchanged."""

    def append_cells(self, cells: list[tuple[bytes, bytes, int]]) -> None:
        """Add (row, cell, value size) triples, rows strictly increasing, as ``append`` would."""
        limit = self.block_size
        for row, cell, value_size in cells:
            if self._pending_size >= limit:
                self._finish_block()
            if not self._pending:
                self._pending_first = row
            self._pending.append(cell)
            self._pending_size += len(cell)
            self._row_bytes += len(row)
            self._value_bytes += value_size
        if cells:
            self._last_row = cells[-1][0]
            self._entries += len(cells)


@dataclass
class _FileGroupState:
    base_name: str | None = None
    base_instant: str | None = None


@dataclass(frozen=True)
class _Checkpoint:
    """What the writer knows of the MDT at one moment (see ``MetadataTableWriter.checkpoint``)."""

    values: dict[str, _Records]
    files: dict[str, dict[str, int]]
    ranges: dict[str, ColumnRange]
    rli: dict[str, tuple[str, str]]
    groups: dict[tuple[str, int], _FileGroupState]
    si: dict[str, dict[str, str]]


@dataclass
class MetadataTableWriter:
    """Keeps one data table's MDT in step with its commits (created by the data table writers)."""

    base: Path  # the data table
    table_name: str
    table_version: int
    partitioned: bool
    columns: tuple[str, ...]  # indexed by column_stats / partition_stats
    file_groups: dict[str, int]  # MDT partition -> number of file groups
    options: MetadataTableOptions = field(default_factory=MetadataTableOptions)
    data_schema: pa.Schema | None = None  # value types of the indexed columns, when reloading stats
    secondary: dict[str, str] = field(default_factory=dict)  # secondary index partition -> column
    # MDT partition -> encoded HoodieMetadataRecords by file group: the source of every base file written.
    _values: dict[str, _Records] = field(default_factory=dict, init=False)
    _files: dict[str, dict[str, int]] = field(default_factory=dict, init=False)  # partition -> file -> size
    _ranges: dict[str, ColumnRange] = field(default_factory=dict, init=False)  # column stats key -> range
    _rli: dict[str, tuple[str, str]] = field(default_factory=dict, init=False)  # key -> (partition, file id)
    _groups: dict[tuple[str, int], _FileGroupState] = field(default_factory=dict, init=False)
    _observed: dict[str, list[ColumnRange]] = field(default_factory=dict, init=False)  # written file -> ranges
    _si: dict[str, dict[str, str]] = field(default_factory=dict, init=False)  # partition -> key -> escaped value
    _si_observed: dict[str, dict[str, list[tuple[str, str]]]] = field(default_factory=dict, init=False)
    _bloom_observed: dict[str, tuple[str, bytes]] = field(default_factory=dict, init=False)  # file -> (type, text)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _latest_mdt_time: str = field(default=_BOOTSTRAP_PREFIX + "000", init=False)
    _failed: dict[str, _Checkpoint] = field(default_factory=dict, init=False)  # failed instant -> state before it

    def __post_init__(self) -> None:
        self._schema = metadata_record_schema(self.table_version)
        self._schema_json = json.dumps(self._schema, separators=(",", ":"))
        self._parsed = fastavro.parse_schema(self._schema)
        by_value = self.table_version >= 9
        for partition in self.file_groups:
            groups: list[dict[str, bytes]] = [{} for _ in range(self.file_groups[partition])]
            self._values.setdefault(partition, _Records(groups, by_value and partition in self.secondary))
        for partition in self.secondary:
            self._si.setdefault(partition, {})

    # -- locations ---------------------------------------------------------------------------------

    @property
    def mdt(self) -> Path:
        return self.base / METADATA_DIR

    @property
    def _timeline(self) -> Path:
        return self.mdt / ".hoodie" / "timeline"

    def file_group_id(self, partition: str, index: int) -> str:
        return f"{_layout(partition, list(self.secondary))[0]}{index:04d}-0"

    @property
    def partitions(self) -> list[str]:
        return sorted(self.file_groups)

    # -- creating and opening -------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        base: Path,
        props: Mapping[str, str],
        data_schema: pa.Schema,
        options: MetadataTableOptions | None = None,
    ) -> MetadataTableWriter:
        """Initialize the MDT of an empty data table and list its partitions in ``hoodie.properties``."""
        options = options or MetadataTableOptions()
        version = int(props.get("hoodie.table.version", "6"))
        if version < 8:
            raise WriteSpecError("A metadata table needs table version 8 or 9")
        if (base / METADATA_DIR).exists():
            raise TableExistsError(f"{base / METADATA_DIR} already exists")
        partitioned = bool((props.get("hoodie.table.partition.fields") or "").strip())
        groups = {FILES: 1}
        columns: tuple[str, ...] = ()
        if options.column_stats:
            columns = _indexed_columns(data_schema, options.column_stats_columns)
            groups[COLUMN_STATS] = options.column_stats_file_groups
            if options.partition_stats and partitioned:
                groups[PARTITION_STATS] = options.partition_stats_file_groups
        if options.record_index:
            groups[RECORD_INDEX] = options.record_index_file_groups
        if options.bloom_filters:
            groups[BLOOM_FILTERS] = options.bloom_filters_file_groups
        secondary: dict[str, str] = {}
        for name, column in options.secondary_indexes:
            if data_schema.get_field_index(column) < 0:
                raise SchemaError(f"Secondary index column {column!r} is not in the table schema")
            secondary_index_texts(pa.array([], data_schema.field(column).type))  # the type must be supported
            secondary[SECONDARY_INDEX_PREFIX + name] = column
            groups[SECONDARY_INDEX_PREFIX + name] = options.secondary_index_file_groups
        writer = cls(
            base, props["hoodie.table.name"], version, partitioned, columns, groups, options, data_schema, secondary
        )
        writer._initialize(props)
        return writer

    @classmethod
    def load(
        cls,
        base: Path,
        props: Mapping[str, str],
        options: MetadataTableOptions | None = None,
        data_schema: pa.Schema | None = None,
    ) -> MetadataTableWriter | None:
        """The writer of an existing MDT (one this module wrote), or None when the table has none.

        ``data_schema`` (the table's columns) gives the indexed columns' value types; without it
        they are taken from the stored records, which table version 8 records only loosely.
        """
        enabled = {p.strip() for p in (props.get("hoodie.table.metadata.partitions") or "").split(",") if p.strip()}
        if FILES not in enabled or not (base / METADATA_DIR / ".hoodie" / "hoodie.properties").is_file():
            return None
        defs = base / INDEX_DEFS_PATH
        declared = json.loads(defs.read_text("utf-8")).get("indexDefinitions", {}) if defs.is_file() else {}
        secondary = {
            p: (declared.get(p, {}).get("sourceFields") or [""])[0]
            for p in sorted(enabled)
            if p.startswith(SECONDARY_INDEX_PREFIX) and declared.get(p, {}).get("indexType") == "secondary_index"
        }
        unknown = enabled - set(_LAYOUT) - set(secondary)
        if unknown:
            raise UnsupportedTableError(f"Cannot maintain metadata table partitions {sorted(unknown)}")
        groups = {}
        for partition in enabled:
            ids = {_file_group_of(n) for n in os.listdir(base / METADATA_DIR / partition)} - {None}
            groups[partition] = max(1, len(ids))
        columns: tuple[str, ...] = ()
        if COLUMN_STATS in enabled:
            columns = tuple(declared.get(COLUMN_STATS, {}).get("sourceFields") or ())
        writer = cls(
            base,
            props["hoodie.table.name"],
            int(props.get("hoodie.table.version", "9")),
            bool((props.get("hoodie.table.partition.fields") or "").strip()),
            columns,
            groups,
            options or MetadataTableOptions(),
            data_schema,
            secondary,
        )
        writer._load()
        return writer

    def _initialize(self, data_props: Mapping[str, str]) -> None:
        mdt = self.mdt
        for d in (".hoodie/.aux/.bootstrap", ".hoodie/.temp", ".hoodie/.schema", ".hoodie/.heartbeat"):
            (mdt / d).mkdir(parents=True, exist_ok=True)
        self._timeline.joinpath("history").mkdir(parents=True, exist_ok=True)
        name = f"{self.table_name}_metadata"
        props = {
            "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
            "hoodie.table.initial.version": str(self.table_version),
            "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
            "hoodie.table.type": "MERGE_ON_READ",
            "hoodie.archivelog.folder": "history",
            "hoodie.timeline.layout.version": "2",
            "hoodie.timeline.history.path": "history",
            "hoodie.table.checksum": str(table_checksum(name, database="")),
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
            "hoodie.table.recordkey.fields": "key",
            "hoodie.table.name": name,
            "hoodie.timeline.path": "timeline",
            "hoodie.populate.meta.fields": "false",
            "hoodie.table.base.file.format": "HFILE",
            "hoodie.record.merge.mode": "CUSTOM",
            "hoodie.table.version": str(self.table_version),
        }
        write_properties(mdt / ".hoodie" / "hoodie.properties", props, "Properties saved")
        # Bootstrap: one delta commit per MDT partition, each file group starting with an init log.
        order = list(self.secondary)
        for partition in sorted(self.file_groups, key=lambda p: _layout(p, order)[1]):
            instant = _layout(partition, order)[1]
            folder = mdt / partition
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(folder / ".hoodie_partition_metadata", partition_metadata(instant, 1).encode())
            self._requested(instant)
            for i in range(self.file_groups[partition]):
                fg = self.file_group_id(partition, i)
                none = pa.array([], pa.string())
                block = frame_block(BlockType.DELETE, block_header(instant, None), delete_block_content(none, none))
                init = b"".join(bytes(c) for c in block)
                write_atomic(folder / f".{fg}_{instant}.log.1_0-0-0", init)
            stats: list[WriteStat] = []
            if partition == FILES:
                self._values[FILES].put(_ALL_PARTITIONS, self._encode(self._files_record(_ALL_PARTITIONS, {})))
                stats = self._write_groups(FILES, {0}, instant)
            self._complete(instant, None, stats, "BULK_INSERT_PREPPED")
        # The data table lists the MDT partitions and the column stats index definition.
        defs = {"indexDefinitions": {}}
        if RECORD_INDEX in self.file_groups:
            defs["indexDefinitions"][RECORD_INDEX] = {
                "indexName": RECORD_INDEX,
                "indexType": RECORD_INDEX,
                "indexFunction": "",
                "sourceFields": [],
                "indexOptions": {"isPartitioned": "false"},
                "version": "V1",
            }
        if COLUMN_STATS in self.file_groups:
            defs["indexDefinitions"][COLUMN_STATS] = {
                "indexName": COLUMN_STATS,
                "indexType": COLUMN_STATS,
                "indexFunction": COLUMN_STATS,
                "sourceFields": list(self.columns),
                "indexOptions": {},
                "version": "V2" if self.table_version >= 9 else "V1",
            }
        for partition, column in self.secondary.items():
            entry: dict[str, Any] = {
                "indexName": partition,
                "indexType": "secondary_index",
                "indexFunction": "identity",
                "sourceFields": [column],
                "indexOptions": {},
            }
            if self.table_version >= 9:
                entry["version"] = "V2"  # keys routed by their value; table version 8 routes by the whole key
            defs["indexDefinitions"][partition] = entry
        (self.base / INDEX_DEFS_PATH).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.base / INDEX_DEFS_PATH, json.dumps(defs, indent=2).encode())
        updated = dict(data_props)
        updated["hoodie.table.metadata.partitions"] = ",".join(self.partitions)
        updated["hoodie.table.metadata.partitions.inflight"] = ""
        updated["hoodie.table.index.defs.path"] = INDEX_DEFS_PATH
        write_properties(self.base / ".hoodie" / "hoodie.properties", updated, "Updated")

    def _load(self) -> None:
        """Records from the newest base file of each file group (this writer writes no MDT logs)."""
        mdt_instants = list_instants(self._timeline)
        mdt_done = {i.timestamp for i in mdt_instants if _completed_write(i)}
        self._latest_mdt_time = max(self._latest_mdt_time, latest_time(mdt_instants) or "")
        data_done = {i.timestamp for i in list_instants(self.base / ".hoodie" / "timeline") if _completed_write(i)}
        # An MDT delta commit whose data commit never completed is ignored (and overwritten next time).
        valid = {t for t in mdt_done if t.startswith(_BOOTSTRAP_PREFIX) or t in data_done}
        for partition, count in self.file_groups.items():
            folder = self.mdt / partition
            names = os.listdir(folder)
            for i in range(count):
                fg = self.file_group_id(partition, i)
                bases = sorted(
                    (b.instant_time, n)
                    for n in names
                    if (b := parse_base_file_name(n)) is not None and b.file_id == fg and b.instant_time in valid
                )
                newest = bases[-1] if bases else (None, None)
                self._groups[(partition, i)] = _FileGroupState(newest[1], newest[0])
                for n in names:
                    log = parse_log_file_name(n)
                    if (
                        log is not None
                        and log.file_id == fg
                        and log.base_instant in valid
                        and not log.base_instant.startswith(_BOOTSTRAP_PREFIX)
                        and (newest[0] is None or log.base_instant > newest[0])
                    ):
                        raise UnsupportedTableError(
                            f"{folder / n}: this writer keeps metadata records in base files only; it cannot merge logs"
                        )
                if newest[1] is None:
                    continue
                data = (folder / newest[1]).read_bytes()
                reader = HFileReader.from_bytes(data, str(folder / newest[1]))
                for row, value in reader.scan():
                    self._values[partition].groups[i][row.decode("utf-8")] = value
        for key, value in self._values[FILES].items() if FILES in self._values else ():
            if key != _ALL_PARTITIONS:
                rec = self._decode(value)
                files = {n: int(i["size"]) for n, i in (rec["filesystemMetadata"] or {}).items() if not i["isDeleted"]}
                self._files["" if key == _NON_PARTITIONED else key] = files
        for key, value in self._values[COLUMN_STATS].items() if COLUMN_STATS in self._values else ():
            cs = self._decode(value)["ColumnStatsMetadata"]
            vt, info = (cs.get("valueType") or {}).get("typeOrdinal"), (cs.get("valueType") or {}).get("additionalInfo")
            known = self._value_type(cs["columnName"])
            if vt is None and known is not None:
                vt, info = known
            elif vt is None:
                vt = _value_type_of_wrapper(cs.get("minValue"))
            self._ranges[key] = ColumnRange(
                cs["columnName"],
                _unwrap(cs.get("minValue"), vt, info),
                _unwrap(cs.get("maxValue"), vt, info),
                cs.get("nullCount") or 0,
                cs.get("valueCount") or 0,
                cs.get("totalSize") or 0,
                cs.get("totalUncompressedSize") or 0,
                vt,
                info,
            )
        for key, value in self._values[RECORD_INDEX].items() if RECORD_INDEX in self._values else ():
            info = self._decode(value)["recordIndexMetadata"]
            self._rli[key] = (info.get("partitionName") or "", _location_file_id(info))
        for partition in self.secondary:
            state = self._si[partition]
            for key, _ in self._values[partition].items():
                escaped_value, escaped_key = _si_split(key)
                state[_si_unescape(escaped_key)] = escaped_value

    def _value_type(self, column: str) -> tuple[int, str | None] | None:
        if column in _META_COLUMNS:
            return VT_STRING, None
        if self.data_schema is None or self.data_schema.get_field_index(column) < 0:
            return None
        return value_type_of(self.data_schema.field(column).type)

    # -- records -----------------------------------------------------------------------------------------

    def _encode(self, record: dict[str, Any]) -> bytes:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, self._parsed, record)
        return buf.getvalue()

    def _decode(self, value: bytes) -> dict[str, Any]:
        return fastavro.schemaless_reader(
            io.BytesIO(value), self._parsed, None, return_record_name=True, return_record_name_override=True
        )

    @staticmethod
    def _record(kind: int, **payload: Any) -> dict[str, Any]:
        # ``key`` is blank in the value, as Hudi writes it: readers take the key from the HFile row.
        rec: dict[str, Any] = {n: None for n in META_FIELDS}
        rec.update(
            key="",
            type=kind,
            filesystemMetadata=None,
            BloomFilterMetadata=None,
            ColumnStatsMetadata=None,
            recordIndexMetadata=None,
            SecondaryIndexMetadata=None,
        )
        rec.update(payload)
        return rec

    def _files_record(self, key: str, files: Mapping[str, int]) -> dict[str, Any]:
        kind = _TYPE_PARTITION_LIST if key == _ALL_PARTITIONS else _TYPE_FILES
        meta = {n: {"size": s, "isDeleted": False} for n, s in sorted(files.items())}
        return self._record(kind, filesystemMetadata=meta)

    def _stats_record(self, kind: int, name: str, r: ColumnRange, tight: bool) -> dict[str, Any]:
        stats = {
            "fileName": name,
            "columnName": r.column,
            "minValue": _wrap(r.min, r, self.table_version),
            "maxValue": _wrap(r.max, r, self.table_version),
            "valueCount": r.value_count,
            "nullCount": r.null_count,
            "totalSize": r.total_size,
            "totalUncompressedSize": r.total_uncompressed_size,
            "isDeleted": False,
            "isTightBound": tight,
        }
        if self.table_version >= 9:
            stats["valueType"] = {"typeOrdinal": r.value_type, "additionalInfo": r.additional_info}
        return self._record(kind, ColumnStatsMetadata=stats)

    def _rli_record(self, partition: str, file_id: str, instant_ms: int) -> dict[str, Any]:
        m = _FILE_ID.match(file_id)
        if m:
            bits = uuid.UUID(m.group(1)).int
            info = {
                "partitionName": partition,
                "fileIdHighBits": _signed64(bits >> 64),
                "fileIdLowBits": _signed64(bits & 0xFFFFFFFFFFFFFFFF),
                "fileIndex": int(m.group(2)),
                "fileId": "",
                "instantTime": instant_ms,
                "fileIdEncoding": 0,
                "position": None,
            }
        else:  # not "<uuid>-<n>": the file id is stored as it is
            info = {
                "partitionName": partition,
                "fileIdHighBits": -1,
                "fileIdLowBits": -1,
                "fileIndex": -1,
                "fileId": file_id,
                "instantTime": instant_ms,
                "fileIdEncoding": 1,
                "position": None,
            }
        return self._record(_TYPE_RECORD_INDEX, recordIndexMetadata=info)

    # -- per commit ------------------------------------------------------------------------------------

    def observe_file(self, relative_path: str, rows: pa.Table | None, path: Path | None = None) -> None:
        """Column stats of a file a commit wrote: ``rows`` are all its rows (None: a delete-only log);
        ``path`` (base files) lets column sizes be read from the Parquet footer."""
        if path is not None and BLOOM_FILTERS in self.file_groups:
            meta = pq.read_metadata(path).metadata or {}
            text = meta.get(b"org.apache.hudi.bloomfilter")
            if text is not None:
                code = meta.get(b"hoodie_bloom_filter_type_code", b"SIMPLE").decode()
                with self._lock:
                    self._bloom_observed[relative_path] = (code, text)
        if rows is not None and self.secondary and "_hoodie_record_key" in rows.column_names:
            keys = rows["_hoodie_record_key"].to_pylist()
            pairs = {
                partition: list(zip(keys, secondary_index_texts(rows[column])))
                for partition, column in self.secondary.items()
                if column in rows.column_names
            }
            with self._lock:
                self._si_observed[relative_path] = pairs
        if COLUMN_STATS not in self.file_groups:
            return
        sizes: dict[str, tuple[int, int]] = {}
        if path is not None:
            md = pq.read_metadata(path)
            for g in range(md.num_row_groups):
                rg = md.row_group(g)
                for j in range(rg.num_columns):
                    c = rg.column(j)
                    old = sizes.get(c.path_in_schema, (0, 0))
                    sizes[c.path_in_schema] = (old[0] + c.total_compressed_size, old[1] + c.total_uncompressed_size)
        out = []
        for column in self.columns:
            if rows is None:
                out.append(ColumnRange(column, None, None, 0, 0))
            elif column in rows.column_names:
                out.append(column_range(column, rows[column], sizes.get(column, (0, 0))))
        with self._lock:
            self._observed[relative_path] = out

    def commit(
        self,
        instant: str,
        explicit_time: bool,
        stats: Sequence[WriteStat],
        written_keys: Sequence[tuple[str, str, pa.Array]] = (),
        deleted_keys: Sequence[tuple[str, pa.Array]] = (),
        *,
        removed_files: Sequence[str] = (),
    ) -> str:
        """Record one data commit as the MDT delta commit of the same instant; returns its completion time.

        ``written_keys`` are (partition, file id, keys) of every row the commit
        wrote, ``deleted_keys`` (partition, keys) of its deletes. Call it after
        the data files are written and before the data commit completes.

        Table services call it too, as Hudi updates the MDT for them: a compaction or
        clustering with the base files it wrote (a clustering's ``written_keys`` move
        the keys' record index entries to the new file group), a clean with the files
        it deleted (``removed_files``, relative to the base path: they leave the files
        listing and the column stats, and partition stats are taken again).
        """
        changed: dict[str, set[int]] = {p: set() for p in self.file_groups}  # file groups to rewrite
        instant_ms = timeline_to_epoch_millis(instant)
        with self._lock:
            observed, self._observed = self._observed, {}
            si_observed, self._si_observed = self._si_observed, {}
            bloom_observed, self._bloom_observed = self._bloom_observed, {}
        # Files of an earlier, failed write may have been observed: only this commit's count.
        written = {s.path for s in stats if s.path}
        observed = {rel: ranges for rel, ranges in observed.items() if rel in written}
        # Record index first: it is the one part that can refuse a commit.
        if RECORD_INDEX in self.file_groups:
            updates: dict[str, tuple[str, str]] = {}
            for partition, file_id, keys in written_keys:
                for key in keys.to_pylist():
                    known = updates.get(key) or self._rli.get(key)
                    if known is not None and known[0] != partition:
                        raise InvalidRowsError(
                            f"Record key {key!r} is in partitions {known[0]!r} and {partition!r}; "
                            "the record index needs keys unique across partitions"
                        )
                    if known != (partition, file_id):
                        updates[key] = (partition, file_id)
            values = self._values[RECORD_INDEX]
            for key, (partition, file_id) in updates.items():
                self._rli[key] = (partition, file_id)
                changed[RECORD_INDEX].add(
                    values.put(key, self._encode(self._rli_record(partition, file_id, instant_ms)))
                )
            for partition, keys in deleted_keys:
                for key in keys.to_pylist():
                    if self._rli.get(key, ("", ""))[0] == partition:
                        del self._rli[key]
                        changed[RECORD_INDEX].add(values.pop(key))
        # Secondary indexes: a row whose value changed drops its old pair and gets the new one.
        for partition in self.secondary:
            state, values = self._si[partition], self._values[partition]
            for rel, pairs in si_observed.items():
                if rel not in written:
                    continue
                for key, text in pairs.get(partition, ()):
                    old = state.get(key)
                    if old == text:
                        continue
                    if old is not None:
                        changed[partition].add(values.pop(secondary_index_key(old, key)))
                    state[key] = text
                    record = self._record(_TYPE_SECONDARY_INDEX, SecondaryIndexMetadata={"isDeleted": False})
                    changed[partition].add(values.put(secondary_index_key(text, key), self._encode(record)))
            for _, keys in deleted_keys:
                for key in keys.to_pylist():
                    old = state.pop(key, None)
                    if old is not None:
                        changed[partition].add(values.pop(secondary_index_key(old, key)))
        # Bloom filters: a record per written base file that has one; a tombstone per cleaned one.
        if BLOOM_FILTERS in self.file_groups:
            values = self._values[BLOOM_FILTERS]
            for rel, (code, text) in bloom_observed.items():
                if rel in written:
                    partition, _, name = rel.rpartition("/")
                    info = {"type": code, "timestamp": instant, "bloomFilter": text, "isDeleted": False}
                    record = self._record(_TYPE_BLOOM_FILTER, BloomFilterMetadata=info)
                    changed[BLOOM_FILTERS].add(values.put(bloom_filter_key(partition, name), self._encode(record)))
            for rel in removed_files:
                partition, _, name = rel.rpartition("/")
                key = bloom_filter_key(partition, name)
                if key in values:
                    info = {"type": "", "timestamp": instant, "bloomFilter": b"", "isDeleted": True}
                    record = self._record(_TYPE_BLOOM_FILTER, BloomFilterMetadata=info)
                    changed[BLOOM_FILTERS].add(values.put(key, self._encode(record)))
        # Files: every written file with its final size; cleaned files leave the listing and the stats.
        touched: set[str] = set()
        for rel in removed_files:
            partition, _, name = rel.rpartition("/")
            self._files.get(partition, {}).pop(name, None)
            touched.add(partition)
            if COLUMN_STATS in self.file_groups:
                for column in self.columns:
                    key = column_stats_key(column, partition, name)
                    if self._ranges.pop(key, None) is not None:
                        changed[COLUMN_STATS].add(self._values[COLUMN_STATS].pop(key))
        for s in stats:
            if s.path:
                name = s.path.rsplit("/", 1)[-1]
                self._files.setdefault(s.partition_path, {})[name] = s.file_size
                touched.add(s.partition_path)
        files = self._values[FILES]
        all_partitions = {_NON_PARTITIONED if p == "" else p: 0 for p in self._files}
        changed[FILES].add(
            files.put(_ALL_PARTITIONS, self._encode(self._files_record(_ALL_PARTITIONS, all_partitions)))
        )
        for partition in touched:
            key = _NON_PARTITIONED if partition == "" else partition
            changed[FILES].add(files.put(key, self._encode(self._files_record(key, self._files[partition]))))
        # Column stats of the written files, then the partitions' aggregates over their latest slices.
        if COLUMN_STATS in self.file_groups:
            values = self._values[COLUMN_STATS]
            for rel, ranges in observed.items():
                partition, _, name = rel.rpartition("/")
                for r in ranges:
                    key = column_stats_key(r.column, partition, name)
                    self._ranges[key] = r
                    record = self._stats_record(_TYPE_COLUMN_STATS, name, r, False)
                    changed[COLUMN_STATS].add(values.put(key, self._encode(record)))
        if PARTITION_STATS in self.file_groups:
            values = self._values[PARTITION_STATS]
            for partition in touched:
                live = _latest_slice_files(self._files.get(partition, {}))
                for column in self.columns:
                    ranges = [self._ranges.get(column_stats_key(column, partition, n)) for n in live]
                    agg = merge_ranges(column, [r for r in ranges if r is not None])
                    key = partition_stats_key(column, partition)
                    record = self._stats_record(_TYPE_PARTITION_STATS, partition, agg, True)
                    changed[PARTITION_STATS].add(values.put(key, self._encode(record)))
        write_stats: list[WriteStat] = []
        self._requested(instant)
        for partition, groups in changed.items():
            write_stats += self._write_groups(partition, groups, instant, task_offset=len(write_stats))
        return self._complete(instant, instant if explicit_time else None, write_stats, "UPSERT_PREPPED")

    # -- failed writes and their rollback -----------------------------------------------------------------

    def checkpoint(self) -> _Checkpoint:
        """The writer's state now: take it before a write that may fail (see ``failed``)."""
        with self._lock:
            return _Checkpoint(
                {p: r.copy() for p, r in self._values.items()},
                {p: dict(f) for p, f in self._files.items()},
                dict(self._ranges),
                dict(self._rli),
                {k: _FileGroupState(v.base_name, v.base_instant) for k, v in self._groups.items()},
                {p: dict(v) for p, v in self._si.items()},
            )

    def failed(self, instant: str, before: _Checkpoint) -> None:
        """The data commit ``instant`` failed after its MDT delta commit completed (Hudi commits
        the MDT first); ``before`` is the checkpoint taken before the write, which the rollback
        returns to."""
        self._failed[instant] = before

    def has_delta_commit(self, instant: str) -> bool:
        return any(i.timestamp == instant and i.action == "deltacommit" for i in list_instants(self._timeline))

    def roll_back(self, instant: str) -> tuple[str, dict[str, list[tuple[str, str, str | None]]]]:
        """Undo the delta commit of the failed data commit ``instant``, as Hudi's rollback of a
        data commit rolls back the MDT delta commit of the same instant: the base files it
        wrote and its instant files are deleted and the writer returns to its state before it.
        Returns the delta commit's action and the deleted files by MDT partition, each as
        (file id, path relative to the MDT, the group's base instant before), for the
        rollback's plan and metadata, which the caller writes on the MDT timeline."""
        before = self._failed.pop(instant, None)
        if before is None:
            raise UnsupportedTableError(f"No state before the failed MDT delta commit {instant} was kept")
        deleted: dict[str, list[tuple[str, str, str | None]]] = {}
        for (partition, g), state in self._groups.items():
            if state.base_instant == instant and state.base_name:
                prev = before.groups.get((partition, g))
                rel = f"{partition}/{state.base_name}"
                deleted.setdefault(partition, []).append(
                    (self.file_group_id(partition, g), rel, prev.base_instant if prev else None)
                )
                (self.mdt / rel).unlink()
        pending = [i for i in list_instants(self._timeline) if i.timestamp == instant]
        action = pending[0].action if pending else "deltacommit"
        for i in sorted(pending, key=lambda i: i.is_completed):  # pending state files first, as Hudi does
            (self._timeline / i.file_name).unlink()
        with self._lock:
            self._values, self._files, self._ranges = before.values, before.files, before.ranges
            self._rli, self._groups, self._si = before.rli, before.groups, before.si
            self._observed, self._si_observed, self._bloom_observed = {}, {}, {}
        return action, deleted

    def complete_service(self, instant: str, action: str, body: bytes) -> str:
        """Write a completed MDT instant of ``action`` (a rollback, a clean) whose requested and
        inflight files the caller wrote; it completes 1 ms after ``instant``. Returns the completion time."""
        completion = next_instant_time(max(instant, self._latest_mdt_time), parse_instant_time(instant))
        write_atomic(self._timeline / f"{instant}_{completion}.{action}", body)
        self._latest_mdt_time = max(self._latest_mdt_time, completion)
        return completion

    @property
    def timeline_path(self) -> Path:
        """The MDT's timeline folder."""
        return self._timeline

    # -- files and timeline ------------------------------------------------------------------------------

    def _write_groups(
        self, partition: str, groups: Iterable[int], instant: str, task_offset: int = 0
    ) -> list[WriteStat]:
        """New base HFiles of the given file groups of an MDT partition, at ``instant``."""
        out = []
        for task, g in enumerate(sorted(groups), start=task_offset):
            cells = self._values[partition].group_cells(g)
            writer = _CellWriter(
                block_size=self.options.hfile_block_size,
                compression_level=self.options.hfile_compression_level,
                max_root_entries=self.options.hfile_max_root_entries,
                index_fanout=self.options.hfile_index_fanout,
            )
            writer.append_cells(cells)
            info = {b"schema": self._schema_json.encode()}
            if cells:
                info[b"minRecordKey"] = cells[0][0]
                info[b"maxRecordKey"] = cells[-1][0]
            fg = self.file_group_id(partition, g)
            name = f"{fg}_{task}-0-{task}_{instant}.hfile"
            path = self.mdt / partition / name
            write_atomic(path, writer.finish(info))
            state = self._groups.setdefault((partition, g), _FileGroupState())
            out.append(
                WriteStat(
                    file_id=fg,
                    partition_path=partition,
                    path=f"{partition}/{name}",
                    prev_commit=state.base_instant or NULL_COMMIT,
                    prev_base_file=state.base_name,
                    num_writes=len(cells),
                    num_inserts=len(cells),
                    file_size=path.stat().st_size,
                )
            )
            state.base_name, state.base_instant = name, instant
        return out

    def _requested(self, instant: str) -> None:
        self._timeline.mkdir(parents=True, exist_ok=True)
        write_atomic(self._timeline / f"{instant}.deltacommit.requested", b"")
        write_atomic(self._timeline / f"{instant}.deltacommit.inflight", commit_metadata_avro([], {}, "UPSERT_PREPPED"))

    def _complete(self, instant: str, explicit: str | None, stats: Sequence[WriteStat], operation: str) -> str:
        """Complete an MDT delta commit; the completion time follows the data writers' rule."""
        created = self.options.created_at
        if explicit is not None:
            completion = next_instant_time(explicit, parse_instant_time(explicit))
        elif created is not None and instant.startswith(_BOOTSTRAP_PREFIX):
            completion = next_instant_time(max(created, self._latest_mdt_time), parse_instant_time(created))
        else:
            after = max(instant, self._latest_mdt_time)
            completion = next_instant_time(None if after.startswith(_BOOTSTRAP_PREFIX) else after)
        body = commit_metadata_avro(stats, {"schema": self._schema_json}, operation)
        write_atomic(self._timeline / f"{instant}_{completion}.deltacommit", body)
        self._latest_mdt_time = max(self._latest_mdt_time, completion)
        return completion


# -- helpers -------------------------------------------------------------------------------------------


def _completed_write(instant: HudiInstant) -> bool:
    """A completed commit, delta commit or replace commit with its completion time (table version 8+)."""
    return instant.is_completed and instant.action in DATA_ACTIONS and instant.completion_timestamp is not None


def _indexed_columns(schema: pa.Schema, wanted: Sequence[str] | None) -> tuple[str, ...]:
    if wanted is not None:
        for c in wanted:
            idx = schema.get_field_index(c)
            if c not in _META_COLUMNS and (idx < 0 or value_type_of(schema.field(idx).type) is None):
                raise SchemaError(f"Column {c!r} cannot be indexed: not a top-level column of a primitive type")
        return tuple(dict.fromkeys(wanted))
    data = [f.name for f in schema if value_type_of(f.type) is not None]
    return (*_META_COLUMNS, *data)[:MAX_INDEXED_COLUMNS]


def _file_group_of(name: str) -> str | None:
    base = parse_base_file_name(name)
    if base is not None:
        return base.file_id
    log = parse_log_file_name(name)
    return log.file_id if log is not None else None


def _latest_slice_files(files: Iterable[str]) -> list[str]:
    """Names of the files of each file group's latest slice: the newest base file and the logs
    written at or after it (the data writers commit one instant at a time, so instant order
    is completion order)."""
    bases: dict[str, tuple[str, str]] = {}  # file id -> (instant, name)
    logs: dict[str, list[tuple[str, str]]] = {}
    for name in files:
        b = parse_base_file_name(name)
        if b is not None:
            if b.file_id not in bases or b.instant_time > bases[b.file_id][0]:
                bases[b.file_id] = (b.instant_time, name)
            continue
        log = parse_log_file_name(name)
        if log is not None:
            logs.setdefault(log.file_id, []).append((log.base_instant, name))
    out = []
    for fid in bases.keys() | logs.keys():
        since, base = bases.get(fid, ("", None))
        out += [base] if base else []
        out += [n for t, n in logs.get(fid, []) if t >= since]
    return out


def _value_type_of_wrapper(wrapped: Any) -> int:
    """A v8 record's value type, from its wrapper's name."""
    if not isinstance(wrapped, tuple):
        return VT_NULL
    name = wrapped[0].rsplit(".", 1)[-1]
    return {
        "BooleanWrapper": VT_BOOLEAN,
        "IntWrapper": VT_INT,
        "LongWrapper": VT_LONG,
        "FloatWrapper": VT_FLOAT,
        "DoubleWrapper": VT_DOUBLE,
        "StringWrapper": VT_STRING,
        "BytesWrapper": VT_BYTES,
        "DecimalWrapper": VT_DECIMAL,
        "DateWrapper": VT_DATE,
        "TimeMicrosWrapper": VT_TIME_MICROS,
        "TimestampMicrosWrapper": VT_TIMESTAMP_MICROS,
        "LocalDateWrapper": VT_DATE,
    }.get(name, VT_NULL)


def _location_file_id(info: Mapping[str, Any]) -> str:
    if info.get("fileIdEncoding") == 1:
        return info.get("fileId") or ""
    hi = (info.get("fileIdHighBits") or 0) & 0xFFFFFFFFFFFFFFFF
    lo = (info.get("fileIdLowBits") or 0) & 0xFFFFFFFFFFFFFFFF
    fid = str(uuid.UUID(int=(hi << 64) | lo))
    index = info.get("fileIndex")
    return fid if index in (None, -1) else f"{fid}-{index}"


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v
