"""When a secondary index may prune a lookup on a non-key column.

``col = v`` and ``col IN (...)`` on a column with a secondary index name the record
keys whose rows hold those values; the record index names the file groups of those
keys. Only those file groups can hold a match, when:

* the index is declared, listed as complete and present, and no indexing instant
  is pending (one being built or rebuilt holds only part of the table);
* the record index is there to locate the keys, and holds every key found;
* the record index names every copy of the keys found (``RecordIndexGuard.allows``);
* no file whose values the index may not pair with the record index's location of
  their key (a second copy of a key, and later writes to its file group) can hold a
  match by its column stats (``RecordIndexGuard.values_allowed``). Once instants
  were archived and the archive cannot be read, not every such file is known and the
  index is not used.

The metadata table plans only snapshot reads of the latest state that it has caught
up with (``SnapshotScan``): time travel and incremental reads never get here. Where a
condition fails every file is kept, and the verdict says why.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_ray.core.config import TableConfig
from hudi_ray.core.expr import ExprOperator, Filter
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.metadata import RECORD_INDEX, MetadataTable, SecondaryIndexDefinition
from hudi_ray.core.metadata.secondary_index import definitions, stored_value
from hudi_ray.core.planning.record_index import KeyLookup, RecordIndexGuard
from hudi_ray.core.storage import Storage
from hudi_ray.core.timeline import HudiTimeline
from hudi_ray.core.util.locks import FreshLock

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

log = logging.getLogger(__name__)

INDEXING = "indexing"


@dataclass(frozen=True)
class SecondaryIndexVerdict:
    """The slices a lookup keeps, the indexes that chose them, and why every slice
    was kept when no index could decide."""

    slices: list[HudiFileSlice]
    used: tuple[str, ...] = ()
    kept_because: str | None = None
    # The filters the indexes decided: every row they allow lies in ``slices``.
    decided: tuple[Filter, ...] = ()


def _lookup_values(filters: Sequence[Filter], column: str) -> tuple[set[str] | None, list[Filter]]:
    """The values ``=`` and ``IN`` filters on ``column`` allow (their intersection), and those filters."""
    values: set[str] | None = None
    used: list[Filter] = []
    for f in filters:
        if f.field == column and f.operator in (ExprOperator.Eq, ExprOperator.In):
            values = set(f.values) if values is None else values & set(f.values)
            used.append(f)
    return values, used


class SecondaryIndexes:
    """Per table: the declared secondary indexes and whether they may prune a lookup.

    Definitions are read once; the guard's suspect files and their stats are shared
    with the record index pruner.
    """

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        timeline: HudiTimeline,
        mdt: MetadataTable,
        guard: RecordIndexGuard,
    ) -> None:
        self._storage = storage
        self._config = config
        self._timeline = timeline
        self._mdt = mdt
        self._guard = guard
        self._lock = FreshLock()
        self._defs: dict[str, SecondaryIndexDefinition] | None = None

    def declared(self) -> dict[str, SecondaryIndexDefinition]:
        """Declared indexes by column (the first, by name, where a column has several)."""
        with self._lock:
            if self._defs is None:
                found = definitions(self._storage, self._config)
                by_column: dict[str, SecondaryIndexDefinition] = {}
                for name in sorted(found):
                    by_column.setdefault(found[name].column, found[name])
                self._defs = by_column
            return self._defs

    def applies(self, filters: Sequence[Filter]) -> bool:
        """True when a ``=`` or ``IN`` filter names a column the table declares an index on."""
        columns = {f.field for f in filters if f.operator in (ExprOperator.Eq, ExprOperator.In)}
        return bool(columns) and bool(columns & self.declared().keys())

    def _unusable(self, index: SecondaryIndexDefinition) -> str | None:
        """Why ``index`` may not be used, or None."""
        done = {i.timestamp for i in self._timeline.instants}
        pending = [i.timestamp for i in self._timeline.pending if i.action == INDEXING and i.timestamp not in done]
        if pending:
            return f"an index is being built (pending indexing instant {pending[0]})"
        if not self._mdt.has(index.partition):
            return f"index {index.partition} is declared but not listed as complete in hoodie.properties"
        if not self._mdt.partition_exists(index.partition):
            return f"index {index.partition} is declared but absent from the metadata table"
        return None

    def prune(self, slices: list[HudiFileSlice], filters: Sequence[Filter], schema: pa.Schema) -> SecondaryIndexVerdict:
        declared = self.declared()
        lookups: list[tuple[SecondaryIndexDefinition, dict[str, str], list[Filter]]] = []
        reason: str | None = None
        for column, index in sorted(declared.items()):
            values, used = _lookup_values(filters, column)
            if values is None:
                continue
            why = self._unusable(index)
            idx = schema.get_field_index(column)
            if why is None and idx < 0:
                why = f"column {column!r} of index {index.partition} is not in the table schema"
            stored: dict[str, str] = {}
            if why is None:
                dtype = schema.field(idx).type
                for v in values:
                    text = stored_value(v, dtype, column)
                    if text is None:
                        why = f"values of column {column!r} ({dtype}) are not looked up in index {index.partition}"
                        break
                    stored[text] = v
            if why is not None:
                reason = reason or why
                continue
            lookups.append((index, stored, used))
        if not lookups:
            return SecondaryIndexVerdict(slices, (), reason)
        if not self._mdt.partition_exists(RECORD_INDEX):
            return SecondaryIndexVerdict(slices, (), "no record index to locate the keys the secondary index names")
        kept: set[tuple[str, str]] | None = None
        names: list[str] = []
        decided: list[Filter] = []
        for index, stored, used in lookups:
            groups = self._file_groups(index, stored, used, slices, schema)
            if isinstance(groups, str):
                reason = reason or groups
                continue
            kept = groups if kept is None else kept & groups
            names.append(index.partition)
            decided += used
        if kept is None:
            return SecondaryIndexVerdict(slices, (), reason)
        out = [s for s in slices if (s.partition_path, s.file_id) in kept]
        return SecondaryIndexVerdict(out, tuple(names), None, tuple(decided))

    def _file_groups(
        self,
        index: SecondaryIndexDefinition,
        stored: dict[str, str],
        used: list[Filter],
        slices: list[HudiFileSlice],
        schema: pa.Schema,
    ) -> set[tuple[str, str]] | str:
        """(partition, file id) of the slices that can hold the values, or why it is not known."""
        found = self._mdt.secondary_index_keys(index, stored)
        keys = frozenset(k for ks in found.values() for k in ks)
        if self._guard.value_suspects() is None:
            return "the archived history cannot be read or is gone: not every write that may have copied keys is known"
        second_copy = "a write may have given keys a second copy the indexes do not name"
        if keys:
            field = self._guard.key_filter_field
            key_filters = (Filter(field, ExprOperator.In, tuple(sorted(keys))),) if field else ()
            if not self._guard.allows(KeyLookup(keys, key_filters, False), schema):
                return second_copy
        if not self._guard.values_allowed(used, schema):
            return second_copy
        located = self._mdt.record_locations(keys) if keys else {}
        if len(located) != len(keys):
            return "the record index does not hold every key the secondary index names"
        chosen = self._guard.slices_of(located.values(), slices)
        if chosen is None:
            return "the record index names a file group the listing does not hold"
        return {(s.partition_path, s.file_id) for s in chosen}
