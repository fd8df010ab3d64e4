"""Pruners of file slices (see ``pruning``): the record index, bloom filters, the
secondary indexes, footer statistics and the metadata table's column stats.
Loaded only for reads with filters, and each index's machinery only when asked.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hudi_ray.core.base_file import (
    LANCE,
    PARQUET,
    FooterCache,
    LanceReader,
    ParquetReader,
    base_file_format,
    footer_bounds,
    is_parquet,
)
from hudi_ray.core.bloom import (
    FOOTER_KEY,
    LEGACY_FOOTER_KEY,
    TYPE_CODE_KEY,
    BloomFilter,
    BloomKeys,
    decode_bloom_filter,
)
from hudi_ray.core.config import TableConfig
from hudi_ray.core.config.table_config import BLOOM_FILTERS, COLUMN_STATS
from hudi_ray.core.exceptions import HudiCoreError, HudiCorruptFileError, HudiFileNotFoundError
from hudi_ray.core.expr import Filter
from hudi_ray.core.expr.stats import may_match, may_match_each
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file.keys import data_block_keys
from hudi_ray.core.planning.explain import PlanExplain
from hudi_ray.core.planning.pruning import Pruner, index_or_none
from hudi_ray.core.planning.record_index import RecordIndexGuard, key_lookup
from hudi_ray.core.planning.secondary_index import SecondaryIndexes, SecondaryIndexVerdict
from hudi_ray.core.storage import Storage
from hudi_ray.core.util.pools import io_map

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc

    from hudi_ray.core.metadata import MetadataTable
else:
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")

log = logging.getLogger(__name__)


def _partitions_of(slices: Sequence[HudiFileSlice]) -> int:
    return len({s.partition_path for s in slices})


def _file_names(s: HudiFileSlice) -> list[str]:
    return ([s.base_file_name] if s.base_file_name else []) + list(s.log_file_names)


# Column stats of at most this many (file, column) pairs are looked up by key; more
# are found by scanning their partitions' stats, which reads each stats file once.
_EXACT_STATS_KEYS = 512


class RecordIndexPruner:
    """Only the file groups holding the keys of ``key = x`` / ``key IN (...)``
    filters, when the record index may decide (see ``record_index``)."""

    def __init__(self, guard: RecordIndexGuard, filters: list[Filter], schema: pa.Schema) -> None:
        self._guard = guard
        self._filters = filters
        self._schema = schema
        self._decided = False

    def prune(self, items: list[HudiFileSlice], explain: PlanExplain) -> list[HudiFileSlice]:
        kept = index_or_none("record index", lambda: self._guard.prune(items, self._filters, self._schema))
        self._decided = kept is not None
        if kept is None:
            return items
        explain.add("record index", _partitions_of(kept), len(kept))
        return kept

    def decided(self) -> bool:
        """Whether the last ``prune`` kept exactly the file groups holding the keys."""
        return self._decided


class BloomFilterPruner:
    """Slices whose base file's bloom filter of record keys proves that none of the keys of
    ``key = x`` / ``key IN (...)`` filters is there. Used where no record index decided
    the lookup (``decided``: whether one did).

    Filters come from the metadata table's ``bloom_filters`` partition where it holds
    one for the file, else from the file itself: its Parquet footer or Lance schema
    metadata, where Apache Hudi writes one with every base file.

    A slice with log files is dropped when its base file's filter excludes every key and
    no data block of its logs holds one (their keys are read then, and kept with the footer
    facts). A base file without a filter is kept, as is one of another format, and one whose
    filter does not decode (with a warning: pruning costs, never rows). Keys composed from
    several fields are not looked up: that their stored form is right is not proven.
    """

    def __init__(
        self,
        storage: Storage,
        footers: FooterCache,
        config: TableConfig,
        filters: list[Filter],
        schema: pa.Schema,
        decided: Callable[[], bool] = lambda: False,
        mdt: MetadataTable | None = None,
    ) -> None:
        self._storage = storage
        self._footers = footers
        self._config = config
        self._filters = filters
        self._schema = schema
        self._decided = decided
        self._mdt = mdt

    def prune(self, items: list[HudiFileSlice], explain: PlanExplain) -> list[HudiFileSlice]:
        if self._decided():
            return items
        lookup = key_lookup(self._config, self._filters, self._schema)
        if lookup is None or lookup.encoded:
            return items
        keys = pa.array(sorted(lookup.keys), pa.large_string())
        candidates = [
            i
            for i, s in enumerate(items)
            if s.base_file_name and base_file_format(s.base_file_relative_path()) in (PARQUET, LANCE)
        ]
        blooms = self._filters_of([items[i] for i in candidates])
        probe = BloomKeys(keys)
        excluded = [i for i, bloom in zip(candidates, blooms) if not self._may_hold(bloom, probe)]
        # A slice whose base file lacks every key may still hold one in its log files.
        logged = [i for i in excluded if items[i].has_log_files()]
        in_logs = io_map(lambda i: self._logs_hold(items[i], keys), logged)
        dropped = set(excluded) - {i for i, held in zip(logged, in_logs) if held}
        kept = [s for i, s in enumerate(items) if i not in dropped]
        explain.add("bloom filters", _partitions_of(kept), len(kept))
        return kept

    def _logs_hold(self, s: HudiFileSlice, keys: pa.Array) -> bool:
        """Whether a data block of the slice's log files holds one of ``keys``, or that
        is not known (a log that does not decode: the read reports it)."""
        sizes = list(s.log_file_sizes)
        for n, rel in enumerate(s.log_files_relative_paths()):
            # Table version 6 appends to log files: a file's keys are kept for its size.
            cache_key = f"{rel}@{sizes[n]}" if n < len(sizes) and sizes[n] else None
            found = self._footers.derived(cache_key, _LOG_KEYS) if cache_key else None
            if found is None:
                try:
                    found = data_block_keys(self._storage.read_bytes(rel), self._storage.uri(rel))
                except HudiCoreError as exc:
                    log.warning("Not pruning by bloom filters: the keys of a log file are not known: %s", exc)
                    return True
                if cache_key:
                    self._footers.put_derived(cache_key, _LOG_KEYS, found, found.nbytes + 64)
            if len(found) and pc.any(pc.is_in(keys, value_set=found)).as_py():
                return True
        return False

    def _filters_of(self, slices: list[HudiFileSlice]) -> list[BloomFilter | None]:
        """Per slice, its base file's decoded filter, or None (none, or not decodable):
        decoded once per file and kept with its footer facts."""
        out: list[BloomFilter | None] = [None] * len(slices)
        missing: list[int] = []
        for place, s in enumerate(slices):
            cached = self._footers.derived(s.base_file_relative_path(), _BLOOM)
            if cached is None:
                missing.append(place)
            else:
                out[place] = cached if isinstance(cached, BloomFilter) else None
        found = self._texts_of([slices[place] for place in missing])
        for place, text in zip(missing, found):
            bloom = _decoded(text) if text is not None else None
            out[place] = bloom
            size = len(bloom.text) if bloom is not None else 64
            self._footers.put_derived(slices[place].base_file_relative_path(), _BLOOM, bloom or _NO_FILTER, size)
        return out

    def _texts_of(self, slices: list[HudiFileSlice]) -> list[tuple[bytes, str | None, str] | None]:
        """Per slice, its base file's filter: (Base64 text, type code, where it was read), or None.

        Hudi writes a file's filter into its footer and, with the ``bloom_filters`` partition,
        the same filter into the metadata table. On a local disk the footers are cheaper:
        their text is stored plain, the metadata table's is deflated (72 MB to inflate for
        2,000 filters of 5,000 keys). On an object store the metadata table's one file,
        read in ranges of many blocks, spares a request per base file. A file one source
        does not answer for is asked of the other."""
        out: list[tuple[bytes, str | None, str] | None] = [None] * len(slices)
        mdt = self._mdt
        indexed = mdt is not None and mdt.has(BLOOM_FILTERS)
        sources = [self._from_footers, self._from_metadata_table] if self._storage.is_local else [
            self._from_metadata_table, self._from_footers
        ]  # fmt: skip
        for source in sources if indexed else [self._from_footers]:
            rest = [place for place, text in enumerate(out) if text is None]
            if not rest:
                break
            for place, text in zip(rest, source([slices[place] for place in rest])):
                out[place] = text
        return out

    def _from_metadata_table(self, slices: list[HudiFileSlice]) -> list[tuple[bytes, str | None, str] | None]:
        """Per slice, its filter as the metadata table's ``bloom_filters`` partition holds it."""
        mdt = self._mdt
        assert mdt is not None
        files = [(s.partition_path, s.base_file_name) for s in slices]
        indexed = index_or_none(BLOOM_FILTERS, lambda: mdt.bloom_filters(files)) or {}
        out: list[tuple[bytes, str | None, str] | None] = []
        for s in slices:
            found = indexed.get((s.partition_path, s.base_file_name))
            where = f"the metadata table's bloom filter record of {self._storage.uri(s.base_file_relative_path())}"
            out.append(None if found is None else (found[1], found[0] or None, where))
        return out

    def _from_footers(self, slices: list[HudiFileSlice]) -> list[tuple[bytes, str | None, str] | None]:
        """Per slice, its filter as its base file's footer (Parquet) or schema (Lance) holds it."""
        parquet = ParquetReader(self._storage, self._footers)
        lance = LanceReader(self._storage)
        in_parquet = [place for place, s in enumerate(slices) if is_parquet(s.base_file_relative_path())]
        found = parquet.key_values_many(
            [slices[place].base_file_relative_path() for place in in_parquet],
            [slices[place].base_file_size for place in in_parquet],
        )
        metadata: dict[int, dict] = dict(zip(in_parquet, found))
        in_lance = [place for place in range(len(slices)) if place not in metadata]
        for place, schema in zip(
            in_lance, io_map(lambda at: lance.schema(slices[at].base_file_relative_path()), in_lance)
        ):
            metadata[place] = schema.metadata or {}
        out: list[tuple[bytes, str | None, str] | None] = []
        for place, s in enumerate(slices):
            meta = metadata[place]
            text = meta.get(FOOTER_KEY.encode()) or meta.get(LEGACY_FOOTER_KEY.encode())
            code = meta.get(TYPE_CODE_KEY.encode())
            where = f"the metadata of {self._storage.uri(s.base_file_relative_path())}"
            out.append(
                None if text is None else (text, bytes(code).decode("utf-8", "replace") if code else None, where)
            )
        return out

    @staticmethod
    def _may_hold(bloom: BloomFilter | None, keys: BloomKeys) -> bool:
        """False when the base file's filter proves none of ``keys`` is there."""
        if bloom is None:
            return True
        try:
            return bool(bloom.might_contain(keys).any())
        except HudiCorruptFileError as exc:
            log.warning("Not pruning by a bloom filter: %s", exc)
            return True


