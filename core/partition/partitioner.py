"""Turn partition paths into typed partition values, as the writer's key generator laid them out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING
from urllib.parse import unquote

from hudi_ray.core.config import TableConfig
from hudi_ray.core.exceptions import HudiSchemaError
from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")

PARTITION_PATH_FIELD = "_hoodie_partition_path"
_HIVE_DEFAULT = "__HIVE_DEFAULT_PARTITION__"


class Partitioner:
    """Partition schema and value parsing for one table.

    A timestamp-based key generator formats the field's value into a path
    (``2023/04/03/12``) that no longer equals the column value, so its
    partitions are described by the partition path itself.
    """

    def __init__(self, config: TableConfig, table_schema: pa.Schema | Callable[[], pa.Schema]) -> None:
        self.config = config
        self.fields = [] if config.is_nonpartitioned else config.partition_fields
        self.hive_style = config.is_hive_style
        self.urlencoded = config.is_partition_path_urlencoded
        self.by_path = config.is_timestamp_keygen and bool(self.fields)
        # Listing partitions needs only their layout; the typed schema (and the table
        # schema it comes from) is worked out when values are first parsed or pruned on.
        self._table_schema = table_schema

    @cached_property
    def schema(self) -> pa.Schema:
        """The partition fields with their types in the table schema."""
        if self.by_path:
            return pa.schema([pa.field(PARTITION_PATH_FIELD, pa.string(), nullable=False)])
        table_schema = self._table_schema() if callable(self._table_schema) else self._table_schema
        out = []
        for name in self.fields:
            idx = table_schema.get_field_index(name)
            if idx < 0:
                raise HudiSchemaError(
                    f"Partition field {name!r} (hoodie.table.partition.fields) is not in the table schema"
                )
            out.append(table_schema.field(idx))
        return pa.schema(out)

    def __getstate__(self) -> dict:
        # A copy elsewhere (a Ray worker) gets the worked-out schema, not the closure over the table.
        state = self.__dict__.copy()
        state["schema"] = self.schema
        state["_table_schema"] = None
        return state

    @property
    def is_partitioned(self) -> bool:
        return bool(self.fields)

    def depth(self) -> int | None:
        """Directory depth of partitions, when fixed."""
        if not self.fields:
            return 0
        if self.by_path:
            return None
        return len(self.fields)

    def raw_values(self, partition_path: str) -> list[str | None]:
        """The string value of each partition field in ``partition_path``."""
        if self.by_path:
            return [partition_path]
        if not self.fields:
            return []
        parts = partition_path.split("/") if partition_path else []
        if len(parts) != len(self.fields):
            raise HudiSchemaError(
                f"Partition path {partition_path!r} does not have the {len(self.fields)} "
                f"levels of partition fields {self.fields}"
            )
        values: list[str | None] = []
        for name, part in zip(self.fields, parts):
            value = part
            if self.hive_style:
                key, sep, rest = part.partition("=")
                if sep and key == name:
                    value = rest
            value = unquote(value) if self.urlencoded else value
            values.append(None if value == _HIVE_DEFAULT else value)
        return values

    def values_table(self, partition_paths: Sequence[str]) -> tuple[pa.Table, pa.Array]:
        """One row per partition path with each partition field cast to its type,
        and a mask of rows where some value could not be cast.

        Uncastable values (a path this key generator did not write) become
        null; callers must never prune on such rows.
        """
        columns: dict[str, pa.Array] = {}
        raw = [self.raw_values(p) for p in partition_paths]
        unparsed = pa.array([False] * len(raw), pa.bool_())
        for i, field in enumerate(self.schema):
            strings = pa.array([r[i] for r in raw], pa.string())
            typed = _cast_strings(strings, field.type)
            columns[field.name] = typed
            failed = pc.and_(pc.is_valid(strings), pc.is_null(typed))
            unparsed = pc.or_(unparsed, failed)
        table = pa.table(columns, schema=pa.schema([f.with_nullable(True) for f in self.schema]))
        return table, unparsed

    def constants(self, partition_path: str) -> dict[str, pa.Scalar]:
        """Typed values of one partition, to fill dropped partition columns."""
        if self.by_path or not self.fields:
            return {}
        table, _ = self.values_table([partition_path])
        return {name: table.column(name)[0] for name in table.column_names}


def _cast_strings(strings: pa.Array, dtype: pa.DataType) -> pa.Array:
    if dtype == pa.string():
        return strings
    try:
        return strings.cast(dtype)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        out = []
        for s in strings.to_pylist():
            try:
                out.append(pa.scalar(s, pa.string()).cast(dtype).as_py() if s is not None else None)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                out.append(None)
        return pa.array(out, dtype)
