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


for _module in ("ray", "raydp", "pyspark"):
    if not _installed(_module):
        raise HudiMissingExtraError(
            f"The Spark bridge needs {_module}, which is not installed: pip install 'hudi-ray[spark]'", _module
        )
