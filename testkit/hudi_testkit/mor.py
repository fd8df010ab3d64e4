"""A small MERGE_ON_READ table writer: Parquet base files, log files of Avro or Parquet data blocks and delete blocks.

Every write is one ``deltacommit``, as Spark writes them on a MERGE_ON_READ
table. Keys are located with the COPY_ON_WRITE writer's non-global simple
index (partition path + record key, read from the base files): rows for keys
a file group holds go to a new log block of that group, new keys to new base
files (new file groups). Log blocks never bring new keys into a group, so the
base files always hold every key of the table, deleted ones included.

Log files are named as the Hudi writer of each table version names them:

* table version 6: ``.<fileId>_<baseInstant>.log.<version>_<writeToken>``: a
  log file belongs to the slice of its base instant; each delta commit writes
  a new version (as Hudi does on storage without appends) or, with
  ``append_log_files``, appends its blocks to the slice's latest log file.
* table versions 8 and 9: ``.<fileId>_<deltaCommitInstant>.log.1_<writeToken>``:
  one new log file per delta commit and file group.

Each block's ``INSTANT_TIME`` header is the delta commit's instant, its
``SCHEMA`` header the table schema with the five meta fields, and data blocks
hold at most ``records_per_block`` records. Merge semantics are declared in
``hoodie.properties``: ``EVENT_TIME_ORDERING`` (by the precombine field) or
``COMMIT_TIME_ORDERING``; table version 6 declares them through the payload
class, as Spark 0.14 does (``OverwriteWithLatestAvroPayload`` for commit time,
``DefaultHoodieRecordPayload`` for event time).

Local file systems only; one writer per table at a time; no compaction.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ray.core.file_group import parse_base_file_name, parse_log_file_name
from hudi_ray.core.log_file import BlockType
from hudi_ray.core.schema import META_FIELDS, avro_to_arrow_schema
from hudi_ray.core.timeline import COMMIT, DELTA_COMMIT, decode_instant_metadata
from hudi_testkit.avro_schema import arrow_to_avro_schema
from hudi_testkit.bloom import BloomFilterSpec
from hudi_testkit.common import arange, complete_instant, flat, groups, write_atomic
from hudi_testkit.cow import (
    DEFAULT_ROWS_PER_FILE,
    BaseFile,
    CommitResult,
    CowTableSpec,
    CowTableWriter,
    FilePlan,
)
from hudi_testkit.errors import InvalidRowsError, UnsupportedTableError, WriteSpecError
from hudi_testkit.log_writer import (
    AvroRecordEncoder,
    Chunk,
    avro_block_content,
    block_header,
    delete_block_content,
    frame_block,
    parquet_block_content,
)
from hudi_testkit.metadata import WriteStat, commit_metadata_avro, commit_metadata_json
from hudi_testkit.metadata_table import MetadataTableOptions

EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
MERGE_MODES = (EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING)
BLOCK_FORMATS = ("avro", "parquet")
DEFAULT_RECORDS_PER_BLOCK = 100_000

_EVENT_TIME_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
_COMMIT_TIME_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
_DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
_OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"


# -- table spec ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MorTableSpec(CowTableSpec):
    """A MERGE_ON_READ table's persistent choices; ``merge_mode`` None picks the Hudi default.

    The default is EVENT_TIME_ORDERING for table version 8+ with a precombine
    field (what Spark 1.x writes), else COMMIT_TIME_ORDERING (Spark 0.14's
    default payload, OverwriteWithLatestAvroPayload).
    """

    merge_mode: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.merge_mode is not None and self.merge_mode not in MERGE_MODES:
            raise WriteSpecError(f"merge_mode must be one of {MERGE_MODES}, got {self.merge_mode!r}")
        if self.resolved_merge_mode == EVENT_TIME_ORDERING and self.precombine_field is None:
            raise WriteSpecError("EVENT_TIME_ORDERING needs a precombine (ordering) field")

    @property
    def resolved_merge_mode(self) -> str:
        if self.merge_mode is not None:
            return self.merge_mode
        if self.table_version >= 8 and self.precombine_field is not None:
            return EVENT_TIME_ORDERING
        return COMMIT_TIME_ORDERING

    def properties(self, create_schema: str) -> dict[str, str]:
        props = super().properties(create_schema)
        props["hoodie.table.type"] = "MERGE_ON_READ"
        event_time = self.resolved_merge_mode == EVENT_TIME_ORDERING
        merge_keys = ("hoodie.record.merge.mode", "hoodie.record.merge.strategy.id", "hoodie.compaction.payload.class")
        merged = {k: v for k, v in props.items() if k not in merge_keys}
        if self.table_version < 8:
            # Spark 0.14: the payload class decides; the merger strategy is always the default (event time) id.
            merged["hoodie.compaction.payload.class"] = _DEFAULT_PAYLOAD if event_time else _OVERWRITE_PAYLOAD
            merged["hoodie.compaction.record.merger.strategy"] = _EVENT_TIME_STRATEGY
        else:
            merged["hoodie.record.merge.mode"] = self.resolved_merge_mode
            if self.table_version == 8:
                merged["hoodie.record.merge.strategy.id"] = (
                    _EVENT_TIME_STRATEGY if event_time else _COMMIT_TIME_STRATEGY
                )
                merged["hoodie.compaction.payload.class"] = _DEFAULT_PAYLOAD if event_time else _OVERWRITE_PAYLOAD
        return merged

    @classmethod
    def from_properties(cls, props: Mapping[str, str], where: str) -> MorTableSpec:
        if props.get("hoodie.table.type", "").upper() != "MERGE_ON_READ":
            raise UnsupportedTableError(f"{where}: only MERGE_ON_READ tables can be written by this writer")
        base = CowTableSpec.from_properties({**props, "hoodie.table.type": "COPY_ON_WRITE"}, where)
        if base.table_version >= 8:
            mode = props.get("hoodie.record.merge.mode", "").upper() or None
        else:
            payload = props.get("hoodie.compaction.payload.class", _OVERWRITE_PAYLOAD)
            mode = EVENT_TIME_ORDERING if payload.endswith("DefaultHoodieRecordPayload") else COMMIT_TIME_ORDERING
        values = {f.name: getattr(base, f.name) for f in dataclasses.fields(CowTableSpec)}
        return cls(**values, merge_mode=mode)


# -- write stats of log files ----------------------------------------------------------------------


@dataclass(frozen=True)
class LogWriteStat(WriteStat):
    """A log file written (or appended to) by a delta commit, with the fields Spark records for it."""

    num_deletes: int = 0
    total_write_bytes: int = 0  # bytes this commit wrote; ``file_size`` is the whole log file's size
    log_version: int = 1
    log_offset: int = 0
    base_file: str = ""
    log_files: tuple[str, ...] = ()
    total_log_records: int = 0
    total_log_blocks: int = 0

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out.update(
            {
                "numDeletes": self.num_deletes,
                "totalWriteBytes": self.total_write_bytes,
                "totalLogRecords": self.total_log_records,
                "totalLogBlocks": self.total_log_blocks,
                "logVersion": self.log_version,
                "logOffset": self.log_offset,
                "baseFile": self.base_file,
                "logFiles": list(self.log_files),
                "recordsStats": {"val": None},
            }
        )
        return out


# -- plans ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _LogPlan:
    """Log blocks one delta commit appends to one file group: data rows, or deletes."""

    base: BaseFile
    keys: pa.Array
    data: pa.Table | None = None  # data columns of updated rows, in the table schema
    ordering: pa.Array | None = None  # deletes only: ordering values (null: commit-time delete)

    def planned_stat(self) -> WriteStat:
        n = len(self.keys)
        updates = n if self.data is not None else 0
        return WriteStat(self.base.file_id, self.base.partition_path, None, self.base.instant_time, None, 0, 0, updates)


@dataclass
class _LogState:
    """The latest committed log file of a file group's slice (table version 6 appends go there)."""

    name: str
    version: int
    base_instant: str


