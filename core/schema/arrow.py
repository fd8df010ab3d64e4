"""Bring Arrow data read from files to the table's Arrow schema."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING

from hudi_ray.core.exceptions import HudiSchemaError
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.schema.avro import META_FIELDS
from hudi_ray.core.util.arrow_pool import reader_pool

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")


def meta_fields_schema() -> pa.Schema:
    return pa.schema([pa.field(n, pa.string(), nullable=False) for n in META_FIELDS])


def one_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``values`` as one contiguous array; a lone chunk is taken as it is
    (``ChunkedArray.combine_chunks`` copies even that)."""
    if isinstance(values, pa.ChunkedArray):
        return values.chunk(0) if values.num_chunks == 1 else values.combine_chunks(memory_pool=reader_pool())
    return values


@functools.lru_cache(maxsize=64)
def encoded_target(target: pa.Schema, source: pa.Schema, plain: frozenset[str]) -> pa.Schema:
    """``target`` with the columns that ``source`` holds as dictionaries of
    their target type (other than ``plain``) left as those dictionaries, for
    data conformed once before and once after dropping rows. Cached: equal
    arguments give the same schema object, which ``conform_table`` recognises
    cheaply."""
    fields = []
    for f in target:
        i = source.get_field_index(f.name)
        t = source.field(i).type if i >= 0 else None
        if f.name not in plain and t is not None and pa.types.is_dictionary(t) and t.value_type.equals(f.type):
            f = f.with_type(t)
        fields.append(f)
    return pa.schema(fields, metadata=target.metadata)


def conform_table(
    table: pa.Table | pa.RecordBatch,
    target: pa.Schema,
    constants: Mapping[str, pa.Scalar] | None = None,
    where: str = "",
) -> pa.Table | pa.RecordBatch:
    """Reorder, cast and complete ``table`` so its schema equals ``target``.

    Columns missing from the file take a constant (partition values when the
    writer dropped partition columns) or nulls (columns added by schema
    evolution). Nested field names are normalized by the cast (parquet-avro's
    ``array`` list items become ``element``).
    """
    source = table.schema
    if source.equals(target):
        return table
    if _differs_in_nullability_only(source, target):
        # The common case of every file (meta fields are nullable in files,
        # not in the table schema): the columns are taken as they are.
        if isinstance(table, pa.RecordBatch):
            return pa.RecordBatch.from_arrays(table.columns, schema=target)
        # Field by field, not ``Table.from_arrays``: that validates every chunk,
        # and a run of small files has thousands.
        for i, f in enumerate(target):
            table = table.set_column(i, f, table.column(i))
        return table.replace_schema_metadata(target.metadata)
    names = source.names
    n = table.num_rows
    arrays = []
    for f in target:
        if f.name in names:
            col = table.column(f.name)
            if not col.type.equals(f.type):
                try:
                    col = pc.cast(col, f.type, memory_pool=reader_pool())
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise HudiSchemaError(
                        f"Column {f.name} in {where or 'file'} has type {col.type}, "
                        f"cannot read it as the table's {f.type}: {exc}"
                    ) from exc
        elif constants and f.name in constants:
            col = pa.repeat(constants[f.name].cast(f.type), n)
        else:
            col = pa.nulls(n, f.type)
        arrays.append(col)
    if isinstance(table, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(arrays, schema=target)
    return pa.Table.from_arrays(arrays, schema=target)


# (source, target) schema pairs known to differ in nullability or field
# metadata only, most recent first: the files of one read share one or a few
# schemas, and comparing with a known one is far cheaper than field by field.
_NULLABILITY_ONLY: list[tuple[pa.Schema, pa.Schema]] = []
_NULLABILITY_ONLY_SIZE = 16


def _differs_in_nullability_only(source: pa.Schema, target: pa.Schema) -> bool:
    for known_source, known_target in list(_NULLABILITY_ONLY):
        if known_target is target and known_source.equals(source):
            return True
    if source.names != target.names or not all(a.type.equals(b.type) for a, b in zip(source, target)):
        return False
    # Races only add a duplicate pair.
    _NULLABILITY_ONLY.insert(0, (source, target))
    del _NULLABILITY_ONLY[_NULLABILITY_ONLY_SIZE:]
    return True


def _one_char_apart(a: str, b: str) -> bool:
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


def check_missing_columns(
    target: pa.Schema,
    present: Collection[str],
    where: str,
    *,
    required: Callable[[str], str | None],
    unknown: Callable[[], Iterable[str]] | None = None,
    filled: Collection[str] = (),
) -> None:
    """Fail when a column the file must hold is absent from it.

    ``conform_table`` reads a missing column as nulls, which is right for a
    column schema evolution added after the file was written. ``required``
    gives the reason a column may not be missing (None when it may). A
    required column next to a file column the table does not know, one
    character apart, is reported as a damaged name. ``unknown`` (the file's
    columns the table schema lacks) is only called when a required column is
    missing; ``filled`` are the columns taken from constants.
    """
    missing = [
        (f.name, reason)
        for f in target
        if f.name not in present and f.name not in filled and (reason := required(f.name)) is not None
    ]
    if not missing:
        return
    strangers = list(unknown()) if unknown is not None else []
    for name, _ in missing:
        near = [c for c in strangers if _one_char_apart(c, name)]
        if near:
            raise HudiSchemaError(
                f"Required column {name!r} is missing from {where}, which has a column {near[0]!r} the table "
                "schema does not know: the column name is damaged"
            )
    name, reason = missing[0]
    raise HudiSchemaError(f"Required column {name!r} ({reason}) is missing from {where}")
