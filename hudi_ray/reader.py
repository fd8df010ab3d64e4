"""Reader tasks: a chunk of file slices in, Arrow tables out.

``read_chunk`` reads one chunk of a planned read slice by slice through the
core's file group reader, so its rows are exactly those ``HudiTable.read``
returns for the same slices. With prefetching, the core's ``SlicePrefetcher``
fetches the files of the next ``prefetch_depth`` slices (footers, the column
chunks the read decodes, whole log files) while one slice decodes, and a
``PrefetchingStorage`` serves them from memory, so the task does not sit idle
on storage. Memory stays bounded by the slice being merged plus the bytes
fetched ahead, never by the whole chunk.

Ray runs these functions inside read tasks; nothing here needs Ray.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.storage import PrefetchingStorage
from hudi_ray.core.table import HudiFileGroupReader, HudiReadPlan, SlicePrefetcher
from hudi_ray.core.util import read_ahead
from hudi_ray.tunables import RAY_TUNABLES


@dataclass(frozen=True)
class ChunkRead:
    """What one reader task needs: the shared plan parts and its slices.

    ``plan.slices`` is unused (tasks get their own ``slices``). ``predicate``
    is the caller's full row predicate, applied after the Hudi filters;
    ``columns`` the columns to return (None: all the plan reads).
    """

    plan: HudiReadPlan
    slices: list[HudiFileSlice]
    predicate: pc.Expression | None = None
    columns: list[str] | None = None
    batch_size: int = RAY_TUNABLES.block_rows
    prefetch: bool = False
    prefetch_depth: int = RAY_TUNABLES.prefetch_depth


def read_chunk(task: ChunkRead) -> Iterator[pa.Table]:
    """Tables of the chunk's rows, slice after slice; empty tables are skipped."""
    if not task.prefetch:
        reader = task.plan.file_group_reader()
        for s in task.slices:
            yield from _slice_tables(task, reader, s)
        return
    storage = PrefetchingStorage(task.plan.context.storage)
    reader = task.plan.file_group_reader(storage)
    with SlicePrefetcher(storage, reader, task.plan) as prefetcher:
        # Fetches start on the prefetcher's loop: read-ahead only keeps the window.
        ahead = read_ahead(task.slices, prefetcher.fetch, max(0, task.prefetch_depth), started=True)
        with closing(ahead):
            for s, fetched in zip(task.slices, ahead):
                prefetcher.install(fetched)
                try:
                    yield from _slice_tables(task, reader, s)
                finally:
                    prefetcher.clear()


def _slice_tables(task: ChunkRead, reader: HudiFileGroupReader, s: HudiFileSlice) -> Iterator[pa.Table]:
    for batch in task.plan.read_slice_stream(reader, s, task.batch_size):
        out = _finish(batch, task.predicate, task.columns)
        if out.num_rows:
            yield out


def _finish(batch: pa.RecordBatch, predicate: pc.Expression | None, columns: list[str] | None) -> pa.Table:
    table = pa.Table.from_batches([batch])
    if predicate is not None and table.num_rows:
        table = table.filter(predicate)
    if columns is not None:
        table = table.select(columns)
    return table
