"""Apache Hudi's archived timeline, written as Hudi's archiver writes it.

Archiving moves completed instants, with every state file they have
(requested, inflight, completed), off the active timeline into the table's
history. Table version 6 (timeline layout 1) keeps that history in Hudi log
files, ``.hoodie/archived/.commits_.archive.<N>_1-0-1``: Avro data blocks of
``HoodieArchivedMetaEntry`` records, one per instant file, the JSON commit
metadata converted to Avro records. Versions 8 and 9 (layout 2) keep an LSM
tree in ``.hoodie/timeline/history``: Parquet files of one row per completed
instant holding the raw bytes of its files, listed by versioned manifests,
small files merged into the next level as they pile up.

The writer is for tests of readers of that history; it acts on tables the
writers of this package wrote (or any local table of the same layouts).
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ray.core.config import parse_properties
from hudi_ray.core.log_file import BlockType, HeaderKey
from hudi_ray.core.storage.paths import metadata_path_problem
from hudi_ray.core.timeline import HudiInstant, State
from hudi_testkit.common import format_instant_time, list_instants, write_atomic
from hudi_testkit.errors import ArchiveError, TableNotFoundError, UnsupportedTableError
from hudi_testkit.log_writer import BLOCK_CONTENT_VERSION, frame_block
from hudi_testkit.metadata import COMMIT_METADATA_SCHEMA

# hoodie.commits.archival.batch: records per Avro data block of a layout-1 archive file.
ARCHIVAL_BATCH = 10
# hoodie.timeline.compaction.batch.size: files of one LSM level merged into the next at once.
TIMELINE_COMPACTION_BATCH = 10
# Manifest versions the LSM cleaner keeps (plus one per compaction of the same archival).
MANIFEST_VERSIONS_RETAINED = 3
# The write token Hudi gives log files written outside a Spark task.
ARCHIVE_WRITE_TOKEN = "1-0-1"
VERSION_FILE = "_version_"

# Completed commit actions: what Hudi's archival rule counts.
_COMMIT_ACTIONS = frozenset({"commit", "deltacommit", "replacecommit"})
# Actions whose pending instants hold writes back (the "write timeline").
_WRITE_ACTIONS = _COMMIT_ACTIONS | {"compaction", "logcompaction", "clustering"}
# A pending action becomes this action when it completes.
_COMPLETES_AS = {"compaction": "commit", "logcompaction": "deltacommit", "clustering": "replacecommit"}
_STATE_ORDER = {State.REQUESTED.value: 0, State.INFLIGHT.value: 1, State.COMPLETED.value: 2}

_LOG_FILE = re.compile(r"^\.commits_\.archive\.(\d+)(?:_[\w-]+)?$")
_LSM_FILE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")
_MANIFEST = re.compile(r"^manifest_(\d+)$")
_AVRO_CONTAINER = b"Obj\x01"
_I32 = struct.Struct(">i")


# -- where the timeline and its history live --------------------------------------------------


@dataclass(frozen=True)
class ArchiveLayout:
    """Where a table keeps its active timeline and its archived history."""

    table_version: int
    timeline: Path
    archive: Path

    @property
    def is_lsm(self) -> bool:
        """Layout 2 (table version 8 and up): the LSM history; else layout 1's archive log files."""
        return self.table_version >= 8


def _sub_folder(root: Path, value: str | None, default: str, key: str, where: Path) -> Path:
    """``root/value``; an empty value means ``root`` itself, as Hudi resolves it."""
    sub = (default if value is None else value).strip().strip("/")
    if not sub:
        return root
    problem = metadata_path_problem(sub)
    if problem is not None:
        raise UnsupportedTableError(f"{key}={sub!r} in {where} {problem}: the testkit writes inside .hoodie only")
    return root / sub


def archive_layout(base_path: str | os.PathLike[str]) -> ArchiveLayout:
    """The layout ``hoodie.properties`` gives the table at ``base_path``."""
    base = Path(os.fspath(base_path).removeprefix("file://"))
    props_path = base / ".hoodie" / "hoodie.properties"
    if not props_path.is_file():
        raise TableNotFoundError(f"Not a Hudi table: {props_path} does not exist")
    props = parse_properties(props_path.read_text("utf-8"))
    version = int(props.get("hoodie.table.version", "6"))
    meta = base / ".hoodie"
    if version >= 8:
        timeline = _sub_folder(meta, props.get("hoodie.timeline.path"), "timeline", "hoodie.timeline.path", props_path)
        history_key = "hoodie.timeline.history.path"
        archive = _sub_folder(timeline, props.get(history_key), "history", history_key, props_path)
        return ArchiveLayout(version, timeline, archive)
    folder_key = "hoodie.archivelog.folder"
    return ArchiveLayout(version, meta, _sub_folder(meta, props.get(folder_key), "archived", folder_key, props_path))


# -- instants with all their state files ------------------------------------------------------


