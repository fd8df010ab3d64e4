"""A multi-node Ray cluster on one machine: a head raylet and worker raylets,
each with its own custom resource so work can be placed on a chosen node.

    python clusters/local_cluster.py [--workers 1] [--cpus-per-node 1] [--object-store-mb 300]

The head node has resource ``node_a``, the workers ``node_b``, ``node_c``, ...
The script prints ``RAY_ADDRESS=<address>`` once every node is up, then runs
until interrupted (Ctrl-C or SIGTERM) and stops exactly the processes it
started. Connect a driver with ``ray.init(address=...)`` (or the
``RAY_ADDRESS`` environment variable), e.g. to place the planner on the head::

    planner = get_or_create_planner(uri, actor_options={"resources": {"node_a": 0.01}})
    ds = hudi_ray.read_hudi(uri, planner=planner)

The tests use it for the two-node read (tests/test_ray_cluster.py).
"""

from __future__ import annotations

import argparse
import signal
import string
import sys
import threading
from types import FrameType

from ray.cluster_utils import Cluster


def node_resource(index: int) -> str:
    """``node_a`` for the head, then ``node_b``, ``node_c``, ..."""
    return f"node_{string.ascii_lowercase[index]}"


def start(workers: int, cpus_per_node: int, object_store_mb: int) -> Cluster:
    if not 0 <= workers < len(string.ascii_lowercase):
        raise SystemExit(f"--workers must be between 0 and {len(string.ascii_lowercase) - 1}, got {workers}")
    common = {"num_cpus": cpus_per_node, "object_store_memory": object_store_mb * 2**20}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={**common, "resources": {node_resource(0): 1}, "include_dashboard": False},
    )
    for i in range(1, workers + 1):
        cluster.add_node(**common, resources={node_resource(i): 1})
    cluster.wait_for_nodes()
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=1, help="worker raylets besides the head (default 1)")
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--object-store-mb", type=int, default=300)
    args = parser.parse_args()

    cluster = start(args.workers, args.cpus_per_node, args.object_store_mb)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(f"RAY_ADDRESS={cluster.address}", flush=True)
    print(f"nodes: {', '.join(node_resource(i) for i in range(args.workers + 1))} (Ctrl-C stops them)", flush=True)
    try:
        stop.wait()
    finally:
        cluster.shutdown()
        print("stopped", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
