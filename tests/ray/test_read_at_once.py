"""``read_hudi(materialize_bytes=...)``: a read whose plan is estimated at most
that many bytes runs in reader tasks before ``read_hudi`` returns, and its
dataset is materialized from their tables: the same rows (and errors) as the
lazy read, the plan still found by ``planned_read``. Larger reads stay lazy.
Incremental runs read their (small) ranges so by default."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ray.exceptions import RayTaskError

import hudi_ray
from hudi_ray import HudiConfigError, HudiFileNotFoundError
from hudi_ray.datasource import hudi_datasource_of, planned_read
from hudi_ray.planner import get_or_create_planner, kill_planner
from tests.commits import CommitLog, incremental, keyed
from tests.support import TablePath, dataset_table, row_set

pytestmark = pytest.mark.usefixtures("ray_session")

TABLES = ["sample_table/cow/v9_txns_simple_meta", "sample_table/mor/avro/v9_txns_simple_meta"]
ALL = 1 << 40


def _materialized(ds: object) -> bool:
    return type(ds).__name__ == "MaterializedDataset"


@pytest.mark.parametrize("name", TABLES)
def test_a_small_read_is_done_at_once_with_the_rows_of_the_lazy_read(name: str, table_path: TablePath) -> None:
    path = str(table_path(name))
    lazy = hudi_ray.read_hudi(path)
    now = hudi_ray.read_hudi(path, materialize_bytes=ALL)
    assert not _materialized(lazy) and _materialized(now)
    assert hudi_datasource_of(now) is None, "no read left to run"
    expected = dataset_table(lazy)
    got = dataset_table(now)
    assert got is not None and expected is not None
    assert got.schema == expected.schema
    assert row_set(got) == row_set(expected)
    assert planned_read(now).input_files() == planned_read(lazy).input_files()
    assert now.count() == expected.num_rows


def test_a_read_larger_than_the_bound_stays_lazy(table_path: TablePath) -> None:
    path = str(table_path(TABLES[0]))
    ds = hudi_ray.read_hudi(path, materialize_bytes=1)
    assert not _materialized(ds) and hudi_datasource_of(ds) is not None
    assert not _materialized(hudi_ray.read_hudi(path, materialize_bytes=0))


@pytest.mark.parametrize("name", TABLES)
def test_columns_filters_counts_and_blocks_of_a_read_at_once(name: str, table_path: TablePath) -> None:
    path = str(table_path(name))
    args: dict = {"columns": ["txn_id", "amount"], "filters": [("amount", ">", "50")]}
    lazy = dataset_table(hudi_ray.read_hudi(path, **args))
    now = hudi_ray.read_hudi(path, materialize_bytes=ALL, **args)
    assert now.schema().names == ["txn_id", "amount"]
    got = dataset_table(now)
    assert got is not None and lazy is not None and row_set(got) == row_set(lazy)
    # No column selected: the rows still count (Ray's stub column keeps them).
    everything = hudi_ray.read_hudi(path).count()
    assert hudi_ray.read_hudi(path, columns=[], materialize_bytes=ALL).count() == everything
    # One reader task per block asked for, where there are that many slices.
    blocks = hudi_ray.read_hudi(path, override_num_blocks=2, materialize_bytes=np.int64(ALL))
    assert len(blocks.to_arrow_refs()) == min(2, planned_read(blocks).num_slices)


def test_an_empty_read_at_once_has_the_schema_and_no_rows(tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False)
    a = log.commit(range(5))
    ds = hudi_ray.read_hudi(
        str(log.path), query_type="incremental", start_timestamp=a, end_timestamp=a, materialize_bytes=ALL
    )
    assert _materialized(ds) and ds.count() == 0
    assert "id" in ds.schema().names


def test_a_reader_task_error_is_raised_as_itself(tmp_path: Path) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False)
    log.commit(range(30))
    path = str(log.path)
    planner = get_or_create_planner(path)
    try:
        planned = planned_read(hudi_ray.read_hudi(path))  # the planner keeps this plan for the unchanged timeline
        (tmp_path / "t" / planned.input_files()[0].rsplit("/", 1)[-1]).unlink()
        with pytest.raises(HudiFileNotFoundError) as err:
            hudi_ray.read_hudi(path, materialize_bytes=ALL)
        assert not isinstance(err.value, RayTaskError), "the reader's error, not Ray's wrapper of it"
    finally:
        kill_planner(planner)


@pytest.mark.parametrize("bad", [-1, True, 1.5, "1"])
def test_materialize_bytes_must_be_a_byte_count(table_path: TablePath, bad: object) -> None:
    with pytest.raises(HudiConfigError, match="materialize_bytes must be an integer >= 0"):
        hudi_ray.read_hudi(str(table_path(TABLES[0])), materialize_bytes=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_an_incremental_run_reads_a_small_range_at_once(tmp_path: Path, kind: str) -> None:
    log = CommitLog(tmp_path / "t", kind, partitioned=True)
    a = log.commit(range(30))
    b = log.commit(range(20, 50))
    checkpoint = str(tmp_path / "t.checkpoint")
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint, max_instants=1) as run:
        assert run.instants == [a] and _materialized(run.dataset)
        run.commit()
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint, materialize_bytes=0) as lazy:
        assert lazy.instants == [b] and not _materialized(lazy.dataset)
        expected = keyed(incremental(log.table(), lazy.start, lazy.end))
        got = dataset_table(lazy.dataset)
        assert got is not None and keyed(got) == expected
    with hudi_ray.incremental(str(log.path), checkpoint=checkpoint) as now:
        assert now.instants == [b] and _materialized(now.dataset)
        got = dataset_table(now.dataset)
        assert got is not None and keyed(got) == expected
        assert planned_read(now.dataset).num_slices == planned_read(lazy.dataset).num_slices
