"""``HudiFileGroupReader``: the spec's reader of file slices, by slice or by paths.

It resolves a caller's options against its defaults and hands the read to a
``SliceReader`` made once per distinct read (``slice_reader.py``: the one
line of stages every slice goes through).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hudi_ray.core.config import io_tunables
from hudi_ray.core.config.keys import is_read_config, split_options
from hudi_ray.core.file_group import HudiFileSlice, Visibility
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.meta_client import TableContext
from hudi_ray.core.query import DEFAULT_BATCH_SIZE, CommitRange, HudiReadOptions, options_key
from hudi_ray.core.reading.base_runs import one_batch
from hudi_ray.core.reading.files import SliceFiles
from hudi_ray.core.reading.slice_reader import SliceReader
from hudi_ray.core.reading.stream import HudiRecordBatchStream
from hudi_ray.core.storage import Storage
from hudi_ray.core.storage.paths import move_credentials

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

__all__ = ["HudiFileGroupReader"]


# Slice readers a file group reader keeps (one per distinct read it serves).
_READS_KEPT = 64


class HudiFileGroupReader:
    """Reads file slices of one table: a base file merged with its log files."""

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None) -> None:
        hudi, storage_opts = split_options(options)
        # Credentials in the URI move to the options so the URI is safe to show.
        base_uri, storage_opts = move_credentials(base_uri, storage_opts)
        self.base_uri = base_uri
        self._hudi_options = {k: v for k, v in hudi.items() if not is_read_config(k)}
        self._read_defaults = {k: v for k, v in hudi.items() if is_read_config(k)}
        self._storage_options = storage_opts
        self._context: TableContext | None = None
        self._commit_range: CommitRange | None = None
        self._files: SliceFiles | None = None
        self._reads: dict[tuple, tuple[Visibility | None, SliceReader]] = {}

    def __getstate__(self) -> dict:
        # Slice readers and decoders are cheap to rebuild (selections hold compute expressions): not shipped.
        state = self.__dict__.copy()
        state["_files"], state["_reads"] = None, {}
        return state

    @classmethod
    def from_context(
        cls,
        base_uri: str,
        context: TableContext,
        options: Mapping[str, str] | None = None,
        commit_range: CommitRange | None = None,
    ) -> HudiFileGroupReader:
        """A reader over an already loaded table state (its storage, configs,
        timeline and schema); ``commit_range``, a read's resolved range, applies
        to every slice unless options name timestamps of their own."""
        reader = cls(base_uri, options)
        reader._context = context
        reader._commit_range = commit_range
        return reader

    @property
    def is_metadata_table(self) -> bool:
        return self.base_uri.rstrip("/").endswith(".hoodie/metadata")

    @property
    def context(self) -> TableContext:
        if self._context is None:
            storage = Storage(self.base_uri, self._storage_options, io_tunables(self._hudi_options))
            self._context = TableContext.load(storage, self._hudi_options)
        return self._context

    def _options(self, options: HudiReadOptions | None) -> HudiReadOptions:
        if options is None:
            return HudiReadOptions(hudi_options=self._read_defaults)
        hudi = options.hudi_options
        if all(k in hudi for k in self._read_defaults):
            # The options override every default (usually there is none): they
            # are the merged options as they are, with no copy per slice.
            return options
        return options.with_hudi_options({**self._read_defaults, **hudi})

    def slice_reader(
        self,
        options: HudiReadOptions | None = None,
        commit_times: frozenset[str] | None = None,
        visibility: Visibility | None = None,
    ) -> SliceReader:
        """The slice reader of one read with ``options`` (merged with this reader's
        defaults), kept for later calls with equal arguments."""
        opts = self._options(options)
        # Visibility by identity (the caller passes the plan's own, slice after
        # slice), kept with the reader so that the identity stays its own.
        key = (options_key(opts), commit_times, id(visibility))
        kept = self._reads.get(key)
        if kept is not None and kept[0] is visibility:
            return kept[1]
        if self._files is None:
            self._files = SliceFiles(self.context)
        if len(self._reads) >= _READS_KEPT:
            self._reads.clear()  # a long-lived reader of ever new options stays small
        reader = SliceReader(self._files, opts, commit_times, self._range(opts), visibility)
        self._reads[key] = (visibility, reader)
        return reader

    def _range(self, options: HudiReadOptions) -> CommitRange:
        start, end = options.start_timestamp(), options.end_timestamp()
        if start is None and end is None and self._commit_range is not None:
            return self._commit_range
        return CommitRange.parse(start, end, self.context.config.timezone)

    def _relative(self, path: str) -> str:
        storage = self.context.storage
        for prefix in (storage.base_url + "/", storage.root + "/"):
            if path.startswith(prefix):
                return path[len(prefix) :]
        return path.lstrip("/")

    def _paths(self, base_file_path: str, log_file_paths: Sequence[str]) -> tuple[str | None, list[str], str]:
        base_rel = self._relative(base_file_path) if base_file_path else None
        log_rels = [self._relative(p) for p in log_file_paths]
        first = base_rel or (log_rels[0] if log_rels else "")
        return base_rel, log_rels, first.rsplit("/", 1)[0] if "/" in first else ""

    # -- the spec's API ----------------------------------------------------------------

    def read_file_slice(
        self,
        file_slice: HudiFileSlice,
        options: HudiReadOptions | None = None,
        *,
        commit_times: frozenset[str] | None = None,
        visibility: Visibility | None = None,
    ) -> pa.RecordBatch:
        """The slice's rows as one batch. A read selection passes ``commit_times``
        (incremental reads: the instants whose rows to return) and
        ``visibility`` (which instants' log blocks the read sees)."""
        return one_batch(self.slice_reader(options, commit_times, visibility).rows(file_slice))

    def read_file_slices(
        self,
        file_slices: Sequence[HudiFileSlice],
        options: HudiReadOptions | None = None,
        *,
        commit_times: frozenset[str] | None = None,
        visibility: Visibility | None = None,
        contiguous: bool = True,
        coalesce: bool = False,
    ) -> list[pa.RecordBatch]:
        """``read_file_slice`` of each slice, in order, with the same arguments
        (``SliceReader.batches``: small base files finished together)."""
        reader = self.slice_reader(options, commit_times, visibility)
        return reader.batches(file_slices, contiguous=contiguous, coalesce=coalesce)

    def read_file_slice_from_paths(
        self, base_file_path: str, log_file_paths: Sequence[str], options: HudiReadOptions | None = None
    ) -> pa.RecordBatch:
        reader = self.slice_reader(options)
        base_rel, log_rels, partition = self._paths(base_file_path, log_file_paths)
        return one_batch(reader.rows_of(base_rel, log_rels, partition))

    def read_file_slice_stream(
        self, file_slice: HudiFileSlice, options: HudiReadOptions | None = None, *, visibility: Visibility | None = None
    ) -> HudiRecordBatchStream:
        """The slice's rows in batches of the options' batch size; ``visibility`` as for ``read_file_slice``."""
        reader = self.slice_reader(options, None, visibility)
        return HudiRecordBatchStream(reader.stream(file_slice, _batch_size(reader)))

    def read_file_slice_from_paths_stream(
        self, base_file_path: str, log_file_paths: Sequence[str], options: HudiReadOptions | None = None
    ) -> HudiRecordBatchStream:
        reader = self.slice_reader(options)
        base_rel, log_rels, partition = self._paths(base_file_path, log_file_paths)
        return HudiRecordBatchStream(reader.stream_of(base_rel, log_rels, partition, _batch_size(reader)))


def _batch_size(reader: SliceReader) -> int:
    return reader.options.batch_size() or DEFAULT_BATCH_SIZE
