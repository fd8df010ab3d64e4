"""What Hudi writes besides data: commit metadata, table properties, partition metadata.

Table version 6 (timeline layout 1) stores commit metadata as JSON; versions 8
and 9 (layout 2) as an Avro container holding one ``HoodieCommitMetadata``
record, with the writer schema Hudi itself uses.
"""

from __future__ import annotations

import io
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import fastavro

# Hudi writes the string "null" (not JSON null) as the previous commit of a new file group.
NULL_COMMIT = "null"


@dataclass(frozen=True)
class WriteStat:
    """One base file written by a commit (or, with no path, planned by an inflight one)."""

    file_id: str
    partition_path: str
    path: str | None = None  # relative to the table's base path
    prev_commit: str = NULL_COMMIT
    prev_base_file: str | None = None
    num_writes: int = 0
    num_inserts: int = 0
    num_update_writes: int = 0
    file_size: int = 0
    write_millis: int = 0

    def _runtime(self) -> dict[str, int] | None:
        if self.path is None:
            return None
        updated = self.prev_commit != NULL_COMMIT
        return {
            "totalScanTime": 0,
            "totalUpsertTime": self.write_millis if updated else 0,
            "totalCreateTime": 0 if updated else self.write_millis,
        }

    def to_json(self) -> dict[str, Any]:
        """Field order and defaults as Hudi's Jackson serialization writes them."""
        return {
            "fileId": self.file_id,
            "path": self.path,
            "cdcStats": None,
            "prevCommit": self.prev_commit,
            "numWrites": self.num_writes,
            "numDeletes": 0,
            "numUpdateWrites": self.num_update_writes,
            "numInserts": self.num_inserts,
            "totalWriteBytes": self.file_size,
            "totalWriteErrors": 0,
            "tempPath": None,
            "partitionPath": self.partition_path,
            "totalLogRecords": 0,
            "totalLogFilesCompacted": 0,
            "totalLogSizeCompacted": 0,
            "totalUpdatedRecordsCompacted": 0,
            "totalLogBlocks": 0,
            "totalCorruptLogBlock": 0,
            "totalRollbackBlocks": 0,
            "fileSizeInBytes": self.file_size,
            "minEventTime": None,
            "maxEventTime": None,
            "runtimeStats": self._runtime(),
        }

    def to_avro(self) -> dict[str, Any]:
        record: dict[str, Any] = {name: None for name, _ in _WRITE_STAT_FIELDS}
        record.update({k: v for k, v in self.to_json().items() if k in record})
        record.update(
            {"prevBaseFile": self.prev_base_file, "totalLogReadTimeMs": 0, "numUpdates": 0, "totalLogFiles": None}
        )
        return record


def _string() -> dict[str, str]:
    return {"type": "string", "avro.java.string": "String"}


# Field order of org.apache.hudi.avro.model.HoodieWriteStat; every field is ["null", T] with default null.
_WRITE_STAT_FIELDS: list[tuple[str, Any]] = [
    ("fileId", _string()),
    ("path", _string()),
    ("prevCommit", _string()),
    ("numWrites", "long"),
    ("numDeletes", "long"),
    ("numUpdateWrites", "long"),
    ("totalWriteBytes", "long"),
    ("totalWriteErrors", "long"),
    ("partitionPath", _string()),
    ("totalLogRecords", "long"),
    ("totalLogFiles", "long"),
    ("totalUpdatedRecordsCompacted", "long"),
    ("numInserts", "long"),
    ("totalLogBlocks", "long"),
    ("totalCorruptLogBlock", "long"),
    ("totalRollbackBlocks", "long"),
    ("fileSizeInBytes", "long"),
    ("logVersion", "int"),
    ("logOffset", "long"),
    ("baseFile", _string()),
    ("logFiles", {"type": "array", "items": _string(), "default": None}),
    ("cdcStats", {"type": "map", "values": "long", "avro.java.string": "String", "default": None}),
    ("prevBaseFile", _string()),
    ("minEventTime", "long"),
    ("maxEventTime", "long"),
    (
        "runtimeStats",
        {
            "type": "record",
            "name": "HoodieRuntimeStats",
            "fields": [
                {"name": n, "type": ["null", "long"], "default": None}
                for n in ("totalScanTime", "totalCreateTime", "totalUpsertTime")
            ],
        },
    ),
    ("totalLogFilesCompacted", "long"),
    ("totalLogReadTimeMs", "long"),
    ("totalLogSizeCompacted", "long"),
    ("tempPath", _string()),
    ("numUpdates", "long"),
]


