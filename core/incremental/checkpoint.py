"""An incremental job's checkpoint: a small JSON file on any storage the reader
reads (local disk, S3, ...), and a lease that keeps two runs off one checkpoint.

The checkpoint holds a position (``incremental.py``): the completion time up
to which the job has processed the table. A run takes the lease (a second
file next to the checkpoint, created only if absent), reads the range after
the position, and on success moves the position to the range's end and gives
the lease back. Moving it is guarded twice: the lease must still be the run's
own, and the checkpoint must still hold the position the run started from;
otherwise the run is refused and the checkpoint left as it is, so no range is
lost or counted twice in it.

A lease expires (``lease_seconds``): a run whose process died without giving
it back holds a checkpoint only that long. A run that outlives its lease may
find it taken over; its commit then fails. Taking over an expired lease is
atomic on local disk and S3 (exclusive creation), a check and a write
elsewhere.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

from hudi_ray.core.exceptions import (
    HudiCheckpointError,
    HudiConcurrentRunError,
    HudiCoreError,
    HudiFileNotFoundError,
)
from hudi_ray.core.storage import Storage, redact_text

FORMAT_VERSION = 1
LEASE_SUFFIX = ".lease"
DEFAULT_LEASE_SECONDS = 3600.0


@dataclass(frozen=True)
class Checkpoint:
    """What a job has processed: every change completed at or before ``position``."""

    table: str  # the table's URI as shown (credentials redacted)
    position: str
    last_instant: str | None  # the newest instant of the last committed range
    run_id: str | None
    committed_at: float

    def to_json(self) -> bytes:
        body = {
            "version": FORMAT_VERSION,
            "table": self.table,
            "position": self.position,
            "last_instant": self.last_instant,
            "run_id": self.run_id,
            "committed_at": self.committed_at,
        }
        return json.dumps(body, indent=1).encode("utf-8")


@dataclass(frozen=True)
class Lease:
    """A run's hold on a checkpoint."""

    run_id: str
    owner: str  # host:pid of the run's driver
    acquired_at: float
    expires_at: float

    def to_json(self) -> bytes:
        return json.dumps(self.__dict__).encode("utf-8")

    @property
    def expired(self) -> bool:
        return time.time() >= self.expires_at


def _split(uri: str) -> tuple[str, str]:
    text = str(uri).rstrip("/")
    if "/" not in text:
        return ".", text
    parent, name = text.rsplit("/", 1)
    if not name:
        raise HudiCheckpointError(f"Checkpoint location {redact_text(uri)!r} names no file")
    return parent or "/", name


