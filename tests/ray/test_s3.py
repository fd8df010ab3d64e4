"""read_hudi over object storage (moto's S3 server on loopback): reader tasks
fetch ahead with async range reads and return the table API's rows."""

from __future__ import annotations

import pytest
from ray.data.expressions import col

import hudi_ray
from hudi_ray import HudiReadOptions, HudiTableBuilder
from hudi_ray.datasource import planned_read
from tests.support import TablePath, dataset_table, row_set, to_table, upload

TABLES = ["sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle", "sample_table/cow/v9_txns_simple_meta"]

pytestmark = pytest.mark.usefixtures("ray_session")


@pytest.fixture(scope="module")
def bucket(s3_endpoint: str, table_path: TablePath) -> str:
    return upload(s3_endpoint, "raytables", TABLES, table_path)


@pytest.mark.parametrize("name", TABLES)
def test_read_hudi_from_s3(name: str, bucket: str, storage_options: dict[str, str]) -> None:
    uri = f"s3://{bucket}/{name}"
    table = HudiTableBuilder.from_base_uri(uri).with_storage_options(storage_options).build()
    ds = hudi_ray.read_hudi(uri, storage_options=storage_options, override_num_blocks=2)
    assert ds._logical_plan.dag.datasource._prefetch  # object storage: fetch ahead by default
    assert row_set(dataset_table(ds)) == row_set(to_table(table.read()))
    first = table.get_timeline().data_instants[0].timestamp
    keys = ["_hoodie_record_key"]
    narrow = hudi_ray.read_hudi(uri, storage_options=storage_options, as_of_timestamp=first, columns=keys)
    expected = table.read(HudiReadOptions(projection=keys).with_as_of_timestamp(first))
    assert row_set(dataset_table(narrow)) == row_set(to_table(expected))


def test_s3_predicate_pushdown(bucket: str, storage_options: dict[str, str]) -> None:
    uri = f"s3://{bucket}/sample_table/cow/v9_txns_simple_meta"
    table = HudiTableBuilder.from_base_uri(uri).with_storage_options(storage_options).build()
    full = hudi_ray.read_hudi(uri, storage_options=storage_options)
    ds = full.filter(expr=col("region") == "us").select_columns(["txn_id", "amount"])
    assert planned_read(ds).num_slices < planned_read(full).num_slices
    expected = table.read(HudiReadOptions(filters=[("region", "=", "us")], projection=["txn_id", "amount"]))
    assert row_set(dataset_table(ds)) == row_set(to_table(expected))
