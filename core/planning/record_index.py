"""When the record index may prune a key lookup.

The record index keeps one location per record key. A table can still hold a key in
two file groups: an INSERT or BULK_INSERT writes without looking the key up, so a key
the table already holds gets a second copy (the index then names only one of them),
and so can an upsert under a non-global write index when a key's partition value
changes (that write counts the record as an insert). Writes that update or delete
records in place, compaction and clustering (which moves records and their index
entries together) put no key anywhere twice.

So every second copy of a key starts in a file some write reported inserting into:
a suspect file. Only the table's first write is not suspect: the table was empty,
and while the record index is maintained Hudi refuses a commit that gives one key
two locations. A key lookup may use the record index only when no suspect file can
hold the key by its column stats; a suspect file without stats (cleaned, or never
indexed) may hold anything. Suspect files are known from the commit metadata of every
write, the archived history's included; when that cannot be read the index is not used.

Keys are looked up as the key generator stored them: the raw value for a single key
field under the simple, timestamp and non-partitioned key generators; ``field:value``
pairs joined by ``,`` for several key fields, and only when every key field has an
equality filter; the ``_hoodie_record_key`` value as given. Other key generators (a
complex one over a single field stores either form, by version) are not looked up.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_ray.core.base_file import LANCE, PARQUET, base_file_format, base_file_reader, parse_base_file_name
from hudi_ray.core.config import TableConfig
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.expr import ExprOperator, Filter
from hudi_ray.core.expr.stats import ColumnStats, may_match
from hudi_ray.core.file_group import HudiFileSlice, parse_log_file_name
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file.keys import data_block_keys
from hudi_ray.core.metadata import BOOTSTRAP_PREFIX, COLUMN_STATS, RECORD_INDEX, MetadataTable, RecordLocation
from hudi_ray.core.metadata.hashing import column_stats_key
from hudi_ray.core.metadata.records import to_column_stats
from hudi_ray.core.schema.avro import RECORD_KEY
from hudi_ray.core.storage import Storage
from hudi_ray.core.timeline import HudiInstant, HudiTimeline
from hudi_ray.core.timeline.instant import DELTA_COMMIT
from hudi_ray.core.timeline.timeline import archive_errors
from hudi_ray.core.timeline.write_files import WriteFiles
from hudi_ray.core.util.locks import FreshLock
from hudi_ray.core.util.pools import io_map

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")

log = logging.getLogger(__name__)

# Indexed writes: only files that report inserts are suspect. Any other write
# (INSERT, BULK_INSERT, INSERT_OVERWRITE, an unknown one) places records without
# an index lookup: every file it wrote is suspect.
_INDEXED = frozenset({"UPSERT", "UPSERT_PREPPED", "DELETE", "DELETE_PREPPED", "DELETE_PARTITION"})
# Table services: they rewrite records that are already in the table, and the
# record index follows records clustering moves.
_RELOCATING = frozenset({"COMPACT", "LOG_COMPACT", "CLUSTER"})

# Key generators that store a single key field's value as it is.
_RAW_KEYGENS = frozenset(
    {
        "SIMPLE",
        "TIMESTAMP",
        "NON_PARTITION",
        "SimpleKeyGenerator",
        "SimpleAvroKeyGenerator",
        "TimestampBasedKeyGenerator",
        "TimestampBasedAvroKeyGenerator",
        "NonpartitionedKeyGenerator",
        "NonpartitionedAvroKeyGenerator",
    }
)
# Hudi's placeholders for null and empty values in composite keys.
_COMPOSITE_PLACEHOLDERS = frozenset({"__null__", "__empty__", ""})
_MAX_COMPOSITE_KEYS = 10_000


def _maintained_record_index(first: HudiInstant, mdt: MetadataTable) -> bool:
    """True when the metadata table's commit of the table's first write updated the
    record index, i.e. the write went through the index's one-location-per-key check."""
    timeline = mdt.timeline
    for instant in timeline.instants:
        if instant.timestamp == first.timestamp and instant.action == DELTA_COMMIT:
            return RECORD_INDEX in (timeline.get_instant_metadata(instant).get("partitionToWriteStats") or {})
    if timeline.is_archived(first.timestamp):
        # The metadata table archives its own commits: its commit of the first write is there.
        for instant in timeline.archived_data_instants():
            if instant.timestamp == first.timestamp and instant.action == DELTA_COMMIT:
                return RECORD_INDEX in (timeline.get_instant_metadata(instant).get("partitionToWriteStats") or {})
    return False


