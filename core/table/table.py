"""``HudiTable``: logical reads of a table (snapshot, time travel, incremental).

The table is a facade: it resolves each read's options into a ``ReadRequest``,
asks the scan for that query type which file slices to read (``scan.py``,
pruners in ``pruning.py``), and reads them with a file group reader, here or
(through ``plan``) in an engine's workers.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from hudi_ray.core.config import HudiReadConfig, io_tunables, is_read_config, warn_unknown_keys
from hudi_ray.core.config.keys import split_options
from hudi_ray.core.exceptions import HudiConfigError, HudiUnsupportedError
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.meta_client.context import TableContext
from hudi_ray.core.planning.explain import NoExplain, PlanExplain
from hudi_ray.core.planning.scan import ScanFiles, TableSources, scan_for
from hudi_ray.core.query.read_options import HudiQueryType, HudiReadOptions
from hudi_ray.core.query.request import ReadRequest
from hudi_ray.core.storage import Storage
from hudi_ray.core.storage.paths import move_credentials
from hudi_ray.core.timeline import HudiTimeline
from hudi_ray.core.util.collector import collector_paused

# Reading, incremental ranges, footer statistics and schema rendering load when a
# call needs them: a process that only plans (the CLI, a planner) does not pay for them.
if TYPE_CHECKING:
    import pyarrow as pa

    from hudi_ray.core.incremental import ranges
    from hudi_ray.core.incremental.ranges import IncrementalRange
    from hudi_ray.core.planning import estimate, slice_stats
    from hudi_ray.core.reading import file_group_reader, read_plan
    from hudi_ray.core.reading.file_group_reader import HudiFileGroupReader
    from hudi_ray.core.reading.read_plan import HudiReadPlan
    from hudi_ray.core.reading.stream import HudiRecordBatchStream
    from hudi_ray.core.schema import avro
else:
    pa = lazy_module("pyarrow")
    ranges = lazy_module("hudi_ray.core.incremental.ranges")
    estimate = lazy_module("hudi_ray.core.planning.estimate")
    slice_stats = lazy_module("hudi_ray.core.planning.slice_stats")
    file_group_reader = lazy_module("hudi_ray.core.reading.file_group_reader")
    read_plan = lazy_module("hudi_ray.core.reading.read_plan")
    avro = lazy_module("hudi_ray.core.schema.avro")

log = logging.getLogger(__name__)

R = TypeVar("R")


class HudiTable:
    """A Hudi table; the timeline is loaded once, at construction.

    ``options`` route by key prefix (``hoodie.*`` are Hudi configs, the rest
    storage options); ``hudi_options`` and ``storage_options`` are taken as given.
    A pickled table keeps that timeline, so a copy reads the state seen at load.
    """

    def __init__(
        self,
        base_uri: str,
        options: Mapping[str, str] | None = None,
        *,
        hudi_options: Mapping[str, str] | None = None,
        storage_options: Mapping[str, str] | None = None,
    ) -> None:
        hudi, storage = split_options(options)
        hudi.update(hudi_options or {})
        storage.update(storage_options or {})
        if isinstance(base_uri, os.PathLike):
            base_uri = os.fspath(base_uri)
        if not isinstance(base_uri, str) or not base_uri.strip():
            raise HudiConfigError(f"base_uri must be a non-empty path or URI string, got {base_uri!r}")
        warn_unknown_keys(hudi)
        # Credentials in the URI move to the storage options: the URI is shown
        # in reprs, errors and logs, and shipped with every read plan.
        base_uri, storage = move_credentials(base_uri, storage)
        self._base_uri = base_uri
        # Read configs belong to each read, never to the table.
        self._user_hudi = {k: v for k, v in hudi.items() if not is_read_config(k)}
        self._storage_options = dict(storage)
        self._storage = Storage(base_uri, self._storage_options, io_tunables(self._user_hudi))
        self._bind(TableContext.load(self._storage, self._user_hudi))

    def reloaded(self) -> HudiTable:
        """This table with its timeline as storage holds it now, as a new
        ``HudiTable`` (this one keeps the state it loaded). What this one
        decoded of files that never change, completed instants' metadata and
        base files' footers, is reused: a reader following the table's
        commits pays for the new ones only."""
        table = object.__new__(HudiTable)
        table._base_uri = self._base_uri
        table._user_hudi = self._user_hudi
        table._storage_options = self._storage_options
        table._storage = self._storage
        table._bind(TableContext.load(self._storage, self._user_hudi, previous=self._context))
        return table

    def _bind(self, context: TableContext) -> None:
        self._context = context
        self._sources = TableSources(context)
        self._view = self._sources.view

    def __getstate__(self) -> dict:
        # Instants, configs and schema only: views, caches and the metadata table reload lazily.
        return {
            "base_uri": self._base_uri,
            "hudi": self._user_hudi,
            "storage": self._storage_options,
            "context": self._context.slim(),
        }

    def __setstate__(self, state: dict) -> None:
        self._base_uri = state["base_uri"]
        self._user_hudi = state["hudi"]
        self._storage_options = state["storage"]
        self._storage = Storage(self._base_uri, self._storage_options, io_tunables(self._user_hudi))
        # Nothing is re-read: a commit completed since pickling stays invisible.
        self._bind(state["context"].with_storage(self._storage))

    # -- configs and metadata ------------------------------------------------------

    def hudi_options(self) -> dict[str, str]:
        opts = dict(self._context.config.options)
        opts["hoodie.base.path"] = self._base_uri
        return opts

    def storage_options(self) -> dict[str, str]:
        return dict(self._storage_options)

    @property
    def base_url(self) -> str:
        return self._storage.base_url

    @property
    def table_name(self) -> str:
        return self._context.config.table_name

    @property
    def table_type(self) -> str:
        return self._context.config.table_type

    @property
    def is_mor(self) -> bool:
        return self._context.config.is_mor

    @property
    def timezone(self) -> str:
        return self._context.config.timezone.lower()

    @property
    def table_version(self) -> int:
        return self._context.config.table_version

    def get_timeline(self) -> HudiTimeline:
        return self._context.timeline

    # -- schema --------------------------------------------------------------

    def has_schema(self) -> bool:
        """Whether the table has a schema yet; one without (no commit, no create
        schema) reads nothing, and its schema getters raise ``HudiSchemaError``."""
        return self._context.timeline.has_schema()

    def get_schema(self) -> pa.Schema:
        return self._context.data_schema

    def get_schema_with_meta_fields(self) -> pa.Schema:
        return self._context.schema_with_meta_fields

    def get_read_schema(self) -> pa.Schema:
        """The columns a read returns: the meta fields first when the writer
        populated them (``hoodie.populate.meta.fields``), then the data columns."""
        return self._context.read_schema

    def get_partition_schema(self) -> pa.Schema:
        return self._context.partitioner.schema

    def get_schema_in_avro_str(self) -> str:
        record = avro.parse_avro_schema(self._context.avro_schema_str, "table schema")
        return json.dumps(avro.avro_schema_without_meta_fields(record), separators=(",", ":"))

    def get_schema_in_avro_str_with_meta_fields(self) -> str:
        record = avro.parse_avro_schema(self._context.avro_schema_str, "table schema")
        return json.dumps(avro.avro_schema_with_meta_fields(record), separators=(",", ":"))

    # -- planning --------------------------------------------------------------

    def _request(self, options: HudiReadOptions | None, projected: bool = True) -> ReadRequest:
        request = ReadRequest.resolve(options, self.get_timeline(), self.timezone, self.base_url)
        if projected:
            self._context.check_projection(request.options.projection)
        return request

    def check_columns(self, options: HudiReadOptions | None = None) -> None:
        """Raise as a read with ``options`` would for a column the table does
        not have, before any planning: ``HudiSchemaError`` for a projected
        column, ``HudiFilterError`` (a ``HudiSchemaError``) for a filter's field."""
        if options is None:
            return
        self._context.check_projection(options.projection)
        self._context.check_filters(options.parsed_filters)

    def _scan(self, request: ReadRequest, explain: PlanExplain | None = None) -> ScanFiles:
        with collector_paused():
            return scan_for(self._sources, request, explain or NoExplain()).files()

    def explain(self, options: HudiReadOptions | None = None) -> PlanExplain:
        """How many partitions and file slices each planning stage kept for this read."""
        request = self._request(options, projected=False)
        explain = PlanExplain(query_type=request.query_type.value)
        fetcher = self._storage.fetcher
        mark = fetcher.mark()
        self._scan(request, explain)
        if not self._storage.is_local:
            explain.requests, explain.round_trips = fetcher.since(mark)
        return explain

    def get_file_slices(self, options: HudiReadOptions | None = None) -> list[HudiFileSlice]:
        request = self._request(options, projected=False)
        slices = self._scan(request).slices
        if slice_stats.footers_decide(self._context.config, request, self._sources.data_filters(request.filters)):
            slices = slice_stats.with_footer_stats(slices, self._context)
        return slices

    def plan(self, options: HudiReadOptions | None = None) -> HudiReadPlan:
        """Plan a read as ``read`` does, for readers that run elsewhere."""
        return self._plan(options, shipped=True)

    def _plan(self, options: HudiReadOptions | None, shipped: bool) -> HudiReadPlan:
        request = self._request(options)
        files = self._scan(request)
        ctx = self._context
        schema = ctx.read_schema if self.has_schema() or files.slices else None
        if schema is not None and request.options.projection is not None:
            schema = pa.schema([schema.field(c) for c in dict.fromkeys(request.options.projection)])
        return read_plan.HudiReadPlan(
            base_uri=self._base_uri,
            query_type=request.query_type,
            options=request.options,
            slices=files.slices,
            commit_times=files.commit_times,
            visibility=files.visibility,
            schema=schema,
            instant=request.end,
            fallback=files.fallback,
            # A shipped plan holds instants only: the commit metadata cached while planning stays here.
            context=ctx.slim() if shipped else ctx,
        )

    def create_file_group_reader_with_options(
        self,
        read_options: HudiReadOptions | None = None,
        extra_storage_overrides: Mapping[str, str] | None = None,
    ) -> HudiFileGroupReader:
        request = self._request(read_options, projected=False)
        context = self._context
        if extra_storage_overrides:
            storage = Storage(
                self._base_uri, {**self._storage_options, **extra_storage_overrides}, io_tunables(self._user_hudi)
            )
            context = TableContext(storage=storage, config=context.config, timeline=context.timeline)
        options = {**self._user_hudi, **request.options.hudi_options, **self._storage_options}
        options.update(extra_storage_overrides or {})
        return file_group_reader.HudiFileGroupReader.from_context(
            self._base_uri, context, options, request.commit_range
        )

    # -- reads ---------------------------------------------------------------

    def next_incremental_range(
        self, start: str | None, max_instants: int | None = None, options: HudiReadOptions | None = None
    ) -> IncrementalRange:
        """The next range after position ``start`` (``incremental.next_range``).

        With the full-table-scan fallback in ``options``, a range whose history
        is gone (its read would fall back) extends to the latest position: its
        read is then the full snapshot of the latest state, and the range after
        it starts there, so nothing is read twice."""
        rng = ranges.next_range(self.get_timeline(), start, max_instants)
        hudi = options.hudi_options if options is not None else {}
        if rng.is_empty or not ranges.fallback_enabled(hudi):
            return rng
        probe = HudiReadOptions(hudi_options={**hudi, **rng.read_options()})
        if self._scan(self._request(probe, projected=False)).fallback is None:
            return rng
        whole = ranges.next_range(self.get_timeline(), start, None)
        return dataclasses.replace(whole, full_snapshot=True)

    def read(self, options: HudiReadOptions | None = None) -> list[pa.RecordBatch]:
        return self._plan(options, shipped=False).batches()

    def read_stream(self, options: HudiReadOptions | None = None) -> HudiRecordBatchStream:
        plan = self._plan(options, shipped=False)
        if plan.query_type is HudiQueryType.Incremental:
            # "not yet supported" is hudi-rs's wording; code ported from it matches on it.
            raise HudiUnsupportedError(
                f"Streaming an incremental query is not yet supported (table {self.base_url}, "
                f"{HudiReadConfig.QUERY_TYPE.value}={HudiQueryType.Incremental.value}); use read()"
            )
        return plan.stream()

    def compute_table_stats(self, options: HudiReadOptions | None = None) -> tuple[int, int] | None:
        """Estimated (rows, bytes) of a snapshot read, from the metadata table
        (``estimate.table_stats``); None for incremental reads, without a
        metadata table, or when the base files are not Parquet."""
        request = self._request(options, projected=False)
        if request.query_type is HudiQueryType.Incremental:
            return None
        return estimate.table_stats(self._context, self._sources.metadata_table())

    def __repr__(self) -> str:
        return f"HudiTable({self.base_url!r}, type={self.table_type}, version={self.table_version})"
