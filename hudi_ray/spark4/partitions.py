"""The partitions of a ``hudi_ray`` read on Spark 4, batch or streaming: a
plan's file slices split by estimated size, each read on an executor."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from hudi_ray.core.table import HudiReadPlan, HudiTable, HudiTableBuilder
from hudi_ray.core.util import split_balanced
from hudi_ray.reader import ChunkRead, read_chunk
from hudi_ray.spark4.options import SourceOptions
from hudi_ray.spark_types import spark_batches

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType

log = logging.getLogger(__name__)


def build_table(opts: SourceOptions) -> HudiTable:
    return (
        HudiTableBuilder.from_base_uri(opts.uri)
        .with_hudi_options(opts.table_options)
        .with_storage_options(opts.storage_options)
        .build()
    )


class HudiInputPartition(InputPartition):
    """One Spark partition: the plan of its own file slices (a plan is picklable)."""

    def __init__(self, index: int, plan: HudiReadPlan) -> None:
        super().__init__(index)
        self.index = index
        self.plan = plan

    def __repr__(self) -> str:
        # Spark logs partitions; the plan's repr leaves out the URI and its credentials.
        return f"HudiInputPartition(index={self.index}, slices={len(self.plan.slices)})"


def split_plan(plan: HudiReadPlan, opts: SourceOptions) -> list[InputPartition]:
    """A plan's file slices split by estimated size into Spark partitions."""
    if not plan.slices:
        return []
    sizes = [e.size_bytes for e in plan.estimate()]
    count = opts.num_partitions
    if count is None:
        count = max(opts.min_partitions, math.ceil(sum(sizes) / opts.partition_bytes))
    chunks = split_balanced(plan.slices, sizes, min(count, len(plan.slices)))
    log.info("Reading %s: %d file slices in %d partitions", opts.shown_uri, len(plan.slices), len(chunks))
    return [HudiInputPartition(i, replace(plan, slices=chunk)) for i, chunk in enumerate(chunks)]


def read_partition(
    partition: InputPartition, schema: StructType, columns: list[str], opts: SourceOptions
) -> Iterator[pa.RecordBatch]:
    """The rows of one partition's slices, as Arrow batches in Spark's types."""
    if not isinstance(partition, HudiInputPartition):
        # Spark reads a plan with no partitions as one partition of its own (no slices).
        return
    work = ChunkRead(
        plan=partition.plan,
        slices=partition.plan.slices,
        columns=columns,
        batch_size=opts.batch_size,
        prefetch=opts.prefetch,
        prefetch_depth=opts.prefetch_depth,
    )
    yield from spark_batches(read_chunk(work), schema)
