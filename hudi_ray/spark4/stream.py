"""``spark.readStream.format("hudi_ray")``: a Hudi table as a stream of its commits.

An offset is a position on the table's timeline, ``{"completion_time": t}``:
every commit that completed at or before ``t`` has been read. The ranges
between offsets follow the core's rules (``hudi_ray.core.incremental.ranges``):
a range stops before the earliest pending write (a commit in flight is read
once it completes, never skipped), and instants completing at the same time
are never split between micro-batches, so the completion time alone orders
them. A micro-batch ``(start, end]`` is the incremental query over that range,
planned once on the driver in ``partitions`` and split as the batch source
splits a read; executors read their slices with the core's file group reader.

Spark keeps the offsets in its checkpoint: a query restarted from it plans
the batches it had not committed with the same ``(start, end]``, so no commit
is lost or read twice.

Options (besides the batch source's read options):

* ``startingOffsets``: ``earliest`` (default), ``latest``, or a timestamp
  after which commits are read; used only by a query without a checkpoint.
* ``maxInstantsPerTrigger``: at most this many instants per micro-batch (more
  only when instants completed at the same time as the last one). PySpark
  4.2+ applies it through admission control (Spark's read limit; an instant
  counts as a file); Trigger.AvailableNow and Once read everything.
* ``hoodie.datasource.read.incr.fallback.fulltablescan.enable``: when a
  range's history was archived or cleaned, read the full snapshot at its end
  (logged as a warning) instead of failing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from hudi_ray.core.config import HudiReadConfig as R
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.table import HudiReadOptions, HudiTable, next_range, position, resolve_start
from hudi_ray.spark4.options import SourceOptions
from hudi_ray.spark4.partitions import build_table, read_partition, split_plan

try:
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow as _AvailableNow
except ImportError:  # PySpark before 4.2

    class _AvailableNow:  # type: ignore[no-redef]
        """Stands in for PySpark's mixin where it does not exist."""


if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType

log = logging.getLogger(__name__)

OFFSET_KEY = "completion_time"
_PINNING_KEYS = (R.AS_OF_TIMESTAMP.value, R.START_TIMESTAMP.value, R.END_TIMESTAMP.value)


def _offset(at: str) -> dict[str, str]:
    return {OFFSET_KEY: at}


def _position_of(offset: dict[str, Any] | None, what: str) -> str:
    value = (offset or {}).get(OFFSET_KEY)
    if not isinstance(value, str) or not value.isdigit():
        raise HudiConfigError(f"The {what} offset {offset!r} is not a hudi_ray offset ({{{OFFSET_KEY!r}: time}})")
    return position(value)


def _read_limits() -> tuple[type | None, type | None]:
    """PySpark's ReadAllAvailable and ReadMaxFiles (4.2+), or None before."""
    try:
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles
    except ImportError:
        return None, None
    return ReadAllAvailable, ReadMaxFiles


class HudiStreamReader(DataSourceStreamReader, _AvailableNow):
    """Micro-batches of a Hudi table's commits (see the module's docs).

    With Trigger.AvailableNow the query reads the commits ready when it
    starts, in batches of ``maxInstantsPerTrigger``, and then stops."""

    def __init__(self, table: HudiTable, opts: SourceOptions, schema: StructType) -> None:
        read = opts.read_options
        pinned = [k for k in _PINNING_KEYS if k in read.hudi_options]
        if pinned:
            raise HudiConfigError(
                f"A stream of {opts.shown_uri} reads each commit once, from startingOffsets on; "
                f"{pinned} apply to batch reads (spark.read)"
            )
        self._opts = opts
        self._table: HudiTable | None = table
        self._schema = schema
        self._columns = list(schema.fieldNames())
        # Per-read options without the query type: each batch sets its own range.
        self._hudi = {k: v for k, v in read.hudi_options.items() if k != R.QUERY_TYPE.value}
        self._filters = read.parsed_filters
        self._warned_cap = False
        self._target: str | None = None  # Trigger.AvailableNow: the position to stop at

    def _fresh(self) -> HudiTable:
        """The table with its timeline as storage holds it now; commits decoded
        for earlier batches are not decoded (or fetched) again."""
        self._table = self._table.reloaded() if self._table is not None else build_table(self._opts)
        return self._table

    def __getstate__(self) -> dict:
        # Executors only read the plans in their partitions.
        state = self.__dict__.copy()
        state["_table"] = None
        return state

    # -- offsets -------------------------------------------------------------------

    def initialOffset(self) -> dict:
        table = self._fresh()
        start = resolve_start(self._opts.starting_offsets, table.get_timeline(), table.timezone)
        return _offset(start)

    def getDefaultReadLimit(self) -> Any:
        all_available, max_files = _read_limits()
        cap = self._opts.max_instants_per_trigger
        if cap is not None and max_files is not None:
            return max_files(cap)
        return all_available() if all_available is not None else None

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        table = self._fresh()
        timeline = table.get_timeline()
        if start is None:
            # PySpark before 4.2 passes neither the start nor a limit: every commit ready now.
            if self._opts.max_instants_per_trigger is not None and not self._warned_cap:
                log.warning("maxInstantsPerTrigger needs PySpark 4.2 or newer; reading every ready commit per batch")
                self._warned_cap = True
            return _offset(next_range(timeline).end)
        _, max_files = _read_limits()
        cap = getattr(limit, "max_files", None) if max_files is not None and isinstance(limit, max_files) else None
        after = _position_of(start, "start")
        if self._target is not None and after >= self._target:
            return _offset(after)
        rng = table.next_incremental_range(after, cap, HudiReadOptions(hudi_options=self._hudi))
        if self._target is not None and rng.end > self._target:
            # Within the cap already, and a range end: nothing completes later at that same time.
            return _offset(self._target)
        if rng.waiting_on is not None:
            log.info(
                "Stream of %s waits for instant %s (%s) to complete",
                self._opts.shown_uri,
                rng.waiting_on.timestamp,
                rng.waiting_on.state.lower(),
            )
        return _offset(rng.end)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = next_range(self._fresh().get_timeline()).end

    def reportLatestOffset(self) -> dict | None:
        if self._table is None:
            return None
        return _offset(next_range(self._table.get_timeline()).end)

    # -- batches -------------------------------------------------------------------

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        lo, hi = _position_of(start, "start"), _position_of(end, "end")
        if lo >= hi:
            return []
        table = self._table
        latest = table.get_timeline().latest_data_instant() if table is not None else None
        if table is None or latest is None or position(latest.completed_at) < hi:
            table = self._fresh()  # a restarted query plans batches its new reader has not seen
        read = HudiReadOptions(
            filters=self._filters,
            projection=self._columns,
            hudi_options={
                **self._hudi,
                R.QUERY_TYPE.value: "incremental",
                R.START_TIMESTAMP.value: lo,
                R.END_TIMESTAMP.value: hi,
            },
        )
        plan = table.plan(read)
        if plan.fallback is not None:
            log.warning("Micro-batch (%s, %s] of %s: %s", lo, hi, self._opts.shown_uri, plan.fallback)
        return split_plan(plan, self._opts)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_partition(partition, self._schema, self._columns, self._opts)

    def commit(self, end: dict) -> None:
        """Nothing to release: the table's files stay, and the offsets live in Spark's checkpoint."""


__all__ = ["OFFSET_KEY", "HudiStreamReader"]
