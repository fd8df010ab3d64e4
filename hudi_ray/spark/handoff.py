"""Ray to Spark without Python on the Spark side.

Each Spark partition is one Arrow IPC stream, a ``bytes`` object in Ray's object
store written by a Ray task; RayDP's JVM reader (``RayDatasetRDD``) hands each
to a Spark executor, which fetches it straight from the object store and reads
it as Arrow column vectors. No pandas, no Python worker, no per-row conversion.

For a plain ``read_hudi`` dataset the tasks are reader tasks: one per chunk of
file slices (chunks sized by the planner's estimates), each streaming its rows
into one IPC stream. Any other Ray Dataset is executed block by block, blocks
grouped into streams of about the same size by conversion tasks.

The streams live in the object store (spilled to disk under memory pressure)
for as long as Spark may read them: a DataFrame can be recomputed by any later
action, and derived DataFrames share its data. The session
(``hudi_ray.spark.session``) holds them until ``release(df)`` or ``stop_spark()``.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import ray

from hudi_ray.core.config import ENGINE_TUNABLES
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.table import HudiReadPlan, ReadSpec
from hudi_ray.datasource import HudiDatasource, datasource_of_spec, hudi_datasource_of
from hudi_ray.ray_compat import iter_block_refs, owner_addresses
from hudi_ray.reader import ChunkRead, read_chunk
from hudi_ray.spark.arrow import ipc_stream, spark_arrow_schema, spark_schema
from hudi_ray.spark.session import Handoff, held_cpus, hold

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

# In-memory Arrow bytes per Spark partition (a larger file slice is a partition of its own).
DEFAULT_PARTITION_BYTES = ENGINE_TUNABLES.spark_partition_bytes


# -- tasks -------------------------------------------------------------------------


def _read_chunk_ipc(plan: Any, work: ChunkRead, schema: pa.Schema) -> bytes:
    """One reader task: the chunk's rows as one IPC stream."""
    return ipc_stream(read_chunk(dataclasses.replace(work, plan=plan)), schema)


def _blocks_ipc(schema: pa.Schema, offsets: list[tuple[int, int] | None], *blocks: Any) -> bytes:
    """One conversion task: Ray Data blocks (sliced where the bundle says) as one IPC stream."""
    from ray.data.block import BlockAccessor

    def tables() -> Any:
        for block, span in zip(blocks, offsets):
            table = BlockAccessor.for_block(block).to_arrow()
            yield table if span is None else table.slice(span[0], span[1] - span[0])

    return ipc_stream(tables(), schema)


def _task_options(remote_args: dict[str, Any]) -> dict[str, Any]:
    """Ray options of the reader tasks: the read's own, else a CPU where Spark leaves one."""
    opts = {k: v for k, v in remote_args.items() if k not in ("scheduling_strategy",)}
    if "num_cpus" not in opts:
        free = ray.cluster_resources().get("CPU", 0.0) - held_cpus()
        # With every CPU held by Spark's executors, a task asking for one would never run.
        opts["num_cpus"] = 1 if free >= 1 else 0
    opts.setdefault("max_retries", 3)
    return opts


# -- DataFrames --------------------------------------------------------------------


def _dataframe(spark: SparkSession, refs: list[ray.ObjectRef], schema: pa.Schema) -> DataFrame:
    from pyspark.sql import DataFrame

    struct = spark_schema(schema)
    handoff = Handoff(uuid.uuid4().hex, tuple(refs), schema)
    if not refs:
        df = spark.createDataFrame(spark.sparkContext.emptyRDD(), struct)
    else:
        # Spark schedules each partition near its object's owner (this driver).
        owners = owner_addresses(refs)
        jvm = spark.sparkContext._jvm
        assert jvm is not None, "a started Spark session has a JVM gateway"
        rdd = jvm.org.apache.spark.rdd.RayDatasetRDD(spark._jsc, [r.binary() for r in refs], owners)
        jdf = jvm.org.apache.spark.sql.raydp.ObjectStoreReader.RayDatasetToDataFrame(
            spark._jsparkSession, rdd, struct.json()
        )
        df = DataFrame(jdf, spark)
    hold(df, handoff)
    return df


