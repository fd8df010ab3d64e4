"""The core's incremental range rules (``hudi_ray.core.incremental.ranges``):
ranges read every completed commit once, in the order they took effect, stop
before a pending write, never split instants completing at the same time;
a range whose history was archived or cleaned fails naming what is missing,
or with Hudi's fallback option reads the full snapshot at its end."""

from __future__ import annotations

import itertools
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_ray.core.exceptions import HudiConfigError, HudiHistoryError
from hudi_ray.core.incremental.ranges import earliest_pending_write, effect_order, position
from hudi_ray.core.table import HudiReadOptions, HudiTableBuilder, next_range, resolve_start
from hudi_ray.core.timeline import HudiInstant
from hudi_ray.core.timeline.timestamps import START_OF_TIME
from hudi_testkit.archive import delete_archive
from hudi_testkit.history import archive_oldest, clean_files, complete_held, hold_in_flight
from tests.commits import CommitLog, incremental, keyed, latest_per_key, snapshot
from tests.support import all_table_names

FALLBACK = {"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}


def _as_table(rows: list[tuple]) -> pa.Table:
    commit, ids, values = zip(*rows)
    return pa.table({"_hoodie_commit_time": list(commit), "id": list(ids), "value": list(values)})


def _consume(log: CommitLog, cap: int | None) -> list[tuple[str, str, list[str]]]:
    """Every range from the beginning until nothing is left: (start, end, instants)."""
    table = log.table()
    out = []
    at = START_OF_TIME
    while True:
        rng = next_range(table.get_timeline(), at, cap)
        if rng.is_empty:
            assert rng.end == at
            return out
        out.append((rng.start, rng.end, [i.timestamp for i in rng.instants]))
        at = rng.end


@pytest.mark.parametrize("version", [6, 8])
@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_ranges_read_each_commit_once_and_add_up_to_the_snapshot(tmp_path: Path, kind: str, version: int) -> None:
    log = CommitLog(tmp_path / "t", kind, partitioned=True, version=version)
    writes = [range(60), range(30, 90), range(0, 10), range(85, 120)]
    for ids in writes:
        log.commit(ids)
    ranges = _consume(log, 1)
    assert [r[2] for r in ranges] == [[c] for c in log.commits]
    table = log.table()
    union = []
    for (start, end, _), commit, ids, value in zip(ranges, log.commits, writes, range(1, 5)):
        got = keyed(incremental(table, start, end))
        # Each range returns exactly the rows its commit wrote.
        assert got == [(commit, i, value) for i in ids]
        union.extend(got)
    assert latest_per_key(_as_table(union)) == sorted(keyed(snapshot(table), ("id", "value")))
    # Without a cap one range holds everything.
    assert _consume(log, None) == [(START_OF_TIME, ranges[-1][1], log.commits)]


@pytest.mark.parametrize("version", [6, 8])
def test_a_pending_commit_holds_the_range_back_until_it_completes(tmp_path: Path, version: int) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False, version=version)
    a = log.commit(range(10))
    b = log.commit(range(10, 20))
    c = log.commit(range(20, 30))
    hold_in_flight(log.path, b)
    rng = next_range(log.table().get_timeline())
    assert [i.timestamp for i in rng.instants] == [a], "C completed but B, requested before it, may land inside"
    assert rng.waiting_on is not None and rng.waiting_on.timestamp == b
    complete_held(log.path, b)
    later = next_range(log.table().get_timeline(), rng.end)
    # From table version 8 B completes after C and takes effect after it.
    assert [i.timestamp for i in later.instants] == ([b, c] if version == 6 else [c, b])
    assert later.waiting_on is None
    rows = incremental(log.table(), later.start, later.end)
    assert sorted(rows.column("id").to_pylist()) == list(range(10, 30))


def test_instants_completing_at_the_same_time_stay_together(tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False, version=8)
    log.commit(range(5))
    log.commit(range(5, 10))
    log.commit(range(10, 15))
    timeline = log.table().get_timeline()
    a, b, c = timeline.data_instants
    # Give A and B one completion time (second precision, as older writers stamp it).
    same = "20300101000000"
    timeline._data = [  # the ranges only read instants and their completion times
        HudiInstant(a.timestamp, a.action, completion_timestamp=same),
        HudiInstant(b.timestamp, b.action, completion_timestamp=same),
        HudiInstant(c.timestamp, c.action, completion_timestamp="20300101000001000"),
    ]
    first = next_range(timeline, None, 1)
    assert [i.timestamp for i in first.instants] == [a.timestamp, b.timestamp]
    assert first.end == position(same) == "20300101000000000"
    second = next_range(timeline, first.end, 1)
    assert [i.timestamp for i in second.instants] == [c.timestamp]


def test_starting_positions(tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False, version=6)
    a = log.commit(range(5))
    b = log.commit(range(5, 10))
    timeline = log.table().get_timeline()
    assert resolve_start(None, timeline, "UTC") == START_OF_TIME
    assert resolve_start("earliest", timeline, "UTC") == START_OF_TIME
    assert resolve_start("latest", timeline, "UTC") == b
    assert [i.timestamp for i in next_range(timeline, resolve_start(a, timeline, "UTC")).instants] == [b]
    with pytest.raises(HudiConfigError, match="max_instants must be an integer > 0"):
        next_range(timeline, None, 0)
    with pytest.raises(HudiConfigError, match="startingOffsets"):
        resolve_start("yesterday", timeline, "UTC")