class CheckpointStore:
    """The checkpoint file at ``uri`` and its lease (``uri`` + ``.lease``)."""

    def __init__(self, uri: str, storage_options: dict[str, str] | None = None) -> None:
        if not isinstance(uri, (str, os.PathLike)) or not str(uri).strip():
            raise HudiCheckpointError(f"checkpoint must be a file path or URI, got {uri!r}")
        uri = os.fspath(uri)
        parent, self.name = _split(uri)
        self.lease_name = self.name + LEASE_SUFFIX
        self.storage = Storage(parent, storage_options or {})
        self.shown = self.storage.uri(self.name)

    # -- reading -----------------------------------------------------------------

    def _read_json(self, name: str, what: str) -> dict[str, Any] | None:
        try:
            raw = self.storage.read_bytes(name)
        except HudiFileNotFoundError:
            return None
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HudiCheckpointError(f"The {what} {self.storage.uri(name)} is not valid JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise HudiCheckpointError(f"The {what} {self.storage.uri(name)} must hold a JSON object")
        return value

    def load(self) -> Checkpoint | None:
        """The stored checkpoint; None before the first committed run."""
        value = self._read_json(self.name, "checkpoint")
        if value is None:
            return None
        position = value.get("position")
        table = value.get("table")
        if not isinstance(position, str) or not position.isdigit() or not isinstance(table, str):
            raise HudiCheckpointError(
                f"The checkpoint {self.shown} is malformed: it needs a 'table' and a 'position' (a timeline time)"
            )
        last = value.get("last_instant")
        run_id = value.get("run_id")
        return Checkpoint(
            table=table,
            position=position,
            last_instant=last if isinstance(last, str) else None,
            run_id=run_id if isinstance(run_id, str) else None,
            committed_at=float(value.get("committed_at") or 0.0),
        )

    def lease(self) -> Lease | None:
        value = self._read_json(self.lease_name, "lease")
        if value is None:
            return None
        try:
            return Lease(
                run_id=str(value["run_id"]),
                owner=str(value["owner"]),
                acquired_at=float(value["acquired_at"]),
                expires_at=float(value["expires_at"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise HudiCheckpointError(f"The lease {self.storage.uri(self.lease_name)} is malformed: {exc}") from exc

    # -- the lease ---------------------------------------------------------------

    def acquire(self, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> Lease:
        """Take the lease for a new run, or raise ``HudiConcurrentRunError``
        naming the run that holds it. An expired lease is taken over."""
        if not lease_seconds > 0:
            raise HudiCheckpointError(f"lease_seconds must be positive, got {lease_seconds}")
        import socket  # here: a table that plans no incremental run loads neither
        import uuid

        now = time.time()
        mine = Lease(
            run_id=uuid.uuid4().hex,
            owner=f"{socket.gethostname()}:{os.getpid()}",
            acquired_at=now,
            expires_at=now + lease_seconds,
        )
        if self.storage.create_exclusive(self.lease_name, mine.to_json()):
            return mine
        held = self.lease()
        if held is not None and not held.expired:
            raise HudiConcurrentRunError(self._held_message(held))
        # Expired (or gone meanwhile): remove it, if it is still the one read, and create ours.
        again = self.lease()
        if again is not None and (held is None or again.run_id != held.run_id):
            raise HudiConcurrentRunError(self._held_message(again))
        if again is not None:
            self.storage.delete(self.lease_name)
        if self.storage.create_exclusive(self.lease_name, mine.to_json()):
            return mine
        other = self.lease()
        raise HudiConcurrentRunError(
            self._held_message(other) if other else f"Another run took the lease {self.shown}{LEASE_SUFFIX} first"
        )

    def _held_message(self, held: Lease) -> str:
        left = max(0.0, held.expires_at - time.time())
        return (
            f"Checkpoint {self.shown} is in use by run {held.run_id} ({held.owner}, since "
            f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(held.acquired_at))}); its lease "
            f"{self.storage.uri(self.lease_name)} expires in {left:.0f}s. Two runs on one checkpoint would read "
            "the same range; wait for it to finish, or delete the lease file if that run is dead"
        )

    def _check_held(self, lease: Lease) -> None:
        held = self.lease()
        if held is None or held.run_id != lease.run_id:
            who = f"run {held.run_id} ({held.owner}) holds it now" if held else "no run holds it now"
            raise HudiConcurrentRunError(
                f"Run {lease.run_id} no longer holds the lease of checkpoint {self.shown} ({who}; it expired "
                "after the run's lease_seconds); the checkpoint is left as it is"
            )

    def release(self, lease: Lease) -> None:
        """Give the lease back without moving the checkpoint (a run that failed)."""
        try:
            held = self.lease()
        except HudiCoreError:
            return
        if held is not None and held.run_id == lease.run_id:
            self.storage.delete(self.lease_name)

    # -- moving the checkpoint -------------------------------------------------------

    def commit(self, lease: Lease, table: str, start: str, end: str, last_instant: str | None) -> Checkpoint:
        """Move the checkpoint from ``start`` to ``end`` for the run holding
        ``lease``, then give the lease back."""
        self._check_held(lease)
        current = self.load()
        now_at = current.position if current is not None else None
        if current is not None and now_at != start:
            raise HudiCheckpointError(
                f"Checkpoint {self.shown} moved to {now_at} since run {lease.run_id} started from {start}; "
                "the checkpoint is left as it is"
            )
        checkpoint = Checkpoint(
            table=table, position=end, last_instant=last_instant, run_id=lease.run_id, committed_at=time.time()
        )
        self.storage.write_atomic(self.name, checkpoint.to_json())
        self.release(lease)
        return checkpoint
