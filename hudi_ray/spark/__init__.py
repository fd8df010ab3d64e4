"""The Spark bridge: Hudi tables read by hudi-ray's Ray layer, handed to Spark
through RayDP (Spark executors run as Ray actors and read Arrow IPC streams from
Ray's object store in the JVM), with no Hudi jars on the Spark side."""

import hudi_ray.spark.requirements  # noqa: F401 - first: names a missing extra before any import fails
from hudi_ray.spark.handoff import DEFAULT_PARTITION_BYTES, read_hudi_spark, to_spark
from hudi_ray.spark.session import Handoff, handoffs, init_spark, java_version, release, stop_spark

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
