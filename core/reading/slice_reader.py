"""``SliceReader``: the slices of one read, each read in one short line of stages.

Everything a read decides once (its options, the commit times and range it
returns, what it sees of the timeline) is fixed when the reader is made; a
slice then goes through the same stages whatever the output shape:

1. **decide** (``merges``, the only place that does it): a slice with log files
   the read does not skip is merged, any other is its base file alone;
2. **select**: the read's ``ReadSelection`` (columns to decode, the row mask);
3. **decode** its base file, or **merge** it with its log records
   (``merge_slice``: the log blocks that survive visibility and rollbacks are
   decoded first, only the columns the merge uses; the base file is then
   read for the keys and ordering values the merge decides on, its other
   columns only when a base row stays; both come from the read's ``SliceFiles``);
4. **conform** to the table schema and **apply** the selection.

The shape is chosen at the edge: a table per slice (``rows``), runs of small
base files finished together (``batches``), or batches of a stream (``stream``).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from hudi_ray.core.file_group import HudiFileSlice, Visibility, snapshot_visibility
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.merge import MergeConfig, MergeMode, apply_merge, compared_columns, decide_merge
from hudi_ray.core.query import CommitRange, HudiReadOptions, ReadSelection
from hudi_ray.core.query.selection import instant_of
from hudi_ray.core.reading import base_runs
from hudi_ray.core.reading.base_runs import BaseRead, finish_run, one_batch
from hudi_ray.core.reading.files import SliceFiles

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

log = logging.getLogger(__name__)


def merges(file_slice: HudiFileSlice, read_optimized: bool) -> bool:
    """Whether a slice is merged with its log files (else its rows are its base
    file's): the one place a read decides it."""
    return bool(file_slice.log_file_names) and not read_optimized


class SliceReader:
    """Reads file slices for one read: ``options`` (filters, projection,
    read-optimized), ``commit_times`` (incremental reads: the instants whose
    rows to return), ``commit_range`` (bounds on the rows' commit times) and
    ``visibility`` (which instants' log blocks the read sees; None: the
    timeline's completed instants up to the range's end)."""

    def __init__(
        self,
        files: SliceFiles,
        options: HudiReadOptions,
        commit_times: frozenset[str] | None = None,
        commit_range: CommitRange | None = None,
        visibility: Visibility | None = None,
    ) -> None:
        self.files = files
        self.options = options
        self.read_optimized = options.use_read_optimized()
        self.commit_times = commit_times
        self.commit_range = commit_range or CommitRange()
        self._visibility = visibility
        # One selection serves every slice alike: it depends on a slice only
        # through merging and whether its base file is older than the range's end.
        self._selections: dict[tuple[bool, bool], ReadSelection] = {}

    @property
    def visibility(self) -> Visibility:
        if self._visibility is None:
            self._visibility = snapshot_visibility(self.files.context.timeline, self.commit_range.end)
        return self._visibility

    def merges(self, file_slice: HudiFileSlice) -> bool:
        return merges(file_slice, self.read_optimized)

    def selection(self, base_rel: str | None, merging: bool, where: str | Callable[[], str]) -> ReadSelection:
        """The read's selection for a slice; ``where`` (or what it gives, asked
        only when a selection is made) names the slice in errors."""
        hi = self.commit_range.end
        base_instant = instant_of(base_rel) if hi is not None and base_rel else None
        key = (merging, base_instant is not None and base_instant <= hi)
        selection = self._selections.get(key)
        if selection is None:
            ctx = self.files.context
            selection = self._selections[key] = ReadSelection(
                ctx.read_schema,
                self.options,
                self.commit_times,
                (self.commit_range.start, hi),
                where() if callable(where) else where,
                ctx.merge_columns() if merging else (),
                base_instant,
            )
        return selection

    def base_selection(self) -> ReadSelection:
        """The selection of base files read alone, whatever their instants (the
        range's end kept: it drops nothing from a file older than it)."""
        return self.selection(None, False, self.files.storage.base_url)

    def decoded_columns(self, file_slice: HudiFileSlice) -> list[str]:
        """Top-level columns read from the slice's base file, for fetching ahead."""
        rel = file_slice.base_file_relative_path()
        return self.selection(rel, self.merges(file_slice), self.files.storage.base_url).read_schema.names

    # -- one slice ------------------------------------------------------------------

    def rows(self, file_slice: HudiFileSlice) -> pa.Table:
        """All rows of one slice: its base file merged with its logs, masked and projected."""
        return self.rows_of(
            file_slice.base_file_relative_path() or None,
            file_slice.log_files_relative_paths(),
            file_slice.partition_path,
        )

    def rows_of(self, base_rel: str | None, log_rels: Sequence[str], partition_path: str) -> pa.Table:
        """``rows`` of a slice given by its files (a read-optimized read skips the logs)."""
        if self.read_optimized:
            log_rels = []
        storage = self.files.storage
        where = storage.uri(base_rel or (log_rels[0] if log_rels else partition_path))
        selection = self.selection(base_rel, bool(log_rels), where)
        if log_rels:
            return selection.apply(
                merge_slice(self.files, base_rel, log_rels, partition_path, selection, self.visibility)
            )
        if not base_rel:
            return selection.output_schema.empty_table()
        return self.files.finished(self.files.decode(selection, base_rel, partition_path))

    def stream_of(
        self, base_rel: str | None, log_rels: Sequence[str], partition_path: str, batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        """``rows_of`` in batches of at most ``batch_size`` rows. A base file alone
        streams piece by piece; merging needs the whole slice (memory stays one
        slice), whose pieces (kept base rows, log rows) stream as they are, uncopied."""
        if self.read_optimized:
            log_rels = []
        if log_rels or not base_rel:
            data = self.rows_of(base_rel, log_rels, partition_path)
            yield from (b for b in data.to_batches(max_chunksize=batch_size) if b.num_rows)
            return
        selection = self.selection(base_rel, False, self.files.storage.uri(base_rel))
        for piece in self.files.decode_pieces(selection, base_rel, partition_path, batch_size):
            data = self.files.finished(piece)
            yield from (b for b in data.to_batches(max_chunksize=batch_size) if b.num_rows)

    def stream(self, file_slice: HudiFileSlice, batch_size: int) -> Iterator[pa.RecordBatch]:
        return self.stream_of(
            file_slice.base_file_relative_path() or None,
            file_slice.log_files_relative_paths(),
            file_slice.partition_path,
            batch_size,
        )

    # -- many slices ------------------------------------------------------------------

    def batches(
        self, file_slices: Sequence[HudiFileSlice], *, contiguous: bool = True, coalesce: bool = False
    ) -> list[pa.RecordBatch]:
        """The rows of each slice, in order.

        Base files read alone are decoded file by file, but consecutive small
        ones of one file schema are conformed, masked and cut into batches
        together (``base_runs``): for files of a few rows that work costs more
        per file than decoding it. Errors still name the file.

        Without ``contiguous``, a merged slice gives its rows as the merge left
        them (the kept base rows, then the log's), in a batch each: joining them
        would copy the slice once more. With ``coalesce``, batches no longer
        follow slices: a run of small base files comes as one batch, made
        contiguous once (for callers that only want the rows)."""
        uri = self.files.storage.uri
        out: list[pa.RecordBatch] = []
        run: list[BaseRead] = []
        held = 0
        for s in file_slices:
            base_rel = s.base_file_relative_path()
            if not base_rel or self.merges(s):
                out.extend(finish_run(run, uri, not coalesce))
                run, held = [], 0
                rows = self.rows(s)
                out.extend([one_batch(rows)] if contiguous else rows.to_batches())
                continue
            selection = self.selection(base_rel, False, functools.partial(uri, base_rel))
            item = self.files.decode(selection, base_rel, s.partition_path)
            n = item.data.num_rows
            full = held + n > base_runs.RUN_ROWS or (not coalesce and len(run) >= base_runs.RUN_FILES)
            if run and (full or not run[-1].joins(item)):
                out.extend(finish_run(run, uri, not coalesce))
                run, held = [], 0
            run.append(item)
            held += n
        out.extend(finish_run(run, uri, not coalesce))
        return out


# -- the merge stage ---------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _warn_missing_ordering(missing: tuple[str, ...]) -> None:
    # Cached: one warning per set of fields, not one per file slice.
    log.warning("Ordering fields %s are not in the table schema; merging treats them as unset", list(missing))


def _ordering_in(cfg: MergeConfig, schema: pa.Schema) -> MergeConfig:
    """The merge config restricted to ordering fields the data has.

    hudi-rs reads a record without its ordering field as having no ordering
    value: all such records tie, and ties go to the newer record. With no
    ordering field left that is commit-time ordering.
    """
    present = tuple(f for f in cfg.ordering_fields if f in schema.names)
    if present == cfg.ordering_fields:
        return cfg
    _warn_missing_ordering(tuple(f for f in cfg.ordering_fields if f not in present))
    mode = cfg.mode if present else MergeMode.COMMIT_TIME_ORDERING
    return dataclasses.replace(cfg, ordering_fields=present, mode=mode)


def merge_slice(
    files: SliceFiles,
    base_rel: str | None,
    log_rels: Sequence[str],
    partition_path: str,
    selection: ReadSelection,
    visibility: Visibility,
) -> pa.Table:
    """The slice's rows in ``selection.read_schema``: the base file's merged with the logs' (not yet masked)."""
    schema = selection.read_schema
    cfg = _ordering_in(files.context.merge_config(), schema)
    compared = compared_columns(cfg)
    decided_on = pa.schema([f for f in schema if f.name in compared])
    records = files.log_records(log_rels, partition_path, schema, cfg, visibility)
    base = None
    if base_rel and len(decided_on):
        # The merge decides on the keys and ordering values alone. With fewer
        # log records than base rows some base row stays, so the file is read
        # whole, at once; else its other columns are read after the decision,
        # and only when a base row stays.
        stays = len(records) < files.num_rows(base_rel)
        base = files.read(base_rel, partition_path, schema if stays else decided_on, compared)
    elif base_rel:
        # Nothing to decide on (no key column in the read): the whole file, as it is.
        base = files.read(base_rel, partition_path, schema, compared)
    decision = decide_merge(base, records, cfg)
    if base is not None and base_rel and decision.keeps_base() and len(base.schema) < len(schema):
        base = files.with_other_columns(base, base_rel, partition_path, schema, compared)
    return apply_merge(base, decision, records)
