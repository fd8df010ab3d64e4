"""Rollbacks in the archived history: a failed write whose rollback could not delete its
files (Hudi's rollback then completes, listing them in ``failedDeleteFiles``), with the
rollback later archived.

Reads that reach into the archive (time travel before the active timeline, incremental
ranges from an archived instant) and the placement of archived log files read the
archived rollbacks and keep the failed writes' files out. A snapshot follows Apache
Hudi, whose file system view counts every file older than the active timeline as
written by a completed instant: it shows what such files hold, as hudi-rs does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import hudi_ray
from hudi_ray.core.exceptions import HudiCorruptFileError
from hudi_ray.core.timeline.archive import _rolled_back_instants
from hudi_ray.core.timeline.timeline import HudiTimeline
from hudi_testkit import services
from hudi_testkit.archive import archive_instants
from hudi_testkit.cow import CowTableSpec, CowTableWriter
from hudi_testkit.longlived import COPY_ON_WRITE, MERGE_ON_READ, LongLivedSpec, LongLivedTable, write_long_lived_table
from tests.testkit.test_longlived import _diff, _only_keys, _ours, _rows, _state_as_of, _theirs

# Nothing is cleaned, so reads as of archived instants can be answered.
SPEC = {
    "commits": 80,
    "keys": 1200,
    "rows_per_commit": 30,
    "clustering_every": 25,
    "rollback_every": 20,
    "clean_retained": 1000,
    "rollback_leaves_files": True,
}
CONFIGS = [
    pytest.param(MERGE_ON_READ, 9, id="mor-v9"),
    pytest.param(COPY_ON_WRITE, 9, id="cow-v9"),
    pytest.param(MERGE_ON_READ, 6, id="mor-v6"),
]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int], LongLivedTable]:
    made: dict[tuple[str, int], LongLivedTable] = {}

    def get(table_type: str, version: int) -> LongLivedTable:
        if (table_type, version) not in made:
            path = tmp_path_factory.mktemp("rollbacks") / "table"
            made[table_type, version] = write_long_lived_table(path, LongLivedSpec(table_type, version, **SPEC))
        return made[table_type, version]

    return get


def _start(t: LongLivedTable) -> str:
    start = hudi_ray.HudiTableBuilder.from_base_uri(str(t.path)).build().get_timeline().start
    assert start is not None
    return start


def _archived_failures(t: LongLivedTable) -> list[str]:
    """Failed writes older than the active timeline whose files are all still in storage."""
    start = _start(t)
    failed = [f for f, files in t.rolled_back.items() if f < start]
    for f in failed:
        assert all((t.path / rel).exists() for rel in t.rolled_back[f])
    assert len(failed) >= 2, "the table must archive rollbacks of failed writes"
    return failed


@pytest.mark.parametrize(("table_type", "version"), CONFIGS)
def test_time_travel_into_the_archive_leaves_rolled_back_files_out(
    table: Callable[[str, int], LongLivedTable], table_type: str, version: int
) -> None:
    t = table(table_type, version)
    start = _start(t)
    for failed in _archived_failures(t):
        as_of = min(c for c in t.commits if c > failed)
        assert as_of < start
        expected = _state_as_of(t, as_of)
        got = _ours(t, {"hoodie.read.as.of.timestamp": as_of})
        assert _rows(got) == _rows(expected), f"as of {as_of}: {_diff(got, expected)}"


@pytest.mark.parametrize(("table_type", "version"), CONFIGS)
def test_incremental_ranges_from_the_archive_leave_rolled_back_files_out(
    table: Callable[[str, int], LongLivedTable], table_type: str, version: int
) -> None:
    t = table(table_type, version)
    for failed in _archived_failures(t):
        begin = max(c for c in t.commits if c < failed)
        expected = _only_keys(t, {k for k, c in t.commit_times.items() if c > begin})
        options = {
            "hoodie.read.query.type": "incremental",
            "hoodie.read.start.timestamp": t.completion_times.get(begin, begin),
        }
        got = _ours(t, options)
        assert _rows(got) == _rows(expected), f"from {begin}: {_diff(got, expected)}"


@pytest.mark.parametrize(("table_type", "version"), CONFIGS)
def test_snapshot_reads_as_hudi_does(
    table: Callable[[str, int], LongLivedTable], table_type: str, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files the failed writes left behind count as written by archived, completed
    instants (Apache Hudi's rule, which hudi-rs follows too; where it and the rows written
    disagree, Hudi's semantics win), except log files whose slice made the read look their
    delta commit up in the archive: the archived rollback keeps those out."""
    t = table(table_type, version)
    consulted: list[frozenset[str]] = []
    original = HudiTimeline.archived_rollbacks

    def counted(self: HudiTimeline) -> frozenset[str]:
        found = original(self)
        consulted.append(found)
        return found

    monkeypatch.setattr(HudiTimeline, "archived_rollbacks", counted)
    ours = _ours(t)
    theirs = _theirs(t)
    assert _rows(ours) == _rows(theirs), _diff(ours, theirs)
    # Hudi's semantics, not the model's: the failed writes' files are read as data.
    failed = set(_archived_failures(t))
    assert failed & set(ours["_hoodie_commit_time"].to_pylist())
    assert _rows(ours) != _rows(t.expected)
    if table_type == MERGE_ON_READ and version >= 8:
        assert consulted and all(consulted), "log files of failed writes before a newer base file were looked up"


