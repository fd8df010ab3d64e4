"""Bring Arrow data read from files to the table's Arrow schema."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from hudi_ray.core.exceptions import HudiSchemaError
from hudi_ray.core.schema.avro import META_FIELDS


def meta_fields_schema() -> pa.Schema:
    return pa.schema([pa.field(n, pa.string(), nullable=False) for n in META_FIELDS])


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
    if table.schema.equals(target):
        return table
    names = table.schema.names
    n = table.num_rows
    arrays = []
    for f in target:
        if f.name in names:
            col = table.column(f.name)
            if not col.type.equals(f.type):
                try:
                    col = col.cast(f.type)
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
