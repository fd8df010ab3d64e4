"""Spark on Ray through RayDP: starting and stopping it, sharing the CPUs, and
the data handed to it.

RayDP runs Spark's executors as Ray actors that hold their CPUs for as long as
Spark is up. Ray Data sizes a dataset's concurrency from the cluster's *total*
CPUs, so while Spark is up it submits reads for CPUs the executors hold; those
tasks wait in Ray's scheduler for a lease that each finished task releases only
after a delay of over a second. ``init_spark`` therefore tells Ray Data that the
executors' CPUs are taken, and ``stop_spark`` gives them back.

The data behind DataFrames made from Ray (``hudi_ray.spark.handoff``) is held
here too, for as long as Spark may read it: ``stop_spark`` releases it with the
session. This module is the session's state; the hand-off uses it, never the
other way round.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from hudi_ray.core.exceptions import HudiUnsupportedError
from hudi_ray.spark.requirements import require_spark_extra

if TYPE_CHECKING:  # pragma: no cover
    import ray
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_CONFIGS = {
    # Hudi stores instants in UTC; show them as such rather than in the JVM's zone.
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}

# CPUs this driver's RayDP executors hold, excluded from Ray Data's limits while Spark is up.
_held_cpus: float = 0.0
# The attribute naming a DataFrame's hand-off, for ``release``.
_HANDOFF_ATTR = "_hudi_ray_handoff_id"


@dataclass(frozen=True)
class Handoff:
    """The data behind one DataFrame: an IPC stream per Spark partition."""

    handoff_id: str
    refs: tuple[ray.ObjectRef, ...]
    schema: pa.Schema

    @property
    def num_partitions(self) -> int:
        return len(self.refs)


_lock = threading.Lock()
_handoffs: dict[str, Handoff] = {}


def hold(df: DataFrame, handoff: Handoff) -> None:
    """Keep the data behind ``df`` until ``release(df)`` or ``stop_spark()``."""
    if handoff.refs:
        with _lock:
            _handoffs[handoff.handoff_id] = handoff
    setattr(df, _HANDOFF_ATTR, handoff.handoff_id)


def handoffs() -> list[Handoff]:
    """The hand-offs this driver holds, oldest first."""
    with _lock:
        return list(_handoffs.values())


def release(df: DataFrame | str) -> bool:
    """Free the data behind a DataFrame made by ``to_spark`` / ``read_hudi_spark``
    (or a hand-off id): the objects are freed once Spark's executors hold no
    reference to them either, so later actions on it, or on DataFrames derived
    from it, may fail. Returns whether anything was held."""
    handoff_id = df if isinstance(df, str) else getattr(df, _HANDOFF_ATTR, None)
    with _lock:
        return _handoffs.pop(handoff_id, None) is not None if handoff_id else False


def _release_all() -> None:
    with _lock:
        _handoffs.clear()


def java_version() -> str | None:
    """The ``java -version`` line, or None when no Java is on PATH."""
    java = shutil.which("java")
    if java is None:
        return None
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    lines = (out.stderr or out.stdout).splitlines()
    return lines[0] if lines else None


def java_major(version_line: str) -> int | None:
    """The major version in a ``java -version`` line (``"1.8.0_392"`` is 8, ``"17.0.15"`` is 17)."""
    if '"' not in version_line:
        return None
    number = version_line.split('"')[1]
    parts = number.split(".")
    try:
        first = int(parts[0].split("-")[0])
        return int(parts[1]) if first == 1 and len(parts) > 1 else first
    except ValueError:
        return None


def require_java() -> None:
    version = java_version()
    if version is None:
        raise HudiUnsupportedError(
            "The Spark bridge needs Java 17 on PATH (e.g. apt-get install openjdk-17-jre-headless); none was found"
        )
    major = java_major(version)
    if major is not None and major < 17:
        raise HudiUnsupportedError(f"The Spark bridge needs Java 17 or newer; found {version}")


def init_spark(
    app_name: str = "hudi-ray",
    num_executors: int = 1,
    executor_cores: int = 1,
    executor_memory: str = "1G",
    configs: dict[str, str] | None = None,
) -> SparkSession:
    """Start Spark on the current Ray cluster (starting a local Ray if none runs)."""
    require_spark_extra()
    import ray
    import raydp

    require_java()
    # Spark's Python workers must import pyspark: use this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    spark = raydp.init_spark(
        app_name=app_name,
        num_executors=num_executors,
        executor_cores=executor_cores,
        executor_memory=executor_memory,
        configs={**DEFAULT_CONFIGS, **(configs or {})},
    )
    cpus_per_executor = float((configs or {}).get("spark.ray.actor.resource.cpu", executor_cores))
    _hold_cpus(num_executors * cpus_per_executor)
    return spark


def stop_spark() -> None:
    """Stop Spark, release the data handed to it (see ``hudi_ray.spark.release``)
    and give the executors' CPUs back to Ray Data."""
    require_spark_extra()
    import raydp

    try:
        raydp.stop_spark()
    finally:
        _release_all()
        _hold_cpus(0.0)


def held_cpus() -> float:
    """CPUs the Spark executors started by ``init_spark`` hold."""
    return _held_cpus


def _hold_cpus(cpus: float) -> None:
    """Exclude ``cpus`` (replacing what was excluded for Spark before) from Ray Data's limits."""
    global _held_cpus
    from hudi_ray.ray_compat import exclude_cpus

    exclude_cpus(cpus - _held_cpus)
    _held_cpus = cpus
