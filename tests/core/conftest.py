"""Fixtures of the core tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

# The bad-input tests' shared helpers assert too: rewrite them for readable failures.
pytest.register_assert_rewrite("tests.core.damage")


@pytest.fixture
def copy_of(table_path, tmp_path: Path):
    """A private, writable copy of a shared table, so tests can damage it."""

    def make(name: str) -> Path:
        dest = tmp_path / Path(name).name
        shutil.copytree(table_path(name), dest)
        return dest

    return make
