"""Typed view of a table's configs (``hoodie.properties`` plus caller overrides)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_ray.core.config.keys import HudiTableConfig as K
from hudi_ray.core.exceptions import HudiConfigError, HudiUnsafePathError
from hudi_ray.core.storage.paths import metadata_path_problem

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}
_TIMESTAMP_KEYGENS = ("TimestampBasedKeyGenerator", "TimestampBasedAvroKeyGenerator")
_NONPARTITIONED_KEYGENS = ("NonpartitionedKeyGenerator", "NonpartitionedAvroKeyGenerator")


def _split_fields(value: str | None) -> list[str]:
    if not value:
        return []
    # CustomKeyGenerator writes "field:TYPE"; only the field name matters here.
    return [f.strip().split(":", 1)[0] for f in value.split(",") if f.strip()]


# Where a table keeps its metadata table, and that table's partitions: planning asks
# which are enabled before (and often without) opening it.
METADATA_TABLE_PATH = ".hoodie/metadata"
METADATA_FILES_PARTITION = "files"
COLUMN_STATS = "column_stats"
PARTITION_STATS = "partition_stats"
RECORD_INDEX = "record_index"
BLOOM_FILTERS = "bloom_filters"
SECONDARY_INDEX_PREFIX = "secondary_index_"
# The file defining a table's indexes, by key and by default.
INDEX_DEFS_KEY = "hoodie.table.index.defs.path"
DEFAULT_INDEX_DEFS_PATH = ".hoodie/.index_defs/index.json"


@dataclass
class TableConfig:
    """Table configs with typed accessors; ``options`` holds every key as a string."""

    options: dict[str, str] = field(default_factory=dict)
    source: str = "hoodie.properties"

    def get(self, key: K | str, default: str | None = None) -> str | None:
        k = key.value if isinstance(key, K) else key
        return self.options.get(k, default)

    def _bool(self, key: K, default: bool) -> bool:
        raw = self.get(key)
        if raw is None or raw.strip() == "":
            return default
        v = raw.strip().lower()
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
        raise HudiConfigError(f"Config {key.value} in {self.source} must be true or false, got {raw!r}")

    def _int(self, key: K, default: int) -> int:
        raw = self.get(key)
        if raw is None or raw.strip() == "":
            return default
        try:
            return int(raw.strip())
        except ValueError as exc:
            raise HudiConfigError(f"Config {key.value} in {self.source} must be an integer, got {raw!r}") from exc

    @property
    def table_name(self) -> str:
        name = self.get(K.TABLE_NAME)
        if not name:
            raise HudiConfigError(f"Missing required config {K.TABLE_NAME.value} in {self.source}")
        return name

    @property
    def table_type(self) -> str:
        raw = (self.get(K.TABLE_TYPE) or "COPY_ON_WRITE").strip().upper()
        if raw in ("COPY_ON_WRITE", "COW"):
            return "COPY_ON_WRITE"
        if raw in ("MERGE_ON_READ", "MOR"):
            return "MERGE_ON_READ"
        raise HudiConfigError(f"Unknown {K.TABLE_TYPE.value} {raw!r} in {self.source}")

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def table_version(self) -> int:
        return self._int(K.TABLE_VERSION, 6)

    @property
    def timeline_layout_version(self) -> int:
        return self._int(K.TIMELINE_LAYOUT_VERSION, 2 if self.table_version >= 8 else 1)

    @property
    def timeline_path(self) -> str:
        """Folder of active instants, relative to the base path."""
        if self.table_version >= 8:
            folder = (self.get(K.TIMELINE_PATH) or "timeline").strip("/")
            # The folder is listed and its files read: it must stay in .hoodie.
            problem = metadata_path_problem(folder)
            if problem is not None:
                raise HudiUnsafePathError(
                    f"{K.TIMELINE_PATH.value}={folder!r} in {self.source} {problem}; "
                    "the timeline must be a folder inside .hoodie"
                )
            return ".hoodie/" + folder
        return ".hoodie"

    @property
    def timezone(self) -> str:
        return (self.get(K.TIMELINE_TIMEZONE) or "UTC").strip()

    @property
    def base_file_format(self) -> str:
        return (self.get(K.BASE_FILE_FORMAT) or "PARQUET").strip().upper()

    @property
    def partition_fields(self) -> list[str]:
        return _split_fields(self.get(K.PARTITION_FIELDS))

    @property
    def record_key_fields(self) -> list[str]:
        return _split_fields(self.get(K.RECORD_KEY_FIELDS))

    @property
    def ordering_fields(self) -> list[str]:
        return _split_fields(self.get(K.ORDERING_FIELDS) or self.get(K.PRECOMBINE_FIELD))

    @property
    def is_hive_style(self) -> bool:
        return self._bool(K.IS_HIVE_STYLE_PARTITIONING, False)

    @property
    def is_partition_path_urlencoded(self) -> bool:
        return self._bool(K.IS_PARTITION_PATH_URLENCODED, False)

    @property
    def drops_partition_fields(self) -> bool:
        return self._bool(K.DROPS_PARTITION_FIELDS, False)

    @property
    def populates_meta_fields(self) -> bool:
        return self._bool(K.POPULATES_META_FIELDS, True)

    @property
    def metadata_table_enabled(self) -> bool:
        """Whether reads may use the metadata table: on unless hoodie.metadata.enable is false."""
        return self._bool(K.METADATA_TABLE_ENABLED, True)

    @property
    def metadata_partitions(self) -> frozenset[str]:
        """The metadata table partitions reads may use: those written through
        (``hoodie.table.metadata.partitions``), less those still being built; none
        when the metadata table is switched off."""
        if not self.metadata_table_enabled:
            return frozenset()
        enabled = {p.strip() for p in (self.get("hoodie.table.metadata.partitions") or "").split(",") if p.strip()}
        inflight = {p.strip() for p in (self.get("hoodie.table.metadata.partitions.inflight") or "").split(",")}
        return frozenset(enabled - inflight)

    @property
    def metadata_lists_files(self) -> bool:
        """Whether reads may list partitions and files through the metadata table."""
        return METADATA_FILES_PARTITION in self.metadata_partitions

    @property
    def key_generator(self) -> str:
        cls = self.get(K.KEY_GENERATOR_CLASS) or ""
        typ = (self.get(K.KEY_GENERATOR_TYPE) or "").upper()
        return cls.rsplit(".", 1)[-1] if cls else typ

    @property
    def is_timestamp_keygen(self) -> bool:
        kg = self.key_generator
        return kg in _TIMESTAMP_KEYGENS or kg == "TIMESTAMP"

    @property
    def is_nonpartitioned(self) -> bool:
        kg = self.key_generator
        return not self.partition_fields or kg in _NONPARTITIONED_KEYGENS or kg == "NON_PARTITION"

    def validate(self) -> None:
        """Check the configs every read depends on, naming the bad key."""
        _ = self.table_name, self.table_type
        # Without it the version defaults to 6 and a newer table's timeline
        # is looked for in the wrong folder, so the table reads as empty.
        if not (self.get(K.TABLE_VERSION) or "").strip():
            raise HudiConfigError(f"Missing required config {K.TABLE_VERSION.value} in {self.source}")
        if self.table_version not in (5, 6, 7, 8, 9):
            raise HudiConfigError(
                f"Unsupported {K.TABLE_VERSION.value}={self.table_version} in {self.source}; "
                "supported versions are 6, 8 and 9"
            )
        expected_layout = 2 if self.table_version >= 8 else 1
        if self.timeline_layout_version != expected_layout:
            raise HudiConfigError(
                f"{K.TABLE_VERSION.value}={self.table_version} in {self.source} expects "
                f"{K.TIMELINE_LAYOUT_VERSION.value}={expected_layout}, found {self.timeline_layout_version}"
            )
        if self.timezone.upper() not in ("UTC", "LOCAL"):
            raise HudiConfigError(
                f"Unsupported {K.TIMELINE_TIMEZONE.value}={self.timezone!r} in {self.source}; expected UTC or LOCAL"
            )
        for key in (
            K.IS_HIVE_STYLE_PARTITIONING,
            K.IS_PARTITION_PATH_URLENCODED,
            K.DROPS_PARTITION_FIELDS,
            K.METADATA_TABLE_ENABLED,
        ):
            self._bool(key, False)

    @classmethod
    def from_mapping(cls, options: Mapping[str, str], source: str) -> TableConfig:
        return cls(options=dict(options), source=source)
