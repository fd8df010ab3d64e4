"""Merge-on-read tables of ../shared/hudi-tables checked against rows derived by hand
from the Spark SQL (``X.sql``) that wrote them: snapshot (latest and time travel, with
log merging), read-optimized and incremental reads.

The cases are data in tests/expected/mor.py (which says how the values were derived,
where the logs and compactions are, and why timestamps are not checked), with the rows
of each table family in tests/expected/{txns,trips,sample}.py; the functions below run
them.
"""

from __future__ import annotations

import pytest

from tests.expected import mor
from tests.expected.model import (
    Rows,
    Table,
    check_record_keys,
    check_rows,
    check_timeline,
    record_key_params,
    row_params,
    table_params,
)
from tests.support import TablePath


@pytest.mark.parametrize("table", table_params(mor.TABLES))
def test_timeline(table: Table, table_path: TablePath) -> None:
    check_timeline(table_path, table)


@pytest.mark.parametrize(("table", "case"), row_params(mor.TABLES))
def test_rows(table: Table, case: Rows, table_path: TablePath) -> None:
    check_rows(table_path, table, case)


@pytest.mark.parametrize("table", record_key_params(mor.TABLES))
def test_record_key_matches_key_column(table: Table, table_path: TablePath) -> None:
    check_record_keys(table_path, table)
