"""Test hooks for reader tasks, installed in Ray workers rather than built into the reader.

Each hook is a ``worker_process_setup_hook``: Ray runs it in every worker of
a job as the worker starts, before any task, and it wraps
``hudi_ray.reader.read_chunk`` in that process. Its settings travel as
environment variables of the same runtime env. ``job_runtime_env`` builds the
job's runtime env; this module is pickled by value, so workers need not be
able to import the tests.

Ray runs setup hooks for a job's runtime env only (``ray.init(runtime_env=...)``),
not for a task's, so the tests using them run their driver in a subprocess.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

# Every reader task writes a JSON file into this directory naming its node and process.
TRACE_DIR_ENV = "HUDI_RAY_TRACE_DIR"
# The first reader task to have handed out rows creates this file holding its
# pid, then waits to be killed; the other tasks, and its retry, read on.
FAULT_PAUSE_FILE_ENV = "HUDI_RAY_FAULT_PAUSE_FILE"
# How long a paused task waits for the kill before failing on its own.
PAUSE_SECONDS = 120

ReadChunk = Callable[[Any], Iterator[pa.Table]]


def job_runtime_env(hook: Callable[[], None], env_vars: dict[str, str]) -> dict[str, Any]:
    """A runtime env for ``ray.init`` running ``hook`` in every worker of the job."""
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    return {"worker_process_setup_hook": hook, "env_vars": dict(env_vars)}


def _wrap_read_chunk(wrap: Callable[[ReadChunk], ReadChunk]) -> None:
    import hudi_ray.ray_source
    import hudi_ray.reader

    wrapped = wrap(hudi_ray.reader.read_chunk)
    # The datasource imported the function by name: both names lead to the wrapper.
    hudi_ray.reader.read_chunk = wrapped
    hudi_ray.ray_source.read_chunk = wrapped


def trace_reads() -> None:
    """Setup hook: every reader task records where it ran in ``$HUDI_RAY_TRACE_DIR``."""
    trace_dir = os.environ[TRACE_DIR_ENV]

    def wrap(read_chunk: ReadChunk) -> ReadChunk:
        def traced(task: Any) -> Iterator[pa.Table]:
            import ray

            node = ray.get_runtime_context().get_node_id()
            record = {"node_id": node, "pid": os.getpid(), "slices": len(task.slices)}
            with open(os.path.join(trace_dir, f"{uuid.uuid4().hex}.json"), "w") as f:
                json.dump(record, f)
            yield from read_chunk(task)

        return traced

    _wrap_read_chunk(wrap)


def pause_after_output() -> None:
    """Setup hook: the first reader task to hand out rows pauses to be killed (``$HUDI_RAY_FAULT_PAUSE_FILE``)."""
    pause_file = os.environ[FAULT_PAUSE_FILE_ENV]

    def wrap(read_chunk: ReadChunk) -> ReadChunk:
        def pausing(task: Any) -> Iterator[pa.Table]:
            for table in read_chunk(task):
                yield table
                # Resumed: Ray has taken the rows just handed out.
                _pause_once(pause_file)

        return pausing

    _wrap_read_chunk(wrap)


def _pause_once(path: str) -> None:
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # another task, or an earlier attempt of this one, paused already: read on
    with os.fdopen(fd, "w") as f:
        f.write(str(os.getpid()))
    # Wait for the test to kill this process; never finish normally from here.
    deadline = time.monotonic() + PAUSE_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.05)
    os._exit(1)
