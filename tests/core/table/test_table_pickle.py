"""A pickled ``HudiTable`` keeps the timeline it was loaded with: its copy reads
the same rows as the original, and no commit completed after pickling, not
even one that was in flight at the time, becomes visible in the copy."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_ray.core import HudiTableBuilder
from hudi_ray.core.table import HudiTable
from hudi_testkit import upsert_cow_table, write_cow_table
from tests.support import numbered_rows, row_set


def _build(path: Path) -> HudiTable:
    return HudiTableBuilder.from_base_uri(str(path)).build()


def _copy(table: HudiTable) -> HudiTable:
    return pickle.loads(pickle.dumps(table))


def _ids(table: HudiTable) -> list[int]:
    batches = table.read()
    return sorted(pa.Table.from_batches(batches).column("id").to_pylist()) if batches else []


def _write(path: Path, version: int) -> str:
    """Commits A (ids 0..99), B (100..199) and C (200..299); returns B's instant time."""
    write_cow_table(
        path,
        numbered_rows(0, 100),
        table_name="numbered",
        record_key="id",
        partition_field="region",
        precombine_field="value",
        table_version=version,
        metadata_table=version >= 8,
    )
    b = upsert_cow_table(path, numbered_rows(100, 100)).instant_time
    upsert_cow_table(path, numbered_rows(200, 100))
    return b


def _completed_file(path: Path, version: int, instant: str) -> Path:
    folder = path / (".hoodie/timeline" if version >= 8 else ".hoodie")
    (found,) = [p for p in folder.iterdir() if p.name.startswith(instant) and p.name.endswith(".commit")]
    return found


def test_copy_reads_what_the_original_reads(tmp_path: Path) -> None:
    _write(tmp_path / "t", 6)
    table = _build(tmp_path / "t")
    copy = _copy(table)
    assert row_set(copy.read()) == row_set(table.read())
    assert copy.get_timeline().instants == table.get_timeline().instants
    assert copy.get_schema() == table.get_schema()
    assert repr(copy) == repr(table)


def test_copy_keeps_the_pickled_timeline(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _write(path, 6)
    pickled = pickle.dumps(_build(path))
    upsert_cow_table(path, numbered_rows(300, 50))
    assert _ids(_build(path)) == list(range(350))
    copy = pickle.loads(pickled)
    assert _ids(copy) == list(range(300))
    assert len(copy.get_timeline().data_instants) == 3


@pytest.mark.parametrize("version", [6, 8])
def test_commit_in_flight_when_pickled_stays_invisible(tmp_path: Path, version: int) -> None:
    path = tmp_path / "t"
    b = _write(path, version)
    # B back in flight: only its requested and inflight files remain, while C, started later, completed.
    done = _completed_file(path, version, b)
    aside = done.rename(tmp_path / done.name)
    table = _build(path)
    timeline = table.get_timeline()
    assert b in {i.timestamp for i in timeline.pending} and b < timeline.latest_data_instant().timestamp
    assert not timeline.is_completed_data_instant(b)
    pickled = pickle.dumps(table)
    aside.rename(done)  # B completes
    assert _ids(_build(path)) == list(range(300)), "a freshly loaded table must see B"
    copy = pickle.loads(pickled)
    assert _ids(copy) == [*range(100), *range(200, 300)]
    assert _ids(table) == [*range(100), *range(200, 300)]
