"""read_hudi over object storage (moto's S3 server on loopback): reader tasks
fetch ahead with async range reads and return the table API's rows."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from ray.data.expressions import col
from ray_fixtures import TablePath, dataset_table, ray_session  # noqa: F401

import hudi_ray
from hudi_ray import HudiReadOptions, HudiTableBuilder
from hudi_ray.datasource import planned_read

from oracle import row_set, to_table

s3fs = pytest.importorskip("s3fs")

TABLES = ["sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle", "sample_table/cow/v9_txns_simple_meta"]

pytestmark = pytest.mark.usefixtures("ray_session")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("moto server did not start within 30 s")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def storage_options(s3_endpoint: str) -> dict[str, str]:
    return {
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "aws_region": "us-east-1",
        "aws_endpoint_url": s3_endpoint,
        "aws_allow_http": "true",
    }


@pytest.fixture(scope="module")
def bucket(s3_endpoint: str, table_path: TablePath) -> str:
    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": s3_endpoint})
    fs.mkdir("raytables")
    for name in TABLES:
        fs.put(str(table_path(name)), f"raytables/{name}", recursive=True)
    return "raytables"


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
