"""The Spark 4 data source tests: one local SparkSession (``local[2]``) for the session.

They run in ``.venv-spark4`` (``./dev test-spark4``): PySpark 4 cannot share the
main environment with RayDP, so the main ``./dev test`` does not collect them.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest


def _pyspark4() -> bool:
    try:
        import pyspark
    except ImportError:
        return False
    return int(pyspark.__version__.split(".")[0]) >= 4


collect_ignore_glob = [] if _pyspark4() else ["test_*.py"]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    from hudi_ray.spark4 import register

    # Workers must run this interpreter (it has hudi_ray); timestamps come back
    # to Python in the process's zone, so make it UTC as the table API's are.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["TZ"] = "UTC"
    time.tzset()
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-ray-spark4-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()