@dataclass(frozen=True)
class _Action:
    """One instant of the active timeline: its state files, requested first."""

    time: str
    files: tuple[HudiInstant, ...]

    def _in(self, state: State) -> HudiInstant | None:
        return next((f for f in self.files if f.state == state.value), None)

    @property
    def completed(self) -> HudiInstant | None:
        return self._in(State.COMPLETED)

    @property
    def requested(self) -> HudiInstant | None:
        return self._in(State.REQUESTED)

    @property
    def inflight(self) -> HudiInstant | None:
        return self._in(State.INFLIGHT)

    @property
    def pending(self) -> HudiInstant | None:
        """The file that names the action it was planned as (a compaction completes as a commit)."""
        return self.requested or self.inflight

    @property
    def action(self) -> str:
        """The completed action (for pending instants, the action they complete as)."""
        done = self.completed
        if done is not None:
            return done.action
        first = self.files[0].action
        return _COMPLETES_AS.get(first, first)


def _actions(timeline: Path) -> list[_Action]:
    """The instants of a timeline folder, oldest first; each groups the files
    of one requested time and action, a compaction's with its commit."""
    grouped: dict[tuple[str, str], list[HudiInstant]] = {}
    for instant in list_instants(timeline):
        key = (instant.timestamp, _COMPLETES_AS.get(instant.action, instant.action))
        grouped.setdefault(key, []).append(instant)
    return [
        _Action(time, tuple(sorted(files, key=lambda i: _STATE_ORDER[i.state])))
        for (time, _), files in sorted(grouped.items())
    ]


def _read(timeline: Path, instant: HudiInstant | None) -> bytes | None:
    """An instant file's bytes; None for no file or an empty one (Hudi archives nothing for those)."""
    if instant is None:
        return None
    return (timeline / instant.file_name).read_bytes() or None


# -- Avro schemas of layout 1 -----------------------------------------------------------------


def _str() -> dict[str, str]:
    # Hudi generates its Avro classes with Java strings, and their schemas say so on every string.
    return {"type": "string", "avro.java.string": "String"}


def _field(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": avro_type}


def _nullable(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None}


def _array(items: Any) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _map(values: Any) -> dict[str, Any]:
    return {"type": "map", "values": values, "avro.java.string": "String"}


def _record(name: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
    # Nested in HoodieArchivedMetaEntry, so in its namespace without naming it again.
    return {"type": "record", "name": name, "fields": fields}


_VERSION = {"name": "version", "type": ["int", "null"], "default": 1}
_WRITE_STATS = _map(_array("HoodieWriteStat"))  # defined inside HoodieCommitMetadata, the first field

# HoodieCommitMetadata exactly as the table version 8 writer embeds it in completed instant files.
_COMMIT_METADATA = {k: v for k, v in json.loads(json.dumps(COMMIT_METADATA_SCHEMA)).items() if k != "namespace"}

_CLEAN_METADATA = _record(
    "HoodieCleanMetadata",
    [
        _field("startCleanTime", _str()),
        _field("timeTakenInMillis", "long"),
        _field("totalFilesDeleted", "int"),
        _field("earliestCommitToRetain", _str()),
        {"name": "lastCompletedCommitTimestamp", "type": _str(), "default": ""},
        _field(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieCleanPartitionMetadata",
                    [
                        _field("partitionPath", _str()),
                        _field("policy", _str()),
                        _field("deletePathPatterns", _array(_str())),
                        _field("successDeleteFiles", _array(_str())),
                        _field("failedDeleteFiles", _array(_str())),
                        _nullable("isPartitionDeleted", "boolean"),
                    ],
                )
            ),
        ),
        _VERSION,
        _nullable("bootstrapPartitionMetadata", _map("HoodieCleanPartitionMetadata")),
    ],
)

# Deprecated and never written since Hudi 0.5, but the entry still declares it.
_COMPACTION_METADATA = _record(
    "HoodieCompactionMetadata",
    [
        _field(
            "partitionToCompactionWriteStats",
            [
                "null",
                _map(
                    _array(
                        _record(
                            "HoodieCompactionWriteStat",
                            [
                                _field("partitionPath", ["null", _str()]),
                                _field("totalLogRecords", ["null", "long"]),
                                _field("totalLogFiles", ["null", "long"]),
                                _field("totalUpdatedRecordsCompacted", ["null", "long"]),
                                _field("hoodieWriteStat", ["null", "HoodieWriteStat"]),
                            ],
                        )
                    )
                ),
            ],
        )
    ],
)

_ROLLBACK_METADATA = _record(
    "HoodieRollbackMetadata",
    [
        _field("startRollbackTime", _str()),
        _field("timeTakenInMillis", "long"),
        _field("totalFilesDeleted", "int"),
        _field("commitsRollback", _array(_str())),
        _field(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieRollbackPartitionMetadata",
                    [
                        _field("partitionPath", _str()),
                        _field("successDeleteFiles", _array(_str())),
                        _field("failedDeleteFiles", _array(_str())),
                        _nullable("rollbackLogFiles", _map("long")),
                        _nullable("writtenLogFiles", _map("long")),
                    ],
                )
            ),
        ),
        _VERSION,
        {
            "name": "instantsRollback",
            "type": _array(_record("HoodieInstantInfo", [_field("commitTime", _str()), _field("action", _str())])),
            "default": [],
        },
    ],
)

