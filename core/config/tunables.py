"""Tunables: sizes and degrees of parallelism, in one place, as small frozen records.

They are performance knobs, not semantics: no value changes which rows a read
returns. Per-read ones can be set with the ``hoodie.read.*`` keys named below.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hudi_ray.core.config.keys import HudiIOConfig, HudiPlanConfig
from hudi_ray.core.config.keys import HudiReadConfig as R
from hudi_ray.core.config.values import int_option
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.storage.fetch import IOTunables


def _positive_float(options: Mapping[str, str], key: str, default: float) -> float:
    """``options[key]`` as a finite number > 0; ``default`` when unset."""
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise HudiConfigError(f"Failed to parse {raw!r} for config {key}: not a number") from None
    if not value > 0 or value == float("inf"):
        raise HudiConfigError(f"Config {key} must be a finite number > 0, got {raw!r}")
    return value


def _positive_int(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    return default if raw is None else int_option(raw, key, minimum=1)


@dataclass(frozen=True)
class PoolTunables:
    # Threads of the shared I/O pool (listings, footers, slice reads): I/O bound,
    # so more than the cores; bounded so object stores are not flooded.
    io_threads: int = 32


@dataclass(frozen=True)
class PlanningTunables:
    # Partition directories listed at once from an object store when there is no
    # metadata table (local directories are listed one after another).
    listing_parallelism: int = 16
    # Folders a table's load asks an object store to list ahead, from the partitions
    # its commits name; with more, the walk lists level by level (a filtered read lists
    # only the partitions it keeps, and each listing asked ahead it leaves is a request).
    early_listings: int = 64
    # Footers read for size estimates; above this many base files, on-disk sizes
    # scaled by the sampled expansion ratio are used instead.
    max_footers_per_estimate: int = 4096
    # Footers cached per table (each a few KiB to a few hundred), and their bytes at most.
    footer_cache_capacity: int = 16384
    footer_cache_bytes: int = 256 << 20
    # Record keys the index guards' duplicate-key check reads at most (every key a
    # write placed without an index lookup); above it, the indexes prune less.
    duplicate_check_max_keys: int = 5_000_000

    @classmethod
    def from_options(cls, table_options: Mapping[str, str]) -> PlanningTunables:
        """The table's planning tunables: defaults, with ``hoodie.plan.*`` keys
        from the table's options applied. A bad value fails here, when the
        table is built, rather than at its first listing."""
        default = cls()
        return cls(
            listing_parallelism=_positive_int(
                table_options, HudiPlanConfig.LISTING_PARALLELISM.value, default.listing_parallelism
            ),
            early_listings=default.early_listings,
            max_footers_per_estimate=default.max_footers_per_estimate,
            footer_cache_capacity=default.footer_cache_capacity,
            footer_cache_bytes=default.footer_cache_bytes,
            duplicate_check_max_keys=default.duplicate_check_max_keys,
        )


def io_tunables(options: Mapping[str, str]) -> IOTunables:
    """A table's storage I/O tunables: defaults, with ``hoodie.io.*`` keys applied."""
    default = IOTunables()
    return IOTunables(
        max_requests=_positive_int(options, HudiIOConfig.MAX_REQUESTS.value, default.max_requests),
        max_bytes_in_flight=_positive_int(options, HudiIOConfig.MAX_BYTES_IN_FLIGHT.value, default.max_bytes_in_flight),
        request_timeout=_positive_float(options, HudiIOConfig.REQUEST_TIMEOUT_SECONDS.value, default.request_timeout),
        max_attempts=_positive_int(options, HudiIOConfig.MAX_ATTEMPTS.value, default.max_attempts),
    )


@dataclass(frozen=True)
class EngineTunables:
    """Defaults of the engines' reads (Ray, Spark through RayDP, Spark 4), one set for all."""

    # Units (a slice, or a group of small slices) whose files a reader task
    # fetches while one decodes, within the table's bytes-in-flight cap: on an
    # object store each costs a round trip, so many are fetched together.
    prefetch_depth: int = 16
    # Estimated Arrow bytes of a Spark partition that hudi-ray reads (slices
    # with logs, on either Spark): a merge costs more per byte than a scan,
    # so partitions are smaller than Spark's own 128 MiB file splits.
    spark_partition_bytes: int = 64 << 20


ENGINE_TUNABLES = EngineTunables()


@dataclass(frozen=True)
class ReadTunables:
    """Per-read knobs, from a read's ``hoodie.read.*`` options."""

    # File slices read at once by HudiTable.read (hoodie.read.file.slice.read.concurrency).
    slice_read_concurrency: int = max(2, min(8, os.cpu_count() or 2))
    # Slices decoded ahead of the consumer by read_stream: enough to keep the
    # cores busy, few enough that memory stays a couple of slices.
    stream_read_ahead: int = 2
    # Parallel pieces an engine splits the read into (hoodie.read.input.partitions);
    # None: the engine decides.
    input_partitions: int | None = None

    @classmethod
    def from_options(cls, hudi_options: Mapping[str, str]) -> ReadTunables:
        """The read's tunables; every tunable key's value is checked, including
        those that cannot change this reader's work (see ``_ACCEPTED``)."""
        default = cls()
        for key, check in _ACCEPTED.items():
            if key in hudi_options:
                check(hudi_options, key)
        partitions = None
        if R.INPUT_PARTITIONS.value in hudi_options:
            # hudi-rs treats 0 as "let the engine decide".
            partitions = int_option(hudi_options[R.INPUT_PARTITIONS.value], R.INPUT_PARTITIONS.value, minimum=0) or None
        return cls(
            slice_read_concurrency=_positive_int(
                hudi_options, R.FILE_SLICE_READ_CONCURRENCY.value, default.slice_read_concurrency
            ),
            stream_read_ahead=default.stream_read_ahead,
            input_partitions=partitions,
        )


def _one_of(*allowed: str) -> Callable[[Mapping[str, str], str], None]:
    def check(options: Mapping[str, str], key: str) -> None:
        value = str(options[key]).strip().lower()
        if value not in allowed:
            raise HudiConfigError(f"Config {key} must be one of {list(allowed)}, got {options[key]!r}")

    return check


# Keys hudi-rs declares that select how its reader works, never what it returns:
# a reader version (this reader has one), position-based merging (merging here
# is by key, which gives the same rows) and a spill threshold for log scans (a
# slice's logs are merged in memory here). They are validated so a typo fails,
# and otherwise have no effect.
_ACCEPTED = {
    R.FILE_GROUP_READER_VERSION.value: _one_of("1", "2"),
    R.MERGE_USE_RECORD_POSITIONS.value: _one_of("true", "false"),
    R.SCAN_MAX_MEMORY_SIZE.value: lambda o, k: _positive_int(o, k, 0),
}


POOL_TUNABLES = PoolTunables()
PLANNING_TUNABLES = PlanningTunables()
