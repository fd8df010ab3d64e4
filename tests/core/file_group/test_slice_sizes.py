"""File slices' sizes when planning lists storage: a local listing reads no sizes, a base
file's size comes from the commit that wrote it, and anything no commit states (log
files, a stat without its size) is read from storage. Every size equals the file's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hudi_ray import HudiFileNotFoundError
from hudi_ray.core.storage import Storage
from tests.core.damage import V6, V6_LATEST, edit_json_commit, listing
from tests.support import all_table_names

LISTED = [n for n in all_table_names() if not n.endswith("_empty")]


def _sizes_on_disk(path: Path, table) -> list[tuple[str, int, int]]:
    """(file, planned size, size on disk) of every file of the latest slices."""
    out = []
    for s in table.get_file_slices():
        if s.base_file_name:
            rel = s.base_file_relative_path()
            out.append((rel, s.base_file_size, os.path.getsize(path / rel)))
        for rel, size in zip(s.log_files_relative_paths(), s.log_file_sizes):
            out.append((rel, size, os.path.getsize(path / rel)))
    return out


@pytest.mark.parametrize("name", LISTED)
def test_planned_sizes_are_the_files_sizes_on_every_real_table(table_path, name: str) -> None:
    path = table_path(name)
    sizes = _sizes_on_disk(path, listing(path))
    assert sizes, f"{name} planned no files"
    assert [(rel, planned) for rel, planned, _ in sizes] == [(rel, disk) for rel, _, disk in sizes]


def _counting_stats(monkeypatch) -> list[str]:
    """The files whose sizes are read from storage from now on."""
    asked: list[str] = []
    size = Storage.size

    def counted(self: Storage, rel: str) -> int:
        asked.append(rel)
        return size(self, rel)

    monkeypatch.setattr(Storage, "size", counted)
    return asked


def _unsized(meta: dict) -> None:
    """Commit metadata whose write stats state no file sizes."""
    for stats in meta["partitionToWriteStats"].values():
        for stat in stats:
            stat.pop("fileSizeInBytes", None)


def test_base_files_sizes_come_from_their_commits(table_path, monkeypatch) -> None:
    asked = _counting_stats(monkeypatch)
    list_dir = Storage.list_dir
    listed_with: list[bool] = []

    def spied(self: Storage, rel: str = "", *, sizes: bool = True):
        listed_with.append(sizes)
        return list_dir(self, rel, sizes=sizes)

    monkeypatch.setattr(Storage, "list_dir", spied)
    path = table_path("sample_table/cow/v6_complexkeygen_hivestyle")
    slices = listing(path).get_file_slices()
    assert slices and all(s.base_file_size == os.path.getsize(path / s.base_file_relative_path()) for s in slices)
    assert asked == []
    # The partitions were listed without a stat per file.
    assert False in listed_with


def test_log_files_sizes_are_read_from_storage(table_path, monkeypatch) -> None:
    # Table version 6 appends to log files: a commit's stat may predate the last append.
    path = table_path("quickstart_trips_table/mor/avro/v6_trips_8i1u")
    asked = _counting_stats(monkeypatch)
    slices = listing(path).get_file_slices()
    logs = sorted(rel for s in slices for rel in s.log_files_relative_paths())
    assert logs and sorted(asked) == logs


def test_a_base_file_no_commit_sizes_is_read_from_storage(copy_of, monkeypatch) -> None:
    path = copy_of(V6)
    edit_json_commit(path, _unsized)
    asked = _counting_stats(monkeypatch)
    sizes = _sizes_on_disk(path, listing(path))
    assert sizes and all(planned == disk for _, planned, disk in sizes)
    assert sorted(asked) == sorted(rel for rel, _, _ in sizes)


def test_several_stats_of_one_file_that_disagree_size_it_from_storage(copy_of, monkeypatch) -> None:
    # A writer may replace a file within one commit (Flink's merge-and-replace handle),
    # each time with a stat of its own: no one of them is known to be the last.
    path = copy_of(V6)

    def restated(meta: dict) -> None:
        for stats in meta["partitionToWriteStats"].values():
            stats.append({**stats[0], "fileSizeInBytes": stats[0]["fileSizeInBytes"] // 2})

    edit_json_commit(path, restated)
    asked = _counting_stats(monkeypatch)
    sizes = _sizes_on_disk(path, listing(path))
    assert sizes and all(planned == disk for _, planned, disk in sizes)
    assert len(asked) == 1


def test_a_base_file_gone_after_listing_is_reported(copy_of, monkeypatch) -> None:
    path = copy_of(V6)
    edit_json_commit(path, _unsized)
    table = listing(path)
    victim = next(path.glob(f"*_{V6_LATEST}.parquet"))  # in the latest slice, so its size is read
    list_dir = Storage.list_dir

    def then_removed(self: Storage, rel: str = "", *, sizes: bool = True):
        entries = list_dir(self, rel, sizes=sizes)
        if victim.exists() and any(e.name == victim.name for e in entries):
            victim.unlink()  # as a cleaner would, between the listing and the slices
        return entries

    monkeypatch.setattr(Storage, "list_dir", then_removed)
    with pytest.raises(HudiFileNotFoundError, match=victim.name):
        table.get_file_slices()
