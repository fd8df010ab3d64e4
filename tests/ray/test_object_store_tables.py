"""Every shared table, uploaded to a loopback S3 server (moto): ``read_hudi`` of its
``s3://`` URI returns the rows of the table API's local read (or, where the local
read fails, fails with the same error type)."""

from __future__ import annotations

import pytest

import hudi_ray
from hudi_ray import HudiCoreError
from hudi_ray.planner import get_or_create_planner, kill_planner
from tests.support import TablePath, all_table_names, api_table, dataset_table, row_set, upload

TABLES = all_table_names()

pytestmark = pytest.mark.usefixtures("ray_session")


@pytest.fixture(scope="module")
def bucket(s3_endpoint: str, table_path: TablePath) -> str:
    return upload(s3_endpoint, "ray-object-store-tables", TABLES, table_path)


@pytest.mark.parametrize("name", TABLES)
def test_read_hudi_from_s3_equals_local_read(
    name: str, bucket: str, storage_options: dict[str, str], table_path: TablePath
) -> None:
    uri = f"s3://{bucket}/{name}"
    try:
        _check(uri, str(table_path(name)), storage_options)
    finally:
        # read_hudi made the table's planner actor: one per table would keep 41 processes alive.
        kill_planner(get_or_create_planner(uri, storage_options=storage_options))


def _check(uri: str, local_path: str, storage_options: dict[str, str]) -> None:
    try:
        expected = api_table(local_path)
    except HudiCoreError as exc:
        # Ray re-raises a task's error as a subclass of its type (RayTaskError(...)).
        with pytest.raises(type(exc)):
            dataset_table(hudi_ray.read_hudi(uri, storage_options=storage_options))
        return
    got = dataset_table(hudi_ray.read_hudi(uri, storage_options=storage_options))
    if expected is None:
        assert got is None, f"read_hudi returned {got.num_rows} rows, the local read none"
        return
    assert got is not None, f"read_hudi returned no rows, the local read {expected.num_rows}"
    assert got.schema == expected.schema, f"\nread_hudi: {got.schema}\nlocal: {expected.schema}"
    assert row_set(got) == row_set(expected)
