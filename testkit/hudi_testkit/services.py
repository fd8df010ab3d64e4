"""Table services the writers do not run by themselves: MERGE_ON_READ compaction,
clustering, cleaning, a failed write and its rollback, and deletes on
COPY_ON_WRITE tables.

Each writes the timeline files Apache Hudi writes for the service: table
version 6 as Hudi 0.14 does (plans, clean and rollback metadata as Avro
containers; commit metadata as JSON), versions 8 and 9 as Hudi 1.x does
(everything Avro, the completion time in the completed file's name). Names:

========== ======================================== =============================================
service    table version 6                          table version 8+
========== ======================================== =============================================
compaction ``T.compaction.requested/.inflight``,    the same, completed as ``T_C.commit``
           completed as ``T.commit``
clustering ``T.replacecommit.requested/.inflight``, ``T.clustering.requested/.inflight``,
           ``T.replacecommit``                      ``T_C.replacecommit``
clean      ``T.clean.requested/.inflight/.clean``   ``T_C.clean``
rollback   ``T.rollback.requested/.inflight/...``   ``T_C.rollback``
========== ======================================== =============================================

The services act on a live writer and keep its view of the table (latest base
file per file group) and its metadata table, if it has one, in step, as Hudi
updates the metadata table for each (a delta commit of the service's instant
time; a rollback rolls back the failed write's delta commit), so later writes land on the right slices: a
writer reopened from the timeline would miss groups whose last write was
archived. The rows a compaction or clustering writes come from the caller (a
model of the table), never from reading the slices back: readers are tested
against them.
"""

from __future__ import annotations

import copy
import io
import json
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ray.core.timeline import COMMIT, HudiInstant
from hudi_testkit.bloom import footer_metadata
from hudi_testkit.common import complete_instant, flat, groups, list_instants, write_atomic
from hudi_testkit.cow import BaseFile, CommitResult, CowTableWriter
from hudi_testkit.errors import InvalidRowsError, TableStateError
from hudi_testkit.metadata import COMMIT_METADATA_SCHEMA, NULL_COMMIT, WriteStat
from hudi_testkit.mor import MorTableWriter

REPLACE_COMMIT = "replacecommit"
CLEAN = "clean"
ROLLBACK = "rollback"
COMPACTION = "compaction"
CLUSTERING = "clustering"
CLEAN_POLICY = "KEEP_LATEST_COMMITS"
# What Spark's default clustering runs; recorded in the plan, nothing reads it.
_CLUSTERING_STRATEGY = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
_RECORD_KEY = "_hoodie_record_key"


# -- Avro schemas of service metadata (org.apache.hudi.avro.model) ------------------------------------


def _opt(name: str, avro_type: Any, default: Any = None) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": default}


def _version(default: int = 1) -> dict[str, Any]:
    return {"name": "version", "type": ["int", "null"], "default": default}


def _str_map(values: Any = "string") -> dict[str, Any]:
    return {"type": "map", "values": values}


def _str_array() -> dict[str, Any]:
    return {"type": "array", "items": "string"}


_NS = "org.apache.hudi.avro.model"

COMPACTION_PLAN_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCompactionPlan",
    "namespace": _NS,
    "fields": [
        _opt(
            "operations",
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "HoodieCompactionOperation",
                    "fields": [
                        {"name": "baseInstantTime", "type": ["null", "string"]},
                        _opt("deltaFilePaths", _str_array()),
                        _opt("dataFilePath", "string"),
                        {"name": "fileId", "type": ["null", "string"]},
                        _opt("partitionPath", "string"),
                        _opt("metrics", _str_map("double")),
                        _opt("externalDataFilePath", "string"),
                    ],
                },
            },
        ),
        _opt("extraMetadata", _str_map()),
        _version(),
    ],
}

_SLICE_INFO = {
    "type": "record",
    "name": "HoodieSliceInfo",
    "fields": [
        _opt("dataFilePath", "string"),
        _opt("deltaFilePaths", _str_array()),
        {"name": "fileId", "type": ["null", "string"]},
        _opt("partitionPath", "string"),
        _opt("bootstrapFilePath", "string"),
        _version(),
    ],
}

