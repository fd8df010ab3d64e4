"""``HudiReadPlan``: the core's contract with engines.

An engine (the Ray layer, Spark, any other) plans a read once with
``HudiTable.plan`` and ships the plan to its workers; a worker builds a
reader with ``file_group_reader`` and reads its share of ``slices`` with
``read_slice`` or ``read_slice_stream``. Every name used here is public, so
engines need nothing else from the core.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import pyarrow as pa

from hudi_ray.core.base_file import ParquetReader, is_parquet
from hudi_ray.core.file_group import HudiFileSlice, Visibility
from hudi_ray.core.storage import StorageLike
from hudi_ray.core.table.context import TableContext
from hudi_ray.core.table.estimate import Estimator, SliceEstimate
from hudi_ray.core.table.file_group_reader import HudiFileGroupReader
from hudi_ray.core.table.prefetch import pipeline_reader, read_pipelined
from hudi_ray.core.table.read_options import HudiQueryType, HudiReadOptions
from hudi_ray.core.table.selection import ReadSelection

R = TypeVar("R")


@dataclass(frozen=True)
class HudiReadPlan:
    """A read planned against one state of the timeline, picklable, so that
    readers elsewhere (other processes, other machines) return exactly what
    ``HudiTable.read`` returns for the same slices.

    ``options`` are the resolved per-read options (timestamps already turned
    into ``commit_times`` and ``visibility``); ``schema`` is the schema of the
    batches the read returns (None when the table has no schema yet);
    ``instant`` is the newest instant the read sees (as-of time, or the
    incremental end) and ``context`` the table's configs, instants and schema
    at planning time, without cached commit metadata.
    """

    # Kept out of the repr: an http(s) URI may carry credentials the reader needs.
    base_uri: str = field(repr=False)
    query_type: HudiQueryType
    options: HudiReadOptions
    slices: list[HudiFileSlice]
    commit_times: frozenset[str] | None
    visibility: Visibility | None
    schema: pa.Schema | None
    instant: str | None
    context: TableContext = field(repr=False, compare=False)
    # Set when an incremental read's history was gone and it read the full
    # snapshot at its end instead (``hoodie.datasource.read.incr.fallback.fulltablescan.enable``): why.
    fallback: str | None = None

    def file_group_reader(self, storage: StorageLike | None = None) -> HudiFileGroupReader:
        """A reader bound to the planned table state; ``storage`` replaces how
        files are fetched (for example a prefetching storage)."""
        return HudiFileGroupReader.from_context(self.base_uri, self.context.with_storage(storage))

    def read_units(
        self,
        units: Sequence[Sequence[HudiFileSlice]],
        read: Callable[[HudiFileGroupReader, Sequence[HudiFileSlice]], R],
        *,
        threads: int = 1,
        window: int = 2,
        prefetch: bool = True,
        max_ahead: int | None = None,
    ) -> Generator[R, None, None]:
        """``read(reader, unit)`` of each unit of slices, in order, through the
        core's read pipeline (``prefetch.read_pipelined``): on an object store
        (unless not ``prefetch``) the files of up to ``max_ahead`` units (None:
        as many as the bytes-in-flight cap allows) are fetched ahead, many
        requests in flight, while ``threads`` threads decode up to ``window``
        units ahead of the consumer."""
        storage = self.context.storage
        if prefetch:
            reader, prefetcher = pipeline_reader(storage, self.file_group_reader, self.options, self.commit_times)
        else:
            reader, prefetcher = self.file_group_reader(), None
        return read_pipelined(
            units,
            lambda unit: read(reader, unit),
            prefetcher=prefetcher,
            threads=threads,
            window=window,
            max_bytes_ahead=storage.io.max_bytes_in_flight,
            max_ahead=max_ahead,
        )

    def read_slice(self, reader: HudiFileGroupReader, file_slice: HudiFileSlice) -> pa.RecordBatch:
        """One slice, exactly as ``HudiTable.read`` returns it (possibly empty)."""
        return reader.read_file_slice(
            file_slice, self.options, commit_times=self.commit_times, visibility=self.visibility
        )

    def read_slices(self, reader: HudiFileGroupReader, file_slices: Sequence[HudiFileSlice]) -> list[pa.RecordBatch]:
        """The rows of ``read_slice`` of each slice, in order, in batches that
        need not follow slices: small base-only slices are finished together
        and come as one batch (``HudiFileGroupReader.read_file_slices`` with
        ``coalesce``), so a worker reads many small slices for less than one
        call each and builds blocks of few chunks."""
        return reader.read_file_slices(
            file_slices,
            self.options,
            commit_times=self.commit_times,
            visibility=self.visibility,
            contiguous=False,
            coalesce=True,
        )

    def read_slice_stream(
        self, reader: HudiFileGroupReader, file_slice: HudiFileSlice, batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        """The rows of ``read_slice`` in batches of at most ``batch_size`` rows.

        Snapshot reads of slices without logs stream from the base file;
        merging and incremental reads hold one slice in memory.
        """
        if self.query_type is HudiQueryType.Snapshot:
            yield from reader.read_file_slice_stream(
                file_slice, self.options.with_batch_size(batch_size), visibility=self.visibility
            )
            return
        batch = self.read_slice(reader, file_slice)
        for offset in range(0, batch.num_rows, batch_size):
            # An explicit length: a column-less batch takes any slice length as given.
            yield batch.slice(offset, min(batch_size, batch.num_rows - offset))

    # -- for engines that scan base files with a reader of their own ----------------

    def reads_base_only(self, file_slice: HudiFileSlice) -> bool:
        """Whether a slice's rows are its base file's rows under ``base_selection``
        (a base file, and no log files or a read-optimized query): an engine may
        read that file itself."""
        if not file_slice.base_file_name:
            return False
        return not file_slice.log_file_names or self.options.use_read_optimized()

    @property
    def fills_partition_columns(self) -> bool:
        """Whether base files lack the partition columns, which the read fills
        from the partition path (a table written with partition fields dropped)."""
        ctx = self.context
        return bool(ctx.config.drops_partition_fields and ctx.partitioner.is_partitioned)

    def base_selection(self) -> ReadSelection:
        """What a read of a base-only slice selects: columns decoded (``read_schema``),
        the row mask's parts (``filters``, ``commit_times``, ``commit_range``) and the
        columns returned (``output``), in the table schema."""
        return self.file_group_reader().base_selection(self.options, self.commit_times)

    def base_file_schemas(self, file_slices: Sequence[HudiFileSlice]) -> list[pa.Schema | None]:
        """The Arrow schema of each slice's base file as its footer gives it, with the
        footer's key-value metadata (None for a slice without a Parquet base file);
        footers come from the table's cache, on an object store fetched together."""
        storage, footers = self.context.storage, self.context.footers
        places = [i for i, s in enumerate(file_slices) if s.base_file_name and is_parquet(s.base_file_name)]
        found = ParquetReader(storage, footers).metadata_many(
            [file_slices[i].base_file_relative_path() for i in places],
            [file_slices[i].base_file_size for i in places],
        )
        out: list[pa.Schema | None] = [None] * len(file_slices)
        for i, md in zip(places, found):
            out[i] = md.schema.to_arrow_schema().with_metadata(md.metadata or {})
        return out

    @property
    def read_columns(self) -> set[str] | None:
        """Top-level columns the read decodes: the projection and filter fields (None: all)."""
        if self.options.projection is None:
            return None
        return set(self.options.projection) | {f.field for f in self.options.parsed_filters}

    def estimate(self, slices: Sequence[HudiFileSlice] | None = None) -> list[SliceEstimate]:
        """Rows and in-memory bytes per slice (``slices`` default: the plan's),
        from footers and file sizes; for balancing work, never for results."""
        exact = self.query_type is HudiQueryType.Snapshot and not self.options.parsed_filters
        estimator = Estimator(self.context.storage, self.context.footers)
        return estimator.slices(self.slices if slices is None else slices, self.read_columns, exact)
