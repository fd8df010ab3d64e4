"""Long-lived tables (``hudi_testkit.longlived``): many commits with compaction,
clustering, cleaning, rollbacks and archiving. hudi-ray and hudi-rs must return
the generator's model of the table, and the table must have the shape that
makes it worth reading: archived history, every service completed, and (MERGE_ON_READ)
latest slices whose log files were written by archived delta commits.

One small table per (table type, version, archive) is generated once per module.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hudi_ray
from hudi_ray.core.timeline import HudiInstant
from hudi_testkit.common import list_instants
from hudi_testkit.longlived import (
    COPY_ON_WRITE,
    DATA_COLUMNS,
    MERGE_ON_READ,
    RECORD_KEY,
    LongLivedSpec,
    LongLivedTable,
    write_long_lived_table,
)
from tests.support import row_set

CONFIGS = [
    pytest.param(table_type, version, archive, id=f"{table_type.split('_')[0].lower()}-v{version}-{tag}")
    for table_type in (COPY_ON_WRITE, MERGE_ON_READ)
    for version in (6, 9)
    for archive, tag in ((False, "active"), (True, "archived"))
]
# Small but long enough: more commits than the archive keeps (30), slow MOR groups
# left uncompacted past it, two clusterings, four rollbacks.
SPEC = {"commits": 80, "keys": 1200, "rows_per_commit": 30, "clustering_every": 25, "rollback_every": 20}
COMMIT_ACTIONS = {"commit", "deltacommit", "replacecommit"}

Config = tuple[str, int, bool]


@pytest.fixture(scope="module")
def long_lived(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int, bool], LongLivedTable]:
    made: dict[Config, LongLivedTable] = {}

    def get(table_type: str, version: int, archive: bool) -> LongLivedTable:
        key = (table_type, version, archive)
        if key not in made:
            path = tmp_path_factory.mktemp("long_lived") / "table"
            made[key] = write_long_lived_table(path, LongLivedSpec(table_type, version, archive=archive, **SPEC))
        return made[key]

    return get


def _timeline(t: LongLivedTable) -> Path:
    return t.path / ".hoodie" / ("timeline" if t.spec.table_version >= 8 else "")


def _active(t: LongLivedTable) -> list[HudiInstant]:
    return list_instants(_timeline(t))


def _ours(t: LongLivedTable, options: dict[str, str] | None = None) -> pa.Table:
    batches = (
        hudi_ray.HudiTableBuilder.from_base_uri(str(t.path))
        .build()
        .read(hudi_ray.HudiReadOptions(hudi_options=options))
    )
    return pa.Table.from_batches(batches)


def _theirs(t: LongLivedTable, options: dict[str, str] | None = None) -> pa.Table:
    batches = hudi.HudiTableBuilder.from_base_uri(str(t.path)).build().read(hudi.HudiReadOptions(hudi_options=options))
    return pa.Table.from_batches(batches)


def _rows(table: pa.Table) -> list[str]:
    return row_set(table.select(DATA_COLUMNS)) if table.num_rows else []


def _diff(got: pa.Table, expected: pa.Table) -> str:
    """The rows only one side has, a few of each, for a readable failure."""
    a, b = set(_rows(got)), set(_rows(expected))
    return f"unexpected {sorted(a - b)[:5]} ({len(a - b)}), missing {sorted(b - a)[:5]} ({len(b - a)})"


def _only_keys(t: LongLivedTable, keys: set[str]) -> pa.Table:
    return t.expected.filter(pc.is_in(t.expected[RECORD_KEY], pa.array(sorted(keys), pa.string())))


def _state_as_of(t: LongLivedTable, instant: str) -> pa.Table:
    """The table's rows after write commit ``instant``, replayed from the commits' rows."""
    state: dict[str, dict[str, object]] = {}
    for c in t.commits:
        if c > instant:
            break
        for row in t.written[c].to_pylist():
            state[row[RECORD_KEY]] = row
        for k in t.deleted[c]:
            state.pop(k, None)
    return pa.Table.from_pylist([state[k] for k in sorted(state)], schema=t.expected.schema)


# -- reads against the model ----------------------------------------------------------------------


@pytest.mark.parametrize(("table_type", "version", "archive"), CONFIGS)
def test_hudi_ray_snapshot_is_the_model(long_lived, table_type: str, version: int, archive: bool) -> None:
    t = long_lived(table_type, version, archive)
    got = _ours(t)
    assert got.num_rows == len(set(got[RECORD_KEY].to_pylist())), "a key read twice"
    assert _rows(got) == _rows(t.expected), _diff(got, t.expected)
    # Compaction and clustering keep each row's commit time; the snapshot shows the latest write's.
    commit_times = dict(zip(got[RECORD_KEY].to_pylist(), got["_hoodie_commit_time"].to_pylist()))
    assert commit_times == t.commit_times


@pytest.mark.parametrize(("table_type", "version", "archive"), CONFIGS)
def test_hudi_rs_snapshot_is_the_model(long_lived, table_type: str, version: int, archive: bool) -> None:
    # hudi-rs (0.5) reads the active timeline only; on these tables, archived ones included,
    # it returns the model all the same.
    t = long_lived(table_type, version, archive)
    got = _theirs(t)
    assert _rows(got) == _rows(t.expected), _diff(got, t.expected)


@pytest.mark.parametrize(("table_type", "version", "archive"), CONFIGS)
def test_latest_slices_are_the_model(long_lived, table_type: str, version: int, archive: bool) -> None:
    t = long_lived(table_type, version, archive)
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(t.path)).build()
    got = {(s.partition_path, s.file_id): (s.base_file_name, sorted(s.log_file_names)) for s in table.get_file_slices()}
    want = {
        key: (
            (s.base_file or "").rsplit("/", 1)[-1],
            sorted(rel.rsplit("/", 1)[-1] for rel in s.log_files),
        )
        for key, s in t.latest_slices.items()
        if s.base_file or s.log_files
    }
    assert got == want


@pytest.mark.parametrize(("table_type", "version", "archive"), CONFIGS)
@pytest.mark.parametrize("back", [3, 12])
def test_incremental_is_the_model(long_lived, table_type: str, version: int, archive: bool, back: int) -> None:
    """From a write commit still on the active timeline to the latest: the live rows
    whose latest write came after it (compactions and clusterings keep commit times)."""
    t = long_lived(table_type, version, archive)
    start = t.commits[-back]
    assert start in {i.timestamp for i in _active(t)}
    expected = _only_keys(t, {k for k, c in t.commit_times.items() if c > start})
    options = {
        "hoodie.read.query.type": "incremental",
        # Version 8+ orders incremental reads by completion time.
        "hoodie.read.start.timestamp": t.completion_times.get(start, start),
    }
    ours = _ours(t, options)
    assert _rows(ours) == _rows(expected), _diff(ours, expected)
    theirs = _theirs(t, options)
    assert _rows(theirs) == _rows(expected), _diff(theirs, expected)


@pytest.mark.parametrize(("table_type", "version", "archive"), CONFIGS)
def test_time_travel_is_the_model(long_lived, table_type: str, version: int, archive: bool) -> None:
    """As of a write commit the cleaner still retains the slices of."""
    t = long_lived(table_type, version, archive)
    as_of = t.commits[-4]
    expected = _state_as_of(t, as_of)
    options = {"hoodie.read.as.of.timestamp": as_of}
    ours = _ours(t, options)
    assert _rows(ours) == _rows(expected), _diff(ours, expected)
    theirs = _theirs(t, options)
    assert _rows(theirs) == _rows(expected), _diff(theirs, expected)


# -- the table's shape --------------------------------------------------------------------------------


@pytest.mark.parametrize(("table_type", "version", "archive"), CONFIGS)
def test_services_ran(long_lived, table_type: str, version: int, archive: bool) -> None:
    t = long_lived(table_type, version, archive)
    kinds = set(t.services.values())
    assert {"clustering", "clean", "rollback"} <= kinds
    assert ("compaction" in kinds) == (table_type == MERGE_ON_READ)
    assert len(t.commits) == SPEC["commits"]
    active = _active(t)
    # Every service instant still active is completed, with its requested (and inflight) file.
    completed = {i.timestamp: i for i in active if i.is_completed}
    pending = {i.timestamp for i in active if not i.is_completed}
    for instant, kind in t.services.items():
        if instant in completed:
            action = {"compaction": "commit", "clustering": "replacecommit"}.get(kind, kind)
            assert completed[instant].action == action
            assert instant in pending
    # hudi-ray's timeline accepts every clean's metadata, and what each says it deleted is gone.
    timeline = hudi_ray.HudiTableBuilder.from_base_uri(str(t.path)).build().get_timeline()
    cleans = [i for i in timeline.instants if i.action == "clean"]
    assert cleans
    for clean in cleans:
        meta = timeline.get_instant_metadata(clean)
        assert meta["earliestCommitToRetain"] < clean.timestamp
        for partition, part in meta["partitionMetadata"].items():
            assert part["successDeleteFiles"]
            assert not any((t.path / partition / name).exists() for name in part["successDeleteFiles"])
    if version >= 8:
        done = sorted((i for i in active if i.is_completed), key=lambda i: i.timestamp)
        assert all(i.completion_timestamp and i.completion_timestamp > i.timestamp for i in done)
        completions = [i.completion_timestamp for i in done]
        assert completions == sorted(completions), "later instants complete later"


@pytest.mark.parametrize(("table_type", "version", "archive"), CONFIGS)
def test_rollbacks_removed_the_failed_writes(long_lived, table_type: str, version: int, archive: bool) -> None:
    t = long_lived(table_type, version, archive)
    assert len(t.rolled_back) == (SPEC["commits"] - 1) // SPEC["rollback_every"]
    on_timeline = {i.timestamp for i in _active(t)}
    for failed, files in t.rolled_back.items():
        assert files, f"failed write {failed} wrote no files"
        assert failed not in on_timeline
        assert not any((t.path / rel).exists() for rel in files)
        assert failed not in t.commits


@pytest.mark.parametrize(("table_type", "version"), [(COPY_ON_WRITE, 6), (COPY_ON_WRITE, 9), (MERGE_ON_READ, 6)])
def test_archived(long_lived, table_type: str, version: int) -> None:
    t = long_lived(table_type, version, True)
    _check_archived(t)


@pytest.mark.parametrize("version", [6, 9])
def test_mor_latest_slices_hold_logs_of_archived_delta_commits(long_lived, version: int) -> None:
    """The scenario the generator exists for: a latest slice whose log files were
    written by delta commits no longer on the active timeline."""
    t = long_lived(MERGE_ON_READ, version, True)
    _check_archived(t)
    active = {i.timestamp for i in _active(t)}
    stale = [s for s in t.latest_slices.values() if any(c not in active for c in s.log_commits)]
    assert stale
    # And the archive holds those delta commits.
    assert all(c in t.archived for s in stale for c in s.log_commits if c not in active)


def _check_archived(t: LongLivedTable) -> None:
    folder = _timeline(t) / "history" if t.spec.table_version >= 8 else t.path / ".hoodie" / "archived"
    assert folder.is_dir() and os.listdir(folder)
    assert t.archived
    active = _active(t)
    commits = [i for i in active if i.is_completed and i.action in COMMIT_ACTIONS]
    assert len(commits) <= 30
    assert min(i.timestamp for i in active) > t.commits[0]
    assert not {i.timestamp for i in active} & set(t.archived)


def test_unarchived_tables_keep_every_instant(long_lived) -> None:
    t = long_lived(MERGE_ON_READ, 9, False)
    assert not t.archived
    on_timeline = {i.timestamp for i in _active(t) if i.is_completed}
    assert set(t.commits) <= on_timeline
    assert set(t.services) <= on_timeline


def test_spec_is_checked() -> None:
    with pytest.raises(ValueError):
        LongLivedSpec("MERGE_ON_WRITE", 9)
    with pytest.raises(ValueError):
        LongLivedSpec(COPY_ON_WRITE, 8)
    with pytest.raises(ValueError):
        LongLivedSpec(COPY_ON_WRITE, 6, metadata=True)  # no metadata table before table version 9 here
    with pytest.raises(ValueError):
        LongLivedSpec(COPY_ON_WRITE, 9, rows_per_file=0)


@pytest.mark.parametrize("table_type", [COPY_ON_WRITE, MERGE_ON_READ])
def test_no_new_keys_after_the_load(tmp_path: Path, table_type: str) -> None:
    """``new_keys_after_load=False``: every write after the first updates or deletes keys the
    load wrote (its write stats report no inserts); services still run, reads are the model."""
    spec = LongLivedSpec(
        table_type, 9, commits=40, keys=200, rows_per_commit=12, clustering_every=15, rollback_every=10,
        rows_per_file=8, archive=False, new_keys_after_load=False,
    )  # fmt: skip
    t = write_long_lived_table(tmp_path / "table", spec)
    loaded = set(t.written[t.commits[0]][RECORD_KEY].to_pylist())
    assert {k for rows in t.written.values() for k in rows[RECORD_KEY].to_pylist()} <= loaded
    assert any(t.deleted.values()) and len(t.expected) < len(loaded)
    assert {"clean", "clustering", "rollback"} <= set(t.services.values())
    timeline = hudi_ray.HudiTableBuilder.from_base_uri(str(t.path)).build()._context.timeline
    writes = [i for i in timeline.data_instants if i.timestamp in set(t.commits[1:])]
    assert len(writes) == len(t.commits) - 1
    assert all(s.get("numInserts") == 0 for i in writes for s in timeline.write_stats(i))
    assert _rows(_ours(t)) == _rows(t.expected)
