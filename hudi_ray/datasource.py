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

import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hudi_ray.core.exceptions import HudiMissingExtraError

try:
    import ray.data  # noqa: F401 - checked first, so that its absence names the extra to install
except ModuleNotFoundError as exc:
    raise HudiMissingExtraError(
        f"hudi_ray.read_hudi needs Ray Data ({exc.name} is not installed): pip install 'hudi-ray[ray]'",
        exc.name or "ray",
    ) from exc
from ray.data import DataContext, Dataset, read_datasource
from ray.exceptions import RayActorError

from hudi_ray.core.config import int_option
from hudi_ray.core.exceptions import HudiConfigError, HudiCoreError
from hudi_ray.core.table import HudiReadOptions, IncrementalRange, ReadSpec
from hudi_ray.planner import (
    PLANNER_NAMESPACE,
    PlannerSnapshot,
    SliceChunks,
    call,
    forget_planner,
    get_or_create_planner,
    get_planner,
)
from hudi_ray.ray_compat import datasources, sole_read
from hudi_ray.ray_source import HudiDatasource
from hudi_ray.read_now import TASK_OPTIONS, read_at_once, read_at_once_source
from hudi_ray.tunables import RAY_TUNABLES

if TYPE_CHECKING:
    from ray.actor import ActorHandle

__all__ = [
    "HudiDatasource",
    "datasource_of_spec",
    "hudi_datasource",
    "hudi_datasource_of",
    "incremental_range",
    "planned_read",
    "read_hudi",
]

log = logging.getLogger(__name__)


# -- read_hudi -------------------------------------------------------------------------


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
        prefetch_depth=spec.prefetch_depth,
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
    storage_options: dict[str, str] | None = None,
    planner: str | ActorHandle | None = None,
    planner_options: dict[str, Any] | None = None,
    blocks_fixed: bool = False,
    **read: Any,
) -> HudiDatasource:
    """The datasource behind :func:`read_hudi`, pinned to the table's current
    snapshot (the arguments are ``read_hudi``'s). Engines other than Ray Data
    (the Spark bridge) run its ``chunk_reads`` in tasks of their own.
    ``blocks_fixed``: Ray's parallelism is the caller's choice; otherwise
    reads of little data get fewer tasks (``RayTunables.min_task_bytes``)."""
    return _datasource(
        ReadSpec.of_args(table_uri, read, "hudi_datasource"),
        storage_options=storage_options,
        planner=planner,
        planner_options=planner_options,
        blocks_fixed=blocks_fixed,
    )


# Jobs whose reader workers have been asked to load the reader.
_WARMED_JOBS: set[str] = set()
# At most this many workers load it ahead: a job's first read starts no more tasks than that for it.
_WARM_WORKERS = 16


def _warm_readers(runtime_env: dict[str, Any] | None) -> None:
    """A job's first read has its reader workers import the reader and load its compiled
    code while the planner starts (a fresh actor process, about a second), instead of
    after; the read tasks then run in those workers. Nothing waits on these tasks."""
    import ray

    from hudi_ray.core.reading import prepare_reader

    job = ray.get_runtime_context().get_job_id()
    if job in _WARMED_JOBS:
        return
    _WARMED_JOBS.add(job)
    workers = min(int(ray.available_resources().get("CPU", 0)), _WARM_WORKERS)
    task = ray.remote(prepare_reader).options(num_cpus=1, runtime_env=runtime_env, max_retries=0)
    for _ in range(workers):
        task.remote()


def read_hudi(
    table_uri: str,
    *,
    storage_options: dict[str, str] | None = None,
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
    materialize_bytes: int = 0,
    snapshot: PlannerSnapshot | None = None,
    **read: Any,
) -> Dataset:
    """A Hudi table as a :class:`ray.data.Dataset`.

    Takes what ``ray.data.read_hudi`` takes, and reads merge-on-read
    snapshots merged (not only base files), time travel and incremental
    queries, with column and predicate pushdown.

    Args:
        table_uri: Base URI of the table (local path, ``s3://``, ...).
        read: The read arguments (``ReadArgs``, checked by ``ReadSpec``); a
            name that is none of them, nor an argument below, is a ``HudiConfigError``:
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
            table's ``hoodie.io.max.bytes.in.flight`` (default
            ``EngineTunables.prefetch_depth``).
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
    spec = ReadSpec.of_args(
        table_uri,
        read,
        "read_hudi",
        num_partitions=override_num_blocks,
        names={"num_partitions": "override_num_blocks"},
    )
    # The read's parallelism: override_num_blocks, else hoodie.read.input.partitions.
    override_num_blocks = spec.num_partitions
    _warm_readers(runtime_env)
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
            **{k: v for k, v in remote.items() if k in TASK_OPTIONS and v is not None},
        }
        return read_at_once(datasource, override_num_blocks, task_options)
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
    spec = ReadSpec.of(table_uri, hudi_options=hudi_options)
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
    at_once = read_at_once_source(ds)
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