# What the footer cache keeps for a base file whose filter is absent or does not decode.
_BLOOM = "bloom filter"
_LOG_KEYS = "log record keys"
_NO_FILTER = object()


def _decoded(found: tuple[bytes, str | None, str]) -> BloomFilter | None:
    text, code, where = found
    try:
        return decode_bloom_filter(text, code, where)
    except HudiCorruptFileError as exc:
        log.warning("Not pruning by a bloom filter: %s", exc)
        return None


class SecondaryIndexPruner:
    """Only the file groups holding the rows of ``col = x`` / ``col IN (...)`` filters
    on a column with a secondary index, when the indexes may decide (see
    ``secondary_index``); the explain says which indexes chose, or why every file
    was kept."""

    def __init__(self, indexes: SecondaryIndexes, filters: list[Filter], schema: pa.Schema) -> None:
        self._indexes = indexes
        self._filters = filters
        self._schema = schema
        self._decided: tuple[Filter, ...] = ()

    def decided(self) -> tuple[Filter, ...]:
        """The filters the last ``prune`` decided: every row they allow lies in the slices it kept."""
        return self._decided

    def prune(self, items: list[HudiFileSlice], explain: PlanExplain) -> list[HudiFileSlice]:
        try:
            if not self._indexes.applies(self._filters):
                return items
            verdict = self._indexes.prune(items, self._filters, self._schema)
        except (HudiCorruptFileError, HudiFileNotFoundError) as exc:
            log.warning("Not pruning by the metadata table's secondary indexes: %s", exc)
            verdict = SecondaryIndexVerdict(items, (), f"an index file is damaged or missing: {exc}")
        self._decided = verdict.decided
        explain.add("secondary index", _partitions_of(verdict.slices), len(verdict.slices))
        if verdict.used:
            explain.note(f"secondary index: looked up in {', '.join(verdict.used)}")
        if verdict.kept_because:
            explain.note(f"secondary index kept every file: {verdict.kept_because}")
        return verdict.slices


