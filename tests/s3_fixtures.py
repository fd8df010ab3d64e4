"""A real S3 API on loopback for tests: moto in server mode, started once per
module that uses it, with the hudi-rs style storage options to reach it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

s3fs = pytest.importorskip("s3fs")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    port = free_port()
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


def upload(s3_endpoint: str, bucket: str, tables: list[str], table_path: Callable[[str], Path]) -> str:
    """Copy shared tables into ``bucket`` under their names; returns the bucket."""
    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": s3_endpoint})
    fs.mkdir(bucket)
    for name in tables:
        fs.put(str(table_path(name)), f"{bucket}/{name}", recursive=True)
    return bucket
