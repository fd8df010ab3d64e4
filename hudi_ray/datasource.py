"""``read_hudi``: a Hudi table as a Ray Dataset, through a Ray Data ``Datasource``.

Planning happens in the table's planner actor (``hudi_ray.planner``), pinned
at ``read_hudi`` time to one snapshot of the timeline; reading happens in Ray
Data read tasks, each reading a chunk of file slices (``hudi_ray.reader``).

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
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ray.core.exceptions import HudiMissingExtraError

try:
    import ray.data  # noqa: F401 - checked first, so that its absence names the extra to install
except ModuleNotFoundError as exc:
    raise HudiMissingExtraError(
        f"hudi_ray.read_hudi needs Ray Data ({exc.name} is not installed): pip install 'hudi-ray[ray]'",
        exc.name or "ray",
    ) from exc
from ray.data import DataContext, Dataset, read_datasource
from ray.data.block import BlockMetadata
from ray.data.datasource import Datasource, ReadTask
from ray.exceptions import RayActorError

from hudi_ray.core.config import int_option
from hudi_ray.core.exceptions import HudiConfigError, HudiCoreError
from hudi_ray.core.expr import check_columns
from hudi_ray.core.table import HudiReadOptions, IncrementalRange, ReadSpec
from hudi_ray.expressions import predicate_to_filters, referenced_columns
from hudi_ray.planner import (
    PLANNER_NAMESPACE,
    PlannerSnapshot,
    SliceChunks,
    call,
    forget_planner,
    get_or_create_planner,
    get_planner,
)
from hudi_ray.ray_compat import datasources, sole_read, stub_column
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
        prefetch_depth: int = RAY_TUNABLES.prefetch_depth,
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
            tasks.append(ReadTask(_read_fn(work), meta, schema=schema, per_task_row_limit=per_task_row_limit))
        return tasks


# read_hudi's arguments that are Ray options of its reader tasks.
_TASK_OPTIONS = frozenset(
    {
        "num_cpus",
        "num_gpus",
        "memory",
        "label_selector",
        "fallback_strategy",
        "max_calls",
        "resources",
        "accelerator_type",
        "runtime_env",
    }
)


def _read_fn(work: ChunkRead) -> Callable[[], Iterator[pa.Table]]:
    def read_hudi_chunk() -> Iterator[pa.Table]:
        stub = stub_column()
        for table in read_chunk(work):
            if table.num_columns == 0:
                # Arrow drops the rows of column-less tables when concatenating
                # them; Ray's stub column keeps the count (e.g. for count()).
                table = table.append_column(stub, pa.nulls(table.num_rows))
            yield table

    return read_hudi_chunk


# -- reads done at once ----------------------------------------------------------------

# Datasets read at once, by id, with their datasource: planned_read finds their plans.
_READ_AT_ONCE: dict[int, HudiDatasource] = {}
_reader_task: Any = None


def _read_table(work: ChunkRead, schema: pa.Schema | None) -> pa.Table:
    """A reader task of a read done at once: the chunk's rows as one table."""
    tables = list(_read_fn(work)())
    if not tables:
        return (schema or pa.schema([])).empty_table()
    # Slices may differ in nullability only; Ray Data's blocks would be unified alike.
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")


def _read_at_once(datasource: HudiDatasource, num_chunks: int | None, task_options: dict[str, Any]) -> Dataset:
    """The read run now by reader tasks, one per chunk of at most
    ``RayTunables.min_task_bytes`` (or ``num_chunks`` chunks), as a
    materialized dataset of their tables."""
    import ray
    from ray.exceptions import RayTaskError

    global _reader_task
    if _reader_task is None:
        _reader_task = ray.remote(_read_table)  # made once: each new remote function is exported to every worker
    works = datasource.chunk_reads(RAY_TUNABLES.min_task_bytes, num_chunks=num_chunks)
    schema = datasource.block_schema()
    if not works:
        ds: Dataset = ray.data.from_arrow((schema or pa.schema([])).empty_table())
    else:
        task = _reader_task.options(**task_options) if task_options else _reader_task
        refs = [task.remote(work, schema) for work in works]
        try:
            ds = ray.data.from_arrow_refs(refs)  # waits for the tasks: it takes each table's metadata
        except RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, HudiCoreError):
                raise cause from None
            raise
    key = id(ds)
    _READ_AT_ONCE[key] = datasource
    weakref.finalize(ds, _READ_AT_ONCE.pop, key, None)
    return ds


# -- read_hudi -------------------------------------------------------------------------


