"""The options of ``spark.read.format("hudi_ray")``, checked once when the DataFrame is made.

Every argument ``read_hudi`` takes has an option of the same name; values are
strings, as Spark passes them. Spark lower-cases option keys, so storage
options whose names need capitals go in the ``storage_options`` JSON object.
Nothing here imports Spark: the options are tested without a session.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_ray.core.config import HudiReadConfig as R
from hudi_ray.core.config import is_read_config, warn_unknown_keys
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.expr import Filter, from_str_tuples
from hudi_ray.core.storage import normalize_base_uri, redact_text
from hudi_ray.core.table import HudiQueryType, HudiReadOptions

# Default rows per Arrow batch handed to Spark: large enough that the per-batch
# cost (one cast, one IPC message to the JVM) disappears in the decode time.
DEFAULT_BATCH_SIZE = 65_536
# Estimated in-memory bytes per Spark partition, Spark's own file-scan default
# (spark.sql.files.maxPartitionBytes).
DEFAULT_PARTITION_BYTES = 128 << 20

# Spark passes the DataFrameReader's load() argument as ``path``.
KNOWN = frozenset(
    {
        "path",
        "query_type",
        "filters",
        "columns",
        "as_of_timestamp",
        "start_timestamp",
        "end_timestamp",
        "read_optimized",
        "batch_size",
        "storage_options",
        "num_partitions",
        "partition_bytes",
        "min_partitions",
        "prefetch",
        "prefetch_depth",
    }
)
HUDI_PREFIX = "hoodie."
STORAGE_PREFIX = "storage."


@dataclass(frozen=True)
class SourceOptions:
    """The parsed options of one ``load()``. Storage options hold credentials:
    they are kept out of the repr, and only the storage client sees them."""

    uri: str = field(repr=False)
    shown_uri: str  # the URI as errors and logs show it, user info redacted
    read_options: HudiReadOptions
    table_options: dict[str, str]
    storage_options: dict[str, str] = field(repr=False)
    columns: list[str] | None
    batch_size: int
    num_partitions: int | None
    partition_bytes: int
    min_partitions: int
    prefetch: bool
    prefetch_depth: int

    @property
    def incremental(self) -> bool:
        return self.read_options.query_type() is HudiQueryType.Incremental


def _int(options: Mapping[str, str], key: str, default: int | None, minimum: int, shown: str) -> int | None:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise HudiConfigError(f"Option {key} must be an integer >= {minimum}, got {raw!r} (reading {shown})")
    return value


def _bool(options: Mapping[str, str], key: str, default: bool, shown: str) -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text not in ("true", "false"):
        raise HudiConfigError(f"Option {key} must be true or false, got {raw!r} (reading {shown})")
    return text == "true"


def _json(raw: str, key: str, shown: str) -> object:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        # The value is not echoed: storage_options may hold credentials.
        raise HudiConfigError(f"Option {key} must be JSON ({exc.msg}) (reading {shown})") from None


def _columns(raw: str | None, shown: str) -> list[str] | None:
    """``a,b,c`` or a JSON list of names."""
    if raw is None:
        return None
    text = str(raw).strip()
    names = _json(text, "columns", shown) if text.startswith("[") else [c.strip() for c in text.split(",")]
    if not isinstance(names, list) or not names or not all(isinstance(c, str) and c for c in names):
        raise HudiConfigError(f"Option columns must name at least one column, got {raw!r} (reading {shown})")
    return list(dict.fromkeys(names))


def _filters(raw: str | None, shown: str) -> list[Filter]:
    """A JSON list of ``[column, operator, value]`` triples, as ``read_hudi`` takes them."""
    if raw is None:
        return []
    triples = _json(str(raw), "filters", shown)
    if not isinstance(triples, list):
        raise HudiConfigError(f"Option filters must be a JSON list of [column, op, value], got {raw!r}")
    return from_str_tuples(triples)


def parse_options(options: Mapping[str, str]) -> SourceOptions:
    """Check every option and resolve it; unknown keys are an error, as a typo
    would otherwise read something else than asked for without a word."""
    opts = {str(k).lower(): str(v) for k, v in options.items()}
    uri = opts.get("path")
    if not uri or not uri.strip():
        raise HudiConfigError('No table to read: pass its base URI, spark.read.format("hudi_ray").load(uri)')
    shown = redact_text(uri)
    unknown = sorted(k for k in opts if k not in KNOWN and not k.startswith((HUDI_PREFIX, STORAGE_PREFIX)))
    if unknown:
        raise HudiConfigError(
            f"Unknown option(s) {unknown} reading {shown}; known: {sorted(KNOWN)} and hoodie.* / storage.* keys"
        )
    hudi = {k: v for k, v in opts.items() if k.startswith(HUDI_PREFIX)}
    warn_unknown_keys(hudi)
    storage: dict[str, str] = {}
    if "storage_options" in opts:
        given = _json(opts["storage_options"], "storage_options", shown)
        if not isinstance(given, dict):
            raise HudiConfigError(f"Option storage_options must be a JSON object (reading {shown})")
        storage.update({str(k): str(v) for k, v in given.items()})
    storage.update({k[len(STORAGE_PREFIX) :]: v for k, v in opts.items() if k.startswith(STORAGE_PREFIX)})

    read = HudiReadOptions(
        filters=_filters(opts.get("filters"), shown), hudi_options={k: v for k, v in hudi.items() if is_read_config(k)}
    )
    if "query_type" in opts:
        read = read.with_query_type(opts["query_type"])
    incremental = read.query_type() is HudiQueryType.Incremental
    if "as_of_timestamp" in opts:
        if incremental:
            raise HudiConfigError(f"as_of_timestamp applies to snapshot reads, not incremental ones (reading {shown})")
        read = read.with_as_of_timestamp(opts["as_of_timestamp"])
    if ("start_timestamp" in opts or "end_timestamp" in opts) and not incremental:
        raise HudiConfigError(
            f"start_timestamp and end_timestamp apply to incremental reads (query_type=incremental), reading {shown}"
        )
    if "start_timestamp" in opts:
        read = read.with_start_timestamp(opts["start_timestamp"])
    if "end_timestamp" in opts:
        read = read.with_end_timestamp(opts["end_timestamp"])
    if "read_optimized" in opts:
        flag = _bool(opts, "read_optimized", False, shown)
        read = read.with_hudi_option(R.USE_READ_OPTIMIZED_MODE.value, str(flag).lower())

    batch_size = _int(opts, "batch_size", read.batch_size() or DEFAULT_BATCH_SIZE, 1, shown)
    num_partitions = _int(opts, "num_partitions", None, 1, shown)
    if num_partitions is None:
        # hoodie.read.input.partitions, as hudi-rs engines take it: the read's parallelism.
        num_partitions = _int(opts, R.INPUT_PARTITIONS.value, None, 1, shown)
    return SourceOptions(
        uri=uri,
        shown_uri=shown,
        read_options=read,
        table_options={k: v for k, v in hudi.items() if not is_read_config(k)},
        storage_options=storage,
        columns=_columns(opts.get("columns"), shown),
        batch_size=batch_size or DEFAULT_BATCH_SIZE,
        num_partitions=num_partitions,
        partition_bytes=_int(opts, "partition_bytes", DEFAULT_PARTITION_BYTES, 1, shown) or DEFAULT_PARTITION_BYTES,
        # Spark's executors are unknown where partitions are planned; the
        # planning machine's cores are the usual lower bound in local and
        # single-node use, and num_partitions sets the count exactly.
        min_partitions=_int(opts, "min_partitions", os.cpu_count() or 1, 1, shown) or 1,
        # Fetching ahead pays off where each request is slow: object stores.
        prefetch=_bool(opts, "prefetch", normalize_base_uri(uri)[0] != "file", shown),
        prefetch_depth=_int(opts, "prefetch_depth", 16, 0, shown) or 0,
    )
