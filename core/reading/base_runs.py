"""Runs of small base files, finished together.

For base files of a few rows, conforming to the table schema, masking and
cutting into batches cost more per file than decoding the file: consecutive
files read alike (one read selection, one partition's constants, one file schema)
form a run, finished in one pass and handed back as a batch per file, or as
one batch for callers that want only the rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from hudi_ray.core.exceptions import HudiSchemaError
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.query.selection import ReadSelection
from hudi_ray.core.schema import conform_table
from hudi_ray.core.util.arrow_pool import reader_pool

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

# Rows of a run; a larger file goes alone (joining would only copy it).
RUN_ROWS = 1 << 16
# Files of a run, when each keeps a batch of its own: a run's tables live
# until it is conformed, and the more files it holds, the slower every later
# file's read allocates. One file alone pays the run's fixed cost.
RUN_FILES = 16


class BaseRead:
    """A base file's data as read, before it is conformed to the table schema.
    A plain class: made once per file read, where a frozen dataclass's
    ``__init__`` costs as much as a small file's conforming."""

    __slots__ = ("base_rel", "constants", "constants_key", "data", "selection")

    def __init__(
        self,
        selection: ReadSelection,
        data: pa.Table,
        constants: Mapping[str, pa.Scalar],
        constants_key: str,  # the partition whose values ``constants`` are ("" without constants)
        base_rel: str,
    ) -> None:
        self.selection = selection
        self.data = data
        self.constants = constants
        self.constants_key = constants_key
        self.base_rel = base_rel

    def joins(self, other: BaseRead) -> bool:
        """Whether ``other`` can be conformed together with this file's data
        when their file schemas agree, which joining the run checks: comparing
        schemas here, file by file, costs a switch of threads each."""
        return other.selection is self.selection and other.constants_key == self.constants_key


def one_batch(data: pa.Table) -> pa.RecordBatch:
    """``data`` as one contiguous batch, as the spec's eager per-slice read returns."""
    if data.num_rows == 0:
        return pa.RecordBatch.from_pylist([], schema=data.schema)
    return data.combine_chunks(memory_pool=reader_pool()).to_batches()[0]


def _same_schema_stretches(run: Sequence[BaseRead]) -> list[list[BaseRead]]:
    stretches: list[list[BaseRead]] = []
    for r in run:
        if stretches and stretches[-1][-1].data.schema.equals(r.data.schema):
            stretches[-1].append(r)
        else:
            stretches.append([r])
    return stretches


def finish_run(run: Sequence[BaseRead], uri: Callable[[str], str], per_file: bool = True) -> list[pa.RecordBatch]:
    """One batch per file of ``run`` (base files read alike), as a read of each
    alone gives them; or, not ``per_file``, one batch of them all (joined
    first: masking thousands of chunks, and cutting them into batches, costs
    more than copying their few rows). ``uri`` names a file in errors."""
    if not run:
        return []
    first = run[0]
    selection = first.selection
    try:
        raw = pa.concat_tables([r.data for r in run]) if len(run) > 1 else first.data
    except pa.ArrowInvalid:
        # Files of several schemas (an evolved table): each stretch of one schema joins alone.
        stretches = _same_schema_stretches(run)
        if len(stretches) == 1:
            raise
        return [b for stretch in stretches for b in finish_run(stretch, uri, per_file)]
    if not per_file and len(run) > 1:
        raw = raw.combine_chunks(memory_pool=reader_pool())
    try:
        data = conform_table(raw, selection.read_schema, first.constants, uri(first.base_rel))
    except HudiSchemaError:
        for r in run:  # the file that cannot be conformed raises, naming itself
            conform_table(r.data, selection.read_schema, r.constants, uri(r.base_rel))
        raise
    if not per_file:
        data = selection.apply(data)
        return [one_batch(data)] if data.num_rows else []
    if selection.mask is None:
        out = per_file_batches(selection.apply(data), [r.data.num_rows for r in run])
    else:
        out = []
        offset = 0
        for r in run:
            out.append(one_batch(selection.apply(data.slice(offset, r.data.num_rows))))
            offset += r.data.num_rows
    if data is raw and len(run) > 1:
        # Data already in the table schema passes as read, with its file's
        # schema metadata: each batch keeps its own file's, as one read alone does.
        out = [b.replace_schema_metadata(r.data.schema.metadata) for b, r in zip(out, run)]
    return out


def per_file_batches(data: pa.Table, rows: Sequence[int]) -> list[pa.RecordBatch]:
    """``data``, the rows of files of ``rows`` rows each, as a batch per file.
    Each file's rows are already a chunk of their own (as concatenated):
    those are taken as they are, without the copy of making all contiguous."""
    chunks = iter(data.to_batches())
    out: list[pa.RecordBatch] = []
    for n in rows:
        parts: list[pa.RecordBatch] = []
        held = 0
        while held < n:
            part = next(chunks, None)
            if part is None:
                break
            parts.append(part)
            held += part.num_rows
        if held != n:
            # Chunks that straddle files: made contiguous once, each file a zero-copy slice.
            batch = one_batch(data)
            offsets = itertools.accumulate(rows, initial=0)
            return [batch.slice(offset, count) for offset, count in zip(offsets, rows)]
        if len(parts) == 1:
            out.append(parts[0])
        else:  # no rows, or a file of several row groups
            out.append(one_batch(pa.Table.from_batches(parts, schema=data.schema)))
    return out