# -- the writer ------------------------------------------------------------------------------------


class MorTableWriter(CowTableWriter):
    """Writes delta commits to one MERGE_ON_READ table; get one from :meth:`create` or :meth:`open`.

    ``block_format`` ("avro" or "parquet") is the default data block kind;
    ``records_per_block`` caps the records of one data or delete block;
    ``append_log_files`` (table version 6 only) appends blocks to the slice's
    latest log file instead of writing a new log file version.
    """

    spec_type: ClassVar[type[CowTableSpec]] = MorTableSpec

    spec: MorTableSpec

    def __init__(
        self,
        base_path: str | os.PathLike[str],
        spec: MorTableSpec,
        *,
        rows_per_file: int = DEFAULT_ROWS_PER_FILE,
        compression: str = "snappy",
        max_workers: int | None = None,
        records_per_block: int = DEFAULT_RECORDS_PER_BLOCK,
        block_format: str = "avro",
        append_log_files: bool = False,
        metadata_table: bool | MetadataTableOptions = False,
        bloom_filter: BloomFilterSpec | None = None,
    ) -> None:
        if records_per_block < 1:
            raise WriteSpecError("records_per_block must be positive")
        _check_block_format(block_format)
        if append_log_files and spec.table_version >= 8:
            raise WriteSpecError(
                "append_log_files applies to table version 6; versions 8+ write one log file per commit"
            )
        self.records_per_block = records_per_block
        self.block_format = block_format
        self.append_log_files = append_log_files
        self.commits: list[CommitResult] = []  # the commits this writer made, oldest first
        self._logs: dict[tuple[str, str], _LogState] = {}
        super().__init__(
            base_path,
            spec,
            rows_per_file=rows_per_file,
            compression=compression,
            max_workers=max_workers,
            metadata_table=metadata_table,
            bloom_filter=bloom_filter,
        )

    # -- creating and opening --------------------------------------------------------------

    @classmethod
    def create(  # type: ignore[override]
        cls,
        base_path: str | os.PathLike[str],
        table: pa.Table,
        *,
        table_name: str,
        record_key: str,
        partition_field: str | None = None,
        precombine_field: str | None = None,
        table_version: int = 6,
        hive_style: bool = True,
        merge_mode: str | None = None,
        commit_time: str | None = None,
        **options: Any,
    ) -> MorTableWriter:
        """Create a MERGE_ON_READ table whose first delta commit writes ``table`` as Parquet base files.

        ``options`` are the constructor's (``rows_per_file``, ``records_per_block``, ``block_format``, ...).
        """
        spec = MorTableSpec(
            table_name, record_key, partition_field, precombine_field, table_version, hive_style, merge_mode
        )
        writer = super().create(base_path, spec, table.schema, **options)
        assert isinstance(writer, MorTableWriter)
        writer.insert(table, commit_time=commit_time)
        return writer

    # -- timeline state ----------------------------------------------------------------------

    def _load_timeline(self) -> None:
        """Latest time on the timeline, base file and latest log file per group, latest schema.

        Files of failed (never completed) delta commits appear in no stats and are ignored.
        """
        completed = self._scan_timeline(frozenset({DELTA_COMMIT, COMMIT}))
        for instant, name in completed:
            path = self._timeline / name
            meta = decode_instant_metadata(path.read_bytes(), str(path))
            for partition, stats in (meta.get("partitionToWriteStats") or {}).items():
                for s in stats or []:
                    file_name = (s.get("path") or "").rsplit("/", 1)[-1]
                    key = (partition, s.get("fileId") or "")
                    base = parse_base_file_name(file_name)
                    log = parse_log_file_name(file_name)
                    if base is not None:
                        self._file_groups[key] = BaseFile(partition, base.file_id, file_name, instant)
                    elif log is not None:
                        known = self._logs.get(key)
                        if known is None or (log.base_instant, log.version) >= (known.base_instant, known.version):
                            self._logs[key] = _LogState(file_name, log.version, log.base_instant)
            schema = (meta.get("extraMetadata") or {}).get("schema")
            if schema:
                self._avro_schema = json.loads(schema)

    # -- public writes -------------------------------------------------------------------------

    def upsert(
        self, table: pa.Table, *, commit_time: str | None = None, block_format: str | None = None
    ) -> CommitResult:
        """One delta commit: rows of stored keys to log blocks, new keys to new base files."""
        return self._write_rows(table, "UPSERT", commit_time, block_format, allow_new=True, allow_existing=True)

    def update(
        self, table: pa.Table, *, commit_time: str | None = None, block_format: str | None = None
    ) -> CommitResult:
        """One delta commit of updated rows, all of stored keys, written as log blocks."""
        return self._write_rows(table, "UPSERT", commit_time, block_format, allow_new=False, allow_existing=True)

    def insert(self, table: pa.Table, *, commit_time: str | None = None) -> CommitResult:
        """One delta commit of rows with new keys, written as new base files."""
        return self._write_rows(table, "INSERT", commit_time, None, allow_new=True, allow_existing=False)

    def delete(
        self,
        keys: pa.Table | pa.Array | pa.ChunkedArray | Sequence[Any],
        ordering: pa.Array | pa.ChunkedArray | Sequence[Any] | Any | None = None,
        *,
        commit_time: str | None = None,
    ) -> CommitResult:
        """One delta commit of delete blocks.

        ``keys`` is a table with the record key column (and the partition
        column on partitioned tables), or bare record keys, which are deleted
        in every partition that holds them. ``ordering`` None writes
        commit-time deletes (ordering value IntWrapper(0)), which win over any
        earlier record; otherwise one ordering value per key (or one for all),
        in the precombine field's type: under event time ordering such a
        delete loses to a stored record with a greater value. A null value
        makes that key's delete a commit-time delete. Keys the table does not
        hold are ignored.
        """
        instant = self._new_instant_time(commit_time)
        if isinstance(keys, pa.Table):
            key_values = self._record_keys(keys)
            parts = self._partition_paths(keys) if self.spec.partition_field else None
        else:
            raw = keys if isinstance(keys, (pa.Array, pa.ChunkedArray)) else pa.array(list(keys))
            key_values = flat(pc.cast(raw, pa.string()))
            parts = None if self.spec.partition_field else pa.repeat(pa.scalar(""), len(key_values))
        ordering_values = self._ordering_values(ordering, len(key_values))
        rows, located, located_parts = self._find(key_values, parts)
        plans: list[_LogPlan] = []
        routing = pa.table({"__p": located_parts, "__f": located})
        group_keys = pc.binary_join_element_wise(routing["__p"], routing["__f"], "\x00")
        for composite, positions in groups(flat(group_keys)):
            partition, file_id = composite.split("\x00")
            chosen = rows.take(positions)
            plans.append(
                _LogPlan(
                    self._file_groups[(partition, file_id)],
                    key_values.take(chosen),
                    ordering=None if ordering_values is None else ordering_values.take(chosen),
                )
            )
        return self._delta_commit(instant, commit_time, "DELETE", plans, [], self.block_format, None)

    # -- planning ------------------------------------------------------------------------------

    def _write_rows(
        self,
        table: pa.Table,
        operation: str,
        commit_time: str | None,
        block_format: str | None,
        *,
        allow_new: bool,
        allow_existing: bool,
    ) -> CommitResult:
        fmt = block_format or self.block_format
        _check_block_format(fmt)
        instant = self._new_instant_time(commit_time)
        data = self._conform(table)
        if self._avro_schema is None:
            self._avro_schema = arrow_to_avro_schema(table.schema, self.spec.table_name)
        keys = self._record_keys(data)
        parts = self._partition_paths(data)
        data, keys, parts = self._dedupe(data, keys, parts)
        plans = self._plan(data, keys, parts, lookup=True)
        updates = [p for p in plans if p.previous is not None]
        inserts = [p for p in plans if p.previous is None]
        if updates and not allow_existing:
            sample = updates[0].keys[0].as_py()
            raise InvalidRowsError(f"insert: key {sample!r} (and maybe others) is already in the table; use upsert")
        if inserts and not allow_new:
            sample = inserts[0].keys[0].as_py()
            raise InvalidRowsError(f"update: key {sample!r} (and maybe others) is not in the table; use upsert")
        logs = [_LogPlan(p.previous, p.keys, data=p.data) for p in updates if p.previous is not None]
        return self._delta_commit(instant, commit_time, operation, logs, inserts, fmt, data.schema)

    def _ordering_values(self, ordering: Any, n: int) -> pa.Array | None:
        if ordering is None:
            return None
        field = self.spec.precombine_field
        if field is None:
            raise WriteSpecError("Deletes with ordering values need a table with a precombine (ordering) field")
        assert self._avro_schema is not None
        target = self._table_arrow_schema().field(field).type
        if isinstance(ordering, (pa.Array, pa.ChunkedArray)):
            values = flat(ordering)
        elif isinstance(ordering, (list, tuple)):
            values = pa.array(list(ordering))
        else:
            values = pa.array([ordering] * n)
        if len(values) != n:
            raise InvalidRowsError(f"{len(values)} ordering values for {n} keys")
        return values.cast(target)

    def _table_arrow_schema(self) -> pa.Schema:
        assert self._avro_schema is not None
        return avro_to_arrow_schema(self._avro_schema, "table schema")

    def _find(self, keys: pa.Array, parts: pa.Array | None) -> tuple[pa.Array, pa.Array, pa.Array]:
        """(input row, file id, partition path) of each stored (partition, key) the input names.

        Without ``parts`` a key matches in every partition.
        """
        empty = (pa.array([], pa.int64()), pa.array([], pa.string()), pa.array([], pa.string()))
        if not self._file_groups or len(keys) == 0:
            return empty
        if parts is not None:
            touched = set(pc.unique(parts).to_pylist())
            current = [b for (p, _), b in self._file_groups.items() if p in touched]
        else:
            current = list(self._file_groups.values())
        if not current:
            return empty

        def keys_of(base: BaseFile) -> pa.Table:
            stored = pq.read_table(self.base / base.relative_path, columns=["_hoodie_record_key"]).column(0)
            n = len(stored)
            partition, file_id = pa.scalar(base.partition_path), pa.scalar(base.file_id)
            return pa.table({"__p": pa.repeat(partition, n), "__k": stored, "__fid": pa.repeat(file_id, n)})

        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            index = pa.concat_tables(pool.map(keys_of, current))
        incoming = {"__row": arange(len(keys)), "__k": keys}
        join_keys = ["__k"]
        if parts is not None:
            incoming["__p"] = parts
            join_keys.append("__p")
        joined = pa.table(incoming).join(index, keys=join_keys, join_type="inner").sort_by("__row")
        return flat(joined["__row"]), flat(joined["__fid"]), flat(joined["__p"])

    # -- committing ----------------------------------------------------------------------------

    def _log_schema(self) -> dict[str, Any]:
        """The table's Avro schema with the meta fields: the SCHEMA header of every block."""
        return json.loads(self._parquet_metadata()[b"parquet.avro.schema"])

    def _delta_commit(
        self,
        instant: str,
        commit_time: str | None,
        operation: str,
        logs: list[_LogPlan],
        inserts: list[FilePlan],
        block_format: str,
        data_schema: pa.Schema | None,
    ) -> CommitResult:
        if self._avro_schema is None:
            raise InvalidRowsError("The table has no schema yet: write rows before deleting")
        encode = commit_metadata_json if self.spec.table_version < 8 else commit_metadata_avro
        self._timeline.mkdir(parents=True, exist_ok=True)
        write_atomic(self._timeline / f"{instant}.{DELTA_COMMIT}.requested", b"")
        self._latest_time = instant  # taken even if this write fails: instant times are never reused
        planned = [p.planned_stat() for p in logs] + [p.planned_stat() for p in inserts]
        write_atomic(self._timeline / f"{instant}.{DELTA_COMMIT}.inflight", encode(planned, {}, operation))

        for partition in sorted({p.partition_path for p in inserts}):
            self._ensure_partition_metadata(partition, instant)
        parquet_meta = self._parquet_metadata()
        schema_json = parquet_meta[b"parquet.avro.schema"].decode()
        log_schema = json.loads(schema_json)
        encoder = AvroRecordEncoder(log_schema)
        file_schema = self._file_schema(data_schema) if data_schema is not None else None
        listings = self._log_listings(logs)

        def write_log(task: tuple[int, _LogPlan]) -> WriteStat:
            return self._write_log(
                task[1], task[0], instant, schema_json, encoder, file_schema, parquet_meta, block_format, listings
            )

        def write_base(task: tuple[int, FilePlan]) -> WriteStat:
            assert file_schema is not None
            return self._write_file(task[1], task[0], instant, file_schema, parquet_meta)

        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            log_stats = list(pool.map(write_log, enumerate(logs)))
            base_stats = list(pool.map(write_base, enumerate(inserts, start=len(logs))))
        stats = tuple(log_stats + base_stats)

        assert self._avro_schema is not None
        body = encode(stats, {"schema": json.dumps(self._avro_schema, separators=(",", ":"))}, operation)
        if self._mdt is not None:  # the metadata table commits first, as Hudi's writers do
            written = [(p.partition_path, p.file_id, p.keys) for p in inserts]
            written += [(p.base.partition_path, p.base.file_id, p.keys) for p in logs if p.data is not None]
            deleted = [(p.base.partition_path, p.keys) for p in logs if p.data is None]
            self._mdt.commit(instant, commit_time is not None, stats, written, deleted)
        completion = complete_instant(
            self._timeline, instant, DELTA_COMMIT, body, self.spec.table_version, commit_time is not None
        )
        self._latest_time = completion or instant

        for s in base_stats:
            name = (s.path or "").rsplit("/", 1)[-1]
            self._file_groups[(s.partition_path, s.file_id)] = BaseFile(s.partition_path, s.file_id, name, instant)
        for s in log_stats:
            name = (s.path or "").rsplit("/", 1)[-1]
            parsed = parse_log_file_name(name)
            assert parsed is not None
            self._logs[(s.partition_path, s.file_id)] = _LogState(name, parsed.version, parsed.base_instant)
        result = CommitResult(instant, completion, operation, stats)
        self.commits.append(result)
        return result

    def _log_listings(self, logs: list[_LogPlan]) -> dict[str, list[str]]:
        """Log file names present in each partition a table version 6 commit writes logs to."""
        if self.spec.table_version >= 8:
            return {}
        out: dict[str, list[str]] = {}
        for partition in {p.base.partition_path for p in logs}:
            folder = self.base / partition if partition else self.base
            out[partition] = [n for n in os.listdir(folder) if n.startswith(".") and ".log." in n]
        return out

    def _log_target(self, plan: _LogPlan, token: str, instant: str, listings: dict[str, list[str]]) -> tuple[str, bool]:
        """(log file name, append?) for a file group's blocks of this commit."""
        base = plan.base
        if self.spec.table_version >= 8:
            return f".{base.file_id}_{instant}.log.1_{token}", False
        known = self._logs.get((base.partition_path, base.file_id))
        folder = self.base / base.partition_path if base.partition_path else self.base
        current = known is not None and known.base_instant == base.instant_time
        if self.append_log_files and known is not None and current and (folder / known.name).is_file():
            return known.name, True
        prefix = f".{base.file_id}_{base.instant_time}.log."
        versions = [0]
        for name in listings.get(base.partition_path, []):
            parsed = parse_log_file_name(name) if name.startswith(prefix) else None
            if parsed is not None:
                versions.append(parsed.version)
        return f"{prefix}{max(versions) + 1}_{token}", False

    def _write_log(
        self,
        plan: _LogPlan,
        task_id: int,
        instant: str,
        schema_json: str,
        encoder: AvroRecordEncoder,
        file_schema: pa.Schema | None,
        parquet_meta: dict[bytes, bytes],
        block_format: str,
        listings: dict[str, list[str]],
    ) -> WriteStat:
        started = time.monotonic()
        base = plan.base
        name, append = self._log_target(plan, f"{task_id}-1-0", instant, listings)
        rel = f"{base.partition_path}/{name}" if base.partition_path else name
        path = self.base / rel
        header = block_header(instant, schema_json)
        step = self.records_per_block
        pieces: list[Chunk] = []
        blocks = 0
        n = len(plan.keys)
        if plan.data is not None:
            assert file_schema is not None
            rows = self._log_rows(plan, task_id, instant, file_schema)
            for start in range(0, n, step):
                chunk = rows.slice(start, step)
                if block_format == "parquet":
                    content = parquet_block_content(chunk, parquet_meta, self.compression)
                    pieces += frame_block(BlockType.PARQUET_DATA, header, content)
                else:
                    pieces += frame_block(BlockType.AVRO_DATA, header, avro_block_content(encoder, chunk))
                blocks += 1
        else:
            partitions = pa.repeat(pa.scalar(base.partition_path), n)
            for start in range(0, n, step):
                ordering = None if plan.ordering is None else plan.ordering.slice(start, step)
                content = delete_block_content(plan.keys.slice(start, step), partitions.slice(start, step), ordering)
                pieces += frame_block(BlockType.DELETE, header, content)
                blocks += 1
        offset = path.stat().st_size if append else 0
        with open(path, "ab" if append else "xb") as f:
            for piece in pieces:
                f.write(piece)
        self._observe_file(rel, rows if plan.data is not None else None)
        size = path.stat().st_size
        parsed = parse_log_file_name(name)
        assert parsed is not None
        v6 = self.spec.table_version < 8
        updates = n if plan.data is not None else 0
        return LogWriteStat(
            file_id=base.file_id,
            partition_path=base.partition_path,
            path=rel,
            # As Spark records it: the slice's base instant (v6), the log file's own instant (v8+).
            prev_commit=base.instant_time if v6 else instant,
            num_writes=updates,
            num_update_writes=updates,
            file_size=size,
            write_millis=int((time.monotonic() - started) * 1000),
            num_deletes=n - updates,
            total_write_bytes=size - offset,
            log_version=parsed.version,
            log_offset=offset,
            base_file=base.name if v6 else "",
            log_files=(name,),
            total_log_records=n,
            total_log_blocks=blocks,
        )

    def _log_rows(self, plan: _LogPlan, task_id: int, instant: str, file_schema: pa.Schema) -> pa.Table:
        """Updated rows with their meta fields; ``_hoodie_file_name`` holds the file id, as in Hudi's logs."""
        assert plan.data is not None
        n = plan.data.num_rows
        seqno = pc.binary_join_element_wise(pa.scalar(f"{instant}_{task_id}"), pc.cast(arange(n), pa.string()), "_")
        meta = [
            pa.repeat(pa.scalar(instant), n),
            seqno,
            plan.keys,
            pa.repeat(pa.scalar(plan.base.partition_path), n),
            pa.repeat(pa.scalar(plan.base.file_id), n),
        ]
        assert len(meta) == len(META_FIELDS)
        return pa.Table.from_arrays(meta + list(plan.data.columns), schema=file_schema)


