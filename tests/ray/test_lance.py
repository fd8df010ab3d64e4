"""Tables with Lance base files read through ``read_hudi`` equal the table API's
read: snapshot, time travel, incremental, and projection with a pushed-down filter."""

from __future__ import annotations

import pytest

import hudi_ray
from hudi_ray import HudiQueryType, HudiReadOptions, HudiTableBuilder
from hudi_ray.planner import get_or_create_planner, kill_planner
from tests.support import TablePath, all_table_names, api_table, dataset_table, row_set

TABLES = [n for n in all_table_names() if "lance" in n]


def _same(path: str, options: HudiReadOptions, **read_args: object) -> int:
    """read_hudi with ``read_args`` returns the rows of the table API with ``options``; returns their count."""
    expected = api_table(path, options)
    got = dataset_table(hudi_ray.read_hudi(path, **read_args))
    if expected is None:
        assert got is None
        return 0
    assert got is not None, f"read_hudi returned no rows, the table API {expected.num_rows}"
    assert got.schema == expected.schema
    assert row_set(got) == row_set(expected)
    return got.num_rows


def test_every_lance_table_is_listed() -> None:
    assert len(TABLES) == 6


@pytest.mark.usefixtures("ray_session")
@pytest.mark.parametrize("name", TABLES)
def test_read_hudi_equals_table_read(name: str, table_path: TablePath) -> None:
    path = str(table_path(name))
    table = HudiTableBuilder.from_base_uri(path).build()
    instants = table.get_timeline().data_instants
    first, last = instants[0].timestamp, instants[-1].timestamp
    names = table.get_schema().names
    planner = get_or_create_planner(path)
    try:
        assert _same(path, HudiReadOptions(), planner=planner) >= 9
        assert _same(path, HudiReadOptions().with_as_of_timestamp(first), as_of_timestamp=first, planner=planner) > 0
        incremental = (
            HudiReadOptions()
            .with_query_type(HudiQueryType.Incremental)
            .with_start_timestamp(first)
            .with_end_timestamp(last)
        )
        assert (
            _same(
                path,
                incremental,
                query_type="incremental",
                start_timestamp=first,
                end_timestamp=last,
                planner=planner,
            )
            > 0
        )
        filters = [("_hoodie_record_key", "!=", "no such key")]
        projected = HudiReadOptions(filters=filters, projection=[names[0], names[-1]])
        assert _same(path, projected, filters=filters, columns=[names[0], names[-1]], planner=planner) >= 9
    finally:
        kill_planner(planner)
