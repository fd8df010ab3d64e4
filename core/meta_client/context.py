"""What readers need to know about a table: storage, configs, timeline, schema."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hudi_ray.core.base_file import FooterCache
from hudi_ray.core.config import TableConfig
from hudi_ray.core.config.table_config import METADATA_FILES_PARTITION, METADATA_TABLE_PATH
from hudi_ray.core.config.tunables import PLANNING_TUNABLES
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.expr import Filter, check_columns
from hudi_ray.core.file_group.listing import ask_for_partitions
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.merge import MergeConfig, resolve_merge_config
from hudi_ray.core.partition import Partitioner
from hudi_ray.core.schema import avro_to_arrow_schema, meta_fields_schema
from hudi_ray.core.schema.avro import META_FIELDS, RECORD_KEY, parse_avro_schema
from hudi_ray.core.storage import Storage, StorageLike
from hudi_ray.core.timeline import HudiTimeline, ask_for_timeline

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")


@dataclass
class TableContext:
    """Loaded once per table and shared by the table API and its readers."""

    storage: StorageLike
    config: TableConfig
    timeline: HudiTimeline
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _schema: pa.Schema | None = field(default=None, repr=False)
    _partitioner: Partitioner | None = field(default=None, repr=False)
    footers: FooterCache = field(
        default_factory=lambda: FooterCache(
            PLANNING_TUNABLES.footer_cache_capacity, PLANNING_TUNABLES.footer_cache_bytes
        ),
        repr=False,
    )
    _merge: MergeConfig | None = field(default=None, repr=False)

    @classmethod
    def load(cls, storage: Storage, overrides: dict[str, str], previous: TableContext | None = None) -> TableContext:
        """The table's state as storage holds it now. ``previous``, an earlier
        state of the same table, lends what never changes: completed instants'
        decoded metadata and the footers of base files (each name is written once)."""
        # On an object store, the first questions of the table and of its metadata table
        # (most tables have one) go out together; its root's listing starts the walk
        # for partitions where no metadata table lists them. A table loaded again has
        # its instants' files decoded already.
        fresh = previous is None
        storage.forget_early()
        ask_for_timeline(storage, "", instants=fresh)
        if _may_use_metadata_table(overrides):
            ask_for_timeline(storage.child(METADATA_TABLE_PATH), METADATA_FILES_PARTITION, instants=fresh)
        config, timeline = HudiTimeline.load_with_config(storage, overrides, previous and previous.timeline)
        if not config.metadata_lists_files:
            # Reads will walk storage for partitions: on an object store, asked now, the
            # walk's round trips overlap the timeline's commit reads. Partitions lie
            # ``depth`` levels below the root; the walk lists the levels above them.
            # A first load also asks, by name, for the partitions below the root's children
            # that its commits wrote; a table loaded again (an incremental job's next batch)
            # may read no partition at all.
            depth = Partitioner(config, lambda: pa.schema([])).depth()
            storage.ask_early_tree(max(depth or 1, 1))
            if fresh and (depth is None or depth > 1):
                ask_for_partitions(storage, timeline, PLANNING_TUNABLES.early_listings)
        if previous is None:
            return cls(storage=storage, config=config, timeline=timeline)
        return cls(storage=storage, config=config, timeline=timeline, footers=previous.footers)

    def with_storage(self, storage: StorageLike | None) -> TableContext:
        """The same table state read through another storage (None: this one)."""
        if storage is None:
            return self
        return TableContext(storage=storage, config=self.config, timeline=self.timeline, _schema=self._schema)

    def slim(self) -> TableContext:
        """The same state without cached commit metadata, small enough to ship.
        Footers stay shared in this process (a footer cache pickles empty)."""
        timeline = HudiTimeline(self.storage, self.config, list(self.timeline.instants), list(self.timeline.pending))
        return TableContext(
            storage=self.storage, config=self.config, timeline=timeline, _schema=self._schema, footers=self.footers
        )

    @property
    def avro_schema_str(self) -> str:
        return self.timeline.get_latest_avro_schema()

    @property
    def data_schema(self) -> pa.Schema:
        """Table schema without meta fields."""
        with self._lock:
            if self._schema is None:
                text = self.avro_schema_str
                full = avro_to_arrow_schema(parse_avro_schema(text, "table schema"), "table schema")
                self._schema = pa.schema([f for f in full if f.name not in META_FIELDS])
            return self._schema

    @property
    def schema_with_meta_fields(self) -> pa.Schema:
        return pa.schema(list(meta_fields_schema()) + list(self.data_schema))

    @property
    def read_schema(self) -> pa.Schema:
        """Columns a read returns: meta fields only when the writer populated them."""
        if self.config.populates_meta_fields:
            return self.schema_with_meta_fields
        return self.data_schema

    def check_projection(self, columns: Sequence[str] | None) -> None:
        """A read returns only columns of ``read_schema``: others are unknown (``HudiSchemaError``)."""
        if columns is not None:
            check_columns(columns, self.read_schema.names, f"table {self.storage.base_url}")

    def check_filters(self, filters: Sequence[Filter]) -> None:
        """A filter may name any column of the table, meta fields (populated or
        not) and partition fields included; others are unknown (``HudiFilterError``)."""
        if not filters:
            return
        known = set(self.schema_with_meta_fields.names) | set(self.partitioner.schema.names)
        check_columns([f.field for f in filters], known, f"table {self.storage.base_url}", filters=True)

    def merge_config(self) -> MergeConfig:
        if self._merge is None:
            self._merge = resolve_merge_config(self.config)
        return self._merge

    def merge_columns(self) -> list[str]:
        """Columns merging needs besides the caller's: the record key and the
        ordering fields. (Commit times are the read plan's to add, when it masks by them.)"""
        cfg = self.merge_config()
        cols = [RECORD_KEY] if self.config.populates_meta_fields else []
        cols += list(cfg.record_key_fields) + list(cfg.ordering_fields)
        return cols

    @property
    def partitioner(self) -> Partitioner:
        if self._partitioner is None:
            self._partitioner = Partitioner(self.config, lambda: self.data_schema)
        return self._partitioner

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def _may_use_metadata_table(overrides: dict[str, str]) -> bool:
    """False when the caller's options switch the metadata table off (a bad value is
    reported by the load itself)."""
    try:
        return TableConfig.from_mapping(overrides, "the read options").metadata_table_enabled
    except HudiConfigError:
        return True
