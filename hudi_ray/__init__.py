"""hudi-ray: read Apache Hudi tables into Arrow, Ray Datasets and Spark.

The reader API mirrors hudi-rs: code written against ``hudi`` ports by
changing the import to ``hudi_ray``.
"""

from hudi_ray.core import *  # noqa: F403
from hudi_ray.core import __all__ as _core_all

__version__ = "0.1.0"
__all__ = list(_core_all)