_SAVEPOINT_METADATA = _record(
    "HoodieSavepointMetadata",
    [
        _field("savepointedBy", _str()),
        _field("savepointedAt", "long"),
        _field("comments", _str()),
        _field(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieSavepointPartitionMetadata",
                    [_field("partitionPath", _str()), _field("savepointDataFile", _array(_str()))],
                )
            ),
        ),
        _VERSION,
    ],
)

_COMPACTION_PLAN = _record(
    "HoodieCompactionPlan",
    [
        _nullable(
            "operations",
            _array(
                _record(
                    "HoodieCompactionOperation",
                    [
                        _field("baseInstantTime", ["null", _str()]),
                        _nullable("deltaFilePaths", _array(_str())),
                        _nullable("dataFilePath", _str()),
                        _field("fileId", ["null", _str()]),
                        _nullable("partitionPath", _str()),
                        _nullable("metrics", _map("double")),
                        _nullable("bootstrapFilePath", _str()),
                    ],
                )
            ),
        ),
        _nullable("extraMetadata", _map(_str())),
        _VERSION,
    ],
)

_CLEANER_PLAN = _record(
    "HoodieCleanerPlan",
    [
        _nullable(
            "earliestInstantToRetain",
            _record(
                "HoodieActionInstant",
                [_field("timestamp", _str()), _field("action", _str()), _field("state", _str())],
            ),
        ),
        _field("policy", _str()),
        _nullable("filesToBeDeletedPerPartition", _map(_array(_str()))),
        _VERSION,
        _nullable(
            "filePathsToBeDeletedPerPartition",
            _map(
                _array(
                    _record(
                        "HoodieCleanFileInfo",
                        [_nullable("filePath", _str()), _nullable("isBootstrapBaseFile", "boolean")],
                    )
                )
            ),
        ),
        _nullable("partitionsToBeDeleted", _array(_str())),
    ],
)

_REPLACE_COMMIT_METADATA = _record(
    "HoodieReplaceCommitMetadata",
    [
        _nullable("partitionToWriteStats", _WRITE_STATS),
        _nullable("extraMetadata", _map(_str())),
        _VERSION,
        _nullable("operationType", _str()),
        _nullable("partitionToReplaceFileIds", _map(_array(_str()))),
    ],
)

# The clustering plan cut down to its file slices: enough to say which files a clustering rewrites.
_CLUSTERING_PLAN = _record(
    "HoodieClusteringPlan",
    [
        _nullable(
            "inputGroups",
            _array(
                _record(
                    "HoodieClusteringGroup",
                    [
                        _nullable(
                            "slices",
                            _array(
                                _record(
                                    "HoodieSliceInfo",
                                    [
                                        _nullable("dataFilePath", _str()),
                                        _nullable("deltaFilePaths", _array(_str())),
                                        _nullable("fileId", _str()),
                                        _nullable("partitionPath", _str()),
                                        _nullable("bootstrapFilePath", _str()),
                                        _VERSION,
                                    ],
                                )
                            ),
                        ),
                        _nullable("metrics", _map("double")),
                        {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
                        _nullable("extraMetadata", _map(_str())),
                        _VERSION,
                    ],
                )
            ),
        ),
        _nullable("extraMetadata", _map(_str())),
        _VERSION,
    ],
)

_REQUESTED_REPLACE_METADATA = _record(
    "HoodieRequestedReplaceMetadata",
    [
        # Both defaults as Hudi declares them, though neither matches its union's first branch.
        {"name": "operationType", "type": ["null", _str()], "default": ""},
        {"name": "clusteringPlan", "type": [_CLUSTERING_PLAN, "null"], "default": None},
        _nullable("extraMetadata", _map(_str())),
        _VERSION,
    ],
)

_INDEX_COMMIT_METADATA = _record(
    "HoodieIndexCommitMetadata",
    [
        _VERSION,
        _nullable("operationType", _str()),
        _nullable(
            "indexPartitionInfos",
            _array(
                _record(
                    "HoodieIndexPartitionInfo",
                    [_VERSION, _nullable("metadataPartitionPath", _str()), _nullable("indexUptoInstant", _str())],
                )
            ),
        ),
    ],
)

ARCHIVED_META_ENTRY_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieArchivedMetaEntry",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        _nullable("hoodieCommitMetadata", _COMMIT_METADATA),
        _nullable("hoodieCleanMetadata", _CLEAN_METADATA),
        _nullable("hoodieCompactionMetadata", _COMPACTION_METADATA),
        _nullable("hoodieRollbackMetadata", _ROLLBACK_METADATA),
        _nullable("hoodieSavePointMetadata", _SAVEPOINT_METADATA),
        _nullable("commitTime", _str()),
        _nullable("actionType", _str()),
        _VERSION,
        _nullable("hoodieCompactionPlan", _COMPACTION_PLAN),
        _nullable("hoodieCleanerPlan", _CLEANER_PLAN),
        _nullable("actionState", _str()),
        _nullable("hoodieReplaceCommitMetadata", _REPLACE_COMMIT_METADATA),
        _nullable("hoodieRequestedReplaceMetadata", _REQUESTED_REPLACE_METADATA),
        _nullable("HoodieInflightReplaceMetadata", "HoodieCommitMetadata"),
        _nullable("hoodieIndexCommitMetadata", _INDEX_COMMIT_METADATA),
        _nullable("stateTransitionTime", _str()),
    ],
}
# The SCHEMA header of every block: compact JSON, as Avro's Schema#toString writes it.
ARCHIVED_META_ENTRY_SCHEMA_JSON = json.dumps(ARCHIVED_META_ENTRY_SCHEMA, separators=(",", ":"))