def _optional(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None}


COMMIT_METADATA_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCommitMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        _optional(
            "partitionToWriteStats",
            {
                "type": "map",
                "values": {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieWriteStat",
                        "fields": [_optional(n, t) for n, t in _WRITE_STAT_FIELDS],
                    },
                },
                "avro.java.string": "String",
            },
        ),
        _optional("compacted", "boolean"),
        _optional(
            "extraMetadata",
            {"type": "map", "values": _string(), "avro.java.string": "String", "default": None},
        ),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _optional("operationType", _string()),
    ],
}


def _by_partition(stats: Iterable[WriteStat]) -> dict[str, list[WriteStat]]:
    out: dict[str, list[WriteStat]] = {}
    for s in stats:
        out.setdefault(s.partition_path, []).append(s)
    return out


def commit_metadata_json(stats: Sequence[WriteStat], extra: Mapping[str, str], operation: str) -> bytes:
    """A layout-1 (table version 6) ``.commit`` / ``.inflight`` file."""
    body = {
        "partitionToWriteStats": {p: [s.to_json() for s in group] for p, group in _by_partition(stats).items()},
        "compacted": False,
        "extraMetadata": dict(extra),
        "operationType": operation,
    }
    return json.dumps(body, indent=2).encode("utf-8")


def commit_metadata_avro(stats: Sequence[WriteStat], extra: Mapping[str, str], operation: str) -> bytes:
    """A layout-2 (table version 8+) ``.commit`` / ``.inflight`` file: an Avro container of one record."""
    record = {
        "partitionToWriteStats": {p: [s.to_avro() for s in group] for p, group in _by_partition(stats).items()},
        "compacted": False,
        "extraMetadata": dict(extra),
        "version": None,
        "operationType": operation,
    }
    buf = io.BytesIO()
    # The unparsed schema, so the file embeds it as Hudi declares it (fastavro would expand names).
    fastavro.writer(buf, COMMIT_METADATA_SCHEMA, [record], codec="null")
    return buf.getvalue()


# -- Java properties files ---------------------------------------------------------------------


def _escape(text: str, is_key: bool) -> str:
    """java.util.Properties#store escaping: ``\\:`` in the table schema is what real tables hold."""
    out: list[str] = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[ch])
        elif ch in "=:#!":
            out.append("\\" + ch)
        elif ch == " " and (is_key or i == 0):
            out.append("\\ ")
        elif not " " <= ch <= "~":
            out.extend(f"\\u{unit:04X}" for unit in _utf16_units(ch))
        else:
            out.append(ch)
    return "".join(out)


def _utf16_units(ch: str) -> list[int]:
    data = ch.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def _java_date(now: datetime) -> str:
    return now.strftime("%a %b %d %H:%M:%S UTC %Y")


def format_properties(props: Mapping[str, str], comment: str, now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    lines = [f"#{comment}", f"#{_java_date(now)}"]
    lines += [f"{_escape(k, True)}={_escape(v, False)}" for k, v in props.items()]
    return "\n".join(lines) + "\n"


def table_checksum(table_name: str, database: str = "default") -> int:
    """HoodieTableConfig#generateChecksum: CRC32 of ``<database>.<table>``."""
    return zlib.crc32(f"{database}.{table_name}".encode())


def partition_metadata(commit_time: str, depth: int, now: datetime | None = None) -> str:
    """``.hoodie_partition_metadata``: the partition's first commit and its directory depth."""
    return format_properties({"commitTime": commit_time, "partitionDepth": str(depth)}, "partition metadata", now)