def every_write(timeline: HudiTimeline, what: str, mdt: MetadataTable | None = None) -> list[HudiInstant] | None:
    """Every completed data instant of the table, the archived ones first; None (with
    a warning) when the archived history cannot be read, or is gone while the active
    timeline or the metadata table shows that instants were archived: their writes are
    then unknown."""
    try:
        if timeline.archive.is_present():
            return timeline.archived_data_instants() + timeline.data_instants
        lost = timeline.rewrote_history() or _older_metadata_commit(timeline, mdt)
    except archive_errors() as exc:
        log.warning("%s not used: the archived history at %s cannot be read: %s", what, timeline.archive.location, exc)
        return None
    if lost is not None:
        where = timeline.archive.location
        log.warning("%s not used: instants were archived (%s), and the archive at %s is gone", what, lost, where)
        return None
    return timeline.data_instants


def _older_metadata_commit(timeline: HudiTimeline, mdt: MetadataTable | None) -> str | None:
    """A metadata-table commit of a data instant older than the active data timeline (the
    metadata table's own initialization aside), which the data table then archived."""
    start = timeline.start
    if mdt is None or start is None:
        return None
    for instant in mdt.timeline.instants:
        if instant.timestamp < start and not instant.timestamp.startswith(BOOTSTRAP_PREFIX):
            return f"the metadata table holds commit {instant.timestamp}"
    if mdt.timeline.archive.is_present():
        return f"the metadata table archived commits before {start}"
    return None


def suspect_files(
    storage: Storage, config: TableConfig, timeline: HudiTimeline, mdt: MetadataTable
) -> dict[str, set[str]] | None:
    """partition -> names of files that may hold a copy of a key the record index does
    not point at; None when not every write of the table is known."""
    instants = every_write(timeline, "The record index", mdt)
    if instants is None:
        return None
    try:
        if instants and _maintained_record_index(instants[0], mdt):
            instants = instants[1:]
        files = timeline.write_files(instants)
        out: dict[str, set[str]] = {}
        for row in np.flatnonzero(_placing(files)).tolist():
            out.setdefault(files.partition[row], set()).add(files.name[row])
    except archive_errors() as exc:
        log.warning(
            "The record index not used: an archived commit in %s cannot be read: %s", timeline.archive.location, exc
        )
        return None
    return out


def _relocating(files: WriteFiles) -> np.ndarray:
    """Rows (bool) of the files table services wrote: they move records already in the table."""
    relocating = np.array([str(op or "").upper() in _RELOCATING for op in files.operations], dtype=bool)
    return relocating[files.instant] if len(files.name) else np.zeros(0, dtype=bool)


def _placing(files: WriteFiles) -> np.ndarray:
    """Rows (bool) of the files writes placed records in without finding their keys
    first: every file of a write that does not look keys up, and files of the others
    that report inserts (or no insert count). Table services move records only."""
    every_file = np.array([str(op or "").upper() not in _INDEXED for op in files.operations], dtype=bool)
    if not len(files.name):
        return np.zeros(0, dtype=bool)
    return ~_relocating(files) & (every_file[files.instant] | (files.inserts != 0))


