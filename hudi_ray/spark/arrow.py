"""Arrow IPC streams as Spark's Arrow reader takes them, for the RayDP bridge.

Spark's JVM reads Arrow IPC streams into ``ColumnarBatch``es (``ArrowColumnVector``).
Which Arrow type each column becomes is decided in ``hudi_ray.spark_types``
(shared with the Spark 4 data source); this module writes the conformed
streams the reader tasks hand to Spark.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

# The type mapping is shared with the Spark 4 data source (``hudi_ray.spark4``).
from hudi_ray.spark_types import conform, spark_arrow_schema, spark_arrow_type, spark_schema

__all__ = ["conform", "ipc_stream", "spark_arrow_schema", "spark_arrow_type", "spark_schema"]


def ipc_stream(tables: Iterable[pa.Table], schema: pa.Schema) -> bytes:
    """The tables, conformed to ``schema``, as one Arrow IPC stream (as Spark's Arrow reader reads)."""
    conformed = [conform(t, schema) for t in tables if t.num_rows]

    def write(sink: pa.NativeFile) -> None:
        with pa.ipc.new_stream(sink, schema) as writer:
            for table in conformed:
                writer.write_table(table)

    # Sized first, then written once into a buffer of that size: a growing
    # output stream reallocates and copies its whole content several times.
    counter = pa.MockOutputStream()
    write(counter)
    buffer = pa.allocate_buffer(counter.size())
    write(pa.FixedSizeBufferWriter(buffer))
    return buffer.to_pybytes()