@pytest.mark.parametrize("kind", ["cow", "mor"])
@pytest.mark.parametrize("version", [6, 8])
def test_ranges_into_the_archived_history_read_exactly_the_changes(tmp_path: Path, version: int, kind: str) -> None:
    log = CommitLog(tmp_path / "t", kind, partitioned=True, version=version)
    for start in range(0, 50, 10):
        log.commit(range(start, start + 15))
    before = log.table()
    positions = [START_OF_TIME] + [i.completed_at for i in before.get_timeline().data_instants]
    steps = [incremental(before, a, b) for a, b in itertools.pairwise(positions)]
    archive_oldest(log.path, 3)
    table = log.table()
    assert table.get_timeline().archive.is_present()
    end = positions[-1]
    # A range from inside the archive is the union of its commits' ranges, each key's latest state.
    for k in range(3):
        union = pa.concat_tables(steps[k:])
        assert latest_per_key(incremental(table, positions[k], end)) == latest_per_key(union)
        # One commit at a time, read after archival, as before it.
        assert keyed(incremental(table, positions[k], positions[k + 1])) == keyed(steps[k])
    rng = next_range(table.get_timeline(), START_OF_TIME, 2)
    assert [i.timestamp for i in rng.instants] == log.commits[:2] and all(i.archived for i in rng.instants)


@pytest.mark.parametrize("version", [6, 8])
def test_lost_archived_history_fails_naming_the_instant_or_falls_back(tmp_path: Path, version: int) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=True, version=version)
    for start in range(0, 50, 10):
        log.commit(range(start, start + 15))
    first_kept = log.commits[2]
    archive_oldest(log.path, 2)
    delete_archive(log.path)
    table = log.table()
    end = next_range(table.get_timeline()).end
    with pytest.raises(HudiHistoryError) as err:
        incremental(table, START_OF_TIME, end)
    message = str(err.value)
    assert "archived" in message and first_kept in message
    assert "hoodie.datasource.read.incr.fallback.fulltablescan.enable" in message
    # A start on the active timeline is answered as before.
    after = log.table().get_timeline().data_instants[0].completed_at
    assert incremental(table, after, end).num_rows > 0
    # The fallback reads the latest state and says so in the plan.
    fallen = incremental(table, START_OF_TIME, end, **FALLBACK)
    assert keyed(fallen) == keyed(snapshot(table))
    read = HudiReadOptions(hudi_options={"hoodie.read.query.type": "incremental", **FALLBACK})
    plan = table.plan(read)
    assert plan.fallback is not None and "archived" in plan.fallback
    # A consumer falling back moves to the latest position at once.
    rng = table.next_incremental_range(START_OF_TIME, 1, read)
    assert rng.full_snapshot and rng.end == end
    assert not table.next_incremental_range(START_OF_TIME, 1).full_snapshot


@pytest.mark.parametrize("keep_record", [True, False], ids=["clean-on-timeline", "clean-archived"])
@pytest.mark.parametrize("version", [6, 8])
def test_cleaned_files_fail_naming_the_file_or_fall_back(tmp_path: Path, version: int, keep_record: bool) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False, version=version)
    first = log.commit(range(20))
    log.commit(range(20))  # rewrites the same file group
    log.commit(range(10))  # and again: the first version is cleanable
    table = log.table()
    stats = table.get_timeline().write_stats(table.get_timeline().data_instants[0])
    gone = [s["path"] for s in stats]
    clean_files(log.path, gone, keep_record=keep_record)
    table = log.table()
    end_of_first = table.get_timeline().data_instants[0].completed_at
    with pytest.raises(HudiHistoryError) as err:
        incremental(table, START_OF_TIME, end_of_first)
    message = str(err.value)
    assert gone[0].rsplit("/", 1)[-1] in message and first in message
    latest = next_range(table.get_timeline()).end
    fallen = incremental(table, START_OF_TIME, latest, **FALLBACK)
    assert keyed(fallen) == keyed(snapshot(table))
    assert sorted(keyed(fallen, ("id", "value"))) == sorted(
        [(i, 3) for i in range(10)] + [(i, 2) for i in range(10, 20)]
    )
    rng = table.next_incremental_range(START_OF_TIME, 1, HudiReadOptions(hudi_options=FALLBACK))
    assert rng.full_snapshot and rng.end == latest
    # Ranges after the cleaned commit still read incrementally.
    later = incremental(table, end_of_first, latest)
    assert keyed(later, ("id", "value")) == sorted([(i, 2) for i in range(10, 20)] + [(i, 3) for i in range(10)])


@pytest.mark.parametrize("name", all_table_names())
def test_one_instant_ranges_of_every_real_table_are_the_oracles_ranges(name: str, table_path) -> None:
    """From the beginning, one instant per range: every completed data instant once, in the
    order it took effect, up to the earliest pending write, each range starting where the last
    ended. These are the consecutive-instant incremental queries that
    ``test_oracle.py::test_incremental_between_consecutive_instants`` checks against hudi-rs,
    and the ranges a stream with one instant per trigger and the Ray job read."""
    timeline = HudiTableBuilder.from_base_uri(str(table_path(name))).build().get_timeline()
    pending = earliest_pending_write(timeline)
    expected = sorted(
        (
            i
            for i in timeline.data_instants
            if pending is None or position(i.completed_at) < position(pending.timestamp)
        ),
        key=effect_order,
    )
    ranges = []
    start = None
    while len(ranges) <= len(expected):
        rng = next_range(timeline, start, max_instants=1)
        if rng.is_empty:
            break
        assert rng.start == (start or START_OF_TIME)
        assert rng.end == position(rng.instants[-1].completed_at)
        ranges.append(rng)
        start = rng.end
    assert [i for r in ranges for i in r.instants] == expected
    assert all(len({position(i.completed_at) for i in r.instants}) == 1 for r in ranges)
