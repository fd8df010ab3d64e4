"""The file group package's parts: immutable slices, the one rule that places
a log file in a slice, and damage checks that cost nothing on a sound table."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from hudi_ray import HudiReadOptions, HudiTableBuilder
from hudi_ray.core.file_group import builder, integrity
from hudi_ray.core.log_file import LogFile
from hudi_ray.core.timeline import HudiInstant
from tests.support import REPO

TABLE = "sample_table/cow/v9_txns_simple_meta"


def test_file_slices_are_frozen(table_path) -> None:
    slices = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build().get_file_slices()
    assert slices
    s = slices[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.num_records = 0  # type: ignore[misc]
    assert dataclasses.replace(s, num_records=7).num_records == 7
    assert s.num_records > 0  # filled from the commit's write stats when the slice was built


class _Timeline:
    def __init__(self, *instants: HudiInstant) -> None:
        self._by_ts = {i.timestamp: i for i in instants}

    def find(self, ts: str) -> HudiInstant | None:
        return self._by_ts.get(ts)


def _log(base_instant: str) -> LogFile:
    return LogFile(base_instant, 1, "1-0-1", "fg", f".fg_{base_instant}.log.1_1-0-1")


def test_log_slice_time_by_table_version() -> None:
    done = HudiInstant("100", "deltacommit", completion_timestamp="300")
    timeline = _Timeline(done)
    # Version 8 on: the delta commit's completion time; unknown instants place nothing.
    assert builder.log_slice_time(_log("100"), timeline, 8) == "300"  # type: ignore[arg-type]
    assert builder.log_slice_time(_log("999"), timeline, 8) is None  # type: ignore[arg-type]
    # Before: the instant time the name carries.
    assert builder.log_slice_time(_log("100"), timeline, 6) == "100"  # type: ignore[arg-type]


def test_latest_slice_owns_files_from_its_base_on() -> None:
    bases = ["100", "200"]
    assert builder.owning_base("150", bases) == "100"
    assert builder.owning_base("050", bases) is None
    assert builder.in_latest_slice("200", bases)
    assert not builder.in_latest_slice("199", bases)
    assert builder.in_latest_slice("000", [])


def test_file_checks_build_group_times_only_once_a_file_is_missing(table_path, monkeypatch) -> None:
    def fail(*_args, **_kwargs):
        raise AssertionError("built without a missing file")

    monkeypatch.setattr(integrity, "_GroupTimes", fail)
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    assert sum(b.num_rows for b in table.read()) > 0
    as_of = HudiReadOptions().with_as_of_timestamp("20260307162440672")
    assert sum(b.num_rows for b in table.read(as_of)) > 0


def test_view_parts_do_not_import_the_view() -> None:
    root = REPO / "core" / "file_group"
    for name in ("builder", "listing", "integrity", "visibility", "file_slice"):
        tree = ast.parse(Path(root / f"{name}.py").read_text())
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "hudi_ray.core.file_group.view" not in modules, name
        assert "hudi_ray.core.file_group" not in modules, name