def _named_records(schema: Any, out: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every record type defined in ``schema``, by name, for resolving references."""
    if isinstance(schema, list):
        for branch in schema:
            _named_records(branch, out)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "record":
            out[schema["name"]] = schema
            for f in schema["fields"]:
                _named_records(f["type"], out)
        elif kind == "map":
            _named_records(schema["values"], out)
        elif kind == "array":
            _named_records(schema["items"], out)
    return out


_RECORDS = _named_records(ARCHIVED_META_ENTRY_SCHEMA, {})


@functools.cache
def _parsed_entry_schema() -> Any:
    return fastavro.parse_schema(json.loads(ARCHIVED_META_ENTRY_SCHEMA_JSON))


# -- converting instant metadata to Avro records -----------------------------------------------

_ZERO: dict[str, Any] = {
    "null": None,
    "boolean": False,
    "int": 0,
    "long": 0,
    "float": 0.0,
    "double": 0.0,
    "bytes": b"",
    "string": "",
}


def _primitive(value: Any, kind: str) -> Any:
    if value is None:
        return _ZERO[kind]
    if kind == "string":
        return value if isinstance(value, str) else str(value)
    if kind in ("int", "long"):
        return int(value)
    if kind in ("float", "double"):
        return float(value)
    if kind == "boolean":
        return bool(value)
    if kind == "bytes":
        return value if isinstance(value, bytes) else str(value).encode("utf-8")
    return None


def _conform(value: Any, schema: Any, *, defaults: bool) -> Any:
    """``value`` (decoded JSON or Avro) reshaped to an Avro ``schema`` of the entry.

    Fields the schema lacks are dropped. A missing field gets its declared
    default with ``defaults``; without, null, as Jackson's conversion of Hudi's
    JSON commit metadata leaves every property the JSON does not have (Avro's
    generated classes do not apply defaults). Required values that are missing
    become the type's zero value, so the record always encodes.
    """
    if isinstance(schema, list):
        if value is None and "null" in schema:
            return None
        # Every union of these schemas has one branch besides null.
        return _conform(value, next(b for b in schema if b != "null"), defaults=defaults)
    if isinstance(schema, str):
        if schema in _RECORDS:
            return _conform(value, _RECORDS[schema], defaults=defaults)
        return _primitive(value, schema)
    kind = schema["type"]
    if kind == "record":
        given = value if isinstance(value, Mapping) else {}
        out: dict[str, Any] = {}
        for f in schema["fields"]:
            name, ftype = f["name"], f["type"]
            if name in given:
                out[name] = _conform(given[name], ftype, defaults=defaults)
            elif defaults and "default" in f:
                out[name] = _conform(f["default"], ftype, defaults=defaults)
            else:
                out[name] = _conform(None, ftype, defaults=defaults)
        return out
    if kind == "map":
        items = value.items() if isinstance(value, Mapping) else ()
        return {str(k): _conform(v, schema["values"], defaults=defaults) for k, v in items if k is not None}
    if kind == "array":
        return [_conform(v, schema["items"], defaults=defaults) for v in (value or [])]
    return _primitive(value, kind)


def _decode(body: bytes, where: str) -> dict[str, Any]:
    """The record of an instant file: an Avro container of one record, or JSON."""
    if body.startswith(_AVRO_CONTAINER):
        try:
            records = list(fastavro.reader(io.BytesIO(body)))
        except Exception as exc:  # fastavro raises EOF, schema and value errors alike
            raise ArchiveError(f"{where} is not a readable Avro container: {exc}") from exc
        if len(records) != 1 or not isinstance(records[0], dict):
            raise ArchiveError(f"{where} holds {len(records)} Avro records, not one")
        return records[0]
    try:
        decoded = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArchiveError(f"{where} holds neither an Avro container nor JSON: {exc}") from exc
    if not isinstance(decoded, dict):
        raise ArchiveError(f"{where} holds JSON {type(decoded).__name__}, not an object")
    return decoded


def _commit_record(body: bytes, schema: Any, where: str) -> dict[str, Any] | None:
    """Hudi's commit metadata as its Avro record; None when it names no operation
    (an empty file reads as such), which Hudi archives without metadata."""
    meta = _decode(body, where)
    if meta.get("operationType") in (None, "UNKNOWN"):
        return None
    record: dict[str, Any] = _conform(meta, schema, defaults=False)
    return record


def _payload(action: str, state: str) -> tuple[str, Any, bool] | None:
    """What an instant file becomes in its entry: (entry field, its record schema,
    whether it is commit metadata), or None when Hudi archives only the entry's
    times and action. Commit metadata is JSON in layout 1; the rest are Avro containers."""
    completed, requested = state == State.COMPLETED.value, state == State.REQUESTED.value
    if action in ("commit", "deltacommit"):
        return "hoodieCommitMetadata", _COMMIT_METADATA, True
    if action in ("replacecommit", "clustering"):
        if completed:
            return "hoodieReplaceCommitMetadata", _REPLACE_COMMIT_METADATA, True
        if requested:
            return "hoodieRequestedReplaceMetadata", _REQUESTED_REPLACE_METADATA, False
        # An inflight replace holds commit metadata (or nothing, for a clustering).
        return "HoodieInflightReplaceMetadata", _COMMIT_METADATA, True
    if action == "clean":
        return (
            ("hoodieCleanMetadata", _CLEAN_METADATA, False)
            if completed
            else ("hoodieCleanerPlan", _CLEANER_PLAN, False)
        )
    if action == "rollback":
        return ("hoodieRollbackMetadata", _ROLLBACK_METADATA, False) if completed else None
    if action == "savepoint":
        return "hoodieSavePointMetadata", _SAVEPOINT_METADATA, False
    if action in ("compaction", "logcompaction"):
        # The plan goes with the requested state; the completed compaction is a commit.
        return ("hoodieCompactionPlan", _COMPACTION_PLAN, False) if requested else None
    return None


# Actions Hudi's layout-1 archiver converts; it fails on any other.
_ENTRY_ACTIONS = frozenset(
    {
        "commit",
        "deltacommit",
        "replacecommit",
        "clustering",
        "clean",
        "rollback",
        "savepoint",
        "compaction",
        "logcompaction",
    }
)


def _mtime(path: Path) -> str:
    return format_instant_time(datetime.fromtimestamp(path.stat().st_mtime, timezone.utc))


def archived_meta_entry(timeline: Path, instant: HudiInstant) -> dict[str, Any]:
    """The ``HoodieArchivedMetaEntry`` record Hudi's layout-1 archiver writes for one instant file."""
    if instant.action not in _ENTRY_ACTIONS:
        raise ArchiveError(f"Hudi's archiver has no archive entry for {instant.action} instants ({instant.file_name})")
    path = timeline / instant.file_name
    entry: dict[str, Any] = dict.fromkeys(f["name"] for f in ARCHIVED_META_ENTRY_SCHEMA["fields"])
    # Built like Hudi's generated class from its no-argument constructor: no defaults, so version is null.
    entry.update(
        commitTime=instant.timestamp,
        actionType=instant.action,
        actionState=instant.state,
        # Hudi's instants of layout 1 carry their file's modification time as the state transition time.
        stateTransitionTime=_mtime(path),
    )
    body = path.read_bytes()
    payload = _payload(instant.action, instant.state)
    if payload is None or not body:
        return entry
    field, schema, is_commit = payload
    where = str(path)
    entry[field] = (
        _commit_record(body, schema, where) if is_commit else _conform(_decode(body, where), schema, defaults=True)
    )
    return entry


def _avro_block_content(records: Sequence[Mapping[str, Any]]) -> bytes:
    """Avro data block content: int32 version, int32 count, then per record int32 length + datum."""
    schema = _parsed_entry_schema()
    out = [_I32.pack(BLOCK_CONTENT_VERSION), _I32.pack(len(records))]
    buf = io.BytesIO()
    for record in records:
        buf.seek(0)
        buf.truncate()
        fastavro.schemaless_writer(buf, schema, record)
        datum = buf.getvalue()
        out += [_I32.pack(len(datum)), datum]
    return b"".join(out)


def archive_log_bytes(records: Sequence[Mapping[str, Any]], batch: int = ARCHIVAL_BATCH) -> bytes:
    """A layout-1 archive file: AVRO_DATA blocks of at most ``batch`` entries, the schema their only header."""
    header = {HeaderKey.SCHEMA: ARCHIVED_META_ENTRY_SCHEMA_JSON}
    chunks = []
    for start in range(0, len(records), batch):
        chunks += frame_block(BlockType.AVRO_DATA, header, [_avro_block_content(records[start : start + batch])])
    return b"".join(bytes(c) for c in chunks)


def archive_log_versions(folder: Path) -> list[int]:
    """Versions of the layout-1 archive files in ``folder``, ascending."""
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for n in os.listdir(folder) if (m := _LOG_FILE.match(n)))


