"""Row helpers shared by the tests that check reads against rows derived from the SQL."""

from __future__ import annotations

from typing import Any

import hudi_ray


def keys(rows: list[dict[str, Any]], column: str = "_hoodie_record_key") -> list[Any]:
    """Sorted key list (duplicates kept, so a duplicated key shows up)."""
    return sorted(r[column] for r in rows)


def by_key(rows: list[dict[str, Any]], column: str = "_hoodie_record_key") -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for r in rows:
        assert r[column] not in out, f"duplicate key {r[column]!r}"
        out[r[column]] = r
    return out


def assert_columns(row: dict[str, Any], expected: dict[str, Any]) -> None:
    for column, value in expected.items():
        assert row[column] == value, (row["_hoodie_record_key"], column, row[column], value)
        assert type(row[column]) is type(value), (row["_hoodie_record_key"], column, type(row[column]))


def actions(table: hudi_ray.HudiTable) -> list[str]:
    return [i.action for i in table.get_timeline().data_instants]
