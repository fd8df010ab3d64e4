"""Every shared test table read through ``read_hudi`` equals the table API's read:
snapshot, time travel to the first commit and incremental from it."""

from __future__ import annotations

import pytest

import hudi_ray
from hudi_ray import HudiCoreError, HudiQueryType, HudiReadOptions, HudiTableBuilder
from hudi_ray.planner import get_or_create_planner, kill_planner
from tests.support import TablePath, all_table_names, api_table, dataset_table, row_set

TABLES = all_table_names()


def _same(path: str, options: HudiReadOptions, **read_args: object) -> None:
    """read_hudi with ``read_args`` returns the rows (or raises the error) of the table API with ``options``."""
    try:
        expected = api_table(path, options)
    except HudiCoreError as exc:
        with pytest.raises(type(exc)):
            dataset_table(hudi_ray.read_hudi(path, **read_args))
        return
    got = dataset_table(hudi_ray.read_hudi(path, **read_args))
    if expected is None:
        assert got is None
        return
    assert got is not None, f"read_hudi returned no rows, the table API {expected.num_rows}"
    assert got.schema == expected.schema
    assert row_set(got) == row_set(expected)


@pytest.mark.usefixtures("ray_session")
@pytest.mark.parametrize("name", TABLES)
def test_read_hudi_equals_table_read(name: str, table_path: TablePath) -> None:
    path = str(table_path(name))
    planner = get_or_create_planner(path)
    try:
        _check_table(path, planner)
    finally:
        kill_planner(planner)  # one planner process per table: don't keep 35 of them


def _check_table(path: str, planner: object) -> None:
    _same(path, HudiReadOptions(), planner=planner)
    try:
        instants = HudiTableBuilder.from_base_uri(path).build().get_timeline().data_instants
    except HudiCoreError:
        return
    if len(instants) < 2:
        return
    first = instants[0].timestamp
    _same(path, HudiReadOptions().with_as_of_timestamp(first), as_of_timestamp=first, planner=planner)
    incremental = HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp(first)
    _same(path, incremental, query_type="incremental", start_timestamp=first, planner=planner)
