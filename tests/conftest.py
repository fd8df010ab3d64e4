"""Shared fixtures: the real Hudi tables of ../shared/hudi-tables, extracted once per session."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TABLES_DIR = Path(os.environ.get("HUDI_TABLES_DIR", REPO.parent / "shared" / "hudi-tables"))


def all_table_names() -> list[str]:
    """Table names as INDEX.md lists them, e.g. ``sample_table/cow/v6_empty``."""
    return sorted(str(p.relative_to(TABLES_DIR).with_suffix("")) for p in TABLES_DIR.rglob("*.zip"))


def table_kind(name: str) -> str:
    return "mor" if "/mor/" in name else "cow"


@pytest.fixture(scope="session")
def tables_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not TABLES_DIR.is_dir():
        pytest.fail(f"Test tables not found at {TABLES_DIR}; CI and developers have them at ../shared/hudi-tables")
    return tmp_path_factory.mktemp("hudi-tables")


@pytest.fixture(scope="session")
def table_path(tables_root: Path):
    """Returns a function: table name -> absolute path of its extracted table."""
    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name in done:
            return done[name]
        dest = tables_root / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(TABLES_DIR / f"{name}.zip") as zf:
            members = [m for m in zf.namelist() if not m.startswith("__MACOSX/")]
            zf.extractall(dest.parent, members)
        assert dest.is_dir(), f"{name}.zip did not extract to {dest}"
        done[name] = dest
        return dest

    return get


@pytest.fixture
def copy_of(table_path, tmp_path: Path):
    """A private, writable copy of a shared table, so tests can damage it."""

    def make(name: str) -> Path:
        dest = tmp_path / Path(name).name
        shutil.copytree(table_path(name), dest)
        return dest

    return make
