"""A ``read_hudi`` read done at once: reader tasks run before ``read_hudi``
returns, and the dataset is materialized from their tables (Ray Data's fixed
cost per execution of a dataset would exceed a small read's)."""

from __future__ import annotations

import weakref
from typing import Any

import pyarrow as pa
import ray
from ray.data import Dataset
from ray.exceptions import RayTaskError

from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.ray_source import HudiDatasource, read_fn
from hudi_ray.reader import ChunkRead
from hudi_ray.tunables import RAY_TUNABLES

# read_hudi's arguments that are Ray options of its reader tasks.
TASK_OPTIONS = frozenset(
    {
        "num_cpus",
        "num_gpus",
        "memory",
        "label_selector",
        "fallback_strategy",
        "max_calls",
        "resources",
        "accelerator_type",
        "runtime_env",
    }
)


# Datasets read at once, by id, with their datasource: planned_read finds their plans.
_READ_AT_ONCE: dict[int, HudiDatasource] = {}
_reader_task: Any = None


def _read_table(work: ChunkRead, schema: pa.Schema | None) -> pa.Table:
    """A reader task of a read done at once: the chunk's rows as one table."""
    tables = list(read_fn(work)())
    if not tables:
        return (schema or pa.schema([])).empty_table()
    # Slices may differ in nullability only; Ray Data's blocks would be unified alike.
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")


def read_at_once(datasource: HudiDatasource, num_chunks: int | None, task_options: dict[str, Any]) -> Dataset:
    """The read run now by reader tasks, one per chunk of at most
    ``RayTunables.min_task_bytes`` (or ``num_chunks`` chunks), as a
    materialized dataset of their tables."""
    global _reader_task
    if _reader_task is None:
        _reader_task = ray.remote(_read_table)  # made once: each new remote function is exported to every worker
    works = datasource.chunk_reads(RAY_TUNABLES.min_task_bytes, num_chunks=num_chunks)
    schema = datasource.block_schema()
    if not works:
        ds: Dataset = ray.data.from_arrow((schema or pa.schema([])).empty_table())
    else:
        task = _reader_task.options(**task_options) if task_options else _reader_task
        refs = [task.remote(work, schema) for work in works]
        try:
            ds = ray.data.from_arrow_refs(refs)  # waits for the tasks: it takes each table's metadata
        except RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, HudiCoreError):
                raise cause from None
            raise
    key = id(ds)
    _READ_AT_ONCE[key] = datasource
    weakref.finalize(ds, _READ_AT_ONCE.pop, key, None)
    return ds


def read_at_once_source(ds: Dataset) -> HudiDatasource | None:
    """The datasource ``ds`` was read at once with (not that of a dataset derived from it)."""
    return _READ_AT_ONCE.get(id(ds))
