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


def _bare(path: Path) -> pq.ParquetReader:
    reader = pq.ParquetReader()
    reader.open(str(path))
    return reader


def test_only_small_dictionaries_are_chosen(written: tuple[Path, pa.Table]) -> None:
    root, _ = written
    assert _dictionary_columns(_bare(root / "f.parquet")) == ["commit", "partition", "blob"]


def test_small_file_is_not_reopened(tmp_path: Path) -> None:
    pq.write_table(pa.table({"s": ["x"] * 100}), tmp_path / "small.parquet", store_schema=False)
    assert _dictionary_columns(_bare(tmp_path / "small.parquet")) == []


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


# -- small files read inline, large ones through the leaf mapping ---------------------------------


def _write_small(path: Path) -> pa.Table:
    """A small file of flat columns around a struct, a list and a column whose name holds a dot."""
    table = pa.table(
        {
            "a": pa.array([1, 2, None], pa.int64()),
            "s": pa.array([{"x": 1, "y": "p"}, None, {"x": 3, "y": None}]),
            "b": pa.array(["u", None, "w"], pa.string()),
            "l": pa.array([[1], [], None], pa.list_(pa.int32())),
            "c.d": pa.array([1.5, 2.5, None], pa.float64()),
            "e": pa.array([True, False, None]),
            "u": pa.array([b"\x01" * 16, None, b"\x02" * 16], pa.uuid()),  # read as an extension type
        }
    )
    pq.write_table(table, path, row_group_size=2, store_schema=False)  # as Java writers: no Arrow schema
    return table


SMALL_COLUMNS = [
    None,
    ["a", "s", "b", "l", "c.d", "e", "u"],  # every column in the file's order
    ["e", "u", "a"],  # reordered flat leaves after nested columns
    ["b", "missing", "a"],  # a name the file lacks is left out
    ["a", "s"],  # a struct
    ["l", "e"],  # a list
    ["c.d"],  # a dotted name is no leaf path
    ["a", "a"],
]


@pytest.mark.parametrize("columns", SMALL_COLUMNS)
def test_small_file_reads_as_parquet_file_does(tmp_path: Path, columns: list[str] | None) -> None:
    _write_small(tmp_path / "f.parquet")
    pf = pq.ParquetFile(tmp_path / "f.parquet")
    present = None if columns is None else [c for c in columns if c in pf.schema_arrow.names]
    expected = pf.read(columns=present)
    got = ParquetReader(Storage(str(tmp_path), {})).read("f.parquet", columns)
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.equals(expected)


def _counting_opens(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The footer each ``ParquetReader._opened`` is given, as the test reads files."""
    opened: list[object] = []
    original = ParquetReader._opened

    def counting(self: ParquetReader, rel: str, metadata: object = None, **kwargs: bool):  # type: ignore[no-untyped-def]
        opened.append(metadata)
        return original(self, rel, metadata, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ParquetReader, "_opened", counting)
    return opened


@pytest.mark.parametrize("columns", [None, ["e", "u", "a"], ["b", "missing", "a"]])
def test_small_file_of_flat_columns_is_read_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: list[str] | None
) -> None:
    """Top-level leaves of a small file are read at once: the generator context
    and leaf mapping of ``_opened`` cost a third of such a file's read."""
    expected = _write_small(tmp_path / "f.parquet")
    opened = _counting_opens(monkeypatch)
    reader = ParquetReader(Storage(str(tmp_path), {}))
    got = reader.read("f.parquet", columns)
    wanted = expected.column_names if columns is None else [c for c in columns if c in expected.column_names]
    assert got.equals(expected.select(wanted))
    assert opened == []
    reader.read("f.parquet", ["s"])  # nested: several leaves, mapped by ``_opened``'s reader
    assert len(opened) == 1


def test_large_file_is_opened_with_the_parsed_footer(
    written: tuple[Path, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = written
    opened = _counting_opens(monkeypatch)
    got = ParquetReader(Storage(str(root), {})).read("f.parquet", ["n", "key"])
    assert got.equals(pq.read_table(root / "f.parquet", columns=["n", "key"]))
    # Opened once more, with the footer the inline reader already parsed.
    assert len(opened) == 1 and all(md is not None for md in opened)


@pytest.mark.parametrize("columns", SMALL_COLUMNS)
def test_large_file_reads_as_parquet_file_does(tmp_path: Path, columns: list[str] | None) -> None:
    """The leaf mapping of a file read on several threads resolves names as
    ``ParquetFile`` does: structs and lists whole, dotted names as names."""
    small = _write_small(tmp_path / "small.parquet")
    pq.write_table(pa.concat_tables([small] * 70_000), tmp_path / "f.parquet", store_schema=False)
    pf = pq.ParquetFile(tmp_path / "f.parquet")
    present = None if columns is None else [c for c in columns if c in pf.schema_arrow.names]
    expected = pf.read(columns=present)
    reader = ParquetReader(Storage(str(tmp_path), {}))
    got = reader.read("f.parquet", columns)
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.equals(expected)
    streamed = pa.Table.from_batches(list(reader.iter_batches("f.parquet", columns, 50_000)))
    assert streamed.equals(expected)
    assert pa.concat_tables(reader.iter_row_groups("f.parquet", columns)).equals(expected)
