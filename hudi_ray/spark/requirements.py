"""Importing the Spark bridge checks its extra first: the bridge needs Ray, RayDP
and PySpark at once, and a bare import error would name only the first missing."""

from __future__ import annotations

import importlib.util

from hudi_ray.core.exceptions import HudiMissingExtraError


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # present in sys.modules as None: blocked, as if not installed
        return False


def require_spark_extra() -> None:
    """Fail naming the extra to install when Ray, RayDP or PySpark is missing."""
    for module in ("ray", "raydp", "pyspark"):
        if not _installed(module):
            raise HudiMissingExtraError(
                f"The Spark bridge needs {module}, which is not installed: pip install 'hudi-ray[spark]'", module
            )


require_spark_extra()
