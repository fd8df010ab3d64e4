"""Footer column stats on planned slices, as hudi-rs's ``base_file_column_stats`` gives them."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from hudi_ray.core.base_file import ParquetReader, footer_bounds
from hudi_ray.core.config import TableConfig
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.expr import Filter
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.file_group.file_slice import ColumnStatsDict
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.meta_client.context import TableContext
from hudi_ray.core.query.read_options import HudiQueryType
from hudi_ray.core.query.request import ReadRequest
from hudi_ray.core.util.pools import io_map

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq
else:
    pa = lazy_module("pyarrow")
    pq = lazy_module("pyarrow.parquet")

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


class FooterColumnStats(Mapping[str, "tuple[pa.Array | None, pa.Array | None]"]):
    """A base file's ``base_file_column_stats``, worked out from its footer
    the first time they are looked at: most callers of ``get_file_slices``
    never do, and bounds of every column cost more than reading the footer.
    Pickled as the plain dict."""

    __slots__ = ("_metadata", "_schema", "_stats")

    def __init__(self, metadata: pq.FileMetaData, schema: pa.Schema) -> None:
        self._metadata = metadata
        self._schema = schema
        self._stats: ColumnStatsDict | None = None

    def _worked_out(self) -> ColumnStatsDict:
        if self._stats is None:
            # Every schema column has an entry; one the footer does not bound
            # (absent from the file, nested, no stats) has neither min nor max.
            bounds = footer_bounds([self._metadata], self._schema)
            self._stats = {
                name: (c.mins if c.mins.null_count == 0 else None, c.maxs if c.maxs.null_count == 0 else None)
                for name, c in bounds.items()
            }
        return self._stats

    def __getitem__(self, name: str) -> tuple[pa.Array | None, pa.Array | None]:
        return self._worked_out()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._worked_out())

    def __len__(self) -> int:
        return len(self._worked_out())

    def __reduce__(self) -> tuple[type, tuple[ColumnStatsDict]]:
        return dict, (self._worked_out(),)


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
    return [
        s if md is None else dataclasses.replace(s, column_stats=FooterColumnStats(md, schema))
        for s, md in zip(slices, footers)
    ]
