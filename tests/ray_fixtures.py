"""Fixtures and helpers shared by the Ray tests (``tests/test_ray_*.py``).

One local Ray instance per test session (2 CPUs, no dashboard) serves every
Ray test; import the fixtures into a test module with
``from ray_fixtures import ray_session  # noqa: F401``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import hudi_ray
from hudi_ray.core.writer import write_cow_table

ray = pytest.importorskip("ray")

# The type of conftest's ``table_path`` fixture: table name -> extracted table directory.
TablePath = Callable[[str], Path]


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """A local Ray instance for the whole session (an existing one is reused and left running)."""
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


def dataset_table(ds: ray.data.Dataset) -> pa.Table | None:
    """All rows of a dataset as one Arrow table (None when it has no rows)."""
    tables = [t for t in ray.get(ds.to_arrow_refs()) if t.num_rows]
    return pa.concat_tables(tables) if tables else None


def api_table(path: str | Path, options: hudi_ray.HudiReadOptions | None = None) -> pa.Table | None:
    """The table API's read of the same table (None when it returns no batches)."""
    batches = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build().read(options)
    return pa.Table.from_batches(batches) if batches else None


def numbered_rows(start: int, count: int) -> pa.Table:
    ids = pa.array(range(start, start + count), pa.int64())
    return pa.table(
        {
            "id": ids,
            "value": pa.array([i * 10 for i in range(start, start + count)], pa.int64()),
            "name": pa.array([f"name-{i}" for i in range(start, start + count)]),
            "region": pa.array(["us" if i % 2 == 0 else "eu" for i in range(start, start + count)]),
        }
    )


def write_numbered_table(path: Path, rows: int, rows_per_file: int, partitioned: bool = False) -> Path:
    """A COW table of ``rows`` rows with ids 0..rows-1 in files of ``rows_per_file``
    consecutive ids (so a range filter on ``id`` can prune files by footer stats)."""
    write_cow_table(
        path,
        numbered_rows(0, rows),
        table_name="numbered",
        record_key="id",
        partition_field="region" if partitioned else None,
        precombine_field="value",
        rows_per_file=rows_per_file,
    )
    return path
