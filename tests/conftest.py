"""Fixtures every test folder uses: the shared Hudi tables (extracted once per
session), a loopback S3 server and one local Ray instance."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import TABLES_DIR


@pytest.fixture(scope="session")
def tables_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not TABLES_DIR.is_dir():
        pytest.fail(f"Test tables not found at {TABLES_DIR}; CI and developers have them at ../shared/hudi-tables")
    return tmp_path_factory.mktemp("hudi-tables")


@pytest.fixture(scope="session")
def table_path(tables_root: Path):
    """Returns a function: table name -> absolute path of its extracted table."""
    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name in done:
            return done[name]
        dest = tables_root / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(TABLES_DIR / f"{name}.zip") as zf:
            members = [m for m in zf.namelist() if not m.startswith("__MACOSX/")]
            zf.extractall(dest.parent, members)
        assert dest.is_dir(), f"{name}.zip did not extract to {dest}"
        done[name] = dest
        return dest

    return get


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A real S3 API on loopback: moto in server mode, one per module that uses it."""
    pytest.importorskip("s3fs")
    from hudi_testkit.s3proxy import MotoServer

    with MotoServer() as moto:
        assert moto.url is not None
        yield moto.url


@pytest.fixture(scope="module")
def storage_options(s3_endpoint: str) -> dict[str, str]:
    """hudi-rs style storage options reaching the loopback S3 server."""
    from hudi_testkit.s3proxy import storage_options

    return storage_options(s3_endpoint)


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """A local Ray instance for the whole session (an existing one is reused and left running).

    Here rather than in ``tests/ray`` because the Spark tests run on it too."""
    ray = pytest.importorskip("ray")
    started = False
    if not ray.is_initialized():
        ray.init(
            # A private local instance, even when a cluster runs on this machine.
            address="local",
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            logging_level="WARNING",
            configure_logging=False,
        )
        started = True
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    yield
    if started:
        ray.shutdown()