def _write_archive_log(layout: ArchiveLayout, actions: Sequence[_Action]) -> Path:
    """Roll over to a new archive log file, as Hudi does on storage without appends (local disk, S3)."""
    records = [archived_meta_entry(layout.timeline, f) for a in actions for f in a.files]
    version = max(archive_log_versions(layout.archive), default=0) + 1
    layout.archive.mkdir(parents=True, exist_ok=True)
    path = layout.archive / f".commits_.archive.{version}_{ARCHIVE_WRITE_TOKEN}"
    write_atomic(path, archive_log_bytes(records))
    return path


# -- layout 2: the LSM history ----------------------------------------------------------------

# The plan of a merge of small archive files (layout 1), while the merge runs.
MERGE_PLAN_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieMergeArchiveFilePlan",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "candidate", "type": ["null", {"type": "array", "items": "string"}], "default": None},
        {"name": "mergedArchiveFileName", "type": ["null", "string"], "default": None},
    ],
}


LSM_INSTANT_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieLSMTimelineInstant",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        _nullable("instantTime", _str()),
        _nullable("completionTime", _str()),
        _nullable("action", _str()),
        _nullable("metadata", "bytes"),
        _nullable("plan", "bytes"),
        {"name": "version", "type": "int", "default": 1},
    ],
}
# The Parquet schema parquet-avro derives from it: optional strings and bytes, a required int32.
LSM_ARROW_SCHEMA = pa.schema(
    [
        pa.field("instantTime", pa.string()),
        pa.field("completionTime", pa.string()),
        pa.field("action", pa.string()),
        pa.field("metadata", pa.binary()),
        pa.field("plan", pa.binary()),
        pa.field("version", pa.int32(), nullable=False),
    ]
)
_LSM_FOOTER = {
    b"parquet.avro.schema": json.dumps(LSM_INSTANT_SCHEMA, separators=(",", ":")).encode("utf-8"),
    b"writer.model.name": b"avro",
}


