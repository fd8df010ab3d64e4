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

from hudi_ray.core.config import ENGINE_TUNABLES, int_option
from hudi_ray.core.config import HudiReadConfig as R
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.expr import Filter, from_str_tuples
from hudi_ray.core.storage import redact_text
from hudi_ray.core.table import HudiQueryType, HudiReadOptions, ReadSpec, checked_max_instants

# Default rows per Arrow batch handed to Spark: large enough that the per-batch
# cost (one cast, one IPC message to the JVM) disappears in the decode time.
DEFAULT_BATCH_SIZE = 65_536
# Estimated in-memory bytes per Spark partition: the engines' one default.
DEFAULT_PARTITION_BYTES = ENGINE_TUNABLES.spark_partition_bytes

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
        # Streaming reads (spark.readStream): where a new query starts, and a cap on instants per micro-batch.
        "startingoffsets",
        "maxinstantspertrigger",
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
    starting_offsets: str | None = None  # earliest (default), latest, or a timestamp (exclusive)
    max_instants_per_trigger: int | None = None

    @property
    def incremental(self) -> bool:
        return self.read_options.query_type() is HudiQueryType.Incremental


def _count(options: Mapping[str, str], key: str, default: int, minimum: int, where: str) -> int:
    raw = options.get(key)
    return default if raw is None else int_option(raw, f"Option {key}", minimum=minimum, where=where)


def _bool(options: Mapping[str, str], key: str, shown: str) -> bool:
    raw = options[key]
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
    storage: dict[str, str] = {}
    if "storage_options" in opts:
        given = _json(opts["storage_options"], "storage_options", shown)
        if not isinstance(given, dict):
            raise HudiConfigError(f"Option storage_options must be a JSON object (reading {shown})")
        storage.update({str(k): str(v) for k, v in given.items()})
    storage.update({k[len(STORAGE_PREFIX) :]: v for k, v in opts.items() if k.startswith(STORAGE_PREFIX)})

    num_partitions: str | int | None = opts.get("num_partitions")
    if num_partitions is None and R.INPUT_PARTITIONS.value in opts:
        # Unlike the core (0: the engine decides), this source takes only counts >= 1 here.
        raw = opts[R.INPUT_PARTITIONS.value]
        num_partitions = int_option(raw, R.INPUT_PARTITIONS.value, minimum=1, where=f" (reading {shown})")
    spec = ReadSpec.of(
        uri,
        query_type=opts.get("query_type"),
        filters=_filters(opts.get("filters"), shown),
        hudi_options=hudi,
        columns=_columns(opts.get("columns"), shown),
        as_of_timestamp=opts.get("as_of_timestamp"),
        start_timestamp=opts.get("start_timestamp"),
        end_timestamp=opts.get("end_timestamp"),
        read_optimized=_bool(opts, "read_optimized", shown) if "read_optimized" in opts else None,
        batch_size=opts.get("batch_size"),
        prefetch=_bool(opts, "prefetch", shown) if "prefetch" in opts else None,
        prefetch_depth=opts.get("prefetch_depth"),
        num_partitions=num_partitions,
        strings=True,
        names={k: f"Option {k}" for k in ("batch_size", "prefetch_depth", "num_partitions")},
    )
    where = spec.where
    return SourceOptions(
        uri=uri,
        shown_uri=shown,
        read_options=spec.read_options,
        table_options=spec.table_options,
        storage_options=storage,
        columns=spec.columns,
        batch_size=spec.batch_size or DEFAULT_BATCH_SIZE,
        num_partitions=spec.num_partitions,
        partition_bytes=_count(opts, "partition_bytes", DEFAULT_PARTITION_BYTES, 1, where),
        # Spark's executors are unknown where partitions are planned; the
        # planning machine's cores are the usual lower bound in local and
        # single-node use, and num_partitions sets the count exactly.
        min_partitions=_count(opts, "min_partitions", os.cpu_count() or 1, 1, where),
        prefetch=spec.prefetch,
        prefetch_depth=spec.prefetch_depth,
        starting_offsets=opts.get("startingoffsets"),
        max_instants_per_trigger=checked_max_instants(
            opts.get("maxinstantspertrigger"), "Option maxInstantsPerTrigger", strings=True
        ),
    )