class FooterStatsPruner:
    """Base-file-only slices whose Parquet footer proves no row matches.

    Slices with log files are kept: their logs may change any value. So are
    slices of other base file formats: a Lance file keeps no per-column
    min/max. Kept slices come back as copies carrying the footer's row count
    and size.
    """

    def __init__(self, storage: Storage, footers: FooterCache, data_filters: list[Filter], schema: pa.Schema) -> None:
        self._storage = storage
        self._footers = footers
        self._filters = data_filters
        self._schema = schema

    def prune(self, items: list[HudiFileSlice], explain: PlanExplain) -> list[HudiFileSlice]:
        if not self._filters:
            return items
        candidates = [
            i
            for i, s in enumerate(items)
            if not s.has_log_files() and s.base_file_name and is_parquet(s.base_file_relative_path())
        ]
        reader = ParquetReader(self._storage, self._footers)
        chosen = [items[i] for i in candidates]
        footers = reader.metadata_many(
            [s.base_file_relative_path() for s in chosen], [s.base_file_size for s in chosen]
        )
        stats = footer_bounds(footers, self._schema, {f.field for f in self._filters})
        keep = may_match_each(self._filters, stats, self._schema)
        kept: list[HudiFileSlice | None] = list(items)
        for i, s, md, k in zip(candidates, chosen, footers, keep):
            if not k:
                kept[i] = None
                continue
            size = sum(md.row_group(r).total_byte_size for r in range(md.num_row_groups))
            kept[i] = dataclasses.replace(s, num_records=md.num_rows, base_file_byte_size=size)
        out = [s for s in kept if s is not None]
        explain.add("footer stats", _partitions_of(out), len(out))
        return out