@dataclass(frozen=True)
class ManifestEntry:
    """One Parquet file of an LSM history snapshot."""

    file_name: str
    file_len: int


@dataclass(frozen=True)
class LsmFile:
    """What an LSM data file's name says: its instant time range and level."""

    min_instant: str
    max_instant: str
    level: int

    @classmethod
    def parse(cls, name: str) -> LsmFile | None:
        m = _LSM_FILE.match(name)
        return cls(m.group(1), m.group(2), int(m.group(3))) if m else None

    @property
    def name(self) -> str:
        return f"{self.min_instant}_{self.max_instant}_{self.level}.parquet"


def manifest_json(entries: Sequence[ManifestEntry]) -> str:
    """A manifest as Jackson's default pretty printer writes it."""
    if not entries:
        return '{\n  "files" : [ ]\n}'
    items = ", ".join(
        f'{{\n    "fileName" : {json.dumps(e.file_name)},\n    "fileLen" : {e.file_len}\n  }}' for e in entries
    )
    return f'{{\n  "files" : [ {items} ]\n}}'


def manifest_versions(folder: Path) -> list[int]:
    """Versions of the manifests in ``folder``, ascending."""
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for n in os.listdir(folder) if (m := _MANIFEST.match(n)))


def latest_manifest_version(folder: Path) -> int:
    """What ``_version_`` says, or the highest manifest when it is missing or unreadable; 0 for none."""
    try:
        return int((folder / VERSION_FILE).read_text("utf-8").strip())
    except (OSError, ValueError):
        return max(manifest_versions(folder), default=0)


def read_manifest(folder: Path, version: int) -> list[ManifestEntry]:
    """The files manifest ``version`` lists, in its order; none for version 0 (no history)."""
    if version <= 0:
        return []
    body = json.loads((folder / f"manifest_{version}").read_text("utf-8"))
    return [ManifestEntry(f["fileName"], int(f["fileLen"])) for f in body.get("files") or []]


def _commit_manifest(folder: Path, version: int, entries: Sequence[ManifestEntry]) -> int:
    """Write manifest ``version + 1``, then point ``_version_`` at it; returns the new version."""
    new = version + 1
    write_atomic(folder / f"manifest_{new}", manifest_json(entries).encode("utf-8"))
    write_atomic(folder / VERSION_FILE, str(new).encode("utf-8"))
    return new


def _entry(folder: Path, name: str) -> ManifestEntry:
    return ManifestEntry(name, (folder / name).stat().st_size)


