"""A read request: the caller's options with timestamps resolved against one timeline."""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_ray.core.config import HudiReadConfig as R
from hudi_ray.core.config.tunables import ReadTunables
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.expr import Filter
from hudi_ray.core.query.read_options import HudiQueryType, HudiReadOptions
from hudi_ray.core.timeline import HudiTimeline
from hudi_ray.core.timeline.timestamps import START_OF_TIME, parse_timestamp


@dataclass(frozen=True)
class CommitRange:
    """Commit times whose rows a read returns: after ``start``, up to ``end``
    (resolved instant times; None: unbounded)."""

    start: str | None = None
    end: str | None = None

    @classmethod
    def parse(cls, start: str | None, end: str | None, timezone: str) -> CommitRange:
        """A range from a caller's timestamps (any format Hudi takes)."""
        return cls(
            parse_timestamp(start, timezone, option="start timestamp") if start else None,
            parse_timestamp(end, timezone, option="end timestamp") if end else None,
        )


@dataclass(frozen=True)
class ReadRequest:
    """What one read asks for. ``options`` keep the per-read configs with the
    timestamp keys removed: the plan carries them resolved (``as_of``,
    ``start``, ``end``), so readers never re-parse them."""

    query_type: HudiQueryType
    options: HudiReadOptions
    filters: list[Filter]
    as_of: str | None = None
    start: str | None = None
    end: str | None = None
    tunables: ReadTunables = field(default_factory=ReadTunables)

    @classmethod
    def resolve(
        cls, options: HudiReadOptions | None, timeline: HudiTimeline, timezone: str, table_uri: str
    ) -> ReadRequest:
        if options is not None and not isinstance(options, HudiReadOptions):
            raise HudiConfigError(
                f"read_options must be a HudiReadOptions, got {type(options).__name__} {options!r}; "
                "wrap hoodie options as HudiReadOptions(hudi_options=...)"
            )
        opts = options or HudiReadOptions()
        query_type = opts.query_type()
        # Row-level commit filtering uses the plan's instants, not these keys.
        hudi = {
            k: v
            for k, v in opts.hudi_options.items()
            if k not in (R.AS_OF_TIMESTAMP.value, R.START_TIMESTAMP.value, R.END_TIMESTAMP.value)
        }
        resolved = HudiReadOptions(filters=opts.parsed_filters, projection=opts.projection, hudi_options=hudi)
        tunables = ReadTunables.from_options(hudi)
        latest = timeline.latest_data_instant()
        if query_type is HudiQueryType.Snapshot:
            raw = opts.as_of_timestamp()
            as_of = parse_timestamp(raw, timezone, option="as-of timestamp") if raw is not None else None
            # The end is kept for file group readers built from these options.
            end = as_of or (latest.timestamp if latest else None)
            return cls(query_type, resolved, opts.parsed_filters, as_of=as_of, end=end, tunables=tunables)
        raw_start, raw_end = opts.start_timestamp(), opts.end_timestamp()
        start = parse_timestamp(raw_start, timezone, option="start timestamp") if raw_start else START_OF_TIME
        if raw_end:
            end = parse_timestamp(raw_end, timezone, option="end timestamp")
        else:
            end = latest.completed_at if latest else None
        if raw_start and raw_end and end is not None and start > end:
            raise HudiConfigError(
                f"Incremental read of {table_uri}: {R.START_TIMESTAMP.value}={raw_start!r} "
                f"is after {R.END_TIMESTAMP.value}={raw_end!r}"
            )
        return cls(query_type, resolved, opts.parsed_filters, start=start, end=end, tunables=tunables)

    @property
    def read_optimized(self) -> bool:
        return self.options.use_read_optimized()

    @property
    def commit_range(self) -> CommitRange:
        """The range a file group reader built for this read applies to every slice."""
        if self.query_type is HudiQueryType.Incremental:
            return CommitRange(self.start or START_OF_TIME, self.end)
        return CommitRange(None, self.end)
