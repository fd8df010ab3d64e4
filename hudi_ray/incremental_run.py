"""Checkpointed incremental jobs on Ray: each run reads what changed since the
last successful run, as a Ray Dataset.

    run = hudi_ray.incremental("s3://bucket/trips", checkpoint="s3://bucket/jobs/trips.ckpt")
    with run:
        run.dataset.write_parquet(out)   # the changes of run.instants
        run.commit()                     # only now does the checkpoint move

A run takes the checkpoint's lease (a second run on the same checkpoint is
refused with ``HudiConcurrentRunError``); the table's planner actor picks the
next range after the stored position with the core's rules
(``hudi_ray.core.incremental.ranges``: it stops before the earliest pending
write, keeps instants completing at the same time together, caps at
``max_instants``) on a fresh snapshot, and the run reads the range on that
same snapshot through ``read_hudi`` (the planner and reader tasks): a small range
(a commit's few files) at once, so the dataset is materialized and consuming
it pays no read, a larger one when the dataset is consumed. ``commit()`` moves
the checkpoint to the range's end and gives the lease back; leaving the
``with`` block without it (an exception, or no call) gives the lease back and
keeps the checkpoint, so the next run reads the same range again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hudi_ray.core.exceptions import HudiCheckpointError, HudiConfigError
from hudi_ray.core.storage import normalize_base_uri, redact_text
from hudi_ray.core.table import (
    DEFAULT_LEASE_SECONDS,
    Checkpoint,
    CheckpointStore,
    IncrementalRange,
    Lease,
    checked_max_instants,
)
from hudi_ray.tunables import RAY_TUNABLES

if TYPE_CHECKING:
    from ray.data import Dataset

log = logging.getLogger(__name__)


def _table_id(uri: str) -> str:
    """The table as a checkpoint records it: protocol and root, no credentials."""
    protocol, root = normalize_base_uri(uri)
    return redact_text(f"{protocol}://{root}")


class IncrementalRun:
    """One run of an incremental job: the range it reads and the changes as a
    Ray Dataset. ``commit()`` on success; ``abort()`` (or leaving a ``with``
    block without committing) otherwise."""

    def __init__(
        self,
        store: CheckpointStore,
        lease: Lease,
        table: str,
        rng: IncrementalRange,
        dataset: Dataset,
        fallback: str | None,
    ) -> None:
        self._store = store
        self._lease = lease
        self._table = table
        self._range = rng
        self.dataset = dataset
        self.fallback = fallback
        self._done: str | None = None

    @property
    def run_id(self) -> str:
        return self._lease.run_id

    @property
    def start(self) -> str:
        """The position the run starts after (exclusive)."""
        return self._range.start

    @property
    def end(self) -> str:
        """The position the checkpoint moves to on commit (inclusive)."""
        return self._range.end

    @property
    def instants(self) -> list[str]:
        """The instants (requested times) whose changes the run reads, in the order they took effect."""
        return [i.timestamp for i in self._range.instants]

    @property
    def is_empty(self) -> bool:
        """True when nothing completed since the checkpoint."""
        return self._range.is_empty

    @property
    def full_snapshot(self) -> bool:
        """True when the range's history was gone and the run reads the full
        snapshot at its end instead (``fallback`` says why)."""
        return self.fallback is not None

    @property
    def waiting_on(self) -> str | None:
        """The pending write the range stopped before, if one held it back."""
        return self._range.waiting_on.timestamp if self._range.waiting_on is not None else None

    def commit(self) -> Checkpoint:
        """Record the range as processed: the checkpoint moves to ``end``."""
        self._open("commit")
        checkpoint = self._store.commit(
            self._lease,
            self._table,
            self._range.start,
            self._range.end,
            self.instants[-1] if self.instants else None,
        )
        self._done = "committed"
        log.info("Incremental run %s committed %s: checkpoint at %s", self.run_id, self._store.shown, self.end)
        return checkpoint

    def abort(self) -> None:
        """Give the lease back; the checkpoint stays, and the next run reads this range again."""
        if self._done is not None:
            return
        self._store.release(self._lease)
        self._done = "aborted"

    def _open(self, what: str) -> None:
        if self._done is not None:
            raise HudiCheckpointError(f"Cannot {what} run {self.run_id} of {self._store.shown}: it was {self._done}")

    def __enter__(self) -> IncrementalRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()

    def __repr__(self) -> str:
        return (
            f"IncrementalRun(table={self._table!r}, checkpoint={self._store.shown!r}, start={self.start!r}, "
            f"end={self.end!r}, instants={len(self.instants)}, full_snapshot={self.full_snapshot})"
        )


def incremental(
    table_uri: str,
    *,
    checkpoint: str,
    checkpoint_storage_options: dict[str, str] | None = None,
    start: str | None = None,
    max_instants: int | None = None,
    columns: Sequence[str] | None = None,
    filters: list[tuple[str, str, str]] | None = None,
    hudi_options: dict[str, str] | None = None,
    storage_options: dict[str, str] | None = None,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    **read_args: Any,
) -> IncrementalRun:
    """Start a run of an incremental job over ``table_uri``.

    Args:
        checkpoint: Path or URI of the job's checkpoint file (any storage the
            reader reads); created by the first committed run.
        checkpoint_storage_options: Storage options for the checkpoint's
            location (default: ``storage_options``).
        start: Where a job without a checkpoint begins: ``earliest`` (the
            default), ``latest`` (only changes from now on), or a timestamp
            after which changes are read.
        max_instants: At most this many instants per run (more only when
            instants completed at the same time as the last one).
        columns, filters, hudi_options, storage_options: as ``read_hudi``;
            ``hoodie.datasource.read.incr.fallback.fulltablescan.enable=true``
            in ``hudi_options`` reads the full snapshot at the range's end when
            its history was archived or cleaned (``run.full_snapshot``).
        lease_seconds: How long the run holds the checkpoint at most.
        read_args: Further ``read_hudi`` arguments (``num_cpus``, ...).
            A range of at most ``materialize_bytes`` estimated bytes
            (``RayTunables.incremental_materialize_bytes`` unless given) is
            read when the run starts, and ``run.dataset`` is materialized;
            a larger one is read when the dataset is consumed.

    Raises ``HudiConcurrentRunError`` when another run holds the checkpoint,
    ``HudiHistoryError`` when the range's history is gone (without the fallback).
    """
    from hudi_ray.datasource import incremental_range, planned_read, read_hudi

    checked_max_instants(max_instants)
    for key in ("query_type", "start_timestamp", "end_timestamp", "as_of_timestamp"):
        if key in read_args:
            raise HudiConfigError(f"{key} is not an argument of incremental(): the run reads its checkpoint's range")
    store = CheckpointStore(
        checkpoint, checkpoint_storage_options if checkpoint_storage_options is not None else storage_options
    )
    table_id = _table_id(table_uri)
    lease = store.acquire(lease_seconds)
    try:
        saved = store.load()
        if saved is not None and saved.table != table_id:
            raise HudiCheckpointError(
                f"Checkpoint {store.shown} belongs to table {saved.table}, not {table_id}; "
                "give each job its own checkpoint"
            )
        # The planner takes the range on a fresh snapshot and the read pins it:
        # range and plan see one timeline.
        planner, snapshot, rng = incremental_range(
            table_uri,
            after=saved.position if saved is not None else None,
            start=start,
            max_instants=max_instants,
            hudi_options=hudi_options,
            storage_options=storage_options,
            planner=read_args.pop("planner", None),
            planner_options=read_args.get("planner_options"),
        )
        dataset = read_hudi(
            table_uri,
            query_type="incremental",
            start_timestamp=rng.start,
            end_timestamp=rng.end,
            columns=list(columns) if columns is not None else None,
            filters=filters,
            hudi_options=hudi_options,
            storage_options=storage_options,
            planner=planner,
            snapshot=snapshot,
            **{"materialize_bytes": RAY_TUNABLES.incremental_materialize_bytes, **read_args},
        )
        fallback = planned_read(dataset).plan.fallback
    except BaseException:
        store.release(lease)
        raise
    if rng.waiting_on is not None:
        log.info(
            "Incremental run over %s stops at %s, before pending instant %s",
            table_id,
            rng.end,
            rng.waiting_on.timestamp,
        )
    return IncrementalRun(store, lease, table_id, rng, dataset, fallback)


__all__ = ["IncrementalRun", "incremental"]
