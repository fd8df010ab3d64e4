"""Size estimates: rows and in-memory bytes per file slice, and for a whole table.

One place turns Parquet footers, Lance footers and on-disk sizes into
estimates, with one expansion guess: the ratio of uncompressed to on-disk
bytes sampled from the Parquet footers at hand (or from one sampled footer
when none were read). A Lance footer gives rows and per-column bytes, which
Lance (format v2.0) stores about as Arrow holds them in memory. Engines use
the estimates to balance work; they never change what a read returns.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_ray.core.base_file import (
    LANCE,
    FooterCache,
    LanceFileInfo,
    LanceReader,
    ParquetReader,
    base_file_format,
    is_parquet,
)
from hudi_ray.core.config.tunables import PLANNING_TUNABLES, PlanningTunables
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.file_group import HudiFileSlice, parse_base_file_name
from hudi_ray.core.storage import Storage
from hudi_ray.core.timeline import HudiTimeline

if TYPE_CHECKING:
    from hudi_ray.core.meta_client.context import TableContext
    from hudi_ray.core.metadata import MetadataTable
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.util.pools import io_map

if TYPE_CHECKING:
    import pyarrow.parquet as pq
else:
    pq = lazy_module("pyarrow.parquet")

log = logging.getLogger(__name__)

# Decoded Arrow over on-disk bytes when no footer can be read at all.
FALLBACK_EXPANSION = 3.0


@dataclass(frozen=True)
class SliceEstimate:
    """What is known about one slice's read without reading it."""

    num_rows: int | None  # exact rows the read returns, when known (else None)
    size_bytes: int  # estimated in-memory bytes of the columns read


@dataclass(frozen=True)
class FooterSample:
    """Sizes from one or more Parquet footers."""

    on_disk: int  # compressed bytes of the column chunks
    uncompressed: int
    rows: int

    @property
    def expansion(self) -> float:
        return self.uncompressed / self.on_disk if self.on_disk > 0 and self.uncompressed > 0 else FALLBACK_EXPANSION

    @classmethod
    def of(cls, footers: Sequence[pq.FileMetaData]) -> FooterSample:
        on_disk = uncompressed = rows = 0
        for md in footers:
            for i in range(md.num_row_groups):
                rg = md.row_group(i)
                on_disk += sum(rg.column(j).total_compressed_size for j in range(rg.num_columns))
                uncompressed += rg.total_byte_size
            rows += md.num_rows
        return cls(on_disk, uncompressed, rows)


def column_bytes(md: pq.FileMetaData, columns: set[str] | None) -> int:
    """Uncompressed bytes of the top-level ``columns`` (None: all) in a footer."""
    total = 0
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        if columns is None:
            total += rg.total_byte_size
            continue
        for j in range(rg.num_columns):
            chunk = rg.column(j)
            if chunk.path_in_schema.split(".", 1)[0] in columns:
                total += chunk.total_uncompressed_size
    return total


def lance_column_bytes(info: LanceFileInfo, columns: set[str] | None) -> int:
    """On-disk bytes of the top-level ``columns`` (None: all) of a Lance file."""
    if columns is None or info.column_bytes is None:
        return info.data_bytes
    return sum(n for name, n in info.column_bytes.items() if name in columns)