def _check_block_format(block_format: str) -> None:
    if block_format not in BLOCK_FORMATS:
        raise WriteSpecError(f"block_format must be one of {BLOCK_FORMATS}, got {block_format!r}")


# -- one-call API ----------------------------------------------------------------------------------


def write_mor_table(
    base_path: str | os.PathLike[str],
    table: pa.Table,
    *,
    table_name: str,
    record_key: str,
    partition_field: str | None,
    precombine_field: str | None = None,
    table_version: int = 6,
    merge_mode: str | None = None,
    rows_per_file: int = DEFAULT_ROWS_PER_FILE,
    commit_time: str | None = None,
    hive_style: bool = True,
    compression: str = "snappy",
    metadata_table: bool | MetadataTableOptions = False,
) -> CommitResult:
    """Create a MERGE_ON_READ table at ``base_path`` holding ``table`` (base files) as its first delta commit."""
    writer = MorTableWriter.create(
        base_path,
        table,
        table_name=table_name,
        record_key=record_key,
        partition_field=partition_field,
        precombine_field=precombine_field,
        table_version=table_version,
        hive_style=hive_style,
        merge_mode=merge_mode,
        commit_time=commit_time,
        rows_per_file=rows_per_file,
        compression=compression,
        metadata_table=metadata_table,
    )
    return writer.commits[-1]
