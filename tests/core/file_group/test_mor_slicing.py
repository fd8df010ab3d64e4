"""Merge-on-read file slicing beyond what the shared tables show: log-only file
groups, pending compactions, and the file group reader on explicit paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import hudi
import pyarrow as pa
import pytest

from hudi_ray import HudiFileGroupReader, HudiReadOptions, HudiTableBuilder
from tests.support import row_set, to_table

V9 = "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle"
UPDATE_LOG = "2024/01/16/09/.3f9cc880-1bdc-4f80-9715-78467c6404ce-0_20260403183906731.log.1_0-66-209"
RO = {"hoodie.read.use.read_optimized.mode": "true"}


@pytest.fixture
def v9_copy(table_path, tmp_path: Path) -> Path:
    dest = tmp_path / "t"
    shutil.copytree(table_path(V9), dest)
    return dest


def _keys(path: Path, **kw: object) -> list[str]:
    # Storage listing: files added behind the metadata table's back are only
    # visible there (the metadata table is authoritative when used).
    table = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()
    return sorted(to_table(table.read(HudiReadOptions(**kw))).column("txn_id").to_pylist())


def test_log_only_file_group_is_read(v9_copy: Path, table_path) -> None:
    """A file group whose only file is a log (no base file yet) still counts;
    hudi-rs skips such groups, we read them."""
    src = v9_copy / UPDATE_LOG
    new_group = "0badc0de-0000-4000-8000-000000000000-0"
    dst = src.with_name(src.name.replace("3f9cc880-1bdc-4f80-9715-78467c6404ce-0", new_group))
    shutil.copy(src, dst)
    before = _keys(table_path(V9))
    after = _keys(v9_copy)
    # The copied log holds TXN-003's update, so TXN-003 now also lives in the new group.
    assert sorted([*before, "TXN-003"]) == after
    table = HudiTableBuilder.from_base_uri(str(v9_copy)).with_hudi_option("hoodie.metadata.enable", "false").build()
    log_only = [s for s in table.get_file_slices() if not s.base_file_name]
    assert [s.file_id for s in log_only] == [new_group]
    assert log_only[0].log_file_names == [dst.name]
    # Read-optimized reads base files only: the log-only group has none.
    assert _keys(v9_copy, hudi_options=RO) == _keys(table_path(V9), hudi_options=RO)


def test_pending_compaction_base_file_is_ignored(v9_copy: Path, table_path) -> None:
    """A compaction that is only requested has written (part of) a base file;
    readers keep merging the logs onto the previous slice."""
    timeline = v9_copy / ".hoodie" / "timeline"
    (timeline / "20260403183911000.compaction.requested").write_bytes(b"")
    part = v9_copy / "2024/01/16/09"
    base = next(part.glob("3f9cc880-*.parquet"))
    shutil.copy(base, part / "3f9cc880-1bdc-4f80-9715-78467c6404ce-0_0-1-1_20260403183911000.parquet")
    expected = row_set(to_table(HudiTableBuilder.from_base_uri(str(table_path(V9))).build().read()))
    table = HudiTableBuilder.from_base_uri(str(v9_copy)).build()
    assert row_set(to_table(table.read())) == expected
    s = next(s for s in table.get_file_slices() if s.file_id.startswith("3f9cc880"))
    assert s.creation_instant_time == "20260403183858818"
    assert s.log_file_names == [Path(UPDATE_LOG).name]


def test_file_group_reader_from_paths_with_logs(table_path) -> None:
    path = str(table_path(V9))
    table = HudiTableBuilder.from_base_uri(path).build()
    rs_fgr = hudi.HudiTableBuilder.from_base_uri(path).build().create_file_group_reader_with_options()
    fgr = HudiFileGroupReader(path)
    merged = 0
    for s in table.get_file_slices():
        if not s.has_log_files():
            continue
        merged += 1
        base, logs = s.base_file_relative_path(), s.log_files_relative_paths()
        ours = fgr.read_file_slice_from_paths(base, logs)
        theirs = rs_fgr.read_file_slice_from_paths(base, logs)
        assert row_set(pa.Table.from_batches([ours])) == row_set(pa.Table.from_batches([theirs]))
        streamed = list(fgr.read_file_slice_from_paths_stream(base, logs, HudiReadOptions().with_batch_size(1)))
        assert row_set(to_table(streamed)) == row_set(pa.Table.from_batches([ours]))
        via_slice = table.create_file_group_reader_with_options().read_file_slice(s)
        assert row_set(pa.Table.from_batches([via_slice])) == row_set(pa.Table.from_batches([ours]))
        # Without the logs the base rows come back unmerged.
        base_only = fgr.read_file_slice_from_paths(base, [])
        assert row_set(pa.Table.from_batches([base_only])) != row_set(pa.Table.from_batches([ours]))
    assert merged == 2
