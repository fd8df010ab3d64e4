"""Pruners: each drops what provably holds no match for a read's filters.

Every pruner has one method, ``prune(items, explain) -> items``: partitions
before any file is listed, file slices after (``file_pruning``, loaded only for
reads with filters). Each reports what it kept to the explain (a no-op one when
nobody asked) and returns new lists, never touching the items it was given. The
row mask stays authoritative, so a pruner that cannot decide keeps everything.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from hudi_ray.core.base_file.names import parse_base_file_name
from hudi_ray.core.base_file.reader import is_parquet
from hudi_ray.core.exceptions import HudiCorruptFileError, HudiFileNotFoundError
from hudi_ray.core.expr import Filter
from hudi_ray.core.expr.arrow import prune_partitions
from hudi_ray.core.expr.stats import may_match
from hudi_ray.core.partition import Partitioner
from hudi_ray.core.planning.explain import PlanExplain

if TYPE_CHECKING:
    import pyarrow as pa

    from hudi_ray.core.metadata import MetadataTable

log = logging.getLogger(__name__)

T = TypeVar("T")
Item = TypeVar("Item")


class Pruner(Protocol[Item]):
    def prune(self, items: list[Item], explain: PlanExplain) -> list[Item]: ...


def index_or_none(index: str, prune: Callable[[], T]) -> T | None:
    """An index's verdict, or None when its files are damaged or missing: pruning
    is an optimisation, so the read goes on without it (as Apache Hudi falls
    back to a full scan) and stays right."""
    try:
        return prune()
    except (HudiCorruptFileError, HudiFileNotFoundError) as exc:
        log.warning("Not pruning by the metadata table's %s: %s", index, exc)
        return None


# -- partitions ---------------------------------------------------------------------


class PartitionValuePruner:
    """Partitions whose values (parsed from their paths) fail the partition filters."""

    def __init__(self, partitioner: Partitioner, filters: list[Filter]) -> None:
        self._partitioner = partitioner
        self._filters = filters

    def prune(self, items: list[str], explain: PlanExplain) -> list[str]:
        kept = items
        if self._partitioner.is_partitioned and self._filters:
            values, unparsed = self._partitioner.values_table(items)
            keep = prune_partitions(values, unparsed, self._filters, self._partitioner.schema)
            kept = [p for p, k in zip(items, keep) if k]
        explain.add("partition values", len(kept))
        return kept


class PartitionStatsPruner:
    """Partitions whose column ranges in the metadata table's partition stats
    exclude the data filters; a partition without stats is kept.

    Hudi gathers column ranges from Parquet base files and log files only: the
    stats of a partition holding another base file format (Lance) leave that
    file's rows out, so such a partition is kept whatever its stats say.
    """

    def __init__(self, mdt: MetadataTable, data_filters: list[Filter], schema: Callable[[], pa.Schema]) -> None:
        self._mdt = mdt
        self._filters = data_filters
        self._schema = schema

    def _uncovered(self, partitions: list[str]) -> set[str]:
        """The ``partitions`` holding a base file the stats do not cover (all of
        them when the listing cannot be read)."""
        listing = index_or_none("files", lambda: self._mdt.files(partitions))
        if listing is None:
            return set(partitions)
        return {
            p
            for p, files in listing.items()
            if any(parse_base_file_name(f.name) and not is_parquet(f.name) for f in files)
        }

    def prune(self, items: list[str], explain: PlanExplain) -> list[str]:
        kept = items
        if self._filters:
            # Asked only here: building the read schema loads pyarrow, which planning
            # without filters does not otherwise need.
            schema = self._schema()
            columns = {f.field for f in self._filters}
            stats = index_or_none("partition stats", lambda: self._mdt.partition_stats(columns, schema))
            if stats is not None:
                excluded = [p for p in items if p in stats and not may_match(self._filters, stats[p], schema)]
                dropped = set(excluded) - self._uncovered(excluded) if excluded else set()
                kept = [p for p in items if p not in dropped]
        explain.add("partition stats", len(kept))
        return kept