def _spec(
    table_uri: str,
    *,
    query_type: str,
    filters: Sequence[Sequence[str]] | None,
    hudi_options: Mapping[str, str] | None,
    columns: Sequence[str] | None,
    as_of_timestamp: str | None,
    start_timestamp: str | None,
    end_timestamp: str | None,
    batch_size: int | None,
    prefetch: bool | None,
    prefetch_depth: int,
    override_num_blocks: int | None = None,
) -> ReadSpec:
    """``read_hudi``'s arguments, checked by the core as every engine's are."""
    return ReadSpec.of(
        table_uri,
        query_type=query_type,
        filters=filters,
        hudi_options=hudi_options,
        columns=columns,
        as_of_timestamp=as_of_timestamp,
        start_timestamp=start_timestamp,
        end_timestamp=end_timestamp,
        batch_size=batch_size,
        prefetch=prefetch,
        prefetch_depth=prefetch_depth,
        num_partitions=override_num_blocks,
        names={"num_partitions": "override_num_blocks"},
    )


def _planner_handle(
    spec: ReadSpec,
    storage_options: dict[str, str] | None,
    planner: str | ActorHandle | None,
    planner_options: dict[str, Any] | None,
) -> ActorHandle:
    """The planner a read asks: the one given (a handle or a name), else the table's own."""
    if isinstance(planner, str):
        try:
            return get_planner(planner)
        except ValueError as exc:
            raise HudiConfigError(
                f"planner={planner!r}: no planner actor of that name in namespace {PLANNER_NAMESPACE!r} "
                f"(reading {spec.shown_uri}); pass planner=None to use the table's own"
            ) from exc
    if planner is None:
        return get_or_create_planner(
            spec.uri, hudi_options=spec.table_options, storage_options=storage_options, actor_options=planner_options
        )
    return planner


def _ask_planner(
    spec: ReadSpec,
    storage_options: dict[str, str] | None,
    planner: str | ActorHandle | None,
    planner_options: dict[str, Any] | None,
    ask: Callable[[ActorHandle], Any],
) -> tuple[ActorHandle, Any]:
    """``ask(handle)``'s answer from the read's planner, and the planner."""
    handle = _planner_handle(spec, storage_options, planner, planner_options)
    try:
        return handle, call(ask(handle))
    except RayActorError:
        if planner is not None:
            raise
        # The table's planner was killed since this driver last used it: start another.
        forget_planner(handle)
        handle = _planner_handle(spec, storage_options, planner, planner_options)
        return handle, call(ask(handle))


def _datasource(
    spec: ReadSpec,
    *,
    storage_options: dict[str, str] | None,
    planner: str | ActorHandle | None,
    planner_options: dict[str, Any] | None,
    blocks_fixed: bool,
    snapshot: PlannerSnapshot | None = None,
) -> HudiDatasource:
    """The datasource of a checked read, pinned to ``snapshot`` (the planner's,
    as it handed it out) or else to the table's current snapshot."""
    if snapshot is None:
        handle, snapshot = _ask_planner(spec, storage_options, planner, planner_options, lambda h: h.snapshot.remote())
    else:
        handle = _planner_handle(spec, storage_options, planner, planner_options)
    return HudiDatasource(
        # The URI as errors show it: reads go through the planner's plans, and
        # credentials reach only the storage client (Storage and the planner
        # move or keep them as the client needs).
        spec.shown_uri,
        planner=handle,
        snapshot=snapshot,
        read_options=spec.read_options,
        columns=spec.columns,
        batch_size=spec.batch_size or RAY_TUNABLES.block_rows,
        prefetch=spec.prefetch,
        prefetch_depth=RAY_TUNABLES.prefetch_depth if spec.prefetch_depth is None else spec.prefetch_depth,
        blocks_fixed=blocks_fixed,
    )


def datasource_of_spec(
    spec: ReadSpec,
    *,
    storage_options: dict[str, str] | None,
    planner: str | ActorHandle | None = None,
    planner_options: dict[str, Any] | None = None,
) -> HudiDatasource:
    """The datasource of a checked read, pinned to the table's current snapshot, for
    engines that plan through the planner actor and read in tasks of their own."""
    return _datasource(
        spec,
        storage_options=storage_options,
        planner=planner,
        planner_options=planner_options,
        blocks_fixed=spec.num_partitions is not None,
    )


