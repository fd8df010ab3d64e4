"""Tables on object storage: s3:// through fsspec's s3fs, against a real S3 API
server (moto in server mode) on loopback, started by the tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import hudi
import pytest

from hudi_ray import HudiReadOptions, HudiStorageError, HudiTableBuilder, HudiTableNotFoundError

from oracle import row_set, to_table

s3fs = pytest.importorskip("s3fs")

TABLES = ["sample_table/cow/v9_txns_simple_meta", "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle"]


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
    endpoint = f"http://127.0.0.1:{port}"
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
    yield endpoint
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
def bucket(s3_endpoint: str, table_path) -> str:
    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": s3_endpoint})
    fs.mkdir("tables")
    for name in TABLES:
        local: Path = table_path(name)
        fs.put(str(local), f"tables/{name}", recursive=True)
    return "tables"


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
    bad = {**storage_options, "aws_endpoint_url": f"http://127.0.0.1:{_free_port()}"}
    with pytest.raises((HudiStorageError, HudiTableNotFoundError)):
        HudiTableBuilder.from_base_uri("s3://tables/x").with_storage_options(bad).build()
