"""``HudiReadPlan``: the core's contract with engines.

An engine (the Ray layer, Spark, any other) plans a read once with
``HudiTable.plan`` and ships the plan to its workers; a worker reads its
share of ``slices`` through ``read_units`` with ``read_slice``, ``read_slices``
or ``read_slice_stream``. ``HudiTable.read`` and ``read_stream`` are the same
plan read here (``batches``, ``stream``): one driver, the output shape chosen
at the edge. Every name used here is public, so engines need nothing else
from the core.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from hudi_ray.core.base_file import ParquetReader, is_parquet
from hudi_ray.core.config.tunables import ReadTunables
from hudi_ray.core.file_group import HudiFileSlice, Visibility
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.meta_client import TableContext
from hudi_ray.core.planning import Estimator, SliceEstimate
from hudi_ray.core.query import DEFAULT_BATCH_SIZE, HudiQueryType, HudiReadOptions, ReadSelection
from hudi_ray.core.reading.base_runs import one_batch
from hudi_ray.core.reading.files import SliceFiles
from hudi_ray.core.reading.prefetch import pipeline_reader, read_pipelined
from hudi_ray.core.reading.slice_reader import SliceReader, merges
from hudi_ray.core.reading.stream import HudiRecordBatchStream
from hudi_ray.core.storage import StorageLike
from hudi_ray.core.util.collection import SMALL_GROUP_BYTES, group_small

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

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

    def slice_reader(self, storage: StorageLike | None = None) -> SliceReader:
        """The reader of this plan's slices, bound to the planned table state;
        ``storage`` replaces how files are fetched (a prefetching storage)."""
        files = SliceFiles(self.context.with_storage(storage))
        return SliceReader(files, self.options, self.commit_times, visibility=self.visibility)

    def read_units(
        self,
        units: Sequence[Sequence[HudiFileSlice]],
        read: Callable[[SliceReader, Sequence[HudiFileSlice]], R],
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
        units ahead of the consumer. Every reader of many slices comes here:
        ``batches`` and ``stream`` below, and engines' reader tasks."""
        storage = self.context.storage
        if prefetch:
            reader, prefetcher = pipeline_reader(storage, self.slice_reader)
        else:
            reader, prefetcher = self.slice_reader(), None
        return read_pipelined(
            units,
            lambda unit: read(reader, unit),
            prefetcher=prefetcher,
            threads=threads,
            window=window,
            max_bytes_ahead=storage.io.max_bytes_in_flight,
            max_ahead=max_ahead,
        )

    def read_slice(self, reader: SliceReader, file_slice: HudiFileSlice) -> pa.RecordBatch:
        """One slice, exactly as ``HudiTable.read`` returns it (possibly empty)."""
        return one_batch(reader.rows(file_slice))

    def read_slices(self, reader: SliceReader, file_slices: Sequence[HudiFileSlice]) -> list[pa.RecordBatch]:
        """The rows of ``read_slice`` of each slice, in order, in batches that
        need not follow slices: small base-only slices are finished together
        and come as one batch (``SliceReader.batches`` with ``coalesce``), so a
        worker reads many small slices for less than one call each and builds
        blocks of few chunks."""
        return reader.batches(file_slices, contiguous=False, coalesce=True)

    def read_slice_stream(
        self, reader: SliceReader, file_slice: HudiFileSlice, batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        """The rows of ``read_slice`` in batches of at most ``batch_size`` rows:
        a base file alone streams piece by piece, a merged slice is held whole."""
        return reader.stream(file_slice, batch_size)

    # -- the output shapes of a read here ---------------------------------------------

    def batches(self) -> list[pa.RecordBatch]:
        """Every slice's rows (``HudiTable.read``): small slices in groups that are
        finished together, a large one alone so that large slices still read in
        parallel; a merged slice may come as more than one batch."""
        tunables = ReadTunables.from_options(self.options.hudi_options)
        groups = group_small(self.slices, [s.total_size_bytes() for s in self.slices], SMALL_GROUP_BYTES)
        done = self.read_units(
            groups,
            lambda reader, group: reader.batches(group, contiguous=False),
            threads=tunables.slice_read_concurrency,
            # Every result is kept: several units per thread keep a long one from idling the others.
            window=4 * tunables.slice_read_concurrency,
        )
        return [b for group in done for b in group if b.num_rows]

    def stream(self) -> HudiRecordBatchStream:
        """Every slice's rows as a stream (``HudiTable.read_stream``) in batches of
        the options' batch size; memory holds the slices decoded ahead, plus the
        bytes fetched ahead on an object store."""
        tunables = ReadTunables.from_options(self.options.hudi_options)
        batch_size = self.options.batch_size() or DEFAULT_BATCH_SIZE
        done = self.read_units(
            [[s] for s in self.slices],
            lambda reader, unit: list(reader.stream(unit[0], batch_size)),
            threads=tunables.slice_read_concurrency,
            window=min(tunables.stream_read_ahead, tunables.slice_read_concurrency) + 1,
        )
        return HudiRecordBatchStream(b for group in done for b in group)

    # -- for engines that scan base files with a reader of their own ----------------

    def reads_base_only(self, file_slice: HudiFileSlice) -> bool:
        """Whether a slice's rows are its base file's rows under ``base_selection``
        (a base file, and no log files or a read-optimized query): an engine may
        read that file itself."""
        return bool(file_slice.base_file_name) and not merges(file_slice, self.options.use_read_optimized())

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
        return self.slice_reader().base_selection()

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
