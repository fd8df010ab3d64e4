"""Timeline states the writers do not reach by themselves, for incremental-read tests:
a commit held in flight and completed later, instants archived off the active
timeline, and files removed by a clean.

Each acts on a table the writers of this package wrote (table version 6, 8 or 9),
in the layout Apache Hudi gives those states.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from hudi_ray.core.config import parse_properties
from hudi_ray.core.timeline import HudiInstant
from hudi_testkit.archive import archive_instants
from hudi_testkit.common import latest_time, list_instants, next_instant_time, write_atomic
from hudi_testkit.errors import InstantTimeError

_STASH = ".testkit_in_flight"


def _timeline(base: Path) -> tuple[Path, int]:
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_text("utf-8"))
    version = int(props.get("hoodie.table.version", "6"))
    return (base / ".hoodie" / "timeline" if version >= 8 else base / ".hoodie"), version


def _completed(folder: Path, instant: str) -> HudiInstant:
    for i in list_instants(folder):
        if i.timestamp == instant and i.is_completed:
            return i
    raise InstantTimeError(f"No completed instant {instant} in {folder}")


def hold_in_flight(base_path: str | os.PathLike[str], instant: str) -> None:
    """Put a completed commit back in flight: its completed file moves aside,
    its requested and inflight files stay, as while the writer still runs."""
    base = Path(base_path)
    folder, _ = _timeline(base)
    done = _completed(folder, instant)
    stash = base / ".hoodie" / _STASH
    stash.mkdir(exist_ok=True)
    os.replace(folder / done.file_name, stash / done.file_name)


def complete_held(base_path: str | os.PathLike[str], instant: str) -> str | None:
    """Complete a commit held by ``hold_in_flight`` now. From table version 8
    its completion time is now (after every time on the timeline), as a
    writer finishing late gives it; returns that completion time."""
    base = Path(base_path)
    folder, version = _timeline(base)
    stash = base / ".hoodie" / _STASH
    held = [n for n in os.listdir(stash) if n.startswith(instant)] if stash.is_dir() else []
    if not held:
        raise InstantTimeError(f"Instant {instant} is not held in flight in {base}")
    name = held[0]
    if version < 8:
        os.replace(stash / name, folder / name)
        return None
    action = name.split(".", 1)[1]
    completion = next_instant_time(latest_time(list_instants(folder)))
    os.replace(stash / name, folder / f"{instant}_{completion}.{action}")
    return completion


def archive_oldest(base_path: str | os.PathLike[str], count: int) -> list[str]:
    """Move the ``count`` oldest completed instants (every state file of each)
    off the active timeline into the archived history (``.hoodie/archived``
    for version 6, the LSM history folder for 8 and up), as Hudi's archiver
    writes it (:func:`hudi_testkit.archive.archive_instants`); returns their times."""
    return archive_instants(base_path, count)


def clean_files(
    base_path: str | os.PathLike[str], relative_paths: Sequence[str], *, keep_record: bool = True
) -> str | None:
    """Delete data files as Hudi's cleaner does; with ``keep_record`` a
    completed clean instant naming them lands on the active timeline (without
    it, as after that clean was archived). Returns the clean's instant time."""
    base = Path(base_path)
    folder, version = _timeline(base)
    by_partition: dict[str, list[str]] = {}
    for rel in relative_paths:
        os.unlink(base / rel)
        partition, _, name = rel.rpartition("/")
        by_partition.setdefault(partition, []).append(name)
    if not keep_record:
        return None
    instant = next_instant_time(latest_time(list_instants(folder)))
    meta = {
        "partitionMetadata": {
            p: {"partitionPath": p, "successDeleteFiles": names, "failedDeleteFiles": [], "deletePathPatterns": names}
            for p, names in by_partition.items()
        },
        "totalFilesDeleted": len(relative_paths),
        "startCleanTime": instant,
    }
    body = json.dumps(meta).encode("utf-8")
    if version >= 8:
        completion = next_instant_time(instant)
        write_atomic(folder / f"{instant}_{completion}.clean", body)
    else:
        write_atomic(folder / f"{instant}.clean", body)
    return instant
