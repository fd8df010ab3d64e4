"""``HudiReadOptions``: filters, projection and a bag of per-read hoodie options."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum

from hudi_ray.core.config import int_option
from hudi_ray.core.config.keys import HudiReadConfig as R
from hudi_ray.core.config.keys import key_str, warn_unknown_keys
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.expr import Filter, from_str_tuples

DEFAULT_BATCH_SIZE = 1024


class HudiQueryType(Enum):
    Snapshot = "snapshot"
    Incremental = "incremental"

    def __repr__(self) -> str:
        return f"HudiQueryType.{self.name}"

    @classmethod
    def parse(cls, value: str | HudiQueryType) -> HudiQueryType:
        if isinstance(value, HudiQueryType):
            return value
        low = str(value).strip().lower()
        for q in cls:
            if q.value == low:
                return q
        raise HudiConfigError(f"Unknown {R.QUERY_TYPE.value} {value!r}: expected snapshot or incremental")


def _parse_batch_size(raw: str | int) -> int:
    return int_option(raw, R.STREAM_BATCH_SIZE.value, minimum=1)


class HudiReadOptions:
    """Options for every read API. Builders return a new instance."""

    __slots__ = ("_filters", "hudi_options", "projection")

    def __init__(
        self,
        filters: Sequence[Sequence[str] | Filter] | None = None,
        projection: Sequence[str] | None = None,
        hudi_options: Mapping[str, str] | None = None,
    ) -> None:
        self._filters: tuple[Filter, ...] = tuple(from_str_tuples(filters or []))
        if projection is not None and (isinstance(projection, str) or not all(isinstance(c, str) for c in projection)):
            raise HudiConfigError(f"projection must be a list of column names, got {projection!r}")
        self.projection: list[str] | None = list(projection) if projection is not None else None
        self.hudi_options: dict[str, str] = {key_str(k): str(v) for k, v in (hudi_options or {}).items()}
        warn_unknown_keys(self.hudi_options)

    # -- stored fields ---------------------------------------------------------

    @property
    def filters(self) -> list[tuple[str, str, str]]:
        return [f.to_tuple() for f in self._filters]

    @property
    def parsed_filters(self) -> list[Filter]:
        return list(self._filters)

    def _copy(self) -> HudiReadOptions:
        other = HudiReadOptions.__new__(HudiReadOptions)
        other._filters = self._filters
        other.projection = list(self.projection) if self.projection is not None else None
        other.hudi_options = dict(self.hudi_options)
        return other

    # -- builders --------------------------------------------------------------

    def with_hudi_option(self, key: str | Enum, value: str) -> HudiReadOptions:
        other = self._copy()
        other.hudi_options[key_str(key)] = str(value)
        warn_unknown_keys([key_str(key)])
        return other

    def with_hudi_options(self, opts: Mapping[str, str]) -> HudiReadOptions:
        other = self._copy()
        other.hudi_options.update({key_str(k): str(v) for k, v in opts.items()})
        warn_unknown_keys(opts)
        return other

    def with_query_type(self, query_type: HudiQueryType | str) -> HudiReadOptions:
        return self.with_hudi_option(R.QUERY_TYPE, HudiQueryType.parse(query_type).value)

    def with_as_of_timestamp(self, timestamp: str) -> HudiReadOptions:
        return self.with_hudi_option(R.AS_OF_TIMESTAMP, str(timestamp))

    def with_start_timestamp(self, timestamp: str) -> HudiReadOptions:
        return self.with_hudi_option(R.START_TIMESTAMP, str(timestamp))

    def with_end_timestamp(self, timestamp: str) -> HudiReadOptions:
        return self.with_hudi_option(R.END_TIMESTAMP, str(timestamp))

    def with_batch_size(self, size: int) -> HudiReadOptions:
        return self.with_hudi_option(R.STREAM_BATCH_SIZE, str(_parse_batch_size(size)))

    def with_filters(self, filters: Sequence[Sequence[str] | Filter]) -> HudiReadOptions:
        other = self._copy()
        other._filters = tuple(from_str_tuples(filters))
        return other

    def with_projection(self, columns: Sequence[str]) -> HudiReadOptions:
        other = self._copy()
        other.projection = list(columns)
        return other

    # -- typed accessors ---------------------------------------------------------

    def query_type(self) -> HudiQueryType:
        raw = self.hudi_options.get(R.QUERY_TYPE.value)
        return HudiQueryType.Snapshot if raw is None else HudiQueryType.parse(raw)

    def as_of_timestamp(self) -> str | None:
        return self.hudi_options.get(R.AS_OF_TIMESTAMP.value)

    def start_timestamp(self) -> str | None:
        return self.hudi_options.get(R.START_TIMESTAMP.value)

    def end_timestamp(self) -> str | None:
        return self.hudi_options.get(R.END_TIMESTAMP.value)

    def batch_size(self) -> int | None:
        raw = self.hudi_options.get(R.STREAM_BATCH_SIZE.value)
        return None if raw is None else _parse_batch_size(raw)

    def use_read_optimized(self, default: bool = False) -> bool:
        raw = self.hudi_options.get(R.USE_READ_OPTIMIZED_MODE.value)
        if raw is None:
            return default
        low = raw.strip().lower()
        if low not in ("true", "false"):
            raise HudiConfigError(f"Config {R.USE_READ_OPTIMIZED_MODE.value} must be true or false, got {raw!r}")
        return low == "true"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, HudiReadOptions)
            and self._filters == other._filters
            and self.projection == other.projection
            and self.hudi_options == other.hudi_options
        )

    def __hash__(self) -> int:
        return hash((self._filters, tuple(self.projection or ()), tuple(sorted(self.hudi_options.items()))))

    def __repr__(self) -> str:
        return (
            f"HudiReadOptions(filters={self.filters!r}, projection={self.projection!r}, "
            f"hudi_options={self.hudi_options!r})"
        )

    def __getstate__(self) -> dict:
        return {"filters": self._filters, "projection": self.projection, "hudi_options": self.hudi_options}

    def __setstate__(self, state: dict) -> None:
        self._filters = state["filters"]
        self.projection = state["projection"]
        self.hudi_options = state["hudi_options"]


def options_key(options: HudiReadOptions) -> tuple:
    """``options`` by value, as a key that later changes to them do not touch
    (they are mutable): equal options read and plan alike."""
    projection = tuple(options.projection) if options.projection is not None else None
    return tuple(options.parsed_filters), projection, frozenset(options.hudi_options.items())