REQUESTED_REPLACE_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieRequestedReplaceMetadata",
    "namespace": _NS,
    "fields": [
        {"name": "operationType", "type": ["null", "string"], "default": None},
        {
            "name": "clusteringPlan",
            "type": [
                {
                    "type": "record",
                    "name": "HoodieClusteringPlan",
                    "fields": [
                        _opt(
                            "inputGroups",
                            {
                                "type": "array",
                                "items": {
                                    "type": "record",
                                    "name": "HoodieClusteringGroup",
                                    "fields": [
                                        _opt("slices", {"type": "array", "items": _SLICE_INFO}),
                                        _opt("metrics", _str_map("double")),
                                        {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
                                        _version(),
                                    ],
                                },
                            },
                        ),
                        {
                            "name": "strategy",
                            "type": [
                                {
                                    "type": "record",
                                    "name": "HoodieClusteringStrategy",
                                    "fields": [
                                        _opt("strategyClassName", "string"),
                                        _opt("strategyParams", _str_map()),
                                        _version(),
                                    ],
                                },
                                "null",
                            ],
                            "default": None,
                        },
                        _opt("extraMetadata", _str_map()),
                        _version(),
                        _opt("preserveHoodieMetadata", "boolean"),
                    ],
                },
                "null",
            ],
        },
        _opt("extraMetadata", _str_map()),
        _version(),
    ],
}

CLEANER_PLAN_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCleanerPlan",
    "namespace": _NS,
    "fields": [
        _opt(
            "earliestInstantToRetain",
            {
                "type": "record",
                "name": "HoodieActionInstant",
                "fields": [{"name": n, "type": "string"} for n in ("timestamp", "action", "state")],
            },
        ),
        {"name": "policy", "type": "string"},
        _opt("filesToBeDeletedPerPartition", _str_map(_str_array())),
        _version(),
        _opt(
            "filePathsToBeDeletedPerPartition",
            _str_map(
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieCleanFileInfo",
                        "fields": [_opt("filePath", "string"), _opt("isBootstrapBaseFile", "boolean")],
                    },
                }
            ),
        ),
        _opt("partitionsToBeDeleted", _str_array()),
    ],
}

_CLEAN_PARTITION = {
    "type": "record",
    "name": "HoodieCleanPartitionMetadata",
    "fields": [
        {"name": "partitionPath", "type": "string"},
        {"name": "policy", "type": "string"},
        {"name": "deletePathPatterns", "type": _str_array()},
        {"name": "successDeleteFiles", "type": _str_array()},
        {"name": "failedDeleteFiles", "type": _str_array()},
        _opt("isPartitionDeleted", "boolean"),
    ],
}

CLEAN_METADATA_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCleanMetadata",
    "namespace": _NS,
    "fields": [
        {"name": "policy", "type": "string", "default": ""},
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "partitionMetadata", "type": _str_map(_CLEAN_PARTITION)},
        _version(),
        _opt("bootstrapPartitionMetadata", _str_map("HoodieCleanPartitionMetadata")),
    ],
}

_INSTANT_INFO = {
    "type": "record",
    "name": "HoodieInstantInfo",
    "fields": [{"name": "commitTime", "type": "string"}, {"name": "action", "type": "string"}],
}

ROLLBACK_PLAN_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieRollbackPlan",
    "namespace": _NS,
    "fields": [
        _opt("instantToRollback", _INSTANT_INFO),
        _opt(
            "RollbackRequests",
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "HoodieRollbackRequest",
                    "fields": [
                        {"name": "partitionPath", "type": "string"},
                        _opt("fileId", "string"),
                        _opt("latestBaseInstant", "string"),
                        {"name": "filesToBeDeleted", "type": _str_array(), "default": []},
                        _opt("logBlocksToBeDeleted", _str_map("long")),
                    ],
                },
            },
        ),
        _version(),
    ],
}

ROLLBACK_METADATA_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieRollbackMetadata",
    "namespace": _NS,
    "fields": [
        {"name": "startRollbackTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "commitsRollback", "type": _str_array()},
        {
            "name": "partitionMetadata",
            "type": _str_map(
                {
                    "type": "record",
                    "name": "HoodieRollbackPartitionMetadata",
                    "fields": [
                        {"name": "partitionPath", "type": "string"},
                        {"name": "successDeleteFiles", "type": _str_array()},
                        {"name": "failedDeleteFiles", "type": _str_array()},
                        _opt("rollbackLogFiles", _str_map("long")),
                        _opt("writtenLogFiles", _str_map("long")),
                    ],
                }
            ),
        },
        _version(),
        {"name": "instantsRollback", "type": {"type": "array", "items": _INSTANT_INFO}, "default": []},
    ],
}