@pytest.mark.parametrize(
    "meta",
    [
        {"commitsRollback": "20240101000000000"},
        {"commitsRollback": [20240101000000000]},
        {"commitsRollback": ["../x"]},
        {"instantsRollback": [{"action": "commit"}]},
        {"instantsRollback": ["20240101000000000"]},
    ],
)
def test_malformed_rollback_metadata_names_the_instant(meta: dict[str, object]) -> None:
    where = "archived instant 20240102000000000 (rollback) in manifest-file"
    with pytest.raises(HudiCorruptFileError, match="rollback metadata in archived instant 20240102000000000"):
        _rolled_back_instants(meta, where)


def test_rollback_metadata_names_both_lists() -> None:
    meta = {"commitsRollback": ["1"], "instantsRollback": [{"commitTime": "2", "action": "deltacommit"}]}
    assert _rolled_back_instants(meta, "here") == ["1", "2"]


@pytest.mark.parametrize("version", [6, 9])
def test_time_travel_before_every_archived_write_leaves_rolled_back_files_out(tmp_path: Path, version: int) -> None:
    """A failed first write, its rollback (deletes failed), then commits; everything but
    the newest archived: as of between the failed write and the first commit, there are no
    rows, though the failed write's file is older than the active timeline."""
    spec = CowTableSpec("t", "key", "part", table_version=version)
    writer = CowTableWriter.create(tmp_path / "t", spec, _ROWS.schema)
    failed = services.failed_write(writer, lambda: writer.upsert(_ROWS, commit_time="20240101000000100"))
    services.rollback(writer, "20240101000000200", "20240101000000250", failed, leave_files=True)
    writer.upsert(_ROWS, commit_time="20240101000000300")
    writer.upsert(_ROWS.set_column(2, "value", pa.array([7, 8])), commit_time="20240101000000400")
    assert all((tmp_path / "t" / s.path).exists() for s in failed.write_stats if s.path)
    archive_instants(tmp_path / "t", 2)
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(tmp_path / "t")).build()
    assert table.get_timeline().start == "20240101000000400"
    options = hudi_ray.HudiReadOptions().with_as_of_timestamp("20240101000000150")
    assert sum(b.num_rows for b in table.read(options)) == 0
    options = hudi_ray.HudiReadOptions().with_as_of_timestamp("20240101000000300")
    assert sorted(pa.Table.from_batches(table.read(options))["value"].to_pylist()) == [1, 2]


_ROWS = pa.table({"key": ["a", "b"], "part": ["p", "p"], "value": [1, 2]})
