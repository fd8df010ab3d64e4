"""The metadata table: a merge-on-read table under ``.hoodie/metadata`` whose
HFile records list partitions and files and hold column stats, partition
stats and the record index. It is read with the same timeline and file-slice
machinery as data tables, trusting only records of completed data instants."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_ray.core.config import TableConfig
from hudi_ray.core.config.table_config import (
    BLOOM_FILTERS,
    COLUMN_STATS,
    METADATA_FILES_PARTITION,
    METADATA_TABLE_PATH,
    PARTITION_STATS,
    RECORD_INDEX,
)
from hudi_ray.core.exceptions import HudiCoreError, HudiCorruptFileError, HudiFileNotFoundError, HudiUnsafePathError
from hudi_ray.core.expr.stats import ColumnStats
from hudi_ray.core.file_group import FileSystemView, HudiFileSlice, Visibility, snapshot_visibility
from hudi_ray.core.hfile import HFileReader
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file import BlockType, LogBlock, LogScanner, read_log_blocks
from hudi_ray.core.log_file.content import decode_delete_block
from hudi_ray.core.metadata import hashing, secondary_index
from hudi_ray.core.metadata.records import (
    ALL_PARTITIONS_KEY,
    NON_PARTITIONED,
    TYPE_COLUMN_STATS,
    TYPE_FILES,
    TYPE_PARTITION_LIST,
    TYPE_PARTITION_STATS,
    RecordLocation,
    decode_record,
    live_files,
    merge_column_stats,
    merge_files,
    record_location,
    to_column_stats,
)
from hudi_ray.core.metadata.secondary_index import SecondaryIndexDefinition
from hudi_ray.core.partition import Partitioner
from hudi_ray.core.storage import FileInfo, Storage
from hudi_ray.core.storage.paths import check_file_name, check_metadata_path
from hudi_ray.core.timeline import HudiTimeline

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

log = logging.getLogger(__name__)

METADATA_PATH = METADATA_TABLE_PATH
FILES = METADATA_FILES_PARTITION
BOOTSTRAP_PREFIX = "00000000000000"
# On an object store an HFile up to this size is fetched whole, with its slice's
# log files, in one round trip; a larger one is read by ranges (index, then blocks).
_WHOLE_HFILE_BYTES = 16 << 20
# Metadata files kept in memory per metadata table: a plan looks up the same
# slices more than once (partitions, then their files).
_KEPT_FILE_BYTES = 64 << 20


def _merge(older: dict[str, Any] | None, newer: dict[str, Any] | None) -> dict[str, Any] | None:
    """Combine two versions of one key; None is a delete, which the newer side wins."""
    if newer is None or older is None:
        return newer
    kind = newer.get("type")
    if kind in (TYPE_PARTITION_LIST, TYPE_FILES):
        return merge_files(older, newer)
    if kind in (TYPE_COLUMN_STATS, TYPE_PARTITION_STATS):
        return merge_column_stats(older, newer)
    return newer


@dataclass
class MetadataTable:
    """Reader of one data table's metadata table, valid up to the data timeline."""

    storage: Storage  # rooted at the metadata table
    config: TableConfig
    timeline: HudiTimeline
    data_timeline: HudiTimeline
    partitions_enabled: frozenset[str]
    _view: FileSystemView = field(init=False)
    _valid: Visibility = field(init=False)
    _slices: dict[str, list[HudiFileSlice]] = field(default_factory=dict)
    _cache: dict[tuple[str, str], Any] = field(default_factory=dict)
    _files: dict[str, bytes] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._view = FileSystemView(
            self.storage, self.config, self.timeline, lambda: Partitioner(self.config, lambda: pa.schema([]))
        )
        self._valid = self._valid_instants()

    @classmethod
    def open(cls, data_storage: Storage, data_config: TableConfig, data_timeline: HudiTimeline) -> MetadataTable | None:
        """The metadata table, or None when the table has none (or it is switched off)."""
        if not data_config.metadata_lists_files:
            return None
        storage = data_storage.child(METADATA_PATH)
        try:
            config, timeline = HudiTimeline.load_with_config(storage, {})
        except HudiUnsafePathError:
            raise  # a crafted table, not a missing metadata table: never read on quietly
        except HudiCoreError as exc:
            log.warning("Ignoring the metadata table of %s: %s", data_storage.base_url, exc)
            return None
        return cls(storage, config, timeline, data_timeline, data_config.metadata_partitions)

    # -- validity ------------------------------------------------------------

    def _valid_instants(self) -> Visibility:
        """MDT records count only for completed data instants (and MDT-only
        bootstrap and compaction instants); an MDT delta commit whose data
        instant is still pending or failed is ignored."""
        data_completed = {i.timestamp for i in self.data_timeline.instants}
        data_pending = {i.timestamp for i in self.data_timeline.pending}
        valid = set(data_completed)
        for i in self.timeline.instants:
            if i.timestamp.startswith(BOOTSTRAP_PREFIX) or i.timestamp not in data_pending:
                valid.add(i.timestamp)
        every = {i.timestamp for i in self.timeline.instants + self.timeline.pending} | data_completed | data_pending
        return Visibility(frozenset(valid), None, frozenset(every), None)

    def lags_data_table(self) -> bool:
        """True when a completed data instant has no completed MDT delta commit yet."""
        mdt = {i.timestamp for i in self.timeline.instants}
        return any(i.timestamp not in mdt for i in self.data_timeline.data_instants)

    def has(self, partition: str) -> bool:
        return partition in self.partitions_enabled

    # -- slices and records ------------------------------------------------------------

    def _file_slices(self, partition: str) -> list[HudiFileSlice]:
        with self._lock:
            cached = self._slices.get(partition)
        if cached is None:
            visibility = snapshot_visibility(self.timeline, None)
            cached = sorted(self._view.latest_file_slices([partition], visibility), key=lambda s: s.file_id)
            with self._lock:
                self._slices[partition] = cached
        return cached

    def _fetch_slices(self, slices: Iterable[HudiFileSlice]) -> dict[str, bytes]:
        """The files of ``slices`` (small HFiles and every log file) fetched
        together, on an object store: read one by one, each costs a round trip.
        Files fetched before come from memory."""
        if self.storage.is_local:
            return {}
        wanted: list[str] = []
        with self._lock:
            kept = dict(self._files)
        for fs in slices:
            base = fs.base_file_relative_path()
            if base and 0 < int(fs.base_file_size or 0) <= _WHOLE_HFILE_BYTES:
                wanted.append(base)
            wanted += fs.log_files_relative_paths()
        missing = [rel for rel in dict.fromkeys(wanted) if rel not in kept]
        if missing:
            fetched = dict(zip(missing, self.storage.read_many(missing)))
            kept.update(fetched)
            with self._lock:
                held = sum(len(b) for b in self._files.values())
                for rel, data in fetched.items():
                    if held + len(data) <= _KEPT_FILE_BYTES:
                        self._files[rel] = data
                        held += len(data)
        return kept

    def _hfile(self, fs: HudiFileSlice, files: dict[str, bytes]) -> HFileReader:
        rel = fs.base_file_relative_path()
        data = files.get(rel)
        if data is not None:
            return HFileReader.from_bytes(data, self.storage.uri(rel))
        size = int(fs.base_file_size or 0) or self.storage.size(rel)
        return HFileReader.from_range_reader(
            size, lambda start, end: self.storage.read_range(rel, start, end), self.storage.uri(rel)
        )

    def _slice_records(
        self,
        fs: HudiFileSlice,
        keys: set[str] | None,
        prefixes: tuple[str, ...] | None,
        files: dict[str, bytes],
    ) -> dict[str, dict[str, Any] | None]:
        """Merged records of one file slice, limited to ``keys`` or ``prefixes`` if given."""

        def wanted(k: str) -> bool:
            if keys is not None:
                return k in keys
            if prefixes is not None:
                return k.startswith(prefixes)
            return True

        merged: dict[str, dict[str, Any] | None] = {}

        def add(key: str, record: dict[str, Any] | None) -> None:
            merged[key] = _merge(merged.get(key), record)

        if fs.base_file_name:
            reader = self._hfile(fs, files)
            schema = reader.avro_schema
            if schema is None:
                raise HudiCorruptFileError(f"Metadata HFile {reader.where} has no schema in its file info")
            if keys is not None:
                cells = list(reader.get_many(k.encode() for k in keys).items())
            elif prefixes is not None:
                cells = list(reader.scan_prefixes(p.encode() for p in prefixes))
            else:
                cells = list(reader.scan())
            for row, value in cells:
                key = row.decode("utf-8")
                add(key, {**decode_record(value, schema, reader.where), "key": key})
        for block in self._log_blocks(fs, files):
            if block.block_type is BlockType.DELETE:
                for key in decode_delete_block(block).keys:
                    if wanted(key):
                        add(key, None)
            elif block.block_type is BlockType.HFILE_DATA:
                inner = HFileReader.from_bytes(bytes(block.content), block.where())
                schema = block.schema or inner.avro_schema
                if schema is None:
                    raise HudiCorruptFileError(f"{block.where()} has no schema")
                for row, value in inner.scan():
                    key = row.decode("utf-8")
                    if wanted(key):
                        add(key, {**decode_record(value, schema, block.where()), "key": key})
        return merged

    def _log_blocks(self, fs: HudiFileSlice, files: dict[str, bytes] | None = None) -> list[LogBlock]:
        """Delete and data blocks of a slice's logs that apply: those of valid
        instants that no rollback command block (as 0.x writers append) undid."""

        def raw(rel: str) -> bytes:
            data = files.get(rel) if files else None
            return data if data is not None else self.storage.read_bytes(rel)

        blocks = (read_log_blocks(raw(rel), self.storage.uri(rel)) for rel in fs.log_files_relative_paths())
        return LogScanner(self._valid.sees).scan(blocks)

    def records(
        self,
        partition: str,
        keys: Iterable[str] | None = None,
        prefixes: Iterable[str] | None = None,
        routed_prefixes: bool = False,
    ) -> dict[str, dict[str, Any]]:
        """Live records of an MDT partition (all, or by exact keys, or by key prefixes).

        ``routed_prefixes``: each prefix's records sit in the file group the prefix
        itself hashes to (so only those are read), as in version 2 secondary indexes.
        """
        slices = self._file_slices(partition)
        if not slices:
            return {}
        out: dict[str, dict[str, Any]] = {}
        work: list[tuple[HudiFileSlice, set[str] | None, tuple[str, ...] | None]]
        if keys is not None:
            by_group: dict[int, set[str]] = {}
            for k in keys:
                by_group.setdefault(hashing.file_group_index(k, len(slices)), set()).add(k)
            work = [(slices[i], ks, None) for i, ks in by_group.items()]
        elif prefixes is not None and routed_prefixes:
            by_prefix: dict[int, list[str]] = {}
            for p in prefixes:
                by_prefix.setdefault(hashing.file_group_index(p, len(slices)), []).append(p)
            work = [(slices[i], None, tuple(ps)) for i, ps in sorted(by_prefix.items())]
        else:
            pre = tuple(prefixes) if prefixes is not None else None
            work = [(s, None, pre) for s in slices]
        files = self._fetch_slices(fs for fs, _, _ in work)
        for fs, ks, pre in work:
            for key, rec in self._slice_records(fs, ks, pre, files).items():
                if rec is not None:
                    out[key] = rec
        return out

    # -- typed views -----------------------------------------------------------------

    def partition_paths(self) -> list[str]:
        rec = self.records(FILES, keys=[ALL_PARTITIONS_KEY]).get(ALL_PARTITIONS_KEY)
        if rec is None:
            return []
        paths = sorted("" if p == NON_PARTITIONED else p for p in live_files(rec))
        for p in paths:
            # Partitions are listed and their files read: a crafted record must
            # not point the read outside the table.
            if p:
                check_metadata_path(p, "Partition", self._where(ALL_PARTITIONS_KEY), self._data_base_url)
        return paths

    @property
    def _data_base_url(self) -> str:
        return self.storage.base_url.removesuffix("/" + METADATA_PATH)

    def _where(self, key: str) -> str:
        return f"record {key!r} of the {FILES!r} partition of the metadata table {self.storage.base_url}"

    def files(self, partitions: Iterable[str]) -> dict[str, list[FileInfo]]:
        wanted = {NON_PARTITIONED if p == "" else p: p for p in partitions}
        recs = self.records(FILES, keys=list(wanted))
        out: dict[str, list[FileInfo]] = {}
        base = self._data_base_url
        for key, partition in wanted.items():
            rec = recs.get(key)
            files = live_files(rec) if rec else {}
            where = self._where(key)
            for n in files:
                check_file_name(n, "File name", where, base)
            out[partition] = [
                FileInfo(name=n, path=f"{partition}/{n}" if partition else n, size=s, is_dir=False)
                for n, s in sorted(files.items())
            ]
        return out

    def column_stats(
        self, columns: Iterable[str], partitions: Iterable[str], schema: pa.Schema
    ) -> dict[tuple[str, str], dict[str, ColumnStats]]:
        """(partition, file name) -> column -> stats for the files of ``partitions``.

        Keys start with the column's and the partition's hash, so each
        (column, partition) pair is one prefix scan of the index.
        """
        cols = [c for c in columns if schema.get_field_index(c) >= 0]
        if not cols or not self.has(COLUMN_STATS):
            return {}
        by_id = {hashing.partition_id(p): p for p in partitions}
        prefixes = [hashing.column_id(c) + pid for c in cols for pid in by_id]
        out: dict[tuple[str, str], dict[str, ColumnStats]] = {}
        for key, rec in self.records(COLUMN_STATS, prefixes=prefixes).items():
            cs = rec.get("ColumnStatsMetadata") or {}
            column = cs.get("columnName")
            partition = by_id.get(key[12:24])
            if column not in cols or partition is None:
                continue
            stats = to_column_stats(rec, schema.field(column).type)
            if stats is not None:
                out.setdefault((partition, cs.get("fileName") or ""), {})[column] = stats
        return out

    def column_stats_of_files(
        self, columns: Iterable[str], files: Iterable[tuple[str, str]], schema: pa.Schema
    ) -> dict[tuple[str, str], dict[str, ColumnStats]]:
        """Like ``column_stats``, for the given (partition, file name) pairs only: looked up
        by exact keys, so a handful of files does not cost a scan of their partitions.
        Files the key lookup misses (an index whose file groups split keys another way)
        are looked for by scanning their partitions."""
        cols = [c for c in columns if schema.get_field_index(c) >= 0]
        if not cols or not self.has(COLUMN_STATS):
            return {}
        wanted = {hashing.column_stats_key(c, p, n): (c, p, n) for c in cols for p, n in files}
        out: dict[tuple[str, str], dict[str, ColumnStats]] = {}
        for key, rec in self.records(COLUMN_STATS, keys=list(wanted)).items():
            column, partition, name = wanted[key]
            cs = rec.get("ColumnStatsMetadata") or {}
            stats = to_column_stats(rec, schema.field(column).type)
            if cs.get("columnName") == column and stats is not None:
                out.setdefault((partition, name), {})[column] = stats
        missed = {(p, n) for _, p, n in wanted.values() if not set(cols) <= out.get((p, n), {}).keys()}
        if missed:
            for where, by_column in self.column_stats(cols, {p for p, _ in missed}, schema).items():
                if where in missed:
                    for column, stats in by_column.items():
                        out.setdefault(where, {}).setdefault(column, stats)
        return out

    def partition_stats(self, columns: Iterable[str], schema: pa.Schema) -> dict[str, dict[str, ColumnStats]]:
        """partition -> column -> stats."""
        cols = [c for c in columns if schema.get_field_index(c) >= 0]
        if not cols or not self.has(PARTITION_STATS):
            return {}
        out: dict[str, dict[str, ColumnStats]] = {}
        recs = self.records(PARTITION_STATS, prefixes=[hashing.column_id(c) for c in cols])
        for rec in recs.values():
            cs = rec.get("ColumnStatsMetadata") or {}
            column = cs.get("columnName")
            if column not in cols:
                continue
            stats = to_column_stats(rec, schema.field(column).type)
            if stats is not None:
                partition = cs.get("fileName") or ""
                out.setdefault("" if partition == NON_PARTITIONED else partition, {})[column] = stats
        return out

    def partition_exists(self, partition: str) -> bool:
        """True when the partition is listed as complete and has file groups."""
        if not self.has(partition):
            return False
        try:
            return bool(self._file_slices(partition))
        except HudiFileNotFoundError:
            return False  # listed, but its folder is gone

    def secondary_index_keys(self, index: SecondaryIndexDefinition, values: Iterable[str]) -> dict[str, set[str]]:
        """Stored value -> the record keys whose rows hold it, by the secondary index
        ``index``; pairs deleted since (tombstones in later logs) are left out."""
        prefixes = {secondary_index.value_prefix(v): v for v in values}
        out: dict[str, set[str]] = {v: set() for v in prefixes.values()}
        if not prefixes:
            return out
        found = self.records(index.partition, prefixes=sorted(prefixes), routed_prefixes=index.routed_by_value)
        for key, rec in found.items():
            if (rec.get("SecondaryIndexMetadata") or {}).get("isDeleted"):
                continue
            escaped, record_key = secondary_index.split_key(key)
            value = prefixes.get(escaped + secondary_index.SEPARATOR)
            if value is not None:
                out[value].add(record_key)
        return out

    def bloom_filters(self, files: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, bytes]]:
        """(partition, base file name) -> (type code, Base64 text) of the files' bloom
        filters in the ``bloom_filters`` partition; files it holds none for (or a
        tombstone, once cleaned) are left out."""
        if not self.has(BLOOM_FILTERS):
            return {}
        wanted = {hashing.bloom_filter_key(p, n): (p, n) for p, n in files}
        out: dict[tuple[str, str], tuple[str, bytes]] = {}
        for key, rec in self.records(BLOOM_FILTERS, keys=list(wanted)).items():
            meta = rec.get("BloomFilterMetadata") or {}
            payload = meta.get("bloomFilter")
            if key in wanted and not meta.get("isDeleted") and isinstance(payload, bytes) and payload:
                out[wanted[key]] = (str(meta.get("type") or ""), payload)
        return out

    def record_locations(self, keys: Iterable[str]) -> dict[str, RecordLocation]:
        if not self.has(RECORD_INDEX):
            return {}
        out = {}
        for key, rec in self.records(RECORD_INDEX, keys=list(keys)).items():
            loc = record_location(rec)
            if loc is not None:
                out[key] = loc
        return out
