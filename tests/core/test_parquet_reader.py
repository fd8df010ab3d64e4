"""ParquetReader reads repeated text columns as dictionaries and hands back the file's own types."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_ray.core.base_file import ParquetReader
from hudi_ray.core.base_file.parquet import _dictionary_columns
from hudi_ray.core.storage import Storage

ROWS = 300_000


def _write(path: Path, *, row_group_size: int = 100_000) -> pa.Table:
    """Columns of every shape the choice tells apart, as a Java writer stores them (no Arrow schema)."""
    n = pa.array(range(ROWS), pa.int64())
    commit = pa.array(["20260101000000000"] * ROWS, pa.string())
    # A repeated value with nulls in between, and one declared not null.
    partition = pa.array([None if i % 7 == 0 else f"p={i % 3}" for i in range(ROWS)], pa.string())
    blob = pa.array([b"\x00\x01" if i % 2 else b"\xff" for i in range(ROWS)], pa.binary())
    key = pc.cast(n, pa.string())  # all distinct: the writer's dictionary overflows to plain pages
    table = pa.table(
        {
            "commit": commit,
            "partition": partition,
            "blob": blob,
            "key": key,
            "n": n,
        }
    )
    schema = table.schema.set(0, pa.field("commit", pa.string(), nullable=False))
    table = table.cast(schema)
    pq.write_table(table, path, row_group_size=row_group_size, store_schema=False)
    return table


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    root = tmp_path_factory.mktemp("parquet_reader")
    return root, _write(root / "f.parquet")


def test_only_small_dictionaries_are_chosen(written: tuple[Path, pa.Table]) -> None:
    root, _ = written
    assert _dictionary_columns(pq.ParquetFile(root / "f.parquet")) == ["commit", "partition", "blob"]


def test_small_file_is_not_reopened(tmp_path: Path) -> None:
    pq.write_table(pa.table({"s": ["x"] * 100}), tmp_path / "small.parquet", store_schema=False)
    assert _dictionary_columns(pq.ParquetFile(tmp_path / "small.parquet")) == []


def test_every_read_path_returns_the_files_types(written: tuple[Path, pa.Table]) -> None:
    root, expected = written
    reader = ParquetReader(Storage(str(root), {}))
    plain = pq.read_table(root / "f.parquet")
    assert plain.schema == reader.schema("f.parquet")

    whole = reader.read("f.parquet")
    assert whole.schema.equals(plain.schema, check_metadata=True)
    assert whole.equals(plain)
    assert not whole.schema.field("commit").nullable

    groups = list(reader.iter_row_groups("f.parquet", None))
    assert len(groups) == 3
    assert pa.concat_tables(groups).equals(plain)

    batches = list(reader.iter_batches("f.parquet", ["n", "partition"], 70_000))
    assert all(b.schema.equals(plain.select(["n", "partition"]).schema, check_metadata=True) for b in batches)
    assert pa.Table.from_batches(batches).equals(plain.select(["n", "partition"]))
    assert pa.Table.from_batches(batches).column("partition").null_count == expected.column("partition").null_count

    projected = reader.read("f.parquet", ["blob", "key"])
    assert projected.equals(plain.select(["blob", "key"]))


def test_a_stored_dictionary_type_stays_a_dictionary(tmp_path: Path) -> None:
    """A file whose own Arrow schema says dictionary keeps it: only columns the reader chose are expanded."""
    data = pa.table({"d": pa.array(["a", "b"] * 600_000).dictionary_encode(), "s": ["x", "y"] * 600_000})
    pq.write_table(data, tmp_path / "d.parquet")
    read = ParquetReader(Storage(str(tmp_path), {})).read("d.parquet")
    assert read.schema.field("d").type == pa.dictionary(pa.int32(), pa.string())
    assert read.schema.field("s").type == pa.string()
    assert read.equals(pq.read_table(tmp_path / "d.parquet"))