def _write_lsm_parquet(path: Path, rows: pa.Table) -> None:
    sink = pa.BufferOutputStream()
    # Hudi's default Parquet codec; no Arrow schema in the footer, as parquet-avro writes none.
    with pq.ParquetWriter(sink, LSM_ARROW_SCHEMA, compression="gzip", store_schema=False) as writer:
        writer.write_table(rows)
        writer.add_key_value_metadata(_LSM_FOOTER)
    write_atomic(path, sink.getvalue().to_pybytes())


def _plan(timeline: Path, action: _Action) -> bytes | None:
    """The ``plan`` column: what Hudi keeps of a table service's or replace's pending files."""
    pending = action.pending
    if pending is None:
        return None
    if pending.action == "clean":
        return _read(timeline, pending)
    if pending.action in ("compaction", "logcompaction"):
        return _read(timeline, action.requested)
    if pending.action in ("replacecommit", "clustering"):
        # The requested replace metadata, unless the inflight file holds metadata: Hudi sets both, in that order.
        return _read(timeline, action.inflight) or _read(timeline, action.requested)
    return None


def _lsm_rows(timeline: Path, actions: Sequence[_Action]) -> pa.Table:
    rows: list[dict[str, Any]] = []
    for a in actions:
        done = a.completed
        assert done is not None  # only completed instants are archived
        rows.append(
            {
                "instantTime": a.time,
                "completionTime": done.completion_timestamp,
                "action": done.action,
                "metadata": _read(timeline, done),
                "plan": _plan(timeline, a),
                "version": 1,
            }
        )
    return pa.Table.from_pylist(rows, schema=LSM_ARROW_SCHEMA)


def _write_lsm_file(layout: ArchiveLayout, actions: Sequence[_Action]) -> Path:
    """A level-0 file of the archived instants, then a manifest that adds it."""
    folder = layout.archive
    folder.mkdir(parents=True, exist_ok=True)
    name = LsmFile(actions[0].time, actions[-1].time, 0).name
    _write_lsm_parquet(folder / name, _lsm_rows(layout.timeline, actions))
    version = latest_manifest_version(folder)
    kept = [e for e in read_manifest(folder, version) if e.file_name != name]
    _commit_manifest(folder, version, [*kept, _entry(folder, name)])
    return folder / name


def compact_and_clean(folder: Path, batch: int = TIMELINE_COMPACTION_BATCH) -> list[str]:
    """Hudi's LSM compaction after an archival: while a level's manifest files
    number ``batch`` or more, the first ``batch`` by name merge into one file of
    the next level; then old manifests and unreferenced files are cleaned.
    Returns the merged files' names."""
    version = latest_manifest_version(folder)
    entries = read_manifest(folder, version)
    merged: list[str] = []
    level = 0
    while True:
        in_level = sorted(e.file_name for e in entries if (f := LsmFile.parse(e.file_name)) and f.level == level)
        # Hudi also caps a merge at 1 GB of sources; archives of test tables never come near it.
        sources = in_level[:batch] if len(in_level) >= batch else []
        if len(sources) < 2:
            break
        parsed = [f for n in sources if (f := LsmFile.parse(n))]
        target = LsmFile(min(p.min_instant for p in parsed), max(p.max_instant for p in parsed), level + 1).name
        # Rows in source order: the sources are consecutive in time, so the result stays sorted.
        rows = pa.concat_tables([pq.read_table(folder / n, schema=LSM_ARROW_SCHEMA) for n in sources])
        _write_lsm_parquet(folder / target, rows)
        entries = [e for e in entries if e.file_name not in sources] + [_entry(folder, target)]
        version = _commit_manifest(folder, version, entries)
        merged.append(target)
        level += 1
    _clean(folder, MANIFEST_VERSIONS_RETAINED + level)
    return merged


def _clean(folder: Path, keep: int) -> None:
    """Keep the newest ``keep`` manifests and the data files they list; delete the rest."""
    versions = sorted(manifest_versions(folder), reverse=True)
    if len(versions) <= keep:
        return
    kept = versions[:keep]
    live = {e.file_name for v in kept for e in read_manifest(folder, v)}
    for v in versions[keep:]:
        (folder / f"manifest_{v}").unlink()
    for name in os.listdir(folder):
        if _LSM_FILE.match(name) and name not in live:
            (folder / name).unlink()


# -- archiving --------------------------------------------------------------------------------


def _delete_from_active(timeline: Path, actions: Sequence[_Action]) -> None:
    """Pending state files first, then completed ones oldest first, as Hudi
    deletes them: a reader never sees a completed file without its plan, or a gap."""
    for a in actions:
        for f in a.files:
            if not f.is_completed:
                (timeline / f.file_name).unlink()
    for a in actions:
        done = a.completed
        if done is not None:
            (timeline / done.file_name).unlink()


def _archive(layout: ArchiveLayout, actions: Sequence[_Action], compaction_batch: int) -> list[str]:
    if not actions:
        return []
    if layout.is_lsm:
        _write_lsm_file(layout, actions)
    else:
        _write_archive_log(layout, actions)
    _delete_from_active(layout.timeline, actions)
    if layout.is_lsm:
        compact_and_clean(layout.archive, compaction_batch)
    return [a.time for a in actions]