def duplicated_keys(
    storage: Storage, timeline: HudiTimeline, mdt: MetadataTable, key_field: str, max_keys: int
) -> frozenset[str] | None:
    """Record keys that may have had two copies at once in the table: keys found in the
    files of two file groups, among the files writes placed records in (``_placing``, the
    table's first write included) and every log file a write appended to, or twice in one
    of those base files. None when that is not known: a write is unknown, such a file is
    gone (cleaned) or does not decode, or they hold more than ``max_keys`` keys.

    Every copy of a key starts in such a file (a log file too: some writers count a new
    key in a log as an update), and a file group's later files restate its records, so a
    key found in one file group's files alone never had a second copy elsewhere.
    Clustering, which spreads a file group's records over new ones, moves the record
    index entry with its one copy; a log's records merge by key, so a key twice in a log
    is one record.
    """
    instants = every_write(timeline, "The duplicate-key check", mdt)
    if instants is None:
        return None
    try:
        files = timeline.write_files(instants)
    except archive_errors() as exc:
        log.warning("The duplicate-key check not made: an archived commit cannot be read: %s", exc)
        return None
    relocating = _relocating(files)
    placing = _placing(files)
    groups: dict[tuple[str, str], int] = {}
    bases: dict[str, int] = {}  # relative path -> its file group's number
    logs: dict[str, int] = {}
    for row in range(len(files.name)):
        name = files.name[row]
        is_log = parse_log_file_name(name) is not None
        if not (placing[row] or (is_log and not relocating[row])):
            continue
        group = groups.setdefault((files.partition[row], files.file_id[row]), len(groups))
        rel = f"{files.partition[row]}/{name}" if files.partition[row] else name
        if is_log:
            logs[rel] = group
        elif base_file_format(name) in (PARQUET, LANCE) and parse_base_file_name(name) is not None:
            bases[rel] = group
        else:
            return None  # a file of a format whose keys are not read here
    base_paths, log_paths = sorted(bases), sorted(logs)
    try:
        counts = io_map(lambda rel: base_file_reader(storage, rel).num_rows(rel), base_paths)
        if sum(counts) > max_keys:
            log.info("The duplicate-key check not made: %d keys to read, above %d", sum(counts), max_keys)
            return None
        tables = io_map(lambda rel: base_file_reader(storage, rel).read(rel, [key_field]), base_paths)
        columns = [t.column(key_field) if key_field in t.column_names else None for t in tables]
        columns += io_map(lambda rel: data_block_keys(storage.read_bytes(rel), storage.uri(rel), key_field), log_paths)
    except HudiCoreError as exc:
        log.info("The duplicate-key check not made: %s", exc)
        return None
    if any(c is None for c in columns) or sum(len(c) for c in columns if c is not None) > max_keys:
        return None
    try:
        keys = pa.chunked_array([c.cast(pa.large_string()) for c in columns if c is not None], pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    lengths = np.array([len(c) for c in columns if c is not None], dtype=np.int64)
    paths = base_paths + log_paths
    owner = {**bases, **logs}
    table = pa.table(
        {
            "key": keys,
            "group": np.repeat(np.array([owner[p] for p in paths], dtype=np.int64), lengths),
            "file": np.repeat(np.arange(len(paths), dtype=np.int64), lengths),
        }
    )
    spread = table.group_by("key").aggregate([("group", "count_distinct")])
    in_bases = table.slice(0, int(lengths[: len(base_paths)].sum()))
    twice = in_bases.group_by(["key", "file"]).aggregate([("group", "count")])
    out = set(spread.filter(pc.greater(spread["group_count_distinct"], 1))["key"].to_pylist())
    out |= set(twice.filter(pc.greater(twice["group_count"], 1))["key"].to_pylist())
    return frozenset(out)


def value_suspect_files(
    storage: Storage, config: TableConfig, timeline: HudiTimeline, mdt: MetadataTable
) -> dict[str, set[str]] | None:
    """partition -> names of files whose column values a secondary index may not pair
    with the record index's location of their key; None when not every write is known.

    A second copy of a key, and every later write to the file group holding it, can
    change what the secondary index holds for that key while the record index names
    the other copy: an update of the copy (the index drops the old value's pair, which
    the other copy may still hold) or its removal. So these are every file written
    into a file group that ever took a suspect file, following clustering, which
    moves a file group's records into new ones.
    """
    suspects = suspect_files(storage, config, timeline, mdt)
    if suspects is None:
        return None
    names = {(p, n) for p, ns in suspects.items() for n in ns}
    if not names:
        return {}  # nothing taints a file group, so no write follows one
    tainted: set[tuple[str, str]] = set()
    out: dict[str, set[str]] = {}
    instants = every_write(timeline, "The secondary indexes", mdt)
    if instants is None:
        return None
    files = timeline.write_files(instants)
    order = np.argsort(files.instant, kind="stable")
    bounds = np.searchsorted(files.instant[order], np.arange(len(instants) + 1))
    for place, instant in enumerate(instants):
        rows = order[bounds[place] : bounds[place + 1]].tolist()
        replaced = timeline.replaced_file_ids(instant)
        if any((p, f) in tainted for p, ids in replaced.items() for f in ids):
            # The replaced groups' records may now be in any group this instant wrote.
            tainted |= {(files.partition[r], files.file_id[r]) for r in rows}
        for r in rows:
            group = (files.partition[r], files.file_id[r])
            name = files.name[r]
            if (group[0], name) in names:
                tainted.add(group)
            if group in tainted:
                out.setdefault(group[0], set()).add(name)
    return out


# -- which keys a filter names --------------------------------------------------------


@dataclass(frozen=True)
class KeyLookup:
    """The stored record keys a read's filters allow, and the filters they come from.

    ``encoded``: the keys were composed from several key fields; when none of them is
    found, the composition is not proven to match what the writer stored.
    """

    keys: frozenset[str]
    filters: tuple[Filter, ...]
    encoded: bool


def _key_values(field: pa.Field | None, values: set[str]) -> set[str] | None:
    """``values`` as a key generator renders them, for types rendered unambiguously."""
    if field is None:
        return None
    if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
        return values
    if pa.types.is_integer(field.type):
        try:
            return {str(int(v)) for v in values}
        except ValueError:
            return None
    return None  # decimals, dates, timestamps: Java's rendering is not reproduced here


def key_lookup(config: TableConfig, filters: list[Filter], schema: pa.Schema) -> KeyLookup | None:
    """The record keys an index lookup may use for these filters; None when they name
    no key exactly or the stored form of the key is not known."""
    by_field: dict[str, set[str]] = {}
    used: dict[str, list[Filter]] = {}
    for f in filters:
        if f.operator in (ExprOperator.Eq, ExprOperator.In):
            values = set(f.values)
            by_field[f.field] = by_field[f.field] & values if f.field in by_field else values
            used.setdefault(f.field, []).append(f)
    key_fields = config.record_key_fields
    exact = by_field.get(RECORD_KEY)
    composed: set[str] | None = None
    fields_used: list[str] = []
    encoded = False
    fields = [schema.field(k) if schema.get_field_index(k) >= 0 else None for k in key_fields]
    if len(key_fields) == 1 and config.key_generator in _RAW_KEYGENS and key_fields[0] in by_field:
        composed = _key_values(fields[0], by_field[key_fields[0]])
        fields_used = key_fields if composed is not None else []
    elif len(key_fields) > 1 and all(k in by_field for k in key_fields):
        parts = [_key_values(f, by_field[k]) for f, k in zip(fields, key_fields)]
        if all(p is not None and not (p & _COMPOSITE_PLACEHOLDERS) for p in parts):
            ordered = [sorted(p or ()) for p in parts]
            if math.prod(len(p) for p in ordered) <= _MAX_COMPOSITE_KEYS:
                composed = {
                    ",".join(f"{k}:{v}" for k, v in zip(key_fields, combo)) for combo in itertools.product(*ordered)
                }
                fields_used, encoded = key_fields, True
    if exact is None and composed is None:
        return None
    if exact is None:
        keys = composed
    elif composed is None:
        keys = exact
    else:
        keys = exact & composed
    chosen = [f for name in [*fields_used, *([RECORD_KEY] if exact is not None else [])] for f in used[name]]
    return KeyLookup(frozenset(keys or ()), tuple(chosen), encoded)


# -- whether the record index names every copy ----------------------------------------


class RecordIndexGuard:
    """Per table: whether the record index alone may locate a lookup's keys.

    The suspect files and their column stats per key column are fetched once and
    kept: the table's timeline and metadata table do not change under it.
    """

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        timeline: HudiTimeline,
        mdt: MetadataTable,
        max_checked_keys: int = 5_000_000,
    ) -> None:
        self._storage = storage
        self._config = config
        self._timeline = timeline
        self._mdt = mdt
        self._max_checked_keys = max_checked_keys
        self._lock = FreshLock()
        self._files: dict[str, dict[str, set[str]] | None] = {}
        self._stats: dict[tuple[str, str], dict[tuple[str, str], ColumnStats]] = {}
        self._duplicates: frozenset[str] | None = None
        self._checked = False

    def _known(self, kind: str) -> dict[str, set[str]] | None:
        with self._lock:
            if kind not in self._files:
                find = suspect_files if kind == "keys" else value_suspect_files
                self._files[kind] = find(self._storage, self._config, self._timeline, self._mdt)
            return self._files[kind]

    def suspects(self) -> dict[str, set[str]] | None:
        """Files that may hold a second copy of a key (see ``suspect_files``)."""
        return self._known("keys")

    def value_suspects(self) -> dict[str, set[str]] | None:
        """Files whose values a secondary index may miss (see ``value_suspect_files``)."""
        return self._known("values")

    @property
    def key_filter_field(self) -> str | None:
        """The column whose values are the stored record keys: the key meta field,
        else a single key field its key generator stores as it is."""
        if self._config.populates_meta_fields:
            return RECORD_KEY
        fields = self._config.record_key_fields
        if len(fields) == 1 and self._config.key_generator in _RAW_KEYGENS:
            return fields[0]
        return None

    def prune(
        self, slices: list[HudiFileSlice], filters: list[Filter], schema: pa.Schema
    ) -> list[HudiFileSlice] | None:
        """The slices of the file groups holding the filters' keys; None when no filter
        names keys as stored, or the index may not name every copy of them."""
        lookup = key_lookup(self._config, filters, schema)
        if lookup is None:
            return None
        if not self.allows(lookup, schema):
            log.debug("Record index of %s not used: a write may have copied these keys", self._storage.base_url)
            return None
        located = self._mdt.record_locations(lookup.keys)
        if lookup.encoded and not located:
            return None  # keys composed from several fields: finding none proves no encoding
        return self.slices_of(located.values(), slices)

    @staticmethod
    def slices_of(locations: Iterable[RecordLocation], slices: list[HudiFileSlice]) -> list[HudiFileSlice] | None:
        """The slices of the file groups ``locations`` name; None when one of them is in a
        listed partition but not in the listing (a stale index)."""
        wanted = {(loc.partition, loc.file_id) for loc in locations}
        live = {(s.partition_path, s.file_id) for s in slices}
        partitions = {p for p, _ in live}
        if any(p in partitions and (p, f) not in live for p, f in wanted):
            return None  # the index names a file group the listing does not hold: stale
        return [s for s in slices if (s.partition_path, s.file_id) in wanted]

    def duplicates(self) -> frozenset[str] | None:
        """Keys that may have had two copies (see ``duplicated_keys``), checked once;
        None when not known."""
        with self._lock:
            if not self._checked:
                field = self.key_filter_field
                if field is not None:
                    self._duplicates = duplicated_keys(
                        self._storage, self._timeline, self._mdt, field, self._max_checked_keys
                    )
                self._checked = True
            return self._duplicates

    def allows(self, lookup: KeyLookup, schema: pa.Schema) -> bool:
        """True when no suspect file can hold one of the lookup's keys by its stats, or
        none of them ever had a second copy."""
        if self._none_may_match("keys", lookup.filters, schema):
            return True
        duplicates = self.duplicates()
        return duplicates is not None and not (lookup.keys & duplicates)

    def values_allowed(self, filters: Sequence[Filter], schema: pa.Schema) -> bool:
        """True when no key ever had a second copy (the indexes then pair every value
        with its key's one location); where that is not known, when no file whose values
        a secondary index may miss can hold a row matching ``filters`` by its stats."""
        duplicates = self.duplicates()
        if duplicates is not None:
            return not duplicates
        return self._none_may_match("values", filters, schema)

    def _none_may_match(self, kind: str, filters: Sequence[Filter], schema: pa.Schema) -> bool:
        suspects = self._known(kind)
        if suspects is None:
            return False
        files = [(p, n) for p, names in suspects.items() for n in names]
        if not files:
            return True
        columns = sorted({f.field for f in filters})
        if not columns:
            return False  # nothing to tell a suspect file's rows apart by
        stats = {c: self._column_stats(kind, c, suspects, schema) for c in columns}
        for file in files:
            # An insert may have given the key a copy the index does not name; a
            # file without stats (cleaned, never indexed) may have held anything.
            if any(file not in stats[c] for c in columns):
                return False
            if may_match(list(filters), {c: stats[c][file] for c in columns}, schema):
                return False
        return True

    def _column_stats(
        self, kind: str, column: str, suspects: dict[str, set[str]], schema: pa.Schema
    ) -> dict[tuple[str, str], ColumnStats]:
        with self._lock:
            cached = self._stats.get((kind, column))
        if cached is not None:
            return cached
        out: dict[tuple[str, str], ColumnStats] = {}
        idx = schema.get_field_index(column)
        if idx >= 0 and self._mdt.has(COLUMN_STATS):
            dtype = schema.field(idx).type
            wanted = {column_stats_key(column, p, n): (p, n) for p, names in suspects.items() for n in names}
            for key, rec in self._mdt.records(COLUMN_STATS, keys=list(wanted)).items():
                cs = rec.get("ColumnStatsMetadata") or {}
                where = wanted.get(key)
                stats = to_column_stats(rec, dtype)
                if where is not None and cs.get("columnName") == column and stats is not None:
                    out[where] = stats
            # A key lookup that missed (an index whose file groups split keys another
            # way) falls back to scanning the partitions of the files it missed.
            files = set(wanted.values())
            missed = {p for p, n in files if (p, n) not in out}
            if missed:
                for where, by_column in self._mdt.column_stats([column], missed, schema).items():
                    if where in files and column in by_column:
                        out.setdefault(where, by_column[column])
        with self._lock:
            self._stats[(kind, column)] = out
        return out