def hudi_datasource(
    table_uri: str,
    *,
    query_type: str = "snapshot",
    filters: list[tuple[str, str, str]] | None = None,
    hudi_options: dict[str, str] | None = None,
    storage_options: dict[str, str] | None = None,
    columns: list[str] | None = None,
    as_of_timestamp: str | None = None,
    start_timestamp: str | None = None,
    end_timestamp: str | None = None,
    batch_size: int | None = None,
    planner: str | ActorHandle | None = None,
    planner_options: dict[str, Any] | None = None,
    prefetch: bool | None = None,
    prefetch_depth: int = RAY_TUNABLES.prefetch_depth,
    blocks_fixed: bool = False,
) -> HudiDatasource:
    """The datasource behind :func:`read_hudi`, pinned to the table's current
    snapshot (the arguments are ``read_hudi``'s). Engines other than Ray Data
    (the Spark bridge) run its ``chunk_reads`` in tasks of their own.
    ``blocks_fixed``: Ray's parallelism is the caller's choice; otherwise
    reads of little data get fewer tasks (``RayTunables.min_task_bytes``)."""
    spec = _spec(
        table_uri,
        query_type=query_type,
        filters=filters,
        hudi_options=hudi_options,
        columns=columns,
        as_of_timestamp=as_of_timestamp,
        start_timestamp=start_timestamp,
        end_timestamp=end_timestamp,
        batch_size=batch_size,
        prefetch=prefetch,
        prefetch_depth=prefetch_depth,
    )
    return _datasource(
        spec,
        storage_options=storage_options,
        planner=planner,
        planner_options=planner_options,
        blocks_fixed=blocks_fixed,
    )


def read_hudi(
    table_uri: str,
    *,
    query_type: str = "snapshot",
    filters: list[tuple[str, str, str]] | None = None,
    hudi_options: dict[str, str] | None = None,
    storage_options: dict[str, str] | None = None,
    columns: list[str] | None = None,
    as_of_timestamp: str | None = None,
    start_timestamp: str | None = None,
    end_timestamp: str | None = None,
    batch_size: int | None = None,
    num_cpus: float | None = None,
    num_gpus: float | None = None,
    memory: float | None = None,
    concurrency: int | None = None,
    override_num_blocks: int | None = None,
    label_selector: dict[str, str] | None = None,
    fallback_strategy: list[dict[str, Any]] | None = None,
    max_calls: int | None = None,
    resources: dict[str, float] | None = None,
    accelerator_type: str | None = None,
    runtime_env: dict[str, Any] | None = None,
    ray_remote_args: dict[str, Any] | None = None,
    planner: str | ActorHandle | None = None,
    planner_options: dict[str, Any] | None = None,
    prefetch: bool | None = None,
    prefetch_depth: int = RAY_TUNABLES.prefetch_depth,
    materialize_bytes: int = 0,
    snapshot: PlannerSnapshot | None = None,
) -> Dataset:
    """A Hudi table as a :class:`ray.data.Dataset`.

    Takes what ``ray.data.read_hudi`` takes, and reads merge-on-read
    snapshots merged (not only base files), time travel and incremental
    queries, with column and predicate pushdown.

    Args:
        table_uri: Base URI of the table (local path, ``s3://``, ...).
        query_type: ``snapshot`` or ``incremental``.
        filters: ``(column, op, value)`` Hudi filters, as ``HudiReadOptions`` takes them.
        hudi_options: Hudi configs; ``hoodie.read.*`` keys apply to this read,
            the others to the table (and pick its planner).
        storage_options: Storage client options (credentials, endpoint, ...).
        columns: Columns to read (default: all, meta fields included when the table has them).
        as_of_timestamp: Time travel: the snapshot as of this instant.
        start_timestamp, end_timestamp: The incremental range ``(start, end]``.
        batch_size: Rows per batch the file group reader produces.
        planner: The planner actor to use, or its name in the ``hudi_ray``
            namespace; by default the table's named planner, created on first use.
        planner_options: Ray actor options for a planner created here
            (e.g. ``resources`` to place it on a node).
        prefetch: Fetch upcoming slices' files while decoding (default: on
            for object stores, off for local disk).
        prefetch_depth: How many units (a slice, or a group of small slices)
            each task fetches ahead of the one it decodes, within the
            table's ``hoodie.io.max.bytes.in.flight``.
        override_num_blocks: The number of read tasks (also
            ``hoodie.read.input.partitions``). By default there is one per
            ``RayTunables.min_task_bytes`` of estimated data, at most Ray's
            ``DataContext.read_op_min_num_blocks``.
        materialize_bytes: Read now when the plan's estimated in-memory size
            is at most this many bytes (default 0: never): reader tasks run
            before this returns, and the dataset is materialized from their
            tables, so consuming it starts no read. Ray Data's fixed cost per
            execution of a dataset is tens of milliseconds, more than reading
            a few small files costs; a materialized dataset is read once,
            however often it is consumed.
        snapshot: The planner's snapshot to read (as ``planner``, or the
            table's own planner, handed it out: ``incremental_range``), not
            its current one.
        The other arguments are ``ray.data.read_datasource``'s.

    The read is pinned to the table's timeline as of this call: executing the
    dataset later, or again, reads the same snapshot.
    """
    materialize_bytes = int_option(materialize_bytes, "materialize_bytes", minimum=0, strings=False)
    spec = _spec(
        table_uri,
        query_type=query_type,
        filters=filters,
        hudi_options=hudi_options,
        columns=columns,
        as_of_timestamp=as_of_timestamp,
        start_timestamp=start_timestamp,
        end_timestamp=end_timestamp,
        batch_size=batch_size,
        prefetch=prefetch,
        prefetch_depth=prefetch_depth,
        override_num_blocks=override_num_blocks,
    )
    # The read's parallelism: override_num_blocks, else hoodie.read.input.partitions.
    override_num_blocks = spec.num_partitions
    datasource = _datasource(
        spec,
        storage_options=storage_options,
        planner=planner,
        planner_options=planner_options,
        blocks_fixed=override_num_blocks is not None,
        snapshot=snapshot,
    )
    remote: dict[str, Any] = {
        "num_cpus": num_cpus,
        "num_gpus": num_gpus,
        "memory": memory,
        "concurrency": concurrency,
        "label_selector": label_selector,
        "fallback_strategy": fallback_strategy,
        "max_calls": max_calls,
        "resources": resources,
        "accelerator_type": accelerator_type,
        "runtime_env": runtime_env,
        "ray_remote_args": ray_remote_args,
    }
    if materialize_bytes and (datasource.estimate_inmemory_data_size() or 0) <= materialize_bytes:
        task_options = {
            **(ray_remote_args or {}),
            **{k: v for k, v in remote.items() if k in _TASK_OPTIONS and v is not None},
        }
        return _read_at_once(datasource, override_num_blocks, task_options)
    if override_num_blocks is None:
        # Ray splits every task's output to reach its own default parallelism
        # when a read has fewer tasks; for a read capped by min_task_bytes the
        # split blocks cost more than the parallelism gives. Asking for the
        # capped count avoids that.
        total = datasource.estimate_inmemory_data_size() or 0
        default = DataContext.get_current().read_op_min_num_blocks
        override_num_blocks = max(1, min(math.ceil(total / RAY_TUNABLES.min_task_bytes), default))
    remote["override_num_blocks"] = override_num_blocks
    return read_datasource(datasource, **{k: v for k, v in remote.items() if v is not None})


