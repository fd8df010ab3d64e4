"""The Spark tests: one RayDP session for them all, on the test session's local Ray (a
second session started after one stopped may find its master's actor name still taken)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

collect_ignore_glob = [] if importlib.util.find_spec("raydp") else ["test_*.py"]


@pytest.fixture(scope="session")
def spark(ray_session: None) -> Iterator[object]:
    from hudi_ray.spark import init_spark, stop_spark

    session = init_spark(app_name="hudi-ray-tests", executor_memory="700M")
    yield session
    stop_spark()
