"""The shape of the SQL-expectation data and the checks that run it.

A :class:`Table` names one shared table, the actions of its data instants and its cases.
A :class:`Rows` case is one read (snapshot, as of an instant, read-optimized, incremental,
filtered) and the rows it must return: exactly these keys, and per key the expected
values of some columns. Instants are indexes into ``data_instants``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

import hudi_ray
from tests.support import TablePath, actions, assert_columns, keys, open_table, read_rows, rows_of

Columns = dict[str, Any]


@dataclass(frozen=True)
class Instant:
    """An expected value: the instant time of ``data_instants[k]``."""

    k: int


@dataclass(frozen=True)
class Read:
    """One read of a table."""

    as_of: int | None = None
    read_optimized: bool = False
    filters: tuple[tuple[str, str, str], ...] = ()
    # Incremental over (instant start, instant end]; the bounds are the instants'
    # completion times (table version 8+) or instant times (version 6).
    incremental: tuple[int, int] | None = None
    by_completion: bool = True

    def __post_init__(self) -> None:
        if self.incremental is not None:
            assert self.as_of is None and not self.read_optimized and not self.filters, self

    @property
    def id(self) -> str:
        parts = []
        if self.incremental is not None:
            parts.append("incremental_{}_{}".format(*self.incremental))
        if self.read_optimized:
            parts.append("read_optimized")
        if self.as_of is not None:
            parts.append(f"as_of_{self.as_of}")
        if self.filters:
            parts.append(",".join(f"{column}{op}{value}" for column, op, value in self.filters))
        return "-".join(parts) or "snapshot"


@dataclass(frozen=True)
class Rows:
    """A read and the rows it must return.

    ``columns``: key -> expected columns of the row with that key (a list for a key
    that appears more than once: one entry per row). ``keys``: every key returned,
    duplicates kept, in any order; when None, exactly the keys of ``columns``.
    ``absent``: keys the SQL removed, named for the reader (already implied by ``keys``).
    ``missing_columns``: columns the rows must not have."""

    read: Read
    columns: Mapping[Any, Columns | list[Columns]] = field(default_factory=dict)
    keys: list[Any] | None = None
    absent: tuple[Any, ...] = ()
    missing_columns: tuple[str, ...] = ()
    name: str | None = None  # overrides the id derived from ``read``

    @property
    def id(self) -> str:
        return self.name or self.read.id

    @property
    def expected_keys(self) -> list[Any]:
        if self.keys is not None:
            return sorted(self.keys)
        return sorted(k for k, v in self.columns.items() for _ in (v if isinstance(v, list) else [v]))


@dataclass(frozen=True)
class WrittenFiles:
    """The files ``data_instants[k]`` wrote, from the write stats of its commit metadata:
    ``count`` paths, each starting with ``prefix``; with ``log_of_instant``, each a log
    file named after instant k (``..._<instant time of k>.log.1_...``)."""

    k: int
    count: int
    prefix: str = ""
    log_of_instant: bool = False

    @property
    def id(self) -> str:
        return f"written_{self.k}"


@dataclass(frozen=True)
class Table:
    id: str  # short name used in test ids
    name: str  # path under ../shared/hudi-tables
    actions: list[str]  # actions of the data instants, in order
    cases: list[Rows]
    key_column: str = "_hoodie_record_key"  # the key of Rows.columns and Rows.keys
    # _hoodie_record_key of every row, as a format string over the row's columns.
    record_key: str | None = None
    written: list[WrittenFiles] = field(default_factory=list)


# -- pytest parameters ----------------------------------------------------------------


def table_params(tables: Iterable[Table]) -> list[Any]:
    return [pytest.param(t, id=t.id) for t in tables]


def record_key_params(tables: Iterable[Table]) -> list[Any]:
    return [pytest.param(t, id=t.id) for t in tables if t.record_key is not None]


def row_params(tables: Iterable[Table]) -> list[Any]:
    return _unique([pytest.param(t, c, id=f"{t.id}-{c.id}") for t in tables for c in t.cases])


def written_params(tables: Iterable[Table]) -> list[Any]:
    return _unique([pytest.param(t, w, id=f"{t.id}-{w.id}") for t in tables for w in t.written])


def _unique(params: list[Any]) -> list[Any]:
    repeated = [i for i, n in Counter(p.id for p in params).items() if n > 1]
    assert not repeated, f"case ids repeated: {repeated}"
    return params


# -- checks ---------------------------------------------------------------------------


def check_timeline(table_path: TablePath, spec: Table) -> None:
    assert actions(open_table(table_path, spec.name)) == spec.actions


def check_record_keys(table_path: TablePath, spec: Table) -> None:
    """Every row's _hoodie_record_key is built from its own key column(s)."""
    assert spec.record_key is not None
    rows = read_rows(open_table(table_path, spec.name))
    assert rows
    for r in rows:
        assert r["_hoodie_record_key"] == spec.record_key.format(**r), r


def check_rows(table_path: TablePath, spec: Table, case: Rows) -> None:
    table = open_table(table_path, spec.name)
    rows = _read(table, case.read)
    assert keys(rows, spec.key_column) == case.expected_keys
    returned = {r[spec.key_column] for r in rows}
    for key in case.absent:
        assert key not in returned, key
    for key, expected in case.columns.items():
        with_key = [r for r in rows if r[spec.key_column] == key]
        if isinstance(expected, dict):
            [row] = with_key
            assert_columns(row, _resolve(table, expected))
            continue
        # A key returned several times: each entry matches a row of its own.
        unmatched = list(with_key)
        for entry in expected:
            resolved = _resolve(table, entry)
            match = next((r for r in unmatched if _matches(r, resolved)), None)
            assert match is not None, (key, resolved, unmatched)
            unmatched.remove(match)
        assert not unmatched, (key, unmatched)
    for column in case.missing_columns:
        assert all(column not in r for r in rows), column


def check_written(table_path: TablePath, spec: Table, written: WrittenFiles) -> None:
    table = open_table(table_path, spec.name)
    timeline = table.get_timeline()
    instant = timeline.data_instants[written.k]
    paths = sorted(stat["path"] for stat in timeline.write_stats(instant))
    assert len(paths) == written.count, paths
    for path in paths:
        assert path.startswith(written.prefix), path
        if written.log_of_instant:
            assert f"_{instant.timestamp}.log.1_" in path, path


def _read(table: hudi_ray.HudiTable, read: Read) -> list[dict[str, Any]]:
    if read.incremental is None:
        return read_rows(
            table, as_of_instant=read.as_of, filters=list(read.filters) or None, read_optimized=read.read_optimized
        )
    instants = table.get_timeline().data_instants
    start, end = (instants[k] for k in read.incremental)
    options = (
        hudi_ray.HudiReadOptions()
        .with_query_type(hudi_ray.HudiQueryType.Incremental)
        .with_start_timestamp(start.completed_at if read.by_completion else start.timestamp)
        .with_end_timestamp(end.completed_at if read.by_completion else end.timestamp)
    )
    return rows_of(table.read(options))


def _resolve(table: hudi_ray.HudiTable, expected: Columns) -> Columns:
    instants = table.get_timeline().data_instants
    return {c: instants[v.k].timestamp if isinstance(v, Instant) else v for c, v in expected.items()}


def _matches(row: dict[str, Any], expected: Columns) -> bool:
    return all(c in row and row[c] == v and type(row[c]) is type(v) for c, v in expected.items())
