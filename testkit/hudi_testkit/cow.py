"""A small COPY_ON_WRITE table writer: Parquet base files, timeline, table and partition metadata.

Every commit is an upsert with a non-global simple index, as Spark's default
Hudi writer does: a record is identified by (partition path, record key); a
key already stored in a file group rewrites that group as a new base file
version (same file id), other keys go to new file groups of at most
``rows_per_file`` rows. Within one batch, duplicate keys keep the row with the
largest precombine value (the last such row on ties, or the last row without
a precombine field); across commits the incoming row always wins (commit time
ordering, which is what the table properties declare).

Local file systems only; one writer per table at a time.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ray.core.config import parse_properties
from hudi_ray.core.schema import META_FIELDS, avro_to_arrow_schema
from hudi_ray.core.timeline import COMMIT, decode_instant_metadata
from hudi_testkit.avro_schema import arrow_to_avro_schema, avro_compatible_schema
from hudi_testkit.bloom import BloomFilterSpec, footer_metadata
from hudi_testkit.common import (
    arange,
    complete_instant,
    flat,
    groups,
    latest_time,
    list_instants,
    next_instant_time,
    parse_instant_time,
    write_atomic,
    write_properties,
)
from hudi_testkit.errors import (
    InstantTimeError,
    InvalidRowsError,
    SchemaError,
    TableExistsError,
    TableNotFoundError,
    TableStateError,
    UnsupportedTableError,
    UnsupportedTypeError,
    WriteSpecError,
)
from hudi_testkit.metadata import (
    NULL_COMMIT,
    WriteStat,
    commit_metadata_avro,
    commit_metadata_json,
    partition_metadata,
    table_checksum,
)
from hudi_testkit.metadata_table import MetadataTableOptions, MetadataTableWriter

DEFAULT_ROWS_PER_FILE = 1_000_000
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
SUPPORTED_TABLE_VERSIONS = (6, 8, 9)
PARTITION_METAFILE = ".hoodie_partition_metadata"

_RECORD_KEY = "_hoodie_record_key"
_FILE_NAME = "_hoodie_file_name"
# Hudi 1.x merge strategy id of COMMIT_TIME_ORDERING, the semantics of this writer's upserts.
_COMMIT_TIME_ORDERING_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
_OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"


# -- records -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CowTableSpec:
    """The table-level choices a writer makes once, persisted in ``hoodie.properties``."""

    table_name: str
    record_key: str
    partition_field: str | None
    precombine_field: str | None = None
    table_version: int = 6
    hive_style: bool = True

    def __post_init__(self) -> None:
        if self.table_version not in SUPPORTED_TABLE_VERSIONS:
            raise WriteSpecError(f"table_version must be one of {SUPPORTED_TABLE_VERSIONS}, got {self.table_version}")

    @property
    def timeline_dir(self) -> str:
        return ".hoodie" if self.table_version < 8 else ".hoodie/timeline"

    def properties(self, create_schema: str) -> dict[str, str]:
        v = self.table_version
        props = {
            "hoodie.table.name": self.table_name,
            "hoodie.table.type": "COPY_ON_WRITE",
            "hoodie.table.version": str(v),
            "hoodie.timeline.layout.version": "1" if v < 8 else "2",
            "hoodie.database.name": "default",
            "hoodie.table.recordkey.fields": self.record_key,
        }
        if self.partition_field:
            props["hoodie.table.partition.fields"] = self.partition_field
        if self.precombine_field:
            key = "hoodie.table.ordering.fields" if v >= 9 else "hoodie.table.precombine.field"
            props[key] = self.precombine_field
        if v < 8:
            keygen = "SimpleKeyGenerator" if self.partition_field else "NonpartitionedKeyGenerator"
            props["hoodie.table.keygenerator.class"] = f"org.apache.hudi.keygen.{keygen}"
        else:
            props["hoodie.table.keygenerator.type"] = "SIMPLE" if self.partition_field else "NON_PARTITION"
            props["hoodie.table.initial.version"] = str(v)
            props["hoodie.timeline.path"] = "timeline"
            props["hoodie.timeline.history.path"] = "history"
            props["hoodie.record.merge.mode"] = "COMMIT_TIME_ORDERING"
            if v == 8:
                props["hoodie.record.merge.strategy.id"] = _COMMIT_TIME_ORDERING_STRATEGY
                props["hoodie.compaction.payload.class"] = _OVERWRITE_PAYLOAD
            else:
                props["hoodie.table.format"] = "native"
        props.update(
            {
                "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style).lower(),
                "hoodie.datasource.write.partitionpath.urlencode": "false",
                "hoodie.datasource.write.drop.partition.columns": "false",
                "hoodie.archivelog.folder": "archived",
                "hoodie.table.create.schema": create_schema,
                "hoodie.table.checksum": str(table_checksum(self.table_name)),
            }
        )
        return props

    @classmethod
    def from_properties(cls, props: Mapping[str, str], where: str) -> CowTableSpec:
        if props.get("hoodie.table.type", "COPY_ON_WRITE").upper() != "COPY_ON_WRITE":
            raise UnsupportedTableError(f"{where}: only COPY_ON_WRITE tables can be written")
        keys = _split(props.get("hoodie.table.recordkey.fields"))
        parts = _split(props.get("hoodie.table.partition.fields"))
        order = _split(props.get("hoodie.table.ordering.fields") or props.get("hoodie.table.precombine.field"))
        if len(keys) != 1 or len(parts) > 1 or len(order) > 1:
            raise UnsupportedTableError(f"{where}: this writer supports one record key, partition and precombine field")
        return cls(
            table_name=props["hoodie.table.name"],
            record_key=keys[0],
            partition_field=parts[0] if parts else None,
            precombine_field=order[0] if order else None,
            table_version=int(props.get("hoodie.table.version", "6")),
            hive_style=props.get("hoodie.datasource.write.hive_style_partitioning", "false").lower() == "true",
        )


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@dataclass(frozen=True)
class CommitResult:
    """What one commit wrote; ``completion_time`` is in file names from table version 8 on."""

    instant_time: str
    completion_time: str | None
    operation: str
    write_stats: tuple[WriteStat, ...]

    @property
    def num_inserts(self) -> int:
        return sum(s.num_inserts for s in self.write_stats)

    @property
    def num_updates(self) -> int:
        return sum(s.num_update_writes for s in self.write_stats)

    @property
    def files(self) -> list[str]:
        """Paths of the base files written, relative to the base path."""
        return [s.path for s in self.write_stats if s.path]


@dataclass(frozen=True)
class BaseFile:
    """The current base file of a file group: the MOR writer adds log files to its slice."""

    partition_path: str
    file_id: str
    name: str
    instant_time: str

    @property
    def relative_path(self) -> str:
        return f"{self.partition_path}/{self.name}" if self.partition_path else self.name


@dataclass(frozen=True)
class FilePlan:
    """One base file to write: incoming rows for a file group, and the version it replaces, if any."""

    partition_path: str
    file_id: str
    data: pa.Table  # data columns only, in the file schema
    keys: pa.Array  # record keys of ``data``
    previous: BaseFile | None

    def planned_stat(self) -> WriteStat:
        prev = self.previous.instant_time if self.previous else NULL_COMMIT
        n = self.data.num_rows
        inserts, updates = (0, n) if self.previous else (n, 0)
        return WriteStat(self.file_id, self.partition_path, None, prev, None, 0, inserts, updates)


# -- vectorized helpers ----------------------------------------------------------------------


def _last_per_key(routing: pa.Table, precombine: str | None) -> pa.Array:
    """Row numbers (``__row``) to keep so each (partition, key) appears once."""
    sort_keys = [("__p", "ascending"), ("__k", "ascending")]
    if precombine is not None:
        # A null precombine value loses to any other: sort on "has a value" first.
        routing = routing.append_column("__has", pc.is_valid(routing[precombine]))
        sort_keys += [("__has", "ascending"), (precombine, "ascending")]
    sort_keys.append(("__row", "ascending"))
    ordered = routing.take(pc.sort_indices(routing, sort_keys=sort_keys))
    n = ordered.num_rows
    p, k = flat(ordered["__p"]), flat(ordered["__k"])
    differs = pc.or_(pc.not_equal(p.slice(0, n - 1), p.slice(1)), pc.not_equal(k.slice(0, n - 1), k.slice(1)))
    is_last = pa.concat_arrays([differs, pa.array([True])])
    rows = pc.filter(flat(ordered["__row"]), is_last)
    return rows.take(pc.array_sort_indices(rows))


# -- the writer --------------------------------------------------------------------------------


class CowTableWriter:
    """Writes commits to one COPY_ON_WRITE table; get one from :meth:`create` or :meth:`open`."""

    # The spec class ``open`` rebuilds from hoodie.properties (the MOR writer has its own).
    spec_type: ClassVar[type[CowTableSpec]] = CowTableSpec

    def __init__(
        self,
        base_path: str | os.PathLike[str],
        spec: CowTableSpec,
        *,
        rows_per_file: int = DEFAULT_ROWS_PER_FILE,
        compression: str = "snappy",
        max_workers: int | None = None,
        metadata_table: bool | MetadataTableOptions = False,
        bloom_filter: BloomFilterSpec | None = None,
    ) -> None:
        """``metadata_table`` (table version 8+): True or options to create a metadata table with
        :meth:`create`; an existing one is kept up to date whatever it says. ``bloom_filter``:
        write Hudi's bloom filter of record keys into each base file's footer, as Hudi does."""
        if rows_per_file < 1:
            raise WriteSpecError("rows_per_file must be positive")
        self.base = _local_path(base_path)
        self.spec = spec
        self.rows_per_file = rows_per_file
        self.compression = compression
        self.max_workers = max_workers or min(8, os.cpu_count() or 2)
        self.bloom_filter = bloom_filter
        self._timeline = self.base / spec.timeline_dir
        self._latest_time: str | None = None
        self._file_groups: dict[tuple[str, str], BaseFile] = {}
        self._avro_schema: dict[str, Any] | None = None
        self._load_timeline()
        self._mdt_options = metadata_table
        self._mdt = self._open_metadata_table()

    # -- creating and opening --------------------------------------------------------------

    @classmethod
    def create(
        cls,
        base_path: str | os.PathLike[str],
        spec: CowTableSpec,
        schema: pa.Schema,
        **options: Any,
    ) -> CowTableWriter:
        """Initialize an empty table (``.hoodie`` and its properties) for data of ``schema``."""
        base = _local_path(base_path)
        if (base / ".hoodie").exists():
            raise TableExistsError(f"A Hudi table already exists at {base}")
        for name in (spec.record_key, spec.partition_field, spec.precombine_field):
            if name is not None and name not in schema.names:
                raise SchemaError(f"Column {name!r} is not in the table schema {schema.names}")
        if options.get("metadata_table") and spec.table_version < 8:
            raise WriteSpecError("A metadata table needs table version 8 or 9")
        avro = arrow_to_avro_schema(schema, spec.table_name)
        dirs = [".hoodie/.temp", ".hoodie/.aux", ".hoodie/archived"]
        dirs += [".hoodie/timeline/history"] if spec.table_version >= 8 else []
        for d in dirs:
            (base / d).mkdir(parents=True, exist_ok=True)
        props = spec.properties(json.dumps(avro, separators=(",", ":")))
        write_properties(base / ".hoodie" / "hoodie.properties", props, "Properties saved")
        writer = cls(base, spec, **options)
        writer._avro_schema = avro
        if writer._mdt_options:
            opts = writer._mdt_options if isinstance(writer._mdt_options, MetadataTableOptions) else None
            writer._mdt = MetadataTableWriter.create(base, props, avro_compatible_schema(schema), opts)
        return writer

    def _open_metadata_table(self) -> MetadataTableWriter | None:
        props_path = self.base / ".hoodie" / "hoodie.properties"
        if self.spec.table_version < 8 or not props_path.is_file():
            return None
        opts = self._mdt_options if isinstance(self._mdt_options, MetadataTableOptions) else None
        props = parse_properties(props_path.read_text("utf-8"))
        create_schema = props.get("hoodie.table.create.schema")
        avro = self._avro_schema or (json.loads(create_schema) if create_schema else None)
        schema = avro_to_arrow_schema(avro, "table schema") if avro else None
        return MetadataTableWriter.load(self.base, props, opts, schema)

    def _observe_file(self, relative_path: str, rows: pa.Table | None, path: Path | None = None) -> None:
        """Hand a written file's rows to the metadata table writer, for its column stats."""
        if self._mdt is not None:
            self._mdt.observe_file(relative_path, rows, path)

    @classmethod
    def open(cls, base_path: str | os.PathLike[str], **options: Any) -> CowTableWriter:
        base = _local_path(base_path)
        props_path = base / ".hoodie" / "hoodie.properties"
        if not props_path.is_file():
            raise TableNotFoundError(f"Not a Hudi table: {props_path} does not exist")
        props = parse_properties(props_path.read_text("utf-8"))
        writer = cls(base, cls.spec_type.from_properties(props, str(props_path)), **options)
        if writer._avro_schema is None and props.get("hoodie.table.create.schema"):
            writer._avro_schema = json.loads(props["hoodie.table.create.schema"])
        return writer

    # -- timeline state ----------------------------------------------------------------------

    def _scan_timeline(self, actions: frozenset[str]) -> list[tuple[str, str]]:
        """Note the latest time on the timeline; return (instant, file name) of the
        completed instants of ``actions``, oldest first."""
        instants = list_instants(self._timeline)
        latest = latest_time(instants)
        if latest is not None:
            self._latest_time = max(self._latest_time or latest, latest)
        return [(i.timestamp, i.file_name) for i in instants if i.is_completed and i.action in actions]

    def _load_timeline(self) -> None:
        """Latest time on the timeline, latest base file per file group and the latest schema.

        The commits' write stats say which base file is current in each group:
        a COW commit rewrites whole groups, so the last stat for a group wins.
        Files of failed (never completed) writes appear in no stats and are ignored.
        """
        completed = self._scan_timeline(frozenset({COMMIT}))
        for instant, name in completed:
            path = self._timeline / name
            meta = decode_instant_metadata(path.read_bytes(), str(path))
            for partition, stats in (meta.get("partitionToWriteStats") or {}).items():
                for s in stats or []:
                    if s.get("path"):
                        fid = s["fileId"]
                        base = BaseFile(partition, fid, s["path"].rsplit("/", 1)[-1], instant)
                        self._file_groups[(partition, fid)] = base
            schema = (meta.get("extraMetadata") or {}).get("schema")
            if schema:
                self._avro_schema = json.loads(schema)

    def _new_instant_time(self, requested: str | None) -> str:
        if requested is None:
            return next_instant_time(self._latest_time)
        parse_instant_time(requested)
        if self._latest_time is not None and requested <= self._latest_time:
            raise InstantTimeError(
                f"Commit time {requested} must be after {self._latest_time}, the latest on the timeline"
            )
        return requested

    # -- preparing incoming data ---------------------------------------------------------------

    def _conform(self, table: pa.Table) -> pa.Table:
        """Columns in the table's order, cast to the types the Avro schema stands for."""
        if self._avro_schema is not None:
            names = [f["name"] for f in self._avro_schema["fields"]]
            if sorted(names) != sorted(table.column_names):
                raise SchemaError(f"Columns {table.column_names} differ from the table's columns {names}")
            table = table.select(names)
            if arrow_to_avro_schema(table.schema, self.spec.table_name) != self._avro_schema:
                raise SchemaError("The data's schema differs from the table's; schema evolution is not supported")
        for f in table.schema:
            if not f.nullable and table[f.name].null_count:
                raise InvalidRowsError(f"Column {f.name!r} is not nullable but holds nulls")
        return table.cast(avro_compatible_schema(table.schema))

    def _record_keys(self, table: pa.Table) -> pa.Array:
        keys = flat(pc.cast(table[self.spec.record_key], pa.string()))
        if keys.null_count or pc.any(pc.equal(keys, "")).as_py():
            raise InvalidRowsError(f"Record key column {self.spec.record_key!r} holds null or empty values")
        return keys

    def _partition_paths(self, table: pa.Table) -> pa.Array:
        field = self.spec.partition_field
        if field is None:
            return pa.repeat(pa.scalar(""), table.num_rows)
        try:
            values = flat(pc.cast(table[field], pa.string()))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise UnsupportedTypeError(
                f"Partition column {field!r} of type {table[field].type} has no path form"
            ) from exc
        # Hudi's key generators put null and empty values in the Hive default partition.
        values = pc.if_else(pc.equal(pc.fill_null(values, ""), ""), HIVE_DEFAULT_PARTITION, values)
        if pc.any(pc.match_substring(values, "/")).as_py():
            raise InvalidRowsError(f"Partition column {field!r} holds values with '/', which would nest directories")
        if self.spec.hive_style:
            values = pc.binary_join_element_wise(pa.scalar(f"{field}="), values, "")
        return values

    # -- committing ----------------------------------------------------------------------------

    def upsert(self, table: pa.Table, *, commit_time: str | None = None) -> CommitResult:
        """Write one commit: new file groups for new keys, new base file versions for updated ones."""
        return self._write(table, commit_time, "UPSERT")

    def insert(self, table: pa.Table, *, commit_time: str | None = None) -> CommitResult:
        """Write one commit as Hudi's INSERT does: every row into new file groups, keys not
        looked up, so a key the table holds gets a second copy (a later ``upsert`` then
        refuses the table)."""
        return self._write(table, commit_time, "INSERT")

    def _write(self, table: pa.Table, commit_time: str | None, operation: str) -> CommitResult:
        instant = self._new_instant_time(commit_time)
        data = self._conform(table)
        if self._avro_schema is None:
            self._avro_schema = arrow_to_avro_schema(table.schema, self.spec.table_name)
        keys = self._record_keys(data)
        parts = self._partition_paths(data)
        data, keys, parts = self._dedupe(data, keys, parts)
        plans = self._plan(data, keys, parts, lookup=operation == "UPSERT")

        encode = commit_metadata_json if self.spec.table_version < 8 else commit_metadata_avro
        self._timeline.mkdir(parents=True, exist_ok=True)
        write_atomic(self._timeline / f"{instant}.commit.requested", b"")
        self._latest_time = instant  # taken even if this write fails: instant times are never reused
        write_atomic(self._timeline / f"{instant}.inflight", encode([p.planned_stat() for p in plans], {}, operation))

        for partition in sorted({p.partition_path for p in plans}):
            self._ensure_partition_metadata(partition, instant)
        file_schema = self._file_schema(data.schema)
        parquet_meta = self._parquet_metadata()

        def write(task: tuple[int, FilePlan]) -> WriteStat:
            return self._write_file(task[1], task[0], instant, file_schema, parquet_meta)

        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            stats = tuple(pool.map(write, enumerate(plans)))

        schema_json = json.dumps(self._avro_schema, separators=(",", ":"))
        body = encode(stats, {"schema": schema_json}, operation)
        if self._mdt is not None:  # the metadata table commits first, as Hudi's writers do
            self._mdt.commit(
                instant, commit_time is not None, stats, [(p.partition_path, p.file_id, p.keys) for p in plans]
            )
        completion = complete_instant(
            self._timeline, instant, COMMIT, body, self.spec.table_version, commit_time is not None
        )

        self._latest_time = completion or instant
        for s in stats:
            self._file_groups[(s.partition_path, s.file_id)] = BaseFile(
                s.partition_path, s.file_id, (s.path or "").rsplit("/", 1)[-1], instant
            )
        return CommitResult(instant, completion, operation, stats)

    def _dedupe(self, data: pa.Table, keys: pa.Array, parts: pa.Array) -> tuple[pa.Table, pa.Array, pa.Array]:
        routing = pa.table({"__row": arange(data.num_rows), "__p": parts, "__k": keys})
        if routing.group_by(["__p", "__k"]).aggregate([]).num_rows == data.num_rows:
            return data, keys, parts  # the common case: no sort, input order kept
        pre = self.spec.precombine_field
        if pre is not None:
            routing = routing.append_column(pre, data[pre])
        rows = _last_per_key(routing, pre)
        return data.take(rows), keys.take(rows), parts.take(rows)

    def _plan(self, data: pa.Table, keys: pa.Array, parts: pa.Array, lookup: bool) -> list[FilePlan]:
        located = self._locate(keys, parts) if lookup else None
        plans: list[FilePlan] = []
        if located is not None:
            updated = pc.indices_nonzero(pc.is_valid(located))
            for file_id, positions in groups(located.take(updated)):
                rows = updated.take(positions)
                partition = parts[rows[0].as_py()].as_py()
                previous = self._file_groups[(partition, file_id)]
                plans.append(FilePlan(partition, file_id, data.take(rows), keys.take(rows), previous))
            inserted = pc.indices_nonzero(pc.is_null(located))
        else:
            inserted = arange(data.num_rows)
        for partition, positions in groups(parts.take(inserted)):
            rows = inserted.take(positions)
            for start in range(0, len(rows), self.rows_per_file):
                chunk = rows.slice(start, self.rows_per_file)
                file_id = f"{uuid.uuid4()}-0"
                plans.append(FilePlan(partition, file_id, data.take(chunk), keys.take(chunk), None))
        return plans

    def _locate(self, keys: pa.Array, parts: pa.Array) -> pa.Array | None:
        """File id holding each incoming (partition, key), null for new keys; None if nothing is stored.

        The index is every stored key of the touched partitions, read from the
        ``_hoodie_record_key`` column of current base files, hash-joined with
        the incoming keys.
        """
        touched = set(pc.unique(parts).to_pylist())
        current = [b for (p, _), b in self._file_groups.items() if p in touched]
        if not current:
            return None

        def keys_of(base: BaseFile) -> pa.Table:
            stored = pq.read_table(self.base / base.relative_path, columns=[_RECORD_KEY]).column(0)
            n = len(stored)
            partition, file_id = pa.scalar(base.partition_path), pa.scalar(base.file_id)
            return pa.table({"__p": pa.repeat(partition, n), "__k": stored, "__fid": pa.repeat(file_id, n)})

        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            index = pa.concat_tables(pool.map(keys_of, current))
        incoming = pa.table({"__row": arange(len(keys)), "__p": parts, "__k": keys})
        joined = incoming.join(index, keys=["__p", "__k"], join_type="left outer")
        if joined.num_rows != len(keys):
            raise TableStateError(f"Table {self.base}: some record key is stored in more than one file group")
        return flat(joined.sort_by("__row")["__fid"])

    # -- files --------------------------------------------------------------------------------

    @staticmethod
    def _file_schema(data_schema: pa.Schema) -> pa.Schema:
        meta = [pa.field(name, pa.string()) for name in META_FIELDS]
        return pa.schema(meta + list(data_schema))

    def _parquet_metadata(self) -> dict[bytes, bytes]:
        """Key-value metadata of base files: the Avro schema with meta fields, as parquet-avro records it."""
        assert self._avro_schema is not None
        meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_FIELDS]
        record = {**self._avro_schema, "fields": meta + list(self._avro_schema["fields"])}
        return {
            b"parquet.avro.schema": json.dumps(record, separators=(",", ":")).encode(),
            b"writer.model.name": b"avro",
        }

    def _ensure_partition_metadata(self, partition: str, instant: str) -> None:
        folder = self.base / partition if partition else self.base
        path = folder / PARTITION_METAFILE
        if path.exists():
            return
        folder.mkdir(parents=True, exist_ok=True)
        depth = partition.count("/") + 1 if partition else 0
        write_atomic(path, partition_metadata(instant, depth).encode("utf-8"))

    def _write_file(
        self,
        plan: FilePlan,
        task_id: int,
        instant: str,
        file_schema: pa.Schema,
        parquet_meta: dict[bytes, bytes],
    ) -> WriteStat:
        started = time.monotonic()
        name = f"{plan.file_id}_{task_id}-1-0_{instant}.parquet"
        rel = f"{plan.partition_path}/{name}" if plan.partition_path else name
        n = plan.data.num_rows
        # Hudi's sequence number: <instant>_<task partition>_<record index within the task>.
        seqno = pc.binary_join_element_wise(pa.scalar(f"{instant}_{task_id}"), pc.cast(arange(n), pa.string()), "_")
        meta = [
            pa.repeat(pa.scalar(instant), n),
            seqno,
            plan.keys,
            pa.repeat(pa.scalar(plan.partition_path), n),
            pa.repeat(pa.scalar(name), n),
        ]
        out = pa.Table.from_arrays(meta + list(plan.data.columns), schema=file_schema)
        if plan.previous is not None:
            old = pq.read_table(self.base / plan.previous.relative_path).replace_schema_metadata(None)
            if not old.schema.equals(file_schema):
                old = old.cast(file_schema)
            # Untouched rows keep their commit time and sequence number; only the file name changes.
            kept = old.filter(pc.invert(pc.is_in(old[_RECORD_KEY], value_set=plan.keys)))
            idx = file_schema.get_field_index(_FILE_NAME)
            kept = kept.set_column(idx, file_schema.field(idx), pa.repeat(pa.scalar(name), kept.num_rows))
            out = pa.concat_tables([kept, out])
        key_range = pc.min_max(out[_RECORD_KEY])
        metadata = dict(parquet_meta)
        if out.num_rows:
            metadata[b"hoodie_min_record_key"] = key_range["min"].as_py().encode()
            metadata[b"hoodie_max_record_key"] = key_range["max"].as_py().encode()
        if self.bloom_filter is not None:
            metadata.update(footer_metadata(out[_RECORD_KEY], self.bloom_filter))
        path = self.base / rel
        # No ARROW:schema entry, as in files Hudi writes; store_schema=False would also drop the
        # schema's own metadata, so the Hudi keys are added to the footer directly.
        with pq.ParquetWriter(path, file_schema, compression=self.compression, store_schema=False) as writer:
            writer.write_table(out)
            writer.add_key_value_metadata(metadata)
        self._observe_file(rel, out, path)
        previous = plan.previous
        return WriteStat(
            file_id=plan.file_id,
            partition_path=plan.partition_path,
            path=rel,
            prev_commit=previous.instant_time if previous else NULL_COMMIT,
            prev_base_file=previous.name if previous else None,
            num_writes=out.num_rows,
            num_inserts=0 if previous else n,
            num_update_writes=n if previous else 0,
            file_size=path.stat().st_size,
            write_millis=int((time.monotonic() - started) * 1000),
        )


