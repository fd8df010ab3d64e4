"""``HudiDatasource``: a Hudi table read as a Ray Data ``Datasource``.

Planning happens in the table's planner actor (``hudi_ray.planner``), pinned
to one snapshot of the timeline; reading happens in Ray Data read tasks,
each reading a chunk of file slices (``hudi_ray.reader``).

Pushdown: ``select_columns`` narrows the columns the file group reader
decodes, and ``filter(expr=...)`` predicates are pushed into the read: the
parts that are Hudi filters (``hudi_ray.expressions``) prune partitions and
files, and the whole predicate is then applied to the rows read, so results
never depend on what could be translated.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from ray.data import DataContext
from ray.data.block import BlockMetadata
from ray.data.datasource import Datasource, ReadTask

from hudi_ray.core.config import ENGINE_TUNABLES
from hudi_ray.core.expr import check_columns
from hudi_ray.core.table import HudiReadOptions
from hudi_ray.expressions import predicate_to_filters, referenced_columns
from hudi_ray.planner import PlannerSnapshot, SliceChunks, call
from hudi_ray.ray_compat import stub_column
from hudi_ray.reader import ChunkRead, read_chunk
from hudi_ray.tunables import RAY_TUNABLES

if TYPE_CHECKING:
    from ray.actor import ActorHandle

log = logging.getLogger(__name__)


class HudiDatasource(Datasource):
    """A Hudi table read, planned by the table's planner actor at one pinned snapshot."""

    def __init__(
        self,
        table_uri: str,
        *,
        planner: ActorHandle,
        snapshot: PlannerSnapshot,
        read_options: HudiReadOptions,
        columns: Sequence[str] | None = None,
        batch_size: int = RAY_TUNABLES.block_rows,
        prefetch: bool = False,
        prefetch_depth: int = ENGINE_TUNABLES.prefetch_depth,
        blocks_fixed: bool = False,
    ) -> None:
        super().__init__()
        self._uri = table_uri
        self._planner = planner
        self._snapshot = snapshot
        self._read_options = read_options
        self._projection_map: dict[str, str] | None = {c: c for c in columns} if columns is not None else None
        self._batch_size = batch_size
        self._prefetch = prefetch
        self._prefetch_depth = prefetch_depth
        self._blocks_fixed = blocks_fixed
        # Shared by the copies pushdown makes: one plan per (filters, projection).
        self._plans: dict[tuple[Any, ...], SliceChunks] = {}

    # -- pushdown --------------------------------------------------------------------

    def supports_projection_pushdown(self) -> bool:
        return True

    def supports_predicate_pushdown(self) -> bool:
        return True

    def apply_projection(self, projection_map: dict[str, str] | None) -> HudiDatasource:
        clone = copy.copy(self)
        if projection_map is None:
            return clone
        prev = self._projection_map
        # The newest selection decides the order of the columns.
        clone._projection_map = {c: c for c in projection_map if prev is None or c in prev}
        return clone

    # -- planning --------------------------------------------------------------------

    @property
    def snapshot(self) -> PlannerSnapshot:
        return self._snapshot

    @property
    def blocks_fixed(self) -> bool:
        """Whether the number of read tasks is the caller's choice."""
        return self._blocks_fixed

    def _output_columns(self) -> list[str] | None:
        return list(self._projection_map) if self._projection_map is not None else None

    def _schema(self) -> pa.Schema:
        schema = self._snapshot.read_schema
        if schema is None:
            return pa.schema([])
        return schema

    def _hudi_request(self) -> tuple[HudiReadOptions, pc.Expression | None]:
        """The read options sent to the planner and the full predicate for the rows."""
        schema = self._schema()
        predicate = self.get_current_predicate()
        filters = self._read_options.parsed_filters
        pa_predicate: pc.Expression | None = None
        predicate_columns: list[str] = []
        if predicate is not None:
            predicate_columns = list(dict.fromkeys(referenced_columns(predicate)))
            # The predicate is applied to the rows read: only their columns exist for it.
            check_columns(predicate_columns, schema.names, f"table {self._uri}", filters=True)
            filters = filters + [f for f in predicate_to_filters(predicate, schema) if f not in filters]
            pa_predicate = predicate.to_pyarrow()
        columns = self._output_columns()
        projection: list[str] | None = None
        if columns is not None:
            projection = columns + [c for c in predicate_columns if c not in columns]
            if not projection and len(schema):
                # Nothing selected (e.g. a count): decode one column for the row count.
                projection = [schema.names[0]]
        opts = HudiReadOptions(filters=filters, projection=projection, hudi_options=self._read_options.hudi_options)
        return opts, pa_predicate

    def planned(self) -> SliceChunks:
        """The plan of this read (cached): its slices, stats and pinned snapshot."""
        opts, _ = self._hudi_request()
        key = (tuple(opts.filters), tuple(opts.projection) if opts.projection is not None else None)
        planned = self._plans.get(key)
        if planned is None:
            planned = call(self._planner.plan.remote(opts, 1, self._snapshot.snapshot_id))
            self._plans[key] = planned
        return planned

    # -- Datasource API --------------------------------------------------------------

    def get_name(self) -> str:
        return "Hudi"

    def estimate_inmemory_data_size(self) -> int | None:
        # Reads selecting no columns (counts) still report the decoded size:
        # Ray takes an estimate of 0 for "no blocks at all".
        return sum(st.size_bytes for chunk in self.planned().stats for st in chunk)

    def output_schema(self) -> pa.Schema | None:
        """The columns this read returns, in order (None when the table has no schema yet)."""
        schema = self.planned().plan.schema
        columns = self._output_columns()
        if schema is None or columns is None:
            return schema
        return pa.schema([schema.field(c) for c in columns])

    def block_schema(self) -> pa.Schema | None:
        """The schema of the blocks this read yields: ``output_schema``, or
        Ray's stub column when no column is selected (a count)."""
        schema = self.output_schema()
        if schema is not None and not len(schema) and self._output_columns() is not None:
            return pa.schema([pa.field(stub_column(), pa.null())])
        return schema

    def chunk_reads(self, max_bytes: int, min_chunks: int = 1, num_chunks: int | None = None) -> list[ChunkRead]:
        """The read as work for reader tasks: chunks of slices of at most
        ``max_bytes`` estimated in-memory bytes each (a larger slice alone), at
        least ``min_chunks`` of them where there are that many slices; or, with
        ``num_chunks``, that many chunks of about as many slices each."""
        _, pa_predicate = self._hudi_request()
        planned = self.planned()
        if num_chunks is not None:
            planned = planned.rechunk(num_chunks)
        else:
            planned = planned.rechunk_by_size(max_bytes, min_chunks)
        return [self._work(planned, chunk, pa_predicate) for chunk in planned.chunks]

    def _work(self, planned: SliceChunks, chunk: list[Any], predicate: pc.Expression | None) -> ChunkRead:
        return ChunkRead(
            plan=planned.plan,
            slices=chunk,
            predicate=predicate,
            columns=self._output_columns(),
            batch_size=self._batch_size,
            prefetch=self._prefetch,
            prefetch_depth=self._prefetch_depth,
        )

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: int | None = None,
        data_context: DataContext | None = None,
    ) -> list[ReadTask]:
        _, pa_predicate = self._hudi_request()
        planned = self.planned()
        if not self._blocks_fixed:
            total = sum(st.size_bytes for chunk in planned.stats for st in chunk)
            parallelism = min(parallelism, max(1, math.ceil(total / RAY_TUNABLES.min_task_bytes)))
        planned = planned.rechunk(parallelism)
        schema = self.block_schema()
        tasks: list[ReadTask] = []
        for chunk, stats in zip(planned.chunks, planned.stats):
            rows = [st.num_rows for st in stats]
            exact = pa_predicate is None and all(r is not None for r in rows)
            meta = BlockMetadata(
                num_rows=sum(r or 0 for r in rows) if exact else None,
                size_bytes=sum(st.size_bytes for st in stats),
                input_files=tuple(f for st in stats for f in st.input_files),
                exec_stats=None,
            )
            work = self._work(planned, chunk, pa_predicate)
            tasks.append(ReadTask(read_fn(work), meta, schema=schema, per_task_row_limit=per_task_row_limit))
        return tasks


def read_fn(work: ChunkRead) -> Callable[[], Iterator[pa.Table]]:
    def read_hudi_chunk() -> Iterator[pa.Table]:
        stub = stub_column()
        for table in read_chunk(work):
            if table.num_columns == 0:
                # Arrow drops the rows of column-less tables when concatenating
                # them; Ray's stub column keeps the count (e.g. for count()).
                table = table.append_column(stub, pa.nulls(table.num_rows))
            yield table

    return read_hudi_chunk
