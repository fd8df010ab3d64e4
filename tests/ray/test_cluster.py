"""A two-node Ray cluster on this machine (clusters/local_cluster.py): the
planner on one node, readers on both, the same rows as the table API; a
second job reuses the first job's (detached) planner. Reader tasks report
their node through a worker setup hook of the job (``tests/ray/hooks.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support import api_table, row_set, write_numbered_table

REPO = Path(__file__).resolve().parents[2]

# Runs in its own process: a driver of the two-node cluster, not of the tests' Ray instance.
DRIVER = """
import json, sys
import pyarrow as pa, pyarrow.parquet as pq, ray
import hudi_ray
from hudi_ray.planner import call, get_or_create_planner
from tests.ray import hooks

address, uri, trace_dir, out = sys.argv[1:5]
runtime_env = hooks.job_runtime_env(hooks.trace_reads, {hooks.TRACE_DIR_ENV: trace_dir})
ray.init(address=address, log_to_driver=False, logging_level="WARNING", runtime_env=runtime_env)
ctx = ray.data.DataContext.get_current()
ctx.enable_progress_bars = False
nodes = {r: n["NodeID"] for n in ray.nodes() if n["Alive"] for r in n["Resources"] if r.startswith("node_")}
planner = get_or_create_planner(uri, detached=True, actor_options={"resources": {"node_a": 0.01}})
# Spread: what is checked is that readers run on the node without the planner, not where
# Ray's default placement puts small tasks (near their arguments, often all on one node).
ds = hudi_ray.read_hudi(uri, planner=planner, override_num_blocks=8, ray_remote_args={"scheduling_strategy": "SPREAD"})
tables = [t for t in ray.get(ds.to_arrow_refs()) if t.num_rows]
pq.write_table(pa.concat_tables(tables), out)
print(json.dumps({"nodes": nodes, "planner": call(planner.info.remote())}))
"""


def _start_cluster() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "clusters" / "local_cluster.py"), "--workers", "1", "--cpus-per-node", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.monotonic() + 120
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("RAY_ADDRESS="):
            return proc, line.strip().split("=", 1)[1]
        if not line and proc.poll() is not None:
            break
    proc.terminate()
    pytest.fail("the local two-node cluster did not start")


def test_two_node_cluster_planner_on_one_node_readers_on_both(tmp_path: Path) -> None:
    path = str(write_numbered_table(tmp_path / "t", rows=800, rows_per_file=100, partitioned=True))
    trace_dir = tmp_path / "trace"
    trace_dir.mkdir()
    out = tmp_path / "rows.parquet"
    cluster, address = _start_cluster()
    reports = []
    try:
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        for _ in range(2):  # two jobs, one after the other
            done = subprocess.run(
                [sys.executable, "-c", DRIVER, address, path, str(trace_dir), str(out)],
                capture_output=True,
                text=True,
                timeout=300,
                env=env,
                cwd=REPO,
            )
            assert done.returncode == 0, done.stderr[-4000:]
            reports.append(json.loads(done.stdout.strip().splitlines()[-1]))
    finally:
        cluster.terminate()  # stops every node, the detached planner with them
        cluster.wait(timeout=60)
    first, second = reports
    nodes = first["nodes"]
    assert set(nodes) == {"node_a", "node_b"}
    assert first["planner"]["node_id"] == nodes["node_a"]
    readers = {json.loads(p.read_text())["node_id"] for p in trace_dir.iterdir()}
    assert readers == {nodes["node_a"], nodes["node_b"]}
    assert row_set(pq.read_table(out)) == row_set(api_table(path))
    # The second job found the first job's planner, its loaded snapshot and its history.
    assert second["planner"]["actor_id"] == first["planner"]["actor_id"]
    assert second["planner"]["current_snapshot"] == first["planner"]["current_snapshot"]
    assert second["planner"]["plans_served"] > first["planner"]["plans_served"]
