"""``HudiDataSource``: the ``hudi_ray`` format of PySpark 4's Python Data Source API.

Where each step runs (PySpark starts a Python worker for each):

* ``load()``: the source is made from the options (checked here, so a bad
  option fails at once) and loads the table, and with it the timeline, once:
  it gives Spark the schema and *pins* the read: a snapshot read becomes a
  read as of the newest completed instant, an incremental read gets that
  instant's completion as its end. Spark pickles the source, table and
  timeline included, after this step and plans every action from that copy.
  The timeline is never reloaded, so a DataFrame reads the table state seen
  at load() however many commits land before (or between) its actions, even
  one that was in flight at load() with a time older than the pinned instant.
* planning an action: ``reader()``, then ``pushFilters`` (Spark 4.1+ with
  ``spark.sql.python.filterPushdown.enabled``), then ``partitions()``: the
  load-time table is planned (metadata table, pruning with the pushed
  filters) and its file slices are split by estimated size into partitions,
  each carrying the plan of its own slices.
* executors: ``read(partition)`` reads its slices with the core's file group
  reader and yields Arrow record batches in Spark's Arrow types.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.expr import Filter, check_columns
from hudi_ray.core.table import HudiReadOptions, HudiReadPlan, HudiTable
from hudi_ray.core.timeline import parse_timestamp
from hudi_ray.spark4.options import SourceOptions, parse_options
from hudi_ray.spark4.partitions import HudiInputPartition, build_table, read_partition, split_plan
from hudi_ray.spark4.pushdown import split_filters
from hudi_ray.spark_types import spark_arrow_schema, spark_schema

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType

log = logging.getLogger(__name__)

FORMAT = "hudi_ray"
# The module of the PySpark worker that asks readers for filters (Spark 4.1+).
_PUSHDOWN_WORKER = "pyspark.sql.worker.data_source_pushdown_filters"


def _pinned(opts: SourceOptions, table: HudiTable) -> HudiReadOptions:
    """The read options with the table state fixed to the newest completed instant."""
    read = opts.read_options
    # Timestamps are checked here, at load(), not when an action first plans the read.
    given = {
        "as-of timestamp": read.as_of_timestamp(),
        "start timestamp": read.start_timestamp(),
        "end timestamp": read.end_timestamp(),
    }
    for option, value in given.items():
        if value is not None:
            parse_timestamp(value, table.timezone, option=option)
    latest = table.get_timeline().latest_data_instant()
    if latest is None:
        return read
    if opts.incremental:
        return read if read.end_timestamp() is not None else read.with_end_timestamp(latest.completed_at)
    return read if read.as_of_timestamp() is not None else read.with_as_of_timestamp(latest.timestamp)


class HudiReader(DataSourceReader):
    """Plans on the driver, reads on the executors; takes no filters from Spark
    (Spark refuses a reader with ``pushFilters`` while pushdown is off)."""

    def __init__(
        self,
        table: HudiTable,
        opts: SourceOptions,
        read: HudiReadOptions,
        empty: bool,
        arrow: pa.Schema,
        schema: StructType,
    ) -> None:
        self._table: HudiTable | None = table
        self._opts = opts
        self._read = read
        self._empty = empty
        # The table's own Arrow types: they decide which filter values parse back exactly.
        self._arrow = pa.schema([arrow.field(c) for c in schema.fieldNames()])
        self._columns = list(schema.fieldNames())
        self._schema = schema
        self._pushed: list[Filter] = []
        self._planned = False

    def _plan(self) -> HudiReadPlan:
        read = self._read.with_projection(self._columns)
        if self._pushed:
            # The options' own filters stay; the pushed ones add to them.
            read = read.with_filters([*read.parsed_filters, *self._pushed])
        if self._table is None:
            raise HudiCoreError(f"A shipped copy of the reader of {self._opts.shown_uri} cannot plan")
        plan = self._table.plan(read)
        self._planned = True
        return plan

    def __getstate__(self) -> dict:
        # Spark ships the planned reader to the executors, which only read the
        # plans in their partitions: the table and its timeline stay here. A
        # reader pickled before planning (as a PySpark version may) keeps them.
        state = self.__dict__.copy()
        if self._planned:
            state["_table"] = None
        return state

    def partitions(self) -> list[InputPartition]:
        if self._empty:
            return []
        return split_plan(self._plan(), self._opts)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_partition(partition, self._schema, self._columns, self._opts)


class HudiPushdownReader(HudiReader):
    """``HudiReader`` taking the filters that map exactly to Hudi filters (Spark 4.1+)."""

    def pushFilters(self, filters: list[Any]) -> list[Any]:
        pushed, rejected = split_filters(filters, self._arrow)
        self._pushed = pushed
        return rejected


class HudiDataSource(DataSource):
    """``spark.read.format("hudi_ray").load(uri)``: a Hudi table read by this
    project's core on Spark's executors (options: ``hudi_ray.spark4.options``)."""

    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options)  # type: ignore[arg-type]
        self._opts = parse_options(options)
        table = build_table(self._opts)
        # Every action plans from this table (its pickled copy): its timeline is
        # the one seen here, never reloaded.
        self._table = table
        self._read = _pinned(self._opts, table)
        self._empty = table.get_timeline().latest_data_instant() is None
        self._arrow = self._read_schema(table)

    def _read_schema(self, table: HudiTable) -> pa.Schema:
        """The Arrow schema of the columns read (meta fields when the writer
        populated them, as the table API returns), before Spark's type mapping."""
        if self._empty and not table.has_schema():
            return pa.schema([])
        schema = table.get_read_schema()
        columns = self._opts.columns
        if columns is None:
            return schema
        check_columns(columns, schema.names, f"table {self._opts.shown_uri}")
        return pa.schema([schema.field(c) for c in columns])

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        return spark_schema(spark_arrow_schema(self._arrow))

    def reader(self, schema: StructType) -> DataSourceReader:
        # A schema given to the DataFrameReader may name columns the table lacks.
        check_columns(schema.fieldNames(), self._arrow.names, f"table {self._opts.shown_uri}")
        cls = HudiPushdownReader if in_pushdown_worker() else HudiReader
        return cls(self._table, self._opts, self._read, self._empty, self._arrow, schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from hudi_ray.spark4.stream import HudiStreamReader

        check_columns(schema.fieldNames(), self._arrow.names, f"table {self._opts.shown_uri}")
        return HudiStreamReader(self._table, self._opts, schema)


def in_pushdown_worker() -> bool:
    """Whether this process is PySpark's filter pushdown worker.

    PySpark rejects a reader that implements ``pushFilters`` while
    ``spark.sql.python.filterPushdown.enabled`` is off, and a source cannot
    read that setting. But Spark asks for filters (Spark 4.1+) only when it
    is on, and then in a Python worker of its own: a process serving the
    module ``_PUSHDOWN_WORKER``, which PySpark's worker daemon imports to run
    it (or which runs as ``__main__`` without the daemon). Only there does
    the reader take filters; elsewhere (and on a PySpark without that
    worker) it takes none, and Spark filters every row itself.
    """
    if _PUSHDOWN_WORKER in sys.modules:
        return True
    main_spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(main_spec, "name", None) == _PUSHDOWN_WORKER


__all__ = [
    "FORMAT",
    "HudiDataSource",
    "HudiInputPartition",
    "HudiPushdownReader",
    "HudiReader",
    "read_partition",
    "split_plan",
]
