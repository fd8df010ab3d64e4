"""Footer column stats on planned slices, as hudi-rs's ``base_file_column_stats`` gives them."""

from __future__ import annotations

import dataclasses
import logging

import pyarrow as pa

from hudi_ray.core.base_file import ParquetReader, footer_column_stats
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

    def stats_of(s: HudiFileSlice) -> ColumnStatsDict | None:
        rel = s.base_file_relative_path()
        if not rel.endswith(".parquet"):
            return None  # other base file formats keep no per-column min/max
        try:
            md = reader.metadata(rel)
        except HudiCoreError as exc:
            # Stats are informational; the read itself reports the file.
            log.warning("No column stats for %s: %s", rel, exc)
            return None
        found = footer_column_stats(md, schema, set(schema.names))
        # Every schema column has an entry; one the footer does not bound
        # (absent from the file, nested, no stats) has neither min nor max.
        out: ColumnStatsDict = {}
        for name in schema.names:
            cs = found.get(name)
            lo = pa.repeat(cs.min, 1) if cs is not None and cs.min is not None else None
            hi = pa.repeat(cs.max, 1) if cs is not None and cs.max is not None else None
            out[name] = (lo, hi)
        return out

    stats = io_map(stats_of, slices)
    return [dataclasses.replace(s, column_stats=st) if st is not None else s for s, st in zip(slices, stats)]
