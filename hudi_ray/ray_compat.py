"""Every use of Ray's private internals, behind small functions.

Ray Data has no public API for a few things the Ray layer needs: the column
it adds to keep the row count of column-less blocks, a dataset's logical plan
after pushdown, the blocks a dataset produces without fetching them, the owner
of an object, and the resources its executor keeps off-limits. They live here
so that a Ray upgrade that moves them changes this one file. Each function
says which internal it touches.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ray
    from ray.data import Dataset
    from ray.data.datasource import Datasource


def stub_column() -> str:
    """The name of the all-null column Ray Data adds to column-less blocks so
    that their row count survives concatenation (``count()`` of a read of no
    columns). ``ray.data._internal.arrow_block._BATCH_SIZE_PRESERVING_STUB_COL_NAME``."""
    from ray.data._internal.arrow_block import _BATCH_SIZE_PRESERVING_STUB_COL_NAME

    return _BATCH_SIZE_PRESERVING_STUB_COL_NAME


def _optimized_operators(ds: Dataset) -> list[Any]:
    """The logical operators of ``ds`` after Ray's logical optimizations
    (projection and predicate pushdown among them), sources first.
    ``Dataset._logical_plan`` and ``ray.data._internal.logical.optimizers.LogicalOptimizer``."""
    from ray.data._internal.logical.optimizers import LogicalOptimizer

    optimized = LogicalOptimizer().optimize(ds._logical_plan)
    return list(optimized.dag.post_order_iter())


def datasources(ds: Dataset) -> list[Datasource]:
    """The datasources ``ds`` reads, as they are after Ray's pushdown optimizations."""
    out: list[Datasource] = []
    for op in _optimized_operators(ds):
        source = getattr(op, "datasource", None)
        if source is not None:
            out.append(source)
    return out


@dataclass(frozen=True)
class SoleRead:
    """A dataset that is one read and nothing else: its datasource, the read
    tasks' Ray options and the number of blocks asked for (None: Ray decides)."""

    datasource: Datasource
    ray_remote_args: dict[str, Any] = field(default_factory=dict)
    num_blocks: int | None = None


def sole_read(ds: Dataset) -> SoleRead | None:
    """``ds`` as a plain read (after Ray's pushdown optimizations, with no other
    operation and no row limit), or None.
    ``ray.data._internal.logical.operators.read_operator.Read``."""
    from ray.data._internal.logical.operators.read_operator import Read

    ops = _optimized_operators(ds)
    if len(ops) != 1 or not isinstance(ops[0], Read) or ops[0].per_block_limit is not None:
        return None
    read = ops[0]
    blocks = read.parallelism if read.parallelism and read.parallelism > 0 else None
    return SoleRead(read.datasource, dict(read.ray_remote_args or {}), blocks)


@dataclass(frozen=True)
class BlockRef:
    """One block a dataset produced, still in the object store: its reference,
    its size in bytes (0 when unknown) and the row range of it that belongs to
    the dataset (None: all of it)."""

    ref: ray.ObjectRef
    size_bytes: int
    rows: tuple[int, int] | None


def iter_block_refs(ds: Dataset) -> Iterator[BlockRef]:
    """Execute ``ds``, streaming references to its blocks without fetching them.
    ``Dataset.iter_internal_ref_bundles`` and the fields of its ``RefBundle``s."""
    for bundle in ds.iter_internal_ref_bundles():
        for entry, piece in zip(bundle.blocks, bundle.slices):
            rows = None if piece is None else (piece.start_offset, piece.end_offset)
            yield BlockRef(entry.ref, entry.metadata.size_bytes or 0, rows)


def owner_addresses(refs: list[ray.ObjectRef]) -> list[bytes]:
    """The serialized addresses of the workers owning ``refs`` (this driver for
    objects it created), for executors that fetch them outside Ray's API.
    ``ray._private.worker.global_worker.core_worker``."""
    import ray

    core_worker = ray._private.worker.global_worker.core_worker  # type: ignore[attr-defined]
    return [core_worker.get_owner_address(r) for r in refs]


def exclude_cpus(delta: float) -> None:
    """Add ``delta`` (possibly negative) to the CPUs Ray Data's executor leaves
    to others when it sizes a dataset's concurrency.
    ``ExecutionOptions.exclude_resources``, deprecated in favour of label selectors."""
    from ray.data import DataContext

    options = DataContext.get_current().execution_options
    excluded = options.exclude_resources
    cpu = max(0.0, (excluded.cpu or 0.0) + delta)
    with warnings.catch_warnings():
        # Label selectors need labelled nodes; this driver-local accounting is
        # what Ray Train uses for the same purpose.
        warnings.simplefilter("ignore")
        options.exclude_resources = excluded.copy(cpu=cpu)
