"""Hudi tables as Spark DataFrames, on any SparkSession (``read_hudi_spark``): Spark
scans the base files that need no merge itself, hudi-ray reads the rest.

On Spark on Ray (RayDP, started with ``init_spark``) hudi-ray's part is read by Ray
reader tasks and handed to Spark as Arrow IPC streams in Ray's object store
(``to_spark`` hands over any Ray Dataset so); on a plain session it is read in Spark's
Python workers. No Hudi jars on the Spark side. Importing this needs only PySpark; the
RayDP parts load Ray when first used.
"""

from __future__ import annotations

import importlib
from typing import Any

from hudi_ray.spark.requirements import require_spark_extra  # first: names a missing pyspark
from hudi_ray.spark.scan import DEFAULT_PARTITION_BYTES, read_hudi_spark

# Names of the RayDP bridge, by module: imported on first use, as they need Ray.
_RAYDP = {
    "Handoff": "session",
    "handoffs": "session",
    "init_spark": "session",
    "java_version": "session",
    "release": "session",
    "stop_spark": "session",
    "to_spark": "handoff",
}


def __getattr__(name: str) -> Any:
    module = _RAYDP.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require_spark_extra()
    return getattr(importlib.import_module(f"hudi_ray.spark.{module}"), name)


__all__ = [
    "DEFAULT_PARTITION_BYTES",
    "Handoff",
    "handoffs",
    "init_spark",
    "java_version",
    "read_hudi_spark",
    "release",
    "stop_spark",
    "to_spark",
]