def _local_path(base_path: str | os.PathLike[str]) -> Path:
    return Path(os.fspath(base_path).removeprefix("file://")).absolute()


# -- one-call API ------------------------------------------------------------------------------


def write_cow_table(
    base_path: str | os.PathLike[str],
    table: pa.Table,
    *,
    table_name: str,
    record_key: str,
    partition_field: str | None,
    precombine_field: str | None = None,
    table_version: int = 6,
    rows_per_file: int = DEFAULT_ROWS_PER_FILE,
    commit_time: str | None = None,
    hive_style: bool = True,
    compression: str = "snappy",
    metadata_table: bool | MetadataTableOptions = False,
) -> CommitResult:
    """Create a COPY_ON_WRITE table at ``base_path`` holding ``table`` as its first commit."""
    spec = CowTableSpec(table_name, record_key, partition_field, precombine_field, table_version, hive_style)
    writer = CowTableWriter.create(
        base_path,
        spec,
        table.schema,
        rows_per_file=rows_per_file,
        compression=compression,
        metadata_table=metadata_table,
    )
    return writer.upsert(table, commit_time=commit_time)


def upsert_cow_table(
    base_path: str | os.PathLike[str],
    table: pa.Table,
    *,
    rows_per_file: int = DEFAULT_ROWS_PER_FILE,
    commit_time: str | None = None,
    compression: str = "snappy",
) -> CommitResult:
    """Add one upsert commit to a table this module wrote."""
    writer = CowTableWriter.open(base_path, rows_per_file=rows_per_file, compression=compression)
    return writer.upsert(table, commit_time=commit_time)
