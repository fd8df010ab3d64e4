"""Hudi tables in PySpark 4 without Ray: ``spark.read.format("hudi_ray")``.

A Python data source (PySpark 4.0+): the driver plans a read once with this
project's core, executors read their file slices with the core's file group
reader and hand Spark Arrow record batches. No Hudi jars, no Ray, no RayDP;
it needs its own environment, since RayDP (``hudi_ray.spark``) pins pyspark
3.5. Spark's Python workers must run that environment's interpreter
(``PYSPARK_PYTHON``), or they cannot import ``hudi_ray``.

    from hudi_ray.spark4 import register

    register(spark)
    df = spark.read.format("hudi_ray").load("s3://bucket/trips")
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

from hudi_ray.core.exceptions import HudiUnsupportedError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

MIN_PYSPARK = (4, 0)
# Spark's pushFilters hook (Spark 4.1+), off unless this setting is on.
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
PUSHDOWN_SINCE = (4, 1)


def pyspark_version() -> tuple[int, int] | None:
    """The installed pyspark's (major, minor), or None without pyspark."""
    try:
        import pyspark
    except ImportError:
        return None
    parts = pyspark.__version__.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def require_pyspark4() -> tuple[int, int]:
    """The pyspark version, or ``HudiUnsupportedError`` when it predates the
    Python Data Source API (4.0)."""
    version = pyspark_version()
    if version is None or version < MIN_PYSPARK:
        import importlib.metadata

        try:
            found = f"pyspark {importlib.metadata.version('pyspark')}"
        except importlib.metadata.PackageNotFoundError:
            found = "no pyspark"
        raise HudiUnsupportedError(
            f"The hudi_ray Spark data source needs pyspark 4.0 or newer (its Python Data Source API); "
            f"found {found}. Install it with pip install 'hudi-ray[spark4]' in an environment without RayDP, "
            "or use hudi_ray.spark (RayDP, pyspark 3.5)"
        )
    return version


def register(spark: SparkSession, *, filter_pushdown: bool = True) -> None:
    """Register the ``hudi_ray`` format with ``spark``.

    ``filter_pushdown`` sets ``spark.sql.python.filterPushdown.enabled`` on
    pyspark 4.1+, where Spark hands filters to Python sources (on 4.0 it has no
    effect: Spark filters every row itself). Results are the same either way.
    """
    version = require_pyspark4()
    from hudi_ray.spark4.source import HudiDataSource

    spark.dataSource.register(HudiDataSource)
    if version >= PUSHDOWN_SINCE:
        spark.conf.set(PUSHDOWN_CONF, "true" if filter_pushdown else "false")
    conf = spark.sparkContext.getConf()
    if not (os.environ.get("PYSPARK_PYTHON") or conf.get("spark.pyspark.python")):
        # Spark then starts workers with the "python3" on PATH, which may lack hudi_ray.
        log.warning(
            "PYSPARK_PYTHON is not set: Spark's Python workers may not run %s, which has hudi_ray installed",
            sys.executable,
        )


__all__ = ["MIN_PYSPARK", "PUSHDOWN_CONF", "pyspark_version", "register", "require_pyspark4"]
