"""The six Lance-base-file tables of ../shared/hudi-tables checked against rows derived
by hand from the Spark SQL (``X.sql``) that wrote them (table version 9): snapshot,
time travel, incremental and, on the MOR tables, read-optimized reads.

The cases are data in tests/expected/lance.py (which says how the values were derived,
where the two MOR tables and their SQL disagree, and why timestamps are not checked),
with the rows of each table family in tests/expected/{txns,trips}.py; the functions
below run them.
"""

from __future__ import annotations

import pytest

from tests.expected import lance
from tests.expected.model import (
    Rows,
    Table,
    WrittenFiles,
    check_record_keys,
    check_rows,
    check_timeline,
    check_written,
    record_key_params,
    row_params,
    table_params,
    written_params,
)
from tests.support import TablePath


@pytest.mark.parametrize("table", table_params(lance.TABLES))
def test_timeline(table: Table, table_path: TablePath) -> None:
    check_timeline(table_path, table)


@pytest.mark.parametrize(("table", "case"), row_params(lance.TABLES))
def test_rows(table: Table, case: Rows, table_path: TablePath) -> None:
    check_rows(table_path, table, case)


@pytest.mark.parametrize(("table", "written"), written_params(lance.TABLES))
def test_written_files(table: Table, written: WrittenFiles, table_path: TablePath) -> None:
    """The evidence that the MOR tables' later UPDATE/DELETE statements had no effect."""
    check_written(table_path, table, written)


@pytest.mark.parametrize("table", record_key_params(lance.TABLES))
def test_record_key_matches_key_column(table: Table, table_path: TablePath) -> None:
    check_record_keys(table_path, table)
