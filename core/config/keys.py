"""Config keys, with the member names hudi-rs uses so ported code keeps working."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable, Mapping
from enum import Enum


class HudiTableConfig(str, Enum):
    """Table configs; most are persisted in ``.hoodie/hoodie.properties``."""

    BASE_FILE_FORMAT = "hoodie.table.base.file.format"
    BASE_PATH = "hoodie.base.path"
    CHECKSUM = "hoodie.table.checksum"
    CREATE_SCHEMA = "hoodie.table.create.schema"
    DATABASE_NAME = "hoodie.database.name"
    DROPS_PARTITION_FIELDS = "hoodie.datasource.write.drop.partition.columns"
    IS_HIVE_STYLE_PARTITIONING = "hoodie.datasource.write.hive_style_partitioning"
    IS_PARTITION_PATH_URLENCODED = "hoodie.datasource.write.partitionpath.urlencode"
    KEY_GENERATOR_CLASS = "hoodie.table.keygenerator.class"
    KEY_GENERATOR_TYPE = "hoodie.table.keygenerator.type"
    PARTITION_FIELDS = "hoodie.table.partition.fields"
    ORDERING_FIELDS = "hoodie.table.ordering.fields"
    PRECOMBINE_FIELD = "hoodie.table.precombine.field"
    POPULATES_META_FIELDS = "hoodie.populate.meta.fields"
    RECORD_KEY_FIELDS = "hoodie.table.recordkey.fields"
    RECORD_MERGE_MODE = "hoodie.record.merge.mode"
    RECORD_MERGE_STRATEGY = "hoodie.table.record.merge.strategy"
    PAYLOAD_CLASS = "hoodie.compaction.payload.class"
    TABLE_NAME = "hoodie.table.name"
    TABLE_TYPE = "hoodie.table.type"
    TABLE_VERSION = "hoodie.table.version"
    TIMELINE_LAYOUT_VERSION = "hoodie.timeline.layout.version"
    TIMELINE_TIMEZONE = "hoodie.table.timeline.timezone"
    ARCHIVE_LOG_FOLDER = "hoodie.archivelog.folder"
    TIMELINE_PATH = "hoodie.timeline.path"
    TIMELINE_HISTORY_PATH = "hoodie.timeline.history.path"
    METADATA_TABLE_ENABLED = "hoodie.metadata.enable"
    METADATA_TABLE_PARTITIONS = "hoodie.table.metadata.partitions"

    def __str__(self) -> str:
        return self.value


class HudiReadConfig(str, Enum):
    """Per-read configs; they travel in ``HudiReadOptions``, never in the table."""

    QUERY_TYPE = "hoodie.read.query.type"
    AS_OF_TIMESTAMP = "hoodie.read.as.of.timestamp"
    START_TIMESTAMP = "hoodie.read.start.timestamp"
    END_TIMESTAMP = "hoodie.read.end.timestamp"
    INPUT_PARTITIONS = "hoodie.read.input.partitions"
    USE_READ_OPTIMIZED_MODE = "hoodie.read.use.read_optimized.mode"
    FILE_GROUP_READER_VERSION = "hoodie.read.file.group.reader.version"
    STREAM_BATCH_SIZE = "hoodie.read.stream.batch_size"
    FILE_SLICE_READ_CONCURRENCY = "hoodie.read.file.slice.read.concurrency"
    SCAN_MAX_MEMORY_SIZE = "hoodie.read.scan.max.memory.size"
    MERGE_USE_RECORD_POSITIONS = "hoodie.merge.use.record.positions"
    # Apache Hudi's key: an incremental read whose history is gone reads a full snapshot instead of failing.
    INCR_FALLBACK_FULL_TABLE_SCAN = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"

    def __str__(self) -> str:
        return self.value


class HudiPlanConfig(str, Enum):
    """Planning configs; they belong to the table (set when it is built) and
    shape how a read is planned, never which rows it returns."""

    LISTING_PARALLELISM = "hoodie.plan.listing.parallelism"

    def __str__(self) -> str:
        return self.value


class HudiIOConfig(str, Enum):
    """Storage I/O configs; they belong to the table (set when it is built) and
    bound how its files are fetched, never which rows a read returns."""

    MAX_REQUESTS = "hoodie.io.max.requests"
    MAX_BYTES_IN_FLIGHT = "hoodie.io.max.bytes.in.flight"
    REQUEST_TIMEOUT_SECONDS = "hoodie.io.request.timeout.seconds"
    MAX_ATTEMPTS = "hoodie.io.max.attempts"

    def __str__(self) -> str:
        return self.value


READ_CONFIG_PREFIX = "hoodie.read."
_READ_KEYS = {m.value for m in HudiReadConfig}

# Keys Hudi writes to hoodie.properties or that this reader consults without an enum
# member; passing them back as options is legitimate.
_OTHER_KNOWN_KEYS = {
    "hoodie.compaction.record.merger.strategy",
    "hoodie.keygen.timebased.input.dateformat",
    "hoodie.keygen.timebased.output.dateformat",
    "hoodie.keygen.timebased.timestamp.type",
    "hoodie.keygen.timebased.timezone",
    "hoodie.record.merge.strategy.id",
    "hoodie.table.cdc.enabled",
    "hoodie.table.format",
    "hoodie.table.index.defs.path",
    "hoodie.table.initial.version",
    "hoodie.table.legacy.payload.class",
    "hoodie.table.metadata.partitions.inflight",
    "hoodie.read.file_group.start_timestamp",
    "hoodie.read.file_group.end_timestamp",
}
KNOWN_KEYS = frozenset(
    {m.value for m in HudiTableConfig}
    | _READ_KEYS
    | {m.value for m in HudiPlanConfig}
    | {m.value for m in HudiIOConfig}
    | _OTHER_KNOWN_KEYS
)
_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_unknown_keys(keys: Iterable[str]) -> None:
    """Warn, once per key and process, about ``hoodie.*`` options this reader does not know.

    A misspelt key would otherwise be ignored silently, the read quietly
    falling back to the default the caller meant to override.
    """
    for key in keys:
        key = key_str(key)
        if not key.startswith("hoodie.") or key in KNOWN_KEYS:
            continue
        with _warned_lock:
            if key in _warned:
                continue
            _warned.add(key)
        import difflib  # only for a misspelt key

        close = difflib.get_close_matches(key, sorted(KNOWN_KEYS), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        warnings.warn(f"Unknown Hudi option {key!r} is ignored{hint}", UserWarning, stacklevel=3)


def is_read_config(key: str) -> bool:
    return key.startswith(READ_CONFIG_PREFIX) or key in _READ_KEYS


def key_str(key: str | Enum) -> str:
    return key.value if isinstance(key, Enum) else str(key)


def split_options(options: Mapping[str, str] | None) -> tuple[dict[str, str], dict[str, str]]:
    """Route generic options: ``hoodie.*`` keys are Hudi configs, the rest storage options."""
    hudi: dict[str, str] = {}
    storage: dict[str, str] = {}
    for k, v in (options or {}).items():
        key = key_str(k)
        (hudi if key.startswith("hoodie.") else storage)[key] = str(v)
    return hudi, storage
