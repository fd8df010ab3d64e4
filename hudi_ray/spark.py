"""The Spark bridge: Hudi tables read by hudi-ray's Ray layer, handed to Spark
through RayDP (Spark executors run as Ray actors; data moves through Ray's
object store as Arrow), with no Hudi jars on the Spark side."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_ray.core.exceptions import HudiUnsupportedError

if TYPE_CHECKING:  # pragma: no cover
    import ray.data
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_CONFIGS = {
    # Hudi stores instants in UTC; show them as such rather than in the JVM's zone.
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


def java_version() -> str | None:
    """The ``java -version`` line, or None when no Java is on PATH."""
    java = shutil.which("java")
    if java is None:
        return None
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    lines = (out.stderr or out.stdout).splitlines()
    return lines[0] if lines else None


def _require_java() -> None:
    version = java_version()
    if version is None:
        raise HudiUnsupportedError(
            "The Spark bridge needs Java 17 on PATH (e.g. apt-get install openjdk-17-jre-headless); none was found"
        )
    if '"1.8' in version or '"11' in version:
        raise HudiUnsupportedError(f"The Spark bridge needs Java 17 or newer; found {version}")


def init_spark(
    app_name: str = "hudi-ray",
    num_executors: int = 1,
    executor_cores: int = 1,
    executor_memory: str = "1G",
    configs: dict[str, str] | None = None,
) -> SparkSession:
    """Start Spark on the current Ray cluster (starting a local Ray if none runs)."""
    import ray
    import raydp

    _require_java()
    # Spark's Python workers must import pyspark: use this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    return raydp.init_spark(
        app_name=app_name,
        num_executors=num_executors,
        executor_cores=executor_cores,
        executor_memory=executor_memory,
        configs={**DEFAULT_CONFIGS, **(configs or {})},
    )


def stop_spark() -> None:
    import raydp

    raydp.stop_spark()


def _for_spark(batch: pa.Table, maps: list[str]) -> pa.Table:
    """One chunk per column (RayDP builds struct arrays from them) and maps as entry lists."""
    for name in maps:
        i = batch.schema.get_field_index(name)
        t = batch.schema.field(i).type
        entries = pa.list_(pa.field("entries", pa.struct([t.key_field, t.item_field]), nullable=False))
        batch = batch.set_column(i, pa.field(name, entries), batch.column(i).cast(entries))
    return batch.combine_chunks()


def to_spark(dataset: ray.data.Dataset, spark: SparkSession) -> DataFrame:
    """A Ray Dataset as a Spark DataFrame, keeping Arrow types (decimals,
    timestamps, nested types) as their Spark equivalents."""
    import raydp  # noqa: F401  (registers Dataset.to_spark)
    from pyspark.sql import functions as F

    schema = dataset.schema()
    arrow_schema = schema.base_schema if hasattr(schema, "base_schema") else schema
    # PySpark 3.5 cannot take Arrow maps from pandas-converted batches; they
    # travel as key/value entry lists and become maps again in Spark.
    maps = [f.name for f in arrow_schema if pa.types.is_map(f.type)]
    prepared = dataset.map_batches(_for_spark, fn_args=(maps,), batch_format="pyarrow", zero_copy_batch=True)
    df = prepared.to_spark(spark)
    if not maps:
        return df
    return df.select(*[F.map_from_entries(F.col(c)).alias(c) if c in maps else F.col(c) for c in df.columns])


def read_hudi_spark(spark: SparkSession, table_uri: str, **read_hudi_args: Any) -> DataFrame:
    """Read a Hudi table through ``hudi_ray.read_hudi`` into a Spark DataFrame.

    Accepts every argument of :func:`hudi_ray.read_hudi` (filters, columns,
    query type, time travel, incremental range, storage options, ...).
    """
    from hudi_ray.datasource import read_hudi

    return to_spark(read_hudi(table_uri, **read_hudi_args), spark)
