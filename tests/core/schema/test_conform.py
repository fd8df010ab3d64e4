"""conform_table: a file's columns in the table's schema."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_ray.core.exceptions import HudiSchemaError
from hudi_ray.core.schema import conform_table

TARGET = pa.schema(
    [pa.field("key", pa.string(), nullable=False), pa.field("v", pa.int64())], metadata={b"table": b"schema"}
)


def _file(rows: range) -> pa.Table:
    schema = pa.schema([pa.field("key", pa.string()), pa.field("v", pa.int64())], metadata={b"file": b"own"})
    return pa.table({"key": [f"k{i}" for i in rows], "v": list(rows)}, schema=schema)


def test_nullability_only_keeps_every_chunk_and_takes_the_table_schema() -> None:
    """A run of files differing from the table only in nullability: its
    chunks are kept as they are and the result carries the table's schema,
    metadata included."""
    run = pa.concat_tables([_file(range(i, i + 3)) for i in range(0, 30, 3)])
    got = conform_table(run, TARGET)
    assert got.schema.equals(TARGET, check_metadata=True)
    assert got.column(0).num_chunks == run.column(0).num_chunks == 10
    assert got.to_pydict() == run.to_pydict()
    # The same relabelling for a record batch.
    batch = conform_table(run.to_batches()[0], TARGET)
    assert batch.schema.equals(TARGET, check_metadata=True) and batch.num_rows == 3


def test_other_differences_still_cast_or_fail() -> None:
    wider = pa.table({"v": pa.array([1, 2], pa.int32()), "key": ["a", "b"]})
    got = conform_table(wider, TARGET)
    assert got.schema.equals(TARGET) and got.column("v").type == pa.int64() and got["key"].to_pylist() == ["a", "b"]
    bad = pa.table({"key": ["a"], "v": pa.array([{"x": 1}])})
    with pytest.raises(HudiSchemaError, match="Column v in somewhere"):
        conform_table(bad, TARGET, where="somewhere")
