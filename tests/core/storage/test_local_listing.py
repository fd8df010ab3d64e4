"""Listing a local directory: what it names, the project's errors, and no descriptor left open."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hudi_ray import HudiFileNotFoundError, HudiStorageError
from hudi_ray.core.storage import UNKNOWN_SIZE, Storage


def _open_descriptors() -> int | None:
    fds = Path("/proc/self/fd")
    return len(list(fds.iterdir())) if fds.is_dir() else None


@pytest.fixture(params=["descriptor", "path"])
def storage(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Storage:
    """A storage over a small tree, listed through a directory descriptor or, as where the
    system offers none, through the path."""
    if request.param == "path":
        monkeypatch.setattr(os, "supports_fd", set())
    (tmp_path / "part").mkdir()
    (tmp_path / "part" / "b.parquet").write_bytes(b"yy")
    (tmp_path / "a.parquet").write_bytes(b"x" * 7)
    return Storage(str(tmp_path))


def test_entries_with_and_without_sizes(storage: Storage) -> None:
    before = _open_descriptors()
    sized = sorted((e.path, e.size, e.is_dir) for e in storage.list_dir())
    unsized = sorted((e.path, e.size, e.is_dir) for e in storage.list_dir(sizes=False))
    assert sized == [("a.parquet", 7, False), ("part", 0, True)]
    assert unsized == [("a.parquet", UNKNOWN_SIZE, False), ("part", 0, True)]
    assert [(e.path, e.size) for e in storage.list_dir("part")] == [("part/b.parquet", 2)]
    assert _open_descriptors() == before


def test_a_missing_directory_is_the_projects_error(storage: Storage) -> None:
    before = _open_descriptors()
    with pytest.raises(HudiFileNotFoundError, match=r"Directory not found: .*nowhere"):
        storage.list_dir("nowhere")
    assert _open_descriptors() == before


def test_a_file_lists_as_nothing(storage: Storage) -> None:
    # As fsspec lists a file, and a path through one.
    assert storage.list_dir("a.parquet") == []
    assert storage.list_dir("a.parquet/below") == []


def test_an_unreadable_directory_is_the_projects_error(storage: Storage, monkeypatch: pytest.MonkeyPatch) -> None:
    # Refused as a directory without the read permission is (tests run as root here, whom
    # permissions do not bind), after the descriptor was opened.
    scandir = os.scandir

    def refused(target):
        if isinstance(target, int) or str(target).endswith("part"):
            raise PermissionError(13, "Permission denied")
        return scandir(target)

    monkeypatch.setattr(os, "scandir", refused)
    before = _open_descriptors()
    with pytest.raises(HudiStorageError, match=r"Cannot list .*part: PermissionError"):
        storage.list_dir("part")
    assert _open_descriptors() == before


def test_links_with_and_without_sizes(tmp_path: Path) -> None:
    (tmp_path / "part").mkdir()
    (tmp_path / "a.parquet").write_bytes(b"x" * 7)
    (tmp_path / "dangling.parquet").symlink_to(tmp_path / "nowhere")
    (tmp_path / "link.parquet").symlink_to(tmp_path / "a.parquet")
    storage = Storage(str(tmp_path))
    sized = {e.name: (e.size, e.is_dir) for e in storage.list_dir()}
    unsized = {e.name: (e.size, e.is_dir) for e in storage.list_dir(sizes=False)}
    assert sized == {"part": (0, True), "a.parquet": (7, False), "link.parquet": (7, False)}
    assert unsized == {"part": (0, True), "a.parquet": (UNKNOWN_SIZE, False), "link.parquet": (UNKNOWN_SIZE, False)}
    assert [e.path for e in storage.list_dir("part", sizes=False)] == []
    (tmp_path / "part" / "b.parquet").write_bytes(b"yy")
    assert [(e.path, e.size) for e in storage.list_dir("part")] == [("part/b.parquet", 2)]