def _replace_commit_schema() -> dict[str, Any]:
    """HoodieReplaceCommitMetadata: the commit metadata's fields (its HoodieWriteStat
    included) plus the replaced file ids."""
    schema = copy.deepcopy(COMMIT_METADATA_SCHEMA)
    schema["name"] = "HoodieReplaceCommitMetadata"
    schema["fields"].append(
        {
            "name": "partitionToReplaceFileIds",
            "type": ["null", {"type": "map", "values": _str_array(), "avro.java.string": "String"}],
            "default": None,
        }
    )
    return schema


REPLACE_COMMIT_METADATA_SCHEMA = _replace_commit_schema()


def avro_container(schema: Mapping[str, Any], record: Mapping[str, Any]) -> bytes:
    """One record in an Avro object container, as Hudi serializes plans and service metadata."""
    buf = io.BytesIO()
    fastavro.writer(buf, dict(schema), [dict(record)], codec="null")
    return buf.getvalue()


# -- records ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServiceWriteStat(WriteStat):
    """A base file written by a compaction, clustering or delete, with the counts Hudi records for it."""

    num_deletes: int = 0
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out.update(
            {
                "numDeletes": self.num_deletes,
                "totalLogRecords": self.total_log_records,
                "totalLogFilesCompacted": self.total_log_files_compacted,
                "totalLogSizeCompacted": self.total_log_size_compacted,
                "totalUpdatedRecordsCompacted": self.total_updated_records_compacted,
            }
        )
        return out


