"""Metadata-table records: decoding HFile values and merging them per partition type."""

from __future__ import annotations

import io
import uuid
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hudi_ray.core.exceptions import HudiCorruptFileError
from hudi_ray.core.expr.stats import ColumnStats
from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import fastavro
    import pyarrow as pa
else:
    fastavro = lazy_module("fastavro")
    pa = lazy_module("pyarrow")

TYPE_PARTITION_LIST = 1
TYPE_FILES = 2
TYPE_COLUMN_STATS = 3
TYPE_BLOOM = 4
TYPE_RECORD_INDEX = 5
TYPE_PARTITION_STATS = 6
TYPE_SECONDARY_INDEX = 7

ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED = "."

# HoodieValueTypeInfo.typeOrdinal values (table version 9).
_VT_DECIMAL = 10
_VT_DATE = 12
_VT_TIME_MILLIS, _VT_TIME_MICROS = 13, 14
_VT_TS_MILLIS, _VT_TS_MICROS, _VT_TS_NANOS = 15, 16, 17
_VT_LOCAL_TS_MILLIS, _VT_LOCAL_TS_MICROS, _VT_LOCAL_TS_NANOS = 18, 19, 20


@lru_cache(maxsize=64)
def _parsed(schema_json: str) -> Any:
    import json

    return fastavro.parse_schema(json.loads(schema_json))


def decode_record(value: bytes, schema_json: str, where: str) -> dict[str, Any]:
    try:
        record = fastavro.schemaless_reader(io.BytesIO(value), _parsed(schema_json), None)
    except Exception as exc:  # fastavro raises several unrelated types
        raise HudiCorruptFileError(f"Cannot decode a metadata record in {where}: {exc}") from exc
    if not isinstance(record, dict):
        raise HudiCorruptFileError(f"Cannot decode a metadata record in {where}: not an Avro record")
    return record


# -- files ------------------------------------------------------------------


def merge_files(older: dict[str, Any] | None, newer: dict[str, Any]) -> dict[str, Any]:
    """Combine two files-partition records: later adds win, tombstones remove."""
    if older is None:
        return newer
    files = dict(older.get("filesystemMetadata") or {})
    for name, info in (newer.get("filesystemMetadata") or {}).items():
        if name in files:
            if info.get("isDeleted"):
                del files[name]
            else:
                files[name] = {"size": max(files[name].get("size") or 0, info.get("size") or 0), "isDeleted": False}
        else:
            files[name] = info
    return {**newer, "filesystemMetadata": files}


def live_files(record: dict[str, Any]) -> dict[str, int]:
    return {
        name: int(info.get("size") or 0)
        for name, info in (record.get("filesystemMetadata") or {}).items()
        if not info.get("isDeleted")
    }


# -- column and partition stats ---------------------------------------------------


def _unwrap(value: Any) -> Any:
    if isinstance(value, dict):
        return value.get("value")
    return value


def merge_column_stats(older: dict[str, Any] | None, newer: dict[str, Any]) -> dict[str, Any]:
    if older is None:
        return newer
    o, n = older.get("ColumnStatsMetadata") or {}, newer.get("ColumnStatsMetadata") or {}
    if o.get("isDeleted") or n.get("isDeleted") or n.get("isTightBound"):
        return newer
    merged = dict(n)
    lo = [v for v in (o.get("minValue"), n.get("minValue")) if _unwrap(v) is not None]
    hi = [v for v in (o.get("maxValue"), n.get("maxValue")) if _unwrap(v) is not None]
    merged["minValue"] = min(lo, key=_unwrap) if lo else None
    merged["maxValue"] = max(hi, key=_unwrap) if hi else None
    for f in ("valueCount", "nullCount", "totalSize", "totalUncompressedSize"):
        merged[f] = (o.get(f) or 0) + (n.get(f) or 0)
    return {**newer, "ColumnStatsMetadata": merged}


def _decimal_from_bytes(raw: bytes, scale: int) -> Decimal:
    unscaled = int.from_bytes(raw, "big", signed=True)
    return Decimal(unscaled).scaleb(-scale)


def stats_value(value: Any, value_type: dict[str, Any] | None, dtype: pa.DataType) -> pa.Scalar | None:
    """A wrapped min/max value as a scalar of the column's Arrow type; None when unknown."""
    raw = _unwrap(value)
    if raw is None:
        return None
    try:
        ordinal = (value_type or {}).get("typeOrdinal")
        if ordinal == _VT_DECIMAL and isinstance(raw, bytes):
            info = (value_type or {}).get("additionalInfo") or ""
            scale = int(info.split(",")[1]) if "," in info else getattr(dtype, "scale", 0)
            raw = _decimal_from_bytes(raw, scale)
        if pa.types.is_timestamp(dtype) and isinstance(raw, int):
            units: dict[Any, str] = {
                _VT_TS_MILLIS: "ms",
                _VT_LOCAL_TS_MILLIS: "ms",
                _VT_TS_NANOS: "ns",
                _VT_LOCAL_TS_NANOS: "ns",
            }
            unit = units.get(ordinal, "us")
            return pa.scalar(raw, pa.timestamp(unit, tz=dtype.tz)).cast(dtype)
        if pa.types.is_date32(dtype) and isinstance(raw, int):
            return pa.scalar(raw, pa.date32())
        if pa.types.is_decimal(dtype):
            exact = Decimal(str(raw)).quantize(Decimal(1).scaleb(-dtype.scale))
            if exact != Decimal(str(raw)):
                return None  # a bound that does not fit the column's scale is not used
            return pa.scalar(exact, dtype)
        return pa.scalar(raw).cast(dtype)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError, OverflowError):
        return None


def to_column_stats(record: dict[str, Any], dtype: pa.DataType) -> ColumnStats | None:
    cs = record.get("ColumnStatsMetadata") or {}
    if cs.get("isDeleted"):
        return None
    vt = cs.get("valueType")
    return ColumnStats(
        min=stats_value(cs.get("minValue"), vt, dtype),
        max=stats_value(cs.get("maxValue"), vt, dtype),
        null_count=cs.get("nullCount"),
        value_count=cs.get("valueCount"),
    )


# -- record index -------------------------------------------------------------------


@dataclass(frozen=True)
class RecordLocation:
    partition: str
    file_id: str


def record_location(record: dict[str, Any]) -> RecordLocation | None:
    info = record.get("recordIndexMetadata")
    if not info:
        return None
    if info.get("fileIdEncoding", 0) == 1:
        fid = info.get("fileId") or ""
    else:
        hi = (info.get("fileIdHighBits") or 0) & 0xFFFFFFFFFFFFFFFF
        lo = (info.get("fileIdLowBits") or 0) & 0xFFFFFFFFFFFFFFFF
        fid = str(uuid.UUID(int=(hi << 64) | lo))
        index = info.get("fileIndex")
        if index is not None and index != -1:
            fid = f"{fid}-{index}"
    return RecordLocation(info.get("partitionName") or "", fid)