def archive_instants(
    base_path: str | os.PathLike[str], count: int, *, compaction_batch: int = TIMELINE_COMPACTION_BATCH
) -> list[str]:
    """Archive the ``count`` oldest completed instants (any action), every
    state file of each, in the layout of the table's version; returns their
    instant times, oldest first.

    Refuses, as Hudi never does it, to archive an instant requested at or after
    the earliest pending instant (requested or inflight, not completed), and to
    archive more instants than have completed. ``compaction_batch`` is the LSM
    compaction batch size of layout 2.
    """
    layout = archive_layout(base_path)
    actions = _actions(layout.timeline)
    done = [a for a in actions if a.completed is not None]
    if count < 1 or count > len(done):
        raise ArchiveError(f"Cannot archive {count} instants: the active timeline has {len(done)} completed ones")
    chosen = done[:count]
    pending = [a for a in actions if a.completed is None]
    if pending and chosen[-1].time >= pending[0].time:
        first = pending[0].files[0]
        raise ArchiveError(
            f"Cannot archive instant {chosen[-1].time}: instant {first.timestamp} ({first.file_name}) is still "
            "pending, and Hudi archives nothing at or after the earliest pending instant"
        )
    return _archive(layout, chosen, compaction_batch)


def instants_hudi_would_archive(
    base_path: str | os.PathLike[str], *, keep_min: int = 20, keep_max: int = 30
) -> list[str]:
    """The instant times :func:`archive_as_hudi` archives, without archiving them."""
    return [a.time for a in _hudi_choice(archive_layout(base_path).timeline, keep_min, keep_max)]


def _hudi_choice(timeline: Path, keep_min: int, keep_max: int) -> list[_Action]:
    if not 0 < keep_min < keep_max:
        raise ArchiveError(f"keep_min ({keep_min}) must be positive and below keep_max ({keep_max}), as Hudi requires")
    actions = _actions(timeline)
    commits = [a for a in actions if a.completed is not None and a.action in _COMMIT_ACTIONS]
    if len(commits) <= keep_max:
        return []
    pending = next((a for a in actions if a.completed is None and a.files[0].action in _WRITE_ACTIONS), None)
    # Hudi keeps the last commit before the earliest pending write (or that write, when none is before it).
    bound: str | None = None
    if pending is not None:
        before = [c for c in commits if c.time < pending.time]
        bound = before[-1].time if before else pending.time
    savepoint = next((a.time for a in actions if a.completed is not None and a.action == "savepoint"), None)
    candidates = [c for c in commits if (bound is None or c.time < bound) and (savepoint is None or c.time < savepoint)]
    chosen = candidates[: len(commits) - keep_min]
    if not chosen:
        return []
    last = chosen[-1].time
    services = [a for a in actions if a.completed is not None and a.action in ("clean", "rollback") and a.time < last]
    return sorted(chosen + services, key=lambda a: a.time)


def archive_as_hudi(
    base_path: str | os.PathLike[str],
    *,
    keep_min: int = 20,
    keep_max: int = 30,
    compaction_batch: int = TIMELINE_COMPACTION_BATCH,
) -> list[str]:
    """Archive what Hudi's archiver would (``hoodie.keep.min.commits`` /
    ``hoodie.keep.max.commits``), in both layouts; returns the instant times.

    Nothing happens until more than ``keep_max`` completed commits (commit,
    deltacommit, replacecommit) are on the active timeline; then the oldest
    are archived until ``keep_min`` remain, none at or after the last commit
    before the earliest pending write (nor after the first savepoint), and
    with them the completed cleans and rollbacks requested before the last
    commit archived.

    Not modelled: the metadata table's bound (Hudi archives nothing after the
    metadata table's last compaction), the cleaner's retained commits, the
    clustering bound and a MERGE_ON_READ table's compaction trigger.
    """
    layout = archive_layout(base_path)
    return _archive(layout, _hudi_choice(layout.timeline, keep_min, keep_max), compaction_batch)


def delete_archive(base_path: str | os.PathLike[str]) -> None:
    """Remove the archived history, as if it were lost; the active timeline stays.

    Only the history's own files go (archive log files and a merge plan in
    layout 1; manifests, ``_version_`` and data files in layout 2), so a
    history kept in the timeline folder itself is safe to delete.
    """
    layout = archive_layout(base_path)
    folder = layout.archive
    if not folder.is_dir():
        return
    for name in os.listdir(folder):
        if layout.is_lsm:
            ours = bool(_MANIFEST.match(name) or _LSM_FILE.match(name)) or name == VERSION_FILE
        else:
            ours = name.startswith(".commits_.archive") or name == "mergeArchivePlan"
        if ours and (folder / name).is_file():
            (folder / name).unlink()