@dataclass(frozen=True)
class SliceFiles:
    """A file slice a service reads: its base file and log files, names relative to the partition."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...] = ()

    def rel(self, name: str) -> str:
        return f"{self.partition_path}/{name}" if self.partition_path else name


@dataclass(frozen=True)
class GroupRows:
    """The rows of one base file a service writes: data columns (the table's schema) and,
    per row, the commit time and sequence number it keeps from the write that made it."""

    partition_path: str
    file_id: str
    data: pa.Table
    commit_times: pa.Array
    seqnos: pa.Array

    def __post_init__(self) -> None:
        if not len(self.commit_times) == len(self.seqnos) == self.data.num_rows:
            raise InvalidRowsError("GroupRows: one commit time and sequence number per row")


@dataclass(frozen=True)
class ServiceResult:
    """What one service instant did; ``completion_time`` is in file names from table version 8 on."""

    instant_time: str
    completion_time: str | None
    action: str
    write_stats: tuple[WriteStat, ...] = ()
    deleted_files: tuple[str, ...] = ()  # relative to the base path


# -- shared steps -----------------------------------------------------------------------------------


def _v8(writer: CowTableWriter) -> bool:
    return writer.spec.table_version >= 8


def _check_times(writer: CowTableWriter, instant: str, completion: str | None) -> None:
    """Instants never go back in time; from version 8 a completion time follows its instant."""
    latest = writer._latest_time
    if latest is not None and instant <= latest:
        raise TableStateError(f"Instant {instant} must be after {latest}, the latest time on the timeline")
    if _v8(writer) and (completion is None or completion <= instant):
        raise TableStateError(f"Table version 8+ needs a completion time after {instant}, got {completion}")


def _complete(writer: CowTableWriter, instant: str, completion: str | None, action: str, body: bytes) -> None:
    """Write the completed instant file and move the writer's clock past it."""
    if _v8(writer):
        write_atomic(writer._timeline / f"{instant}_{completion}.{action}", body)
    else:
        write_atomic(writer._timeline / f"{instant}.{action}", body)
    writer._latest_time = completion if _v8(writer) and completion else instant


def commit_body(
    writer: CowTableWriter,
    stats: Sequence[WriteStat],
    operation: str,
    *,
    compacted: bool = False,
    replaced: Mapping[str, Sequence[str]] | None = None,
) -> bytes:
    """Commit (or, with ``replaced``, replace commit) metadata in the table version's encoding,
    with the writer schema in ``extraMetadata`` as Hudi records it on every write."""
    assert writer._avro_schema is not None
    extra = {"schema": json.dumps(writer._avro_schema, separators=(",", ":"))}
    by_partition: dict[str, list[WriteStat]] = {}
    for s in stats:
        by_partition.setdefault(s.partition_path, []).append(s)
    if not _v8(writer):
        body: dict[str, Any] = {
            "partitionToWriteStats": {p: [s.to_json() for s in group] for p, group in by_partition.items()},
            "compacted": compacted,
            "extraMetadata": extra,
            "operationType": operation,
        }
        if replaced is not None:
            body["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in replaced.items()}
        return json.dumps(body, indent=2).encode("utf-8")
    record: dict[str, Any] = {
        "partitionToWriteStats": {p: [s.to_avro() for s in group] for p, group in by_partition.items()},
        "compacted": compacted,
        "extraMetadata": extra,
        "version": 1,
        "operationType": operation,
    }
    if replaced is None:
        return avro_container(COMMIT_METADATA_SCHEMA, record)
    record["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in replaced.items()}
    return avro_container(REPLACE_COMMIT_METADATA_SCHEMA, record)


def _write_base_file(writer: CowTableWriter, rows: GroupRows, instant: str, task_id: int) -> tuple[str, pa.Table, int]:
    """A base file of ``rows`` for ``instant``: (relative path, rows as written, size).

    Rows keep their commit time and sequence number; the file name is the new
    file's, as Hudi's compactor and clustering write them."""
    data = writer._conform(rows.data)
    name = f"{rows.file_id}_{task_id}-1-0_{instant}.parquet"
    rel = f"{rows.partition_path}/{name}" if rows.partition_path else name
    n = data.num_rows
    keys = flat(pc.cast(data[writer.spec.record_key], pa.string()))
    meta = [
        rows.commit_times.cast(pa.string()),
        rows.seqnos.cast(pa.string()),
        keys,
        pa.repeat(pa.scalar(rows.partition_path), n),
        pa.repeat(pa.scalar(name), n),
    ]
    file_schema = writer._file_schema(data.schema)
    out = pa.Table.from_arrays(meta + list(data.columns), schema=file_schema)
    size = _write_parquet(writer, rel, out)
    writer._observe_file(rel, out, writer.base / rel)
    return rel, out, size


def _write_parquet(writer: CowTableWriter, rel: str, out: pa.Table) -> int:
    """The file, footer as the writers make it (Avro schema, key range, no Arrow schema); its size."""
    metadata = dict(writer._parquet_metadata())
    if out.num_rows:
        key_range = pc.min_max(out[_RECORD_KEY])
        metadata[b"hoodie_min_record_key"] = key_range["min"].as_py().encode()
        metadata[b"hoodie_max_record_key"] = key_range["max"].as_py().encode()
    if writer.bloom_filter is not None:
        metadata.update(footer_metadata(out[_RECORD_KEY], writer.bloom_filter))
    path = writer.base / rel
    with pq.ParquetWriter(path, out.schema, compression=writer.compression, store_schema=False) as pw:
        pw.write_table(out)
        pw.add_key_value_metadata(metadata)
    return path.stat().st_size


def _slice_info(s: SliceFiles) -> dict[str, Any]:
    return {
        "dataFilePath": s.base_file,
        "deltaFilePaths": list(s.log_files),
        "fileId": s.file_id,
        "partitionPath": s.partition_path,
        "bootstrapFilePath": None,
        "version": 1,
    }


def _mdt_commit(
    writer: CowTableWriter,
    instant: str,
    stats: Sequence[WriteStat],
    written: Sequence[tuple[str, str, pa.Array]] = (),
    deleted: Sequence[tuple[str, pa.Array]] = (),
    removed: Sequence[str] = (),
) -> None:
    """The metadata table's delta commit of a service instant, before the instant completes."""
    if writer._mdt is not None:
        writer._mdt.commit(instant, True, stats, written, deleted, removed_files=removed)


def _forget_groups(writer: CowTableWriter, keys: Sequence[tuple[str, str]]) -> None:
    for key in keys:
        writer._file_groups.pop(key, None)
        if isinstance(writer, MorTableWriter):
            writer._logs.pop(key, None)


# -- compaction -------------------------------------------------------------------------------------


def compact(
    writer: MorTableWriter,
    instant: str,
    completion: str | None,
    work: Sequence[tuple[SliceFiles, GroupRows]],
) -> ServiceResult:
    """Schedule and run a compaction of the given slices: each becomes a new base file
    ``<fileId>_<token>_<instant>.parquet`` of its group holding ``GroupRows`` (the
    slice's merged latest rows), committed as a ``commit`` of operation COMPACT."""
    _check_times(writer, instant, completion)
    started = time.monotonic()
    operations = [
        {
            "baseInstantTime": s.base_instant,
            "deltaFilePaths": list(s.log_files),
            "dataFilePath": s.base_file,
            "fileId": s.file_id,
            "partitionPath": s.partition_path,
            "metrics": {"TOTAL_LOG_FILES": float(len(s.log_files))},
            "externalDataFilePath": None,
        }
        for s, _ in work
    ]
    # Version 2: file names in the plan are relative to the partition.
    plan = avro_container(COMPACTION_PLAN_SCHEMA, {"operations": operations, "extraMetadata": None, "version": 2})
    write_atomic(writer._timeline / f"{instant}.{COMPACTION}.requested", plan)
    writer._latest_time = instant
    write_atomic(writer._timeline / f"{instant}.{COMPACTION}.inflight", b"")

    stats: list[WriteStat] = []
    for task, (s, rows) in enumerate(work):
        if (s.partition_path, s.file_id) != (rows.partition_path, rows.file_id):
            raise InvalidRowsError(f"Compaction rows of {rows.file_id} given for slice {s.file_id}")
        rel, out, size = _write_base_file(writer, rows, instant, task)
        log_size = sum((writer.base / s.rel(n)).stat().st_size for n in s.log_files)
        stats.append(
            ServiceWriteStat(
                file_id=s.file_id,
                partition_path=s.partition_path,
                path=rel,
                prev_commit=s.base_instant,
                prev_base_file=s.base_file,
                num_writes=out.num_rows,
                num_update_writes=out.num_rows,
                file_size=size,
                write_millis=int((time.monotonic() - started) * 1000),
                total_log_files_compacted=len(s.log_files),
                total_log_size_compacted=log_size,
            )
        )
    _mdt_commit(writer, instant, stats)  # the record index keeps the keys' file groups
    _complete(writer, instant, completion, COMMIT, commit_body(writer, stats, "COMPACT", compacted=True))
    for st in stats:
        name = (st.path or "").rsplit("/", 1)[-1]
        key = (st.partition_path, st.file_id)
        writer._file_groups[key] = BaseFile(st.partition_path, st.file_id, name, instant)
        writer._logs.pop(key, None)  # version 6 logs go to the new slice, at version 1
    return ServiceResult(instant, completion, COMPACTION, tuple(stats))


# -- clustering -------------------------------------------------------------------------------------


def cluster(
    writer: CowTableWriter,
    instant: str,
    completion: str | None,
    inputs: Sequence[SliceFiles],
    output: GroupRows,
) -> ServiceResult:
    """Rewrite the latest slices ``inputs`` (file groups of one partition) as one new
    file group holding ``output``: a ``replacecommit`` of operation CLUSTER whose
    ``partitionToReplaceFileIds`` hides the input groups."""
    _check_times(writer, instant, completion)
    partitions = {s.partition_path for s in inputs}
    if partitions != {output.partition_path}:
        raise InvalidRowsError(f"Clustering works in one partition; inputs are in {sorted(partitions)}")
    started = time.monotonic()
    plan: dict[str, Any] = {
        "operationType": "CLUSTER",
        "clusteringPlan": {
            "inputGroups": [
                {
                    "slices": [_slice_info(s) for s in inputs],
                    "metrics": {"TOTAL_FILE_SLICES": float(len(inputs))},
                    "numOutputFileGroups": 1,
                    "version": 1,
                }
            ],
            "strategy": {"strategyClassName": _CLUSTERING_STRATEGY, "strategyParams": {}, "version": 1},
            "extraMetadata": {},
            "version": 1,
            "preserveHoodieMetadata": True,
        },
        "extraMetadata": {},
        "version": 1,
    }
    # Hudi 1.x gives clustering its own pending action; 0.x plans it as a replace commit.
    pending = CLUSTERING if _v8(writer) else REPLACE_COMMIT
    write_atomic(writer._timeline / f"{instant}.{pending}.requested", avro_container(REQUESTED_REPLACE_SCHEMA, plan))
    writer._latest_time = instant
    write_atomic(writer._timeline / f"{instant}.{pending}.inflight", b"")

    writer._ensure_partition_metadata(output.partition_path, instant)
    rel, out, size = _write_base_file(writer, output, instant, 0)
    stat = ServiceWriteStat(
        file_id=output.file_id,
        partition_path=output.partition_path,
        path=rel,
        num_writes=out.num_rows,
        num_inserts=out.num_rows,
        file_size=size,
        write_millis=int((time.monotonic() - started) * 1000),
    )
    replaced = {output.partition_path: [s.file_id for s in inputs]}
    body = commit_body(writer, [stat], "CLUSTER", replaced=replaced)
    # The record index follows the rows to their new file group.
    _mdt_commit(writer, instant, [stat], [(output.partition_path, output.file_id, flat(out[_RECORD_KEY]))])
    _complete(writer, instant, completion, REPLACE_COMMIT, body)
    _forget_groups(writer, [(s.partition_path, s.file_id) for s in inputs])
    name = rel.rsplit("/", 1)[-1]
    writer._file_groups[(output.partition_path, output.file_id)] = BaseFile(
        output.partition_path, output.file_id, name, instant
    )
    return ServiceResult(instant, completion, REPLACE_COMMIT, (stat,))


# -- cleaning ---------------------------------------------------------------------------------------


def clean(
    writer: CowTableWriter,
    instant: str,
    completion: str | None,
    files: Sequence[str],
    earliest_retained: HudiInstant,
    last_completed: str,
) -> ServiceResult:
    """Delete ``files`` (paths relative to the base path) as a KEEP_LATEST_COMMITS clean
    that retains commits from ``earliest_retained`` on: plan, inflight, then the
    completed ``clean`` instant listing the deleted files per partition."""
    _check_times(writer, instant, completion)
    started = time.monotonic()
    by_partition: dict[str, list[str]] = {}
    for rel in files:
        partition, _, name = rel.rpartition("/")
        by_partition.setdefault(partition, []).append(name)
    retain = {"timestamp": earliest_retained.timestamp, "action": earliest_retained.action, "state": "COMPLETED"}
    plan: dict[str, Any] = {
        "earliestInstantToRetain": retain,
        "policy": CLEAN_POLICY,
        "filesToBeDeletedPerPartition": None,
        "version": 2,
        "filePathsToBeDeletedPerPartition": {
            p: [{"filePath": str(writer.base / p / n), "isBootstrapBaseFile": False} for n in names]
            for p, names in by_partition.items()
        },
        "partitionsToBeDeleted": [],
    }
    plan_bytes = avro_container(CLEANER_PLAN_SCHEMA, plan)
    write_atomic(writer._timeline / f"{instant}.{CLEAN}.requested", plan_bytes)
    writer._latest_time = instant
    # Hudi 0.x repeats the plan in the inflight file; 1.x leaves it empty.
    write_atomic(writer._timeline / f"{instant}.{CLEAN}.inflight", b"" if _v8(writer) else plan_bytes)
    for rel in files:
        os.unlink(writer.base / rel)
    meta = {
        "policy": CLEAN_POLICY,
        "startCleanTime": instant,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": len(files),
        "earliestCommitToRetain": earliest_retained.timestamp,
        "lastCompletedCommitTimestamp": last_completed,
        "partitionMetadata": {
            p: {
                "partitionPath": p,
                "policy": CLEAN_POLICY,
                "deletePathPatterns": names,
                "successDeleteFiles": names,
                "failedDeleteFiles": [],
                "isPartitionDeleted": False,
            }
            for p, names in by_partition.items()
        },
        "version": 2,
        "bootstrapPartitionMetadata": {},
    }
    _mdt_commit(writer, instant, [], removed=files)
    _complete(writer, instant, completion, CLEAN, avro_container(CLEAN_METADATA_SCHEMA, meta))
    return ServiceResult(instant, completion, CLEAN, deleted_files=tuple(files))


# -- failed writes and rollbacks ---------------------------------------------------------------------


def failed_write(writer: CowTableWriter, write: Callable[[], CommitResult]) -> CommitResult:
    """Run ``write`` as a write that dies before completing: its files and its requested
    and inflight instant files stay, the completed instant file does not, and the
    writer forgets what it wrote (its clock does not go back: times are never reused).
    A metadata table keeps the write's completed delta commit (Hudi commits the MDT
    first) until the rollback rolls it back."""
    saved_groups = dict(writer._file_groups)
    mor = writer if isinstance(writer, MorTableWriter) else None
    saved_logs = dict(mor._logs) if mor is not None else {}
    saved_commits = len(mor.commits) if mor is not None else 0
    before = writer._mdt.checkpoint() if writer._mdt is not None else None
    result = write()
    if writer._mdt is not None and before is not None:
        writer._mdt.failed(result.instant_time, before)  # its MDT delta commit completed: Hudi commits it first
    for i in list_instants(writer._timeline):
        if i.timestamp == result.instant_time and i.is_completed:
            os.unlink(writer._timeline / i.file_name)
    writer._file_groups = saved_groups
    if mor is not None:
        mor._logs = saved_logs
        del mor.commits[saved_commits:]
    return result


def rollback(
    writer: CowTableWriter,
    instant: str,
    completion: str | None,
    failed: CommitResult,
    *,
    leave_files: bool = False,
) -> ServiceResult:
    """Roll back a failed write: plan, inflight, delete the files it wrote and its
    pending instant files, then the completed ``rollback`` instant naming them.
    ``leave_files``: every delete of a data file fails, and the rollback completes
    reporting them in ``failedDeleteFiles``, as Hudi's does."""
    _check_times(writer, instant, completion)
    started = time.monotonic()
    pending = [i for i in list_instants(writer._timeline) if i.timestamp == failed.instant_time]
    if any(i.is_completed for i in pending):
        raise TableStateError(f"Instant {failed.instant_time} completed: it is not a failed write")
    action = pending[0].action if pending else COMMIT
    files = [s for s in failed.write_stats if s.path]
    requests = [
        {
            "partitionPath": s.partition_path,
            "fileId": s.file_id,
            "latestBaseInstant": s.prev_commit if s.prev_commit != NULL_COMMIT else failed.instant_time,
            "filesToBeDeleted": [str(writer.base / (s.path or ""))],
            "logBlocksToBeDeleted": None,
        }
        for s in files
    ]
    target = {"commitTime": failed.instant_time, "action": action}
    plan = {"instantToRollback": target, "RollbackRequests": requests, "version": 1}
    write_atomic(writer._timeline / f"{instant}.{ROLLBACK}.requested", avro_container(ROLLBACK_PLAN_SCHEMA, plan))
    writer._latest_time = instant
    write_atomic(writer._timeline / f"{instant}.{ROLLBACK}.inflight", b"")
    by_partition: dict[str, list[str]] = {}
    for s in files:
        path = writer.base / (s.path or "")
        if path.exists() and not leave_files:
            os.unlink(path)
        by_partition.setdefault(s.partition_path, []).append(str(path))
    for i in pending:  # Hudi deletes the rolled-back instant's pending files before completing
        os.unlink(writer._timeline / i.file_name)
    meta = {
        "startRollbackTime": instant,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": len(files),
        "commitsRollback": [failed.instant_time],
        "partitionMetadata": {
            p: {
                "partitionPath": p,
                "successDeleteFiles": [] if leave_files else paths,
                "failedDeleteFiles": paths if leave_files else [],
                "rollbackLogFiles": None,
                "writtenLogFiles": None,
            }
            for p, paths in by_partition.items()
        },
        "version": 1,
        "instantsRollback": [target],
    }
    if writer._mdt is not None and writer._mdt.has_delta_commit(failed.instant_time):
        _roll_back_mdt(writer, instant, failed.instant_time, started)
    _complete(writer, instant, completion, ROLLBACK, avro_container(ROLLBACK_METADATA_SCHEMA, meta))
    deleted = () if leave_files else tuple(s.path or "" for s in files)
    return ServiceResult(instant, completion, ROLLBACK, deleted_files=deleted)


def _roll_back_mdt(writer: CowTableWriter, instant: str, failed: str, started: float) -> None:
    """Hudi's rollback of a data commit whose MDT delta commit completed: the MDT rolls back
    that delta commit at the rollback's own instant time, deleting the files it wrote."""
    mdt = writer._mdt
    assert mdt is not None
    timeline = mdt.timeline_path
    action, deleted = mdt.roll_back(failed)
    target = {"commitTime": failed, "action": action}
    requests = [
        {
            "partitionPath": partition,
            "fileId": file_id,
            "latestBaseInstant": prev or failed,
            "filesToBeDeleted": [str(mdt.mdt / rel)],
            "logBlocksToBeDeleted": None,
        }
        for partition, files in sorted(deleted.items())
        for file_id, rel, prev in files
    ]
    plan = {"instantToRollback": target, "RollbackRequests": requests, "version": 1}
    write_atomic(timeline / f"{instant}.{ROLLBACK}.requested", avro_container(ROLLBACK_PLAN_SCHEMA, plan))
    write_atomic(timeline / f"{instant}.{ROLLBACK}.inflight", b"")
    meta = {
        "startRollbackTime": instant,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(files) for files in deleted.values()),
        "commitsRollback": [failed],
        "partitionMetadata": {
            partition: {
                "partitionPath": partition,
                "successDeleteFiles": [str(mdt.mdt / rel) for _, rel, _ in files],
                "failedDeleteFiles": [],
                "rollbackLogFiles": None,
                "writtenLogFiles": None,
            }
            for partition, files in sorted(deleted.items())
        },
        "version": 1,
        "instantsRollback": [target],
    }
    mdt.complete_service(instant, ROLLBACK, avro_container(ROLLBACK_METADATA_SCHEMA, meta))


# -- deletes on copy-on-write tables -------------------------------------------------------------------


def delete_cow(writer: CowTableWriter, keys: pa.Table, *, commit_time: str) -> CommitResult:
    """One COPY_ON_WRITE commit of operation DELETE: every file group holding some of
    ``keys`` (a table of the record key and partition columns) gets a new base file
    version without them; keys the table does not hold are ignored."""
    instant = writer._new_instant_time(commit_time)
    key_values = writer._record_keys(keys)
    parts = writer._partition_paths(keys)
    located = writer._locate(key_values, parts)
    write_atomic(writer._timeline / f"{instant}.commit.requested", b"")
    writer._latest_time = instant
    write_atomic(writer._timeline / f"{instant}.inflight", b"")
    stats: list[WriteStat] = []
    removed: list[tuple[str, pa.Array]] = []
    if located is not None:
        found = pc.indices_nonzero(pc.is_valid(located))
        for task, (file_id, positions) in enumerate(groups(located.take(found))):
            rows = found.take(positions)
            partition = parts[rows[0].as_py()].as_py()
            stats.append(_rewrite_without(writer, partition, file_id, key_values.take(rows), instant, task))
            removed.append((partition, key_values.take(rows)))
    body = commit_body(writer, stats, "DELETE")
    _mdt_commit(writer, instant, stats, deleted=removed)
    # The writers' completion rule for an explicit commit time: one millisecond later.
    completion = complete_instant(writer._timeline, instant, COMMIT, body, writer.spec.table_version, True)
    writer._latest_time = completion or instant
    for s in stats:
        name = (s.path or "").rsplit("/", 1)[-1]
        writer._file_groups[(s.partition_path, s.file_id)] = BaseFile(s.partition_path, s.file_id, name, instant)
    return CommitResult(instant, completion, "DELETE", tuple(stats))


def _rewrite_without(
    writer: CowTableWriter, partition: str, file_id: str, deleted: pa.Array, instant: str, task: int
) -> WriteStat:
    """A new version of a file group's base file without ``deleted`` keys; kept rows
    keep their commit time and sequence number."""
    started = time.monotonic()
    previous = writer._file_groups[(partition, file_id)]
    old = pq.read_table(writer.base / previous.relative_path).replace_schema_metadata(None)
    kept = old.filter(pc.invert(pc.is_in(old[_RECORD_KEY], value_set=deleted)))
    name = f"{file_id}_{task}-1-0_{instant}.parquet"
    idx = kept.schema.get_field_index("_hoodie_file_name")
    kept = kept.set_column(idx, kept.schema.field(idx), pa.repeat(pa.scalar(name), kept.num_rows))
    rel = f"{partition}/{name}" if partition else name
    size = _write_parquet(writer, rel, kept)
    writer._observe_file(rel, kept, writer.base / rel)
    return ServiceWriteStat(
        file_id=file_id,
        partition_path=partition,
        path=rel,
        prev_commit=previous.instant_time,
        prev_base_file=previous.name,
        num_writes=kept.num_rows,
        file_size=size,
        write_millis=int((time.monotonic() - started) * 1000),
        num_deletes=old.num_rows - kept.num_rows,
    )


def new_file_id() -> str:
    """A file group id as Hudi's writers make them: a UUID and the file index ``-0``."""
    return f"{uuid.uuid4()}-0"


def base_file_keys(base: Path, rel: str) -> list[str]:
    """The record keys a base file holds."""
    return pq.read_table(base / rel, columns=[_RECORD_KEY]).column(0).to_pylist()
