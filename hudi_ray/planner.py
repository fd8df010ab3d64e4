"""The planner actor: one per table, it loads the timeline once and serves plans.

A ``HudiPlanner`` holds a loaded ``HudiTable`` and answers any number of
reads: file slices for read options (split into chunks for reader tasks), per
slice row and size estimates, the schema and table stats. Each loaded state of
the timeline is a *snapshot* with an id; a read pins one snapshot id and every
plan made for it uses that exact table state, however many commits land
meanwhile (snapshot isolation). ``snapshot()`` checks storage for new instants
and starts a new snapshot when the timeline changed.

``get_or_create_planner`` names the actor after the table and options in the
``hudi_ray`` namespace, so reads in the same job, and in later jobs when the
actor is detached, reuse one planner per table.

The actor class is plain Python (testable without Ray); this module is the
only place that turns it into a Ray actor.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from hudi_ray.core.exceptions import HudiConfigError, HudiCoreError
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.storage import move_credentials, normalize_base_uri, redact_text, split_credentials
from hudi_ray.core.table import (
    HudiReadOptions,
    HudiReadPlan,
    HudiTable,
    HudiTableBuilder,
    IncrementalRange,
    options_key,
    position,
    resolve_start,
)
from hudi_ray.core.util import split_balanced, split_by_size
from hudi_ray.tunables import RAY_TUNABLES

log = logging.getLogger(__name__)

PLANNER_NAMESPACE = "hudi_ray"


@dataclass(frozen=True)
class PlannerSnapshot:
    """One loaded state of a table's timeline, which reads pin."""

    snapshot_id: str
    table_uri: str
    latest_instant: str | None  # newest completed data instant (requested time), None for an empty timeline
    num_instants: int
    loaded_at: float  # time.time() when loaded
    read_schema: pa.Schema | None  # columns a read returns (meta fields when populated); None without a schema


@dataclass(frozen=True)
class SliceStats:
    """What a reader task's block metadata says about one slice."""

    num_rows: int | None  # exact rows the slice's read returns, when known without reading it
    size_bytes: int  # estimated in-memory bytes of the columns read
    input_files: tuple[str, ...]


@dataclass(frozen=True)
class SliceChunks:
    """A plan served by the planner: chunks of slices for reader tasks.

    ``plan`` carries everything readers need except the slices (it is shipped
    to every task, so its ``slices`` is empty); ``chunks[i][j]`` has stats
    ``stats[i][j]``.
    """

    snapshot: PlannerSnapshot
    plan: HudiReadPlan
    chunks: list[list[HudiFileSlice]]
    stats: list[list[SliceStats]]
    table_stats: tuple[int, int] | None

    @property
    def num_slices(self) -> int:
        return sum(len(c) for c in self.chunks)

    def slices(self) -> list[HudiFileSlice]:
        return [s for c in self.chunks for s in c]

    def input_files(self) -> list[str]:
        return [f for c in self.stats for st in c for f in st.input_files]

    def rechunk(self, num_chunks: int) -> SliceChunks:
        """The same slices in at most ``num_chunks`` contiguous chunks of nearly
        equal estimated size (``split_balanced``), stats kept aligned."""
        flat = self._flat()
        return self._regroup(split_balanced(flat, [st.size_bytes for _, st in flat], num_chunks))

    def rechunk_by_size(self, max_bytes: int, min_chunks: int = 1) -> SliceChunks:
        """The same slices in chunks of at most ``max_bytes`` estimated in-memory
        bytes each (``split_by_size``; a larger slice is a chunk of its own), and
        at least ``min_chunks`` chunks where there are that many slices."""
        flat = self._flat()
        return self._regroup(split_by_size(flat, [st.size_bytes for _, st in flat], max_bytes, min_chunks))

    def _flat(self) -> list[tuple[HudiFileSlice, SliceStats]]:
        return [(s, st) for c, cs in zip(self.chunks, self.stats) for s, st in zip(c, cs)]

    def _regroup(self, groups: list[list[tuple[HudiFileSlice, SliceStats]]]) -> SliceChunks:
        return replace(
            self,
            chunks=[[s for s, _ in g] for g in groups],
            stats=[[st for _, st in g] for g in groups],
        )


def _same_timeline(a: HudiTable, b: HudiTable) -> bool:
    ta, tb = a.get_timeline(), b.get_timeline()
    return ta.instants == tb.instants and ta.pending == tb.pending


