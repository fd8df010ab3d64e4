"""Reader tasks: a chunk of file slices in, Arrow tables out.

``read_chunk`` reads one chunk of a planned read slice by slice through the
core's read pipeline (``HudiReadPlan.read_units``), so its rows are exactly
those ``HudiTable.read`` returns for the same slices. On an object store, with
prefetching, the files of up to ``prefetch_depth`` units (a slice, or a group
of small slices) ahead of the one decoding are fetched meanwhile, many requests
in flight, so the task does not sit idle on storage. Memory stays bounded by
the unit being merged plus the bytes fetched ahead, never by the whole chunk.

Ray runs these functions inside read tasks; nothing here needs Ray.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ray.core.config import ENGINE_TUNABLES
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.table import HudiReadPlan, SliceReader
from hudi_ray.core.util import SMALL_GROUP_BYTES, group_small
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
    prefetch_depth: int = ENGINE_TUNABLES.prefetch_depth


def read_chunk(task: ChunkRead) -> Iterator[pa.Table]:
    """Tables of the chunk's rows, slice after slice, small slices' rows joined
    into tables of up to ``batch_size`` rows; empty tables are skipped."""
    # Ray Data pays per block (metadata, object store, scheduling of its
    # consumers), so a chunk of many small slices must not yield a block per slice.
    return _coalesce(_chunk_tables(task), task.batch_size)


def _coalesce(tables: Generator[pa.Table, None, None], rows: int) -> Iterator[pa.Table]:
    """``tables`` joined in order into tables of at most ``rows`` rows; a table
    of ``rows`` or more passes as it is. Memory stays one joined table. Closing
    this closes ``tables`` (and with it the chunk's prefetcher)."""
    pending: list[pa.Table] = []
    held = 0
    with closing(tables):
        for table in tables:
            if pending and (held + table.num_rows > rows or not table.schema.equals(pending[0].schema)):
                yield _joined(pending)
                pending, held = [], 0
            if table.num_rows >= rows:
                yield table
                continue
            pending.append(table)
            held += table.num_rows
    if pending:
        yield _joined(pending)


def _joined(tables: list[pa.Table]) -> pa.Table:
    if len(tables) == 1:
        return tables[0]
    if tables[0].num_columns == 0:
        # Arrow drops the rows of column-less tables when concatenating them
        # (a count() projects every column away): keep the count.
        return pa.table({"rows": pa.nulls(sum(t.num_rows for t in tables))}).select([])
    # One contiguous table: a block of thousands of tiny chunks is slow to consume.
    return pa.concat_tables(tables).combine_chunks()


def _chunk_tables(task: ChunkRead) -> Generator[pa.Table, None, None]:
    sizes = [s.total_size_bytes() for s in task.slices]
    units = group_small(task.slices, sizes, SMALL_GROUP_BYTES)
    tables = task.plan.read_units(
        units,
        lambda reader, unit: _unit_tables(task, reader, unit),
        prefetch=task.prefetch,
        max_ahead=max(0, task.prefetch_depth),
    )
    with closing(tables):
        for unit_tables in tables:
            yield from unit_tables


def _unit_tables(task: ChunkRead, reader: SliceReader, unit: Sequence[HudiFileSlice]) -> list[pa.Table]:
    if len(unit) == 1:
        return list(_slice_tables(task, reader, unit[0]))
    # Small slices, read and finished together: memory stays one group (a few MiB on disk).
    batches = [b for b in task.plan.read_slices(reader, unit) if b.num_rows]
    if not batches:
        return []
    out = _finish_table(pa.Table.from_batches(batches), task.predicate, task.columns)
    # An explicit length: a column-less table (count()) takes any slice length as given.
    return [
        out.slice(offset, min(task.batch_size, out.num_rows - offset))
        for offset in range(0, out.num_rows, task.batch_size)
    ]


def _slice_tables(task: ChunkRead, reader: SliceReader, s: HudiFileSlice) -> Iterator[pa.Table]:
    for batch in task.plan.read_slice_stream(reader, s, task.batch_size):
        out = _finish(batch, task.predicate, task.columns)
        if out.num_rows:
            yield out


def _finish(batch: pa.RecordBatch, predicate: pc.Expression | None, columns: list[str] | None) -> pa.Table:
    return _finish_table(pa.Table.from_batches([batch]), predicate, columns)


def _finish_table(table: pa.Table, predicate: pc.Expression | None, columns: list[str] | None) -> pa.Table:
    if predicate is not None and table.num_rows:
        table = table.filter(predicate)
    if columns is not None:
        table = table.select(columns)
    return table
