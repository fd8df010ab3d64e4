"""Tables of many small base files: reads that finish small slices together
(``HudiFileGroupReader.read_file_slices``, used by ``HudiTable.read``) return
exactly the per-slice reads, and errors still name the file."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray.core.exceptions import HudiCorruptFileError, HudiSchemaError
from hudi_ray.core.reading import base_runs
from hudi_ray.core.table import HudiReadOptions, HudiTable, HudiTableBuilder
from hudi_ray.core.util import group_small
from tests.support import write_numbered_table

ROWS = 60
ROWS_PER_FILE = 4  # 8 files in each of two partitions: many in every group


def _table(path: Path) -> HudiTable:
    return HudiTableBuilder.from_base_uri(str(path)).build()


def _per_slice(table: HudiTable, options: HudiReadOptions | None = None) -> list[pa.RecordBatch]:
    """What ``read`` returns, read one slice at a time."""
    reader = table.create_file_group_reader_with_options(options)
    slices = table.get_file_slices(options)
    batches = [reader.read_file_slice(s, options or HudiReadOptions()) for s in slices]
    return [b for b in batches if b.num_rows]


def _assert_same(got: list[pa.RecordBatch], expected: list[pa.RecordBatch]) -> None:
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.schema.equals(b.schema, check_metadata=True)
        assert a.equals(b)


def _small_table(tmp_path: Path) -> Path:
    return write_numbered_table(tmp_path / "t", rows=ROWS, rows_per_file=ROWS_PER_FILE, partitioned=True)


def _files(path: Path) -> list[Path]:
    return sorted(path.glob("region=*/*.parquet"))


OPTIONS = [
    None,
    HudiReadOptions(projection=["id", "name"]),
    HudiReadOptions(filters=[("value", ">=", "200")], projection=["id"]),
    HudiReadOptions(filters=[("region", "=", "eu"), ("id", "<", "30")]),
]


@pytest.mark.parametrize("options", OPTIONS, ids=["all", "projection", "filter", "partition-filter"])
def test_read_equals_per_slice_reads(tmp_path: Path, options: HudiReadOptions | None) -> None:
    path = _small_table(tmp_path)
    table = _table(path)
    assert len(table.get_file_slices()) == 2 * -(-ROWS // 2 // ROWS_PER_FILE)
    _assert_same(table.read(options), _per_slice(table, options))


@pytest.mark.parametrize("options", OPTIONS, ids=["all", "projection", "filter", "partition-filter"])
def test_coalesced_runs_hold_the_per_slice_rows(tmp_path: Path, options: HudiReadOptions | None) -> None:
    """With ``coalesce`` (a reader task's read) a run of small slices comes as
    one batch: the same rows in the same order, in the table schema."""
    table = _table(_small_table(tmp_path))
    slices = table.get_file_slices(options)
    reader = table.create_file_group_reader_with_options(options)
    got = reader.read_file_slices(slices, options, contiguous=False, coalesce=True)
    expected = _per_slice(table, options)
    assert len(got) < len(expected)
    assert all(b.schema.equals(expected[0].schema) for b in got)
    assert pa.Table.from_batches(got).equals(pa.Table.from_batches(expected).combine_chunks())


def test_runs_cut_after_a_few_files_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches a file each come from runs of at most ``RUN_FILES`` files (cut
    here inside every partition); coalesced runs are cut by rows only."""
    monkeypatch.setattr(base_runs, "RUN_FILES", 3)
    table = _table(_small_table(tmp_path))
    expected = _per_slice(table)
    _assert_same(table.read(), expected)
    reader = table.create_file_group_reader_with_options()
    got = reader.read_file_slices(table.get_file_slices(), contiguous=False, coalesce=True)
    assert len(got) < len(expected) / 3
    assert pa.Table.from_batches(got).equals(pa.Table.from_batches(expected).combine_chunks())


def test_missing_columns_read_as_nulls_file_by_file(tmp_path: Path) -> None:
    """Files lacking a nullable column (schema evolution) between files that
    have it: each reads its own rows, with NULLs only where the file lacks it."""
    path = _small_table(tmp_path)
    lacking = _files(path)[1::3]
    for f in lacking:
        pq.write_table(pq.read_table(f).drop_columns(["name"]), f)
    table = _table(path)
    got = table.read()
    _assert_same(got, _per_slice(table))
    nulls = {b.column(b.schema.get_field_index("_hoodie_file_name"))[0].as_py() for b in got if b["name"].null_count}
    assert nulls == {f.name for f in lacking}


def test_partition_columns_from_paths(tmp_path: Path) -> None:
    """A writer that dropped the partition column: each file takes its own partition's value."""
    path = _small_table(tmp_path)
    for f in _files(path):
        pq.write_table(pq.read_table(f).drop_columns(["region"]), f)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.datasource.write.drop.partition.columns=true\n")
    table = _table(path)
    got = table.read()
    _assert_same(got, _per_slice(table))
    rows = pa.Table.from_batches(got)
    assert rows.num_rows == ROWS
    for region, partition in zip(rows["region"].to_pylist(), rows["_hoodie_partition_path"].to_pylist()):
        assert partition == f"region={region}"


def test_damaged_file_among_small_ones_is_named(tmp_path: Path) -> None:
    path = _small_table(tmp_path)
    victim = _files(path)[5]
    victim.write_bytes(victim.read_bytes()[:-12])  # the footer's tail is gone
    with pytest.raises(HudiCorruptFileError, match=victim.name):
        _table(path).read()


def test_unreadable_column_type_is_named(tmp_path: Path) -> None:
    """Files whose column cannot be read as the table's type, next to each other
    in one group: the error names a file that has it, never a good one."""
    path = _small_table(tmp_path)
    bad = _files(path)[3:5]
    for f in bad:
        data = pq.read_table(f)
        index = data.schema.get_field_index("value")
        as_struct = pa.StructArray.from_arrays([data["value"].combine_chunks()], ["v"])
        pq.write_table(data.set_column(index, "value", as_struct), f)
    with pytest.raises(HudiSchemaError, match="|".join(f.name for f in bad)):
        _table(path).read()


def test_group_small_keeps_order_and_bounds() -> None:
    items = list(range(10))
    sizes = [1, 1, 1, 10, 1, 1, 1, 1, 1, 1]
    groups = group_small(items, sizes, max_bytes=3, max_items=2)
    assert [x for g in groups for x in g] == items
    assert all(len(g) <= 2 for g in groups)
    assert [3] in groups  # an item of max_bytes or more goes alone
    with pytest.raises(ValueError):
        group_small(items, sizes[:-1], 3)


def _chunked(tables: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(tables)


def _file(rows: range, row_groups: int = 1) -> pa.Table:
    data = pa.table({"id": pa.array(rows, pa.int64()), "s": pa.array([f"v{i}" for i in rows], pa.string())})
    if row_groups == 1 or not len(rows):
        return data
    step = -(-len(rows) // row_groups)
    return pa.concat_tables([data.slice(i, step) for i in range(0, len(rows), step)])


@pytest.mark.parametrize(
    "layout",
    [
        [(0, 3, 1), (3, 5, 1), (5, 9, 1)],  # a chunk per file
        [(0, 0, 1), (0, 4, 1), (4, 4, 1), (4, 6, 1)],  # files without rows between others
        [(0, 6, 3), (6, 7, 1), (7, 12, 2)],  # files of several row groups
        [(0, 0, 1)],
    ],
)
@pytest.mark.parametrize("contiguous_column", [False, True])
def test_run_rows_come_back_file_by_file(layout: list[tuple[int, int, int]], contiguous_column: bool) -> None:
    """A run of small files, concatenated and conformed together, comes back as
    a batch per file with the file's rows, whatever the run's chunks look like."""
    tables = [_file(range(a, b), groups) for a, b, groups in layout]
    data = _chunked(tables)
    if contiguous_column:
        # One column made contiguous (as a column of nulls added for the whole run is):
        # chunks no longer all end where files do.
        data = data.set_column(1, "s", data["s"].combine_chunks())
    got = base_runs.per_file_batches(data, [t.num_rows for t in tables])
    assert len(got) == len(tables)
    for batch, table in zip(got, tables):
        assert batch.schema.equals(data.schema)
        assert batch.num_rows == table.num_rows
        assert pa.Table.from_batches([batch]).equals(table.combine_chunks())


def test_run_rows_in_one_chunk_come_back_file_by_file() -> None:
    """A run whose every column is one chunk (nothing marks where files end): sliced by row counts."""
    tables = [_file(range(0, 3)), _file(range(3, 3)), _file(range(3, 8))]
    data = _chunked(tables).combine_chunks()
    got = base_runs.per_file_batches(data, [t.num_rows for t in tables])
    assert [b.num_rows for b in got] == [3, 0, 5]
    assert pa.Table.from_batches(got).equals(data)