def incremental_range(
    table_uri: str,
    *,
    after: str | None,
    start: str | None = None,
    max_instants: int | None = None,
    hudi_options: dict[str, str] | None = None,
    storage_options: dict[str, str] | None = None,
    planner: str | ActorHandle | None = None,
    planner_options: dict[str, Any] | None = None,
) -> tuple[ActorHandle, PlannerSnapshot, IncrementalRange]:
    """The next incremental range of a table from its planner
    (``HudiPlanner.incremental_range``: after position ``after``, or where
    ``start`` puts a new consumer), the planner and the snapshot it was taken
    on: ``read_hudi(..., planner=handle, snapshot=snapshot)`` reads the range
    on that same timeline. ``hudi_options``: the table's and the read's
    (the full-snapshot fallback), as ``read_hudi`` takes them."""
    spec = _spec(
        table_uri,
        query_type="snapshot",
        filters=None,
        hudi_options=hudi_options,
        columns=None,
        as_of_timestamp=None,
        start_timestamp=None,
        end_timestamp=None,
        batch_size=None,
        prefetch=None,
        prefetch_depth=RAY_TUNABLES.prefetch_depth,
    )
    read = HudiReadOptions(hudi_options={k: v for k, v in (hudi_options or {}).items() if k not in spec.table_options})
    handle, (snapshot, rng) = _ask_planner(
        spec,
        storage_options,
        planner,
        planner_options,
        lambda h: h.incremental_range.remote(after, start, max_instants, read),
    )
    return handle, snapshot, rng


def planned_read(ds: Dataset) -> SliceChunks:
    """The Hudi plan a dataset executes, after Ray's pushdown optimizations,
    or the plan it was read with when ``read_hudi`` read it at once
    (``materialize_bytes``; not that of a dataset derived from it): which
    slices (files) it reads. For tests and diagnostics."""
    at_once = _READ_AT_ONCE.get(id(ds))
    if at_once is not None:
        return at_once.planned()
    for source in datasources(ds):
        if isinstance(source, HudiDatasource):
            return source.planned()
    raise HudiCoreError("The dataset does not read a Hudi table through hudi_ray.read_hudi")


def hudi_datasource_of(ds: Dataset) -> tuple[HudiDatasource, dict[str, Any], int | None] | None:
    """For a dataset that is only a ``read_hudi`` read (after Ray's projection
    and predicate pushdown, with no other operation), its datasource, the read
    tasks' Ray options and the number of blocks the caller asked for (None:
    left to the reader); otherwise None."""
    read = sole_read(ds)
    if read is None or not isinstance(read.datasource, HudiDatasource):
        return None
    # Without the caller's choice, read_hudi asks Ray for its own count.
    asked = read.num_blocks if read.datasource.blocks_fixed else None
    return read.datasource, read.ray_remote_args, asked
