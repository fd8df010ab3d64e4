"""Checkpointed incremental runs on Ray (``hudi_ray.incremental``): a run that
fails before committing leaves the checkpoint, so the next run reads the same
range; a committed run moves it past its range; a second run on a checkpoint
in use is refused; an expired lease is taken over; history that is gone fails
or, with the fallback, reads the latest snapshot and moves to the latest position."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow as pa
import pytest

import hudi_ray
from hudi_ray.core.exceptions import HudiCheckpointError, HudiConcurrentRunError, HudiHistoryError
from hudi_testkit.archive import delete_archive
from hudi_testkit.history import archive_oldest, complete_held, hold_in_flight
from tests.commits import CommitLog, incremental, keyed, latest_per_key, snapshot
from tests.support import dataset_table

pytestmark = pytest.mark.usefixtures("ray_session")

FALLBACK = {"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}


def _rows(run: hudi_ray.IncrementalRun) -> pa.Table:
    blocks = run.dataset.to_arrow_refs()
    import ray

    tables = [t for t in ray.get(blocks) if t.num_rows]
    return pa.concat_tables(tables) if tables else pa.table({"id": pa.array([], pa.int64())})


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_crash_reads_the_range_again_and_success_moves_on(tmp_path: Path, kind: str) -> None:
    log = CommitLog(tmp_path / "t", kind, partitioned=True)
    a = log.commit(range(30))
    b = log.commit(range(20, 40))
    checkpoint = str(tmp_path / "jobs" / "t.checkpoint")

    class Crash(Exception):
        pass

    with pytest.raises(Crash), hudi_ray.incremental(str(log.path), checkpoint=checkpoint, max_instants=1) as run:
        assert run.instants == [a]
        assert _rows(run).num_rows == 30
        raise Crash  # after reading, before committing
    assert not Path(checkpoint).exists(), "a failed run leaves no checkpoint"

    table = log.table()
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint, max_instants=1) as run:
        assert run.instants == [a], "the next run reads the same range again"
        first = _rows(run)
        assert keyed(first) == keyed(incremental(table, run.start, run.end))
        run.commit()
    saved = json.loads(Path(checkpoint).read_text())
    assert saved["position"] == run.end and saved["last_instant"] == a

    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint, max_instants=1) as run:
        assert run.instants == [b] and run.start == saved["position"]
        second = _rows(run)
        assert sorted(second.column("id").to_pylist()) == list(range(20, 40))
        run.commit()
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint) as run:
        assert run.is_empty and run.start == run.end
        assert run.dataset.count() == 0
        run.commit()
    union = pa.concat_tables(
        [first.select(["_hoodie_commit_time", "id", "value"]), second.select(["_hoodie_commit_time", "id", "value"])]
    )
    assert latest_per_key(union) == sorted(keyed(snapshot(log.table()), ("id", "value")))


def test_concurrent_runs_are_refused_and_no_range_is_lost_or_doubled(tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False)
    a = log.commit(range(10))
    checkpoint = str(tmp_path / "t.checkpoint")
    run = hudi_ray.incremental(str(log.path), checkpoint=checkpoint)
    with pytest.raises(HudiConcurrentRunError, match=f"in use by run {run.run_id}") as err:
        hudi_ray.incremental(str(log.path), checkpoint=checkpoint)
    assert "t.checkpoint.lease" in str(err.value)
    b = log.commit(range(10, 20))
    run.commit()
    assert run.instants == [a]
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint) as nxt:
        assert nxt.instants == [b]
        nxt.commit()
    with pytest.raises(HudiCheckpointError, match="committed"):
        nxt.commit()


def test_an_expired_lease_is_taken_over_and_its_run_cannot_commit(tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False)
    log.commit(range(10))
    checkpoint = str(tmp_path / "t.checkpoint")
    stale = hudi_ray.incremental(str(log.path), checkpoint=checkpoint, lease_seconds=0.2)
    time.sleep(0.3)
    fresh = hudi_ray.incremental(str(log.path), checkpoint=checkpoint)
    assert fresh.instants == stale.instants
    with pytest.raises(HudiConcurrentRunError, match="no longer holds the lease"):
        stale.commit()
    fresh.commit()
    assert json.loads(Path(checkpoint).read_text())["run_id"] == fresh.run_id


def test_a_commit_in_flight_is_read_once_complete(tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "mor", partitioned=True)
    a = log.commit(range(10))
    b = log.commit(range(10, 20))
    c = log.commit(range(20, 30))
    hold_in_flight(log.path, b)
    checkpoint = str(tmp_path / "t.checkpoint")
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint) as run:
        assert run.instants == [a] and run.waiting_on == b
        run.commit()
    complete_held(log.path, b)
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint) as run:
        assert sorted(run.instants) == [b, c]
        assert sorted(_rows(run).column("id").to_pylist()) == list(range(10, 30))
        run.commit()


def test_checkpoint_of_another_table_and_bad_arguments(tmp_path: Path) -> None:
    one = CommitLog(tmp_path / "one", "cow", partitioned=False)
    one.commit(range(5))
    two = CommitLog(tmp_path / "two", "cow", partitioned=False)
    two.commit(range(5))
    checkpoint = str(tmp_path / "shared.checkpoint")
    with hudi_ray.incremental(str(one.path), checkpoint=checkpoint) as run:
        run.commit()
    with pytest.raises(HudiCheckpointError, match="belongs to table"):
        hudi_ray.incremental(str(two.path), checkpoint=checkpoint)
    assert not Path(checkpoint + ".lease").exists(), "a refused run gives the lease back"
    with pytest.raises(Exception, match="max_instants"):
        hudi_ray.incremental(str(one.path), checkpoint=checkpoint, max_instants=0)
    with pytest.raises(HudiCheckpointError, match="not valid JSON"):
        Path(checkpoint).write_text("{")
        hudi_ray.incremental(str(one.path), checkpoint=checkpoint)


def test_archived_history_is_read_by_runs(tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=True, version=6)
    for start in range(0, 40, 10):
        log.commit(range(start, start + 15))
    archive_oldest(log.path, 2)
    checkpoint = str(tmp_path / "t.checkpoint")
    for commit in log.commits:
        with hudi_ray.incremental(str(log.path), checkpoint=checkpoint, max_instants=1) as run:
            assert run.instants == [commit] and not run.full_snapshot
            run.commit()


def test_lost_archived_history_fails_or_falls_back_to_the_latest_snapshot(tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=True, version=6)
    for start in range(0, 40, 10):
        log.commit(range(start, start + 15))
    archive_oldest(log.path, 2)
    delete_archive(log.path)
    checkpoint = str(tmp_path / "t.checkpoint")
    with pytest.raises(HudiHistoryError, match=rf"active timeline \(which starts at instant {log.commits[2]}\)"):
        hudi_ray.incremental(str(log.path), checkpoint=checkpoint, max_instants=1)
    assert not Path(checkpoint + ".lease").exists()
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint, max_instants=1, hudi_options=FALLBACK) as run:
        assert run.full_snapshot and "archived" in (run.fallback or "")
        assert run.instants == log.commits[2:], "the range extends to the latest position"
        assert keyed(_rows(run)) == keyed(snapshot(log.table()))
        run.commit()
    log.commit(range(100, 105))
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint, hudi_options=FALLBACK) as run:
        assert not run.full_snapshot and run.instants == [log.commits[-1]]
        assert sorted(_rows(run).column("id").to_pylist()) == list(range(100, 105))


def test_range_and_read_see_one_timeline(tmp_path: Path) -> None:
    """The planner takes the range and the read pins that snapshot: a commit
    completing in between is in neither, even where the fallback reads the
    latest state (read on a newer timeline, it would hold that commit's rows
    while the checkpoint moved only to the range's end)."""
    from hudi_ray.datasource import incremental_range

    log = CommitLog(tmp_path / "t", "cow", partitioned=True, version=6)
    for start in range(0, 40, 10):
        log.commit(range(start, start + 15))
    archive_oldest(log.path, 2)
    delete_archive(log.path)  # the history lost: the range falls back to the latest state
    expected = keyed(snapshot(log.table()))
    planner, pinned, rng = incremental_range(str(log.path), after=None, hudi_options=FALLBACK)
    assert rng.full_snapshot and rng.instants[-1].timestamp == log.commits[-1]
    log.commit(range(100, 105))  # completes after the range was taken
    ds = hudi_ray.read_hudi(
        str(log.path),
        query_type="incremental",
        start_timestamp=rng.start,
        end_timestamp=rng.end,
        hudi_options=FALLBACK,
        planner=planner,
        snapshot=pinned,
    )
    rows = dataset_table(ds)
    assert rows is not None and keyed(rows) == expected
    unpinned = dataset_table(
        hudi_ray.read_hudi(
            str(log.path),
            query_type="incremental",
            start_timestamp=rng.start,
            end_timestamp=rng.end,
            hudi_options=FALLBACK,
        )
    )
    assert unpinned is not None and 100 in unpinned.column("id").to_pylist(), "the case pinning guards against"