class ColumnStatsPruner:
    """Slices none of whose files (base and logs) can hold a match by the
    metadata table's column stats; where those cannot decide (no stats for
    these filters, or damaged index files) the ``fallback`` prunes instead.

    Filters an earlier stage decided (``decided``: the secondary index, whose kept
    slices each hold a value the filter allows) are not looked up: the stats of
    those slices cannot rule them out, so looking would cost and drop nothing.
    """

    def __init__(
        self,
        mdt: MetadataTable,
        data_filters: list[Filter],
        schema: pa.Schema,
        fallback: Pruner[HudiFileSlice],
        decided: Callable[[], Sequence[Filter]] = tuple,
    ) -> None:
        self._mdt = mdt
        self._filters = data_filters
        self._schema = schema
        self._fallback = fallback
        self._decided = decided

    def _verdict(self, slices: list[HudiFileSlice], filters: list[Filter]) -> list[HudiFileSlice] | None:
        if not filters or not self._mdt.has(COLUMN_STATS) or not slices:
            return None
        schema = self._schema
        columns = {f.field for f in filters}
        files = [(s.partition_path, n) for s in slices for n in _file_names(s)]
        if len(files) * len(columns) <= _EXACT_STATS_KEYS:
            stats = self._mdt.column_stats_of_files(columns, files, schema)
        else:
            stats = self._mdt.column_stats(columns, {s.partition_path for s in slices}, schema)

        def keep(s: HudiFileSlice) -> bool:
            for name in _file_names(s):
                file_stats = stats.get((s.partition_path, name))
                # A file the index does not cover, or a column it lacks, may hold anything.
                if file_stats is None or not columns <= file_stats.keys():
                    return True
                if may_match(filters, file_stats, schema):
                    return True
            return False

        return [s for s in slices if keep(s)]

    def prune(self, items: list[HudiFileSlice], explain: PlanExplain) -> list[HudiFileSlice]:
        decided = set(self._decided())
        filters = [f for f in self._filters if f not in decided]
        if self._filters and not filters:
            explain.add("column stats", _partitions_of(items), len(items))
            return items
        kept = index_or_none("column stats", lambda: self._verdict(items, filters))
        if kept is None:
            return self._fallback.prune(items, explain)
        explain.add("column stats", _partitions_of(kept), len(kept))
        return kept