class HudiPlanner:
    """Serves plans of one table; run as an async Ray actor (see ``get_or_create_planner``).

    Loading and planning do storage I/O, so they run in threads and the actor
    keeps answering other reads meanwhile. Plans of one snapshot are made one
    at a time (a loaded table's caches are filled as it plans).
    """

    def __init__(
        self,
        table_uri: str,
        hudi_options: Mapping[str, str] | None = None,
        storage_options: Mapping[str, str] | None = None,
        refresh_interval_s: float = 0.0,
        max_snapshots: int = RAY_TUNABLES.planner_snapshots,
    ) -> None:
        # The URI is logged and shipped with snapshots; its credentials are options.
        table_uri, storage_opts = move_credentials(table_uri, storage_options or {})
        if refresh_interval_s < 0:
            raise HudiConfigError(
                f"refresh_interval_s must be >= 0, got {refresh_interval_s} (planner of {redact_text(table_uri)})"
            )
        self._uri = table_uri
        # What snapshots, logs and errors show: credentials kept in the URI (https) never appear.
        self._shown_uri = redact_text(table_uri)
        self._hudi = dict(hudi_options or {})
        self._storage_options = storage_opts
        self._refresh_interval_s = refresh_interval_s
        self._max_snapshots = max(1, max_snapshots)
        self._snapshots: OrderedDict[str, tuple[PlannerSnapshot, HudiTable, threading.Lock]] = OrderedDict()
        self._current: str | None = None
        self._checked_at = float("-inf")
        self._lock: asyncio.Lock | None = None  # made on the actor's event loop
        self.plans_served = 0
        # Plans made, by snapshot and options: a snapshot's files are pinned,
        # so a repeated read of it is planned the same, and served without
        # walking its file groups again. Touched on the actor's event loop only.
        self._plans: OrderedDict[tuple, SliceChunks] = OrderedDict()

    # -- snapshots -------------------------------------------------------------

    def _build(self) -> HudiTable:
        if self._current is not None:
            # What the current snapshot decoded of completed commits stays valid:
            # a refresh after a commit decodes (and fetches) that commit only.
            return self._snapshots[self._current][1].reloaded()
        return (
            HudiTableBuilder.from_base_uri(self._uri)
            .with_hudi_options(self._hudi)
            .with_storage_options(self._storage_options)
            .build()
        )

    def _install(self, table: HudiTable) -> None:
        """Make ``table`` current unless its timeline equals the current one (keeping warm caches)."""
        self._checked_at = time.monotonic()
        if self._current is not None and _same_timeline(self._snapshots[self._current][1], table):
            return
        latest = table.get_timeline().latest_data_instant()
        read_schema = table.get_read_schema() if table.has_schema() else None
        snap = PlannerSnapshot(
            snapshot_id=uuid.uuid4().hex,
            table_uri=self._shown_uri,
            latest_instant=latest.timestamp if latest else None,
            num_instants=len(table.get_timeline().instants),
            loaded_at=time.time(),
            read_schema=read_schema,
        )
        self._snapshots[snap.snapshot_id] = (snap, table, threading.Lock())
        self._current = snap.snapshot_id
        while len(self._snapshots) > self._max_snapshots:
            self._snapshots.popitem(last=False)
        log.info(
            "Planner of %s: snapshot %s, latest instant %s", self._shown_uri, snap.snapshot_id, snap.latest_instant
        )

    def _entry(self, snapshot_id: str | None) -> tuple[PlannerSnapshot, HudiTable, threading.Lock]:
        key = snapshot_id or self._current
        entry = self._snapshots.get(key) if key else None
        if key is None or entry is None:
            raise HudiCoreError(
                f"Snapshot {snapshot_id} of table {self._shown_uri} is no longer held by its planner "
                f"(it keeps the {self._max_snapshots} newest, or it restarted); create the dataset again"
            )
        self._snapshots.move_to_end(key)
        return entry

    async def _locked(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def snapshot(self, refresh: bool = True) -> PlannerSnapshot:
        """The current snapshot, after checking storage for new commits when
        ``refresh`` is set and ``refresh_interval_s`` has passed since the last check."""
        async with await self._locked():
            due = time.monotonic() - self._checked_at >= self._refresh_interval_s
            if self._current is None or (refresh and due):
                self._install(await asyncio.to_thread(self._build))
            return self._entry(None)[0]

    async def refresh(self) -> PlannerSnapshot:
        """Check storage for new commits now; the new snapshot when there were some."""
        async with await self._locked():
            self._install(await asyncio.to_thread(self._build))
            return self._entry(None)[0]

    async def _pinned(self, snapshot_id: str | None) -> tuple[PlannerSnapshot, HudiTable, threading.Lock]:
        if snapshot_id is None:
            await self.snapshot(refresh=True)
        return self._entry(snapshot_id)

    # -- plans -----------------------------------------------------------------

    async def plan(
        self, options: HudiReadOptions | None = None, num_chunks: int = 1, snapshot_id: str | None = None
    ) -> SliceChunks:
        """Slices for ``options`` on the pinned snapshot (the current one when
        None), split into at most ``num_chunks`` chunks, with per-slice stats."""
        snap, table, lock = await self._pinned(snapshot_id)
        key = (snap.snapshot_id, options_key(options or HudiReadOptions()), num_chunks)
        planned = self._plans.get(key)
        if planned is None:
            planned = await asyncio.to_thread(self._plan_sync, snap, table, lock, options, num_chunks)
            self._plans[key] = planned
            while len(self._plans) > RAY_TUNABLES.planner_plans:
                self._plans.popitem(last=False)
        else:
            self._plans.move_to_end(key)
        self.plans_served += 1
        return planned

    def _plan_sync(
        self,
        snap: PlannerSnapshot,
        table: HudiTable,
        lock: threading.Lock,
        options: HudiReadOptions | None,
        num_chunks: int,
    ) -> SliceChunks:
        with lock:
            plan = table.plan(options)
            table_stats = table.compute_table_stats(options)
            estimates = plan.estimate()
        storage_uri = plan.context.storage.uri
        stats = [
            SliceStats(
                num_rows=e.num_rows,
                size_bytes=e.size_bytes,
                input_files=tuple(storage_uri(f) for f in _files_of(s)),
            )
            for s, e in zip(plan.slices, estimates)
        ]
        whole = SliceChunks(
            snapshot=snap, plan=replace(plan, slices=[]), chunks=[plan.slices], stats=[stats], table_stats=table_stats
        )
        return whole.rechunk(num_chunks)

    async def incremental_range(
        self,
        after: str | None,
        start: str | None = None,
        max_instants: int | None = None,
        options: HudiReadOptions | None = None,
    ) -> tuple[PlannerSnapshot, IncrementalRange]:
        """The next incremental range (``HudiTable.next_incremental_range``) on
        the current snapshot, after checking storage for new commits: after
        position ``after``, or, without one, after where a new consumer
        starts (``start``: ``resolve_start``). A read of the range pins the
        returned snapshot, so range and plan see one timeline: a commit
        completing meanwhile is in neither (the full-snapshot fallback reads
        the latest state of that same timeline)."""
        snap, table, lock = await self._pinned(None)

        def compute() -> IncrementalRange:
            with lock:
                timeline = table.get_timeline()
                at = after if after is not None else resolve_start(start, timeline, table.timezone, "start")
                return table.next_incremental_range(position(at), max_instants, options)

        return snap, await asyncio.to_thread(compute)

    # -- table metadata ----------------------------------------------------------

    async def get_schema(self, snapshot_id: str | None = None) -> pa.Schema:
        _, table, lock = await self._pinned(snapshot_id)
        return await asyncio.to_thread(_with_lock, lock, table.get_schema)

    async def get_schema_with_meta_fields(self, snapshot_id: str | None = None) -> pa.Schema:
        _, table, lock = await self._pinned(snapshot_id)
        return await asyncio.to_thread(_with_lock, lock, table.get_schema_with_meta_fields)

    async def get_partition_schema(self, snapshot_id: str | None = None) -> pa.Schema:
        _, table, lock = await self._pinned(snapshot_id)
        return await asyncio.to_thread(_with_lock, lock, table.get_partition_schema)

    async def compute_table_stats(
        self, options: HudiReadOptions | None = None, snapshot_id: str | None = None
    ) -> tuple[int, int] | None:
        _, table, lock = await self._pinned(snapshot_id)
        return await asyncio.to_thread(_with_lock, lock, lambda: table.compute_table_stats(options))

    async def info(self) -> dict[str, Any]:
        """Where the planner runs and what it holds, for diagnostics and tests."""
        node_id = actor_id = None
        try:
            import ray

            if ray.is_initialized():
                node_id = ray.get_runtime_context().get_node_id()
                actor_id = ray.get_runtime_context().get_actor_id()
        except ImportError:  # used without Ray
            pass
        return {
            "table_uri": self._shown_uri,
            "node_id": node_id,
            "actor_id": actor_id,
            "current_snapshot": self._current,
            "snapshots": list(self._snapshots),
            "plans_served": self.plans_served,
        }


def _with_lock(lock: threading.Lock, fn: Any) -> Any:
    with lock:
        return fn()


def _files_of(s: HudiFileSlice) -> list[str]:
    return ([s.base_file_relative_path()] if s.base_file_name else []) + s.log_files_relative_paths()


# -- the Ray actor -----------------------------------------------------------------


def planner_name(
    table_uri: str, hudi_options: Mapping[str, str] | None = None, storage_options: Mapping[str, str] | None = None
) -> str:
    """The actor name for a table and its options; options and credentials are
    hashed, never shown."""
    # As the planner will hold them: URI credentials become options where the
    # storage client takes them so, and the rest stay in the URI.
    table_uri, storage_options = move_credentials(table_uri, storage_options or {})
    protocol, root = normalize_base_uri(table_uri)  # the name shows the root: no credentials
    parts: list[Any] = [protocol, root, sorted((hudi_options or {}).items()), sorted(storage_options.items())]
    _, user, password = split_credentials(table_uri) if isinstance(table_uri, str) else (None, None, None)
    if password is not None:
        parts.append([user, password])
    key = json.dumps(parts, default=str)
    return f"hudi-planner-{root.rstrip('/').rsplit('/', 1)[-1][:40]}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


# Planners this driver created or looked up, by (job, namespace, name): holding
# the handle keeps a non-detached named actor alive for the rest of the job,
# where otherwise it would die with the last dataset that referenced it.
_HANDLES: dict[tuple[str, str, str], Any] = {}


def get_or_create_planner(
    table_uri: str,
    *,
    hudi_options: Mapping[str, str] | None = None,
    storage_options: Mapping[str, str] | None = None,
    name: str | None = None,
    namespace: str = PLANNER_NAMESPACE,
    detached: bool = False,
    refresh_interval_s: float = 0.0,
    actor_options: Mapping[str, Any] | None = None,
) -> Any:
    """The named planner actor of a table, created on first use.

    The planner lives as long as this job (``detached`` keeps it alive after
    the job ends so later jobs reuse it; kill it with ``ray.kill`` when done).
    ``actor_options`` go to ``ActorClass.options`` (e.g. ``resources`` or
    ``scheduling_strategy`` to place it on a node). The actor takes no CPU:
    planning is mostly waiting on storage and must not hold back reader tasks.
    """
    import ray

    # Callers giving the same credentials in the URI or as options share a planner.
    table_uri, storage_options = move_credentials(table_uri, storage_options or {})
    actor_name = name or planner_name(table_uri, hudi_options, storage_options)
    key = (ray.get_runtime_context().get_job_id(), namespace, actor_name)
    handle = _HANDLES.get(key)
    if handle is not None:
        return handle
    opts: dict[str, Any] = {
        "name": actor_name,
        "namespace": namespace,
        "get_if_exists": True,
        "num_cpus": 0,
        "max_restarts": 3,
        "max_task_retries": 3,
    }
    if detached:
        opts["lifetime"] = "detached"
    opts.update(actor_options or {})
    actor_cls = ray.remote(HudiPlanner)
    handle = actor_cls.options(**opts).remote(
        table_uri, dict(hudi_options or {}), dict(storage_options or {}), refresh_interval_s
    )
    _HANDLES[key] = handle
    return handle


def forget_planner(handle: Any) -> None:
    """Drop this driver's reference to a planner (a non-detached one then ends with its last user)."""
    for key in [k for k, v in _HANDLES.items() if v == handle]:
        del _HANDLES[key]


def kill_planner(handle: Any) -> None:
    """End a planner now (datasets still planning with it will fail)."""
    import ray

    forget_planner(handle)
    ray.kill(handle, no_restart=True)


def get_planner(name: str, namespace: str = PLANNER_NAMESPACE) -> Any:
    """An existing named planner (``ValueError`` from Ray when there is none)."""
    import ray

    return ray.get_actor(name, namespace=namespace)


def call(ref: Any, timeout: float | None = None) -> Any:
    """``ray.get`` of a planner call, re-raising the reader's own errors as themselves."""
    import ray
    from ray.exceptions import RayTaskError

    try:
        return ray.get(ref, timeout=timeout)
    except RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, HudiCoreError):
            raise cause from None
        raise