def _from_hudi(
    spark: SparkSession, source: HudiDatasource, remote_args: dict[str, Any], partitions: int | None, max_bytes: int
) -> DataFrame:
    table_schema = source.output_schema() or pa.schema([])
    schema = spark_arrow_schema(table_schema)
    work = source.chunk_reads(max_bytes, spark.sparkContext.defaultParallelism, num_chunks=partitions)
    return _from_work(spark, work, schema, remote_args)


def _from_work(spark: SparkSession, work: list[ChunkRead], schema: pa.Schema, remote_args: dict[str, Any]) -> DataFrame:
    task = ray.remote(_read_chunk_ipc).options(**_task_options(remote_args))
    plan_ref = ray.put(work[0].plan) if work else None
    # The plan travels once through the object store, not once per task.
    refs = [task.remote(plan_ref, dataclasses.replace(w, plan=None), schema) for w in work]
    return _dataframe(spark, refs, schema)


def from_chunk_reads(
    spark: SparkSession, work: list[ChunkRead], schema: pa.Schema, ray_args: dict[str, Any]
) -> DataFrame:
    """``work`` read by Ray reader tasks into a DataFrame of ``schema`` (Spark's Arrow
    types); ``ray_args`` are ``read_hudi``'s Ray arguments (those of its tasks apply)."""
    remote = dict(ray_args.get("ray_remote_args") or {})
    remote.update({k: v for k, v in ray_args.items() if k in _TASK_ARGS and v is not None})
    return _from_work(spark, work, schema, remote)


def planned_by_actor(spec: ReadSpec, storage_options: dict[str, str] | None, ray_args: dict[str, Any]) -> HudiReadPlan:
    """The read planned by the table's planner actor (or ``ray_args["planner"]``), as
    ``read_hudi`` plans it, with its slices."""
    source = datasource_of_spec(
        spec,
        storage_options=storage_options,
        planner=ray_args.get("planner"),
        planner_options=ray_args.get("planner_options"),
    )
    planned = source.planned()
    return dataclasses.replace(planned.plan, slices=planned.slices())


# ``read_hudi``'s arguments that are options of its reader tasks.
_TASK_ARGS = frozenset(
    {"num_cpus", "num_gpus", "memory", "resources", "accelerator_type", "runtime_env", "label_selector", "max_calls"}
)


def _from_blocks(spark: SparkSession, dataset: ray.data.Dataset, max_bytes: int) -> DataFrame:
    ds_schema = dataset.schema()
    arrow_schema = getattr(ds_schema, "base_schema", ds_schema)
    if not isinstance(arrow_schema, pa.Schema):
        raise HudiConfigError(f"to_spark takes datasets of Arrow blocks; this one has schema {ds_schema!r}")
    schema = spark_arrow_schema(arrow_schema)
    task = ray.remote(_blocks_ipc).options(**_task_options({}))
    refs: list[ray.ObjectRef] = []
    group: list[ray.ObjectRef] = []
    spans: list[tuple[int, int] | None] = []
    filled = 0

    def flush() -> None:
        nonlocal group, spans, filled
        if group:
            refs.append(task.remote(schema, spans, *group))
        group, spans, filled = [], [], 0

    for block in iter_block_refs(dataset):
        if group and filled + block.size_bytes > max_bytes:
            flush()
        group.append(block.ref)
        spans.append(block.rows)
        filled += block.size_bytes
    flush()
    return _dataframe(spark, refs, schema)


def to_spark(
    dataset: ray.data.Dataset, spark: SparkSession, *, partition_bytes: int = DEFAULT_PARTITION_BYTES
) -> DataFrame:
    """A Ray Dataset as a Spark DataFrame, Arrow types as their Spark types
    (decimals, timestamps, dates, binary, nested structs, lists, maps).

    A plain ``read_hudi`` dataset is read by reader tasks straight into Spark's
    partitions, with its projection, filters and Ray options; other datasets are
    executed and their blocks converted. The DataFrame's data stays in Ray's
    object store until ``release(df)`` or ``stop_spark()``.
    """
    if partition_bytes <= 0:
        raise HudiConfigError(f"partition_bytes must be > 0, got {partition_bytes}")
    plain = hudi_datasource_of(dataset)
    if plain is not None:
        source, remote_args, partitions = plain
        return _from_hudi(spark, source, remote_args, partitions, partition_bytes)
    return _from_blocks(spark, dataset, partition_bytes)