class Estimator:
    """Estimates over one table's storage, reusing (and filling) its footer cache."""

    def __init__(self, storage: Storage, footers: FooterCache, tunables: PlanningTunables = PLANNING_TUNABLES) -> None:
        self._reader = ParquetReader(storage, footers)
        self._lance = LanceReader(storage)
        self._tunables = tunables

    def footer(self, rel: str) -> pq.FileMetaData | None:
        """A base file's footer; None where it is not Parquet or cannot be read
        (the read itself will report that file)."""
        if not is_parquet(rel):
            return None
        try:
            return self._reader.metadata(rel)
        except HudiCoreError as exc:
            log.debug("No footer for estimates of %s: %s", rel, exc)
            return None

    def lance_info(self, rel: str) -> LanceFileInfo | None:
        """A Lance base file's footer; None where it cannot be read (pylance
        missing included: the read itself will report that file)."""
        try:
            return self._lance.info(rel)
        except HudiCoreError as exc:
            log.debug("No Lance footer for estimates of %s: %s", rel, exc)
            return None

    def _base_stats(self, s: HudiFileSlice) -> pq.FileMetaData | LanceFileInfo | None:
        if not s.base_file_name:
            return None
        rel = s.base_file_relative_path()
        return self.lance_info(rel) if base_file_format(rel) == LANCE else self.footer(rel)

    def slices(
        self, slices: Sequence[HudiFileSlice], columns: set[str] | None, rows_exact: bool
    ) -> list[SliceEstimate]:
        """Per slice: bytes of the ``columns`` read (None: all) and, when
        ``rows_exact`` (an unfiltered snapshot read), the row count of slices
        without logs. Footers are read concurrently unless there are too many."""
        footers: list[pq.FileMetaData | LanceFileInfo | None]
        if len(slices) <= self._tunables.max_footers_per_estimate:
            footers = io_map(self._base_stats, slices, limit=self._reader.fanout)
        else:
            footers = [None] * len(slices)
        read = [md for md in footers if isinstance(md, pq.FileMetaData)]
        if read:
            expansion = FooterSample.of(read).expansion
        else:
            sample = next((s.base_file_relative_path() for s in slices if is_parquet(s.base_file_name)), None)
            md = self.footer(sample) if sample else None
            expansion = FooterSample.of([md]).expansion if md is not None else FALLBACK_EXPANSION
        out: list[SliceEstimate] = []
        for s, md in zip(slices, footers):
            logs = int(sum(int(x) for x in s.log_file_sizes) * expansion)
            exact = rows_exact and not s.has_log_files()
            if isinstance(md, pq.FileMetaData):
                base = column_bytes(md, columns)
                rows = md.num_rows if exact else None
            elif isinstance(md, LanceFileInfo):
                base = lance_column_bytes(md, columns)
                rows = md.num_rows if exact else None
            else:
                base, rows = int(int(s.base_file_size) * expansion), None
            out.append(SliceEstimate(num_rows=rows, size_bytes=base + logs))
        return out

    def table(self, base_file_bytes: int, sample_rel: str) -> tuple[int, int] | None:
        """(rows, in-memory bytes) of base files totalling ``base_file_bytes`` on
        disk, scaled by the expansion and row size of one sampled footer
        (None when the sample is not Parquet: other footers do not scale so)."""
        if not is_parquet(sample_rel):
            return None
        try:
            md = self._reader.metadata(sample_rel)
        except HudiCoreError as exc:
            log.warning("Cannot sample %s for table stats: %s", sample_rel, exc)
            return None
        sample = FooterSample.of([md])
        ratio = sample.uncompressed / sample.on_disk if sample.on_disk > 0 else 1.0
        row_size = sample.on_disk / sample.rows if sample.rows > 0 else 0.0
        rows = int(base_file_bytes / row_size) if row_size > 0 else 0
        return max(rows, 0), max(int(base_file_bytes * ratio), 0)


def sample_base_file(timeline: HudiTimeline) -> str | None:
    """The base file sampled for table stats: the smallest path among the
    newest commit that wrote base files."""
    for instant in reversed(timeline.data_instants):
        paths = [
            st.get("path") or ""
            for st in timeline.write_stats(instant)
            if parse_base_file_name((st.get("path") or "").rsplit("/", 1)[-1])
        ]
        if paths:
            return min(paths)
    return None


def table_stats(context: TableContext, mdt: MetadataTable | None) -> tuple[int, int] | None:
    """(rows, bytes) of the latest snapshot: the on-disk size of every live
    Parquet base file the metadata table lists, scaled by one sampled footer
    (``Estimator.table``). None without a metadata table or Parquet base files."""
    if mdt is None or context.config.base_file_format != "PARQUET":
        return None
    listings = mdt.files(mdt.partition_paths())
    total = sum(f.size for files in listings.values() for f in files if f.name.endswith(".parquet"))
    sample = sample_base_file(context.timeline)
    if total == 0 or sample is None:
        return None
    return Estimator(context.storage, context.footers).table(total, sample)
