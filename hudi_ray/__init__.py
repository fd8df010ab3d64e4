"""hudi-ray: read Apache Hudi tables into Arrow, Ray Datasets and Spark.

The reader API mirrors hudi-rs: code written against ``hudi`` ports by
changing the import to ``hudi_ray``. ``read_hudi`` (a Ray Dataset) is loaded
on first use, so importing this package never imports Ray; so is it by
``incremental`` (checkpointed incremental jobs), when a run starts.
"""

from typing import Any

from hudi_ray.core import *  # noqa: F403
from hudi_ray.core import __all__ as _core_all

__version__ = "0.1.0"
from hudi_ray.incremental_run import IncrementalRun, incremental

__all__ = [*_core_all, "IncrementalRun", "incremental", "read_hudi"]  # noqa: F405 - read_hudi comes from __getattr__


def __getattr__(name: str) -> Any:
    if name == "read_hudi":
        from hudi_ray.datasource import read_hudi

        return read_hudi
    raise AttributeError(f"module 'hudi_ray' has no attribute {name!r}")
