"""hudi-ray: read Apache Hudi tables into Arrow, Ray Datasets and Spark.

The reader API mirrors hudi-rs: code written against ``hudi`` ports by
changing the import to ``hudi_ray``. Every public name loads its module on
first use, so importing this package imports neither Ray nor the reader's
machinery: ``read_hudi`` (a Ray Dataset) brings Ray, ``HudiTableBuilder`` the
core reader, ``incremental`` checkpointed incremental jobs.
"""

from typing import TYPE_CHECKING, Any

from hudi_ray.core import __all__ as _core_all
from hudi_ray.core.util import exported

if TYPE_CHECKING:  # what static tools see; at run time each name loads on first use
    from hudi_ray.core import *  # noqa: F403
    from hudi_ray.datasource import read_hudi
    from hudi_ray.incremental_run import IncrementalRun, incremental

__version__ = "0.1.0"

_EXPORTS = {
    **dict.fromkeys(_core_all, "hudi_ray.core"),  # which loads each from its own module
    "IncrementalRun": "hudi_ray.incremental_run",
    "incremental": "hudi_ray.incremental_run",
    "read_hudi": "hudi_ray.datasource",
}

__all__ = [*_core_all, "IncrementalRun", "incremental", "read_hudi"]


def __getattr__(name: str) -> Any:
    return exported(globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
