"""The Spark tests: one RayDP session per module on the session's local Ray."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

collect_ignore_glob = [] if importlib.util.find_spec("raydp") else ["test_*.py"]


@pytest.fixture(scope="module")
def spark(ray_session: None) -> Iterator[object]:
    from hudi_ray.spark import init_spark, stop_spark

    session = init_spark(app_name="hudi-ray-tests", executor_memory="700M")
    yield session
    stop_spark()
