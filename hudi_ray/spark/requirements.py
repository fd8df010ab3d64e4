"""Importing the Spark package checks its extras first: ``read_hudi_spark`` needs
PySpark, and the RayDP bridge (``init_spark``, ``to_spark``) needs Ray and RayDP too;
a bare import error would name only the first module missing."""

from __future__ import annotations

import importlib.util

from hudi_ray.core.exceptions import HudiMissingExtraError


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # present in sys.modules as None: blocked, as if not installed
        return False


def require_pyspark() -> None:
    if not _installed("pyspark"):
        raise HudiMissingExtraError(
            "Reading Hudi tables into Spark needs pyspark, which is not installed: "
            "pip install 'hudi-ray[spark]' (Spark on Ray) or 'hudi-ray[spark4]'",
            "pyspark",
        )


def require_spark_extra() -> None:
    """Fail naming the extra to install when Ray, RayDP or PySpark is missing."""
    for module in ("ray", "raydp", "pyspark"):
        if not _installed(module):
            raise HudiMissingExtraError(
                f"Spark on Ray (RayDP) needs {module}, which is not installed: pip install 'hudi-ray[spark]'", module
            )


require_pyspark()
