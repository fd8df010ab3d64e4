"""What the data table writers and the metadata table writer share: instant times, the
timeline folder as it stands, atomic file writes and vectorized row grouping.

It depends on no other writer module, so every writer module can build on it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ray.core import HudiTimestampError
from hudi_ray.core.timeline import HudiInstant, format_timeline, timeline_to_datetime
from hudi_testkit.errors import InstantTimeError
from hudi_testkit.metadata import format_properties

# The writers always write millisecond instant times; the core also reads 14-digit ones.
INSTANT_TIME_LENGTH = 17

# -- instant times -----------------------------------------------------------------------------


def format_instant_time(moment: datetime) -> str:
    """``yyyyMMddHHmmssSSS`` in UTC."""
    return format_timeline(moment, "UTC")


def parse_instant_time(instant: str) -> datetime:
    """The UTC moment of a 17-digit instant time."""
    if len(instant) != INSTANT_TIME_LENGTH:
        raise InstantTimeError(f"Instant time {instant!r} is not 17 digits (yyyyMMddHHmmssSSS)")
    try:
        return timeline_to_datetime(instant, "UTC")
    except HudiTimestampError as exc:
        raise InstantTimeError(f"Instant time {instant!r} is not a valid yyyyMMddHHmmssSSS time: {exc}") from exc


def next_instant_time(after: str | None, candidate: datetime | None = None) -> str:
    """``candidate`` (default: now), moved forward if needed to be strictly after ``after``."""
    moment = candidate or datetime.now(timezone.utc)
    if after is not None:
        moment = max(moment, parse_instant_time(after) + timedelta(milliseconds=1))
    return format_instant_time(moment)


# -- the timeline folder -----------------------------------------------------------------------


def list_instants(folder: Path) -> list[HudiInstant]:
    """Every instant file of a timeline folder, in any state, oldest first; none if there is no folder."""
    if not folder.is_dir():
        return []
    parsed = (HudiInstant.parse(name) for name in os.listdir(folder))
    return sorted(i for i in parsed if i is not None)


def latest_time(instants: Iterable[HudiInstant]) -> str | None:
    """The latest requested or completion time: new instants must come after it, failed writes included."""
    return max((t for i in instants for t in (i.timestamp, i.completion_timestamp) if t), default=None)


# -- files -------------------------------------------------------------------------------------


def write_atomic(path: Path, data: bytes) -> None:
    """Write then rename, so readers never see a half-written timeline or properties file."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def complete_instant(
    timeline: Path, instant: str, action: str, body: bytes, table_version: int, explicit_time: bool
) -> str | None:
    """Write the completed instant file; table version 8+ names its completion
    time (after the instant, or at its given time), which is returned."""
    if table_version < 8:
        write_atomic(timeline / f"{instant}.{action}", body)
        return None
    completion = next_instant_time(instant, parse_instant_time(instant) if explicit_time else None)
    write_atomic(timeline / f"{instant}_{completion}.{action}", body)
    return completion


def write_properties(path: Path, props: Mapping[str, str], what: str) -> None:
    """A ``hoodie.properties`` file whose comment says when it was saved, as Hudi's writers date it."""
    now = datetime.now(timezone.utc)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    write_atomic(path, format_properties(props, f"{what} on {stamp}", now).encode("utf-8"))


# -- vectorized helpers ------------------------------------------------------------------------


def arange(n: int) -> pa.Array:
    """0..n-1 as int64, without a Python loop."""
    if n == 0:
        return pa.array([], pa.int64())
    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n)), 1)


def flat(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def groups(values: pa.Array) -> list[tuple[Any, pa.Array]]:
    """Positions of each distinct value of ``values``, in input order within a group.

    Dictionary codes are sorted stably and run-length encoded: one pass of
    vectorized work, then a Python loop over groups, not rows.
    """
    if len(values) == 0:
        return []
    encoded = pc.dictionary_encode(values)
    order = pc.array_sort_indices(encoded.indices)
    runs = pc.run_end_encode(encoded.indices.take(order))
    out: list[tuple[Any, pa.Array]] = []
    start = 0
    for end, code in zip(runs.run_ends.to_pylist(), runs.values.to_pylist()):
        out.append((encoded.dictionary[code].as_py(), order.slice(start, end - start)))
        start = end
    return out
