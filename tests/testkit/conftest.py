"""Fixtures of the writer tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import TABLES_DIR, TablePath


@pytest.fixture
def reference_table(table_path: TablePath):
    """Returns a function: shared table name -> its extracted path, skipping when absent."""

    def get(name: str) -> Path:
        if not (TABLES_DIR / f"{name}.zip").is_file():
            pytest.skip(f"reference table {name} not available")
        return table_path(name)

    return get
