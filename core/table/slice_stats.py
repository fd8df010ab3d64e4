"""Footer column stats on planned slices, as hudi-rs's ``base_file_column_stats`` gives them."""

from __future__ import annotations

import dataclasses
import logging

import pyarrow.parquet as pq

from hudi_ray.core.base_file import ParquetReader, footer_bounds
from hudi_ray.core.config import TableConfig
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.expr import Filter
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.file_group.file_slice import ColumnStatsDict
from hudi_ray.core.table.context import TableContext
from hudi_ray.core.table.read_options import HudiQueryType
from hudi_ray.core.table.request import ReadRequest
from hudi_ray.core.util.pools import io_map

log = logging.getLogger(__name__)


def footers_decide(config: TableConfig, request: ReadRequest, data_filters: list[Filter]) -> bool:
    """Whether base file footers alone decide this read's data-column
    filters: a snapshot read of Parquet base files with such filters, on a
    copy-on-write table or read-optimized (log files would change the
    values the footers bound). Then the slices it plans carry their
    footer stats, as hudi-rs's do."""
    if request.query_type is not HudiQueryType.Snapshot or config.base_file_format != "PARQUET":
        return False
    if config.is_mor and not request.read_optimized:
        return False
    return bool(data_filters)


def with_footer_stats(slices: list[HudiFileSlice], context: TableContext) -> list[HudiFileSlice]:
    """Copies of ``slices`` carrying their Parquet base files' column stats.
    Footers come from the table's footer cache, so those that pruning read
    are not read again."""
    schema = context.schema_with_meta_fields
    reader = ParquetReader(context.storage, context.footers)

    def footer_of(s: HudiFileSlice) -> pq.FileMetaData | None:
        rel = s.base_file_relative_path()
        if not rel.endswith(".parquet"):
            return None  # other base file formats keep no per-column min/max
        try:
            return reader.metadata(rel)
        except HudiCoreError as exc:
            # Stats are informational; the read itself reports the file.
            log.warning("No column stats for %s: %s", rel, exc)
            return None

    footers = io_map(footer_of, slices, limit=reader.fanout)
    read = [i for i, md in enumerate(footers) if md is not None]
    if not read:
        return list(slices)
    bounds = footer_bounds([footers[i] for i in read], schema)  # type: ignore[misc]
    # Every schema column has an entry; one the footer does not bound
    # (absent from the file, nested, no stats) has neither min nor max.
    columns = {
        name: (
            c.mins,
            c.maxs,
            c.mins.is_valid().to_numpy(zero_copy_only=False),
            c.maxs.is_valid().to_numpy(zero_copy_only=False),
        )
        for name, c in bounds.items()
    }
    out = list(slices)
    for k, i in enumerate(read):
        stats: ColumnStatsDict = {}
        for name, (lo, hi, has_lo, has_hi) in columns.items():
            stats[name] = (lo.slice(k, 1) if has_lo[k] else None, hi.slice(k, 1) if has_hi[k] else None)
        out[i] = dataclasses.replace(slices[i], column_stats=stats)
    return out
