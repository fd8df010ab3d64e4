"""A reader worker killed mid-read: Ray retries its task and the dataset still
returns every row exactly once.

The pause that lets the test kill a reader mid-read is a worker setup hook
(``tests/ray/hooks.py``), which Ray installs for a whole job: the read runs in
a driver of its own, on a Ray instance of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import REPO, write_numbered_table

ROWS = 2000

# Reads the table while the first reader task to hand out rows waits to be
# killed, kills it once rows reach this driver, and reports what it read.
DRIVER = """
import json, os, signal, sys, threading, time
import pyarrow as pa, ray
import hudi_ray
from tests.ray import hooks

path, pause = sys.argv[1:3]
runtime_env = hooks.job_runtime_env(hooks.pause_after_output, {hooks.FAULT_PAUSE_FILE_ENV: pause})
ray.init(
    address="local", num_cpus=2, object_store_memory=200 << 20, include_dashboard=False,
    log_to_driver=False, logging_level="WARNING", runtime_env=runtime_env,
)
ctx = ray.data.DataContext.get_current()
ctx.enable_progress_bars = False
# Small blocks: the task's first rows leave it (and reach the consumer) before it is killed.
ctx.target_max_block_size = 256
ds = hudi_ray.read_hudi(path, columns=["id"], batch_size=50, override_num_blocks=2)

ids, failure = [], []

def consume():
    try:
        for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
            ids.extend(pa.Table.from_batches(batch.to_batches())["id"].to_pylist())
    except BaseException as exc:
        failure.append(repr(exc))

reader = threading.Thread(target=consume, daemon=True)
reader.start()
deadline = time.monotonic() + 120
pid = None
while time.monotonic() < deadline and pid is None:
    text = open(pause).read().strip() if os.path.exists(pause) else ""
    pid = int(text) if text else None
    time.sleep(0.05)
rows_before_kill = None
if pid is not None:
    # Kill once rows are flowing, so the read is truly under way.
    while time.monotonic() < deadline and not ids:
        time.sleep(0.05)
    rows_before_kill = len(ids)
    os.kill(pid, signal.SIGKILL)
    reader.join(timeout=180)
report = {
    "paused_pid": pid,
    "rows_before_kill": rows_before_kill,
    "finished": not reader.is_alive(),
    "failure": failure,
    "ids": ids,
}
print(json.dumps(report))
"""


def test_killed_reader_worker_is_retried_without_duplicates(tmp_path: Path) -> None:
    path = str(write_numbered_table(tmp_path / "t", rows=ROWS, rows_per_file=100))
    pause = tmp_path / "paused.pid"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, path, str(pause)],
        capture_output=True,
        text=True,
        timeout=420,
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    ids = report["ids"]
    assert report["paused_pid"] is not None, "no reader task paused for the kill"
    assert report["finished"], "the read did not finish after the worker was killed"
    assert not report["failure"], report["failure"]
    assert 0 < report["rows_before_kill"] < ROWS
    assert len(ids) == ROWS
    assert sorted(ids) == list(range(ROWS))
