"""A reader worker killed mid-read: Ray retries its task and the dataset still
returns every row exactly once."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

import hudi_ray
from hudi_ray.reader import FAULT_PAUSE_FILE_ENV

from ray_fixtures import ray, ray_session, write_numbered_table  # noqa: F401

ROWS = 2000


@pytest.mark.usefixtures("ray_session")
def test_killed_reader_worker_is_retried_without_duplicates(tmp_path: Path) -> None:
    path = str(write_numbered_table(tmp_path / "t", rows=ROWS, rows_per_file=100))
    pause = tmp_path / "paused.pid"
    ctx = ray.data.DataContext.get_current()
    saved = ctx.target_max_block_size
    # Small blocks: the task's first rows leave it (and reach the consumer) before it is killed.
    ctx.target_max_block_size = 256
    try:
        ds = hudi_ray.read_hudi(
            path,
            columns=["id"],
            batch_size=50,
            override_num_blocks=2,
            runtime_env={"env_vars": {FAULT_PAUSE_FILE_ENV: str(pause)}},
        )
    finally:
        ctx.target_max_block_size = saved

    ids: list[int] = []
    failure: list[BaseException] = []

    def consume() -> None:
        try:
            for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
                ids.extend(pa.Table.from_batches(batch.to_batches())["id"].to_pylist())
        except BaseException as exc:  # surfaced by the assertions below
            failure.append(exc)

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    pid = None
    while time.monotonic() < deadline and pid is None:
        text = pause.read_text().strip() if pause.exists() else ""
        pid = int(text) if text else None
        time.sleep(0.05)
    assert pid is not None, "no reader task paused for the kill"
    # Kill once rows are flowing, so the read is truly under way.
    while time.monotonic() < deadline and not ids:
        time.sleep(0.05)
    rows_before_kill = len(ids)
    os.kill(pid, signal.SIGKILL)
    reader.join(timeout=180)
    assert not reader.is_alive(), "the read did not finish after the worker was killed"
    assert not failure, failure
    assert 0 < rows_before_kill < ROWS
    assert len(ids) == ROWS
    assert sorted(ids) == list(range(ROWS))
