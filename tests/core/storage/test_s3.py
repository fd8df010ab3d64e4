"""Tables on object storage: s3:// through fsspec's s3fs, against a real S3 API
server (moto in server mode) on loopback, started by the tests."""

from __future__ import annotations

import hudi
import pytest

from hudi_ray import HudiReadOptions, HudiStorageError, HudiTableBuilder, HudiTableNotFoundError
from hudi_testkit.s3proxy import free_port
from tests.support import row_set, to_table, upload

TABLES = ["sample_table/cow/v9_txns_simple_meta", "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle"]


@pytest.fixture(scope="module")
def bucket(s3_endpoint: str, table_path) -> str:
    return upload(s3_endpoint, "tables", TABLES, table_path)


@pytest.mark.parametrize("name", TABLES)
def test_s3_table_reads_like_local(name: str, bucket: str, storage_options: dict[str, str], table_path) -> None:
    uri = f"s3://{bucket}/{name}"
    remote = HudiTableBuilder.from_base_uri(uri).with_storage_options(storage_options).build()
    local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    assert remote.base_url == uri
    assert remote.storage_options() == storage_options
    for opts in (
        HudiReadOptions(),
        HudiReadOptions(filters=[("txn_id", "!=", "TXN-001")], projection=["txn_id", "txn_ts"]),
        HudiReadOptions().with_as_of_timestamp(local.get_timeline().data_instants[0].timestamp),
    ):
        a = to_table(remote.read(opts))
        assert row_set(a.drop_columns([c for c in a.column_names if c == "_hoodie_file_name"])) == row_set(
            to_table(local.read(opts)).drop_columns([c for c in a.column_names if c == "_hoodie_file_name"])
        )
        streamed = to_table(list(remote.read_stream(opts)))
        assert row_set(streamed) == row_set(a)
    # hudi-rs reads the same object store with the same storage options.
    theirs = hudi.HudiTableBuilder.from_base_uri(uri).with_storage_options(storage_options).build()
    assert row_set(to_table(remote.read())) == row_set(to_table(theirs.read()))


def test_s3_missing_table(bucket: str, storage_options: dict[str, str]) -> None:
    with pytest.raises(HudiTableNotFoundError, match="s3://tables/nope"):
        HudiTableBuilder.from_base_uri(f"s3://{bucket}/nope").with_storage_options(storage_options).build()


def test_s3_bad_endpoint(storage_options: dict[str, str]) -> None:
    bad = {**storage_options, "aws_endpoint_url": f"http://127.0.0.1:{free_port()}"}
    with pytest.raises((HudiStorageError, HudiTableNotFoundError)):
        HudiTableBuilder.from_base_uri("s3://tables/x").with_storage_options(bad).build()
