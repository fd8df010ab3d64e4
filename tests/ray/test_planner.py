"""The planner actor (snapshots, refresh, reuse), read options of ``read_hudi``,
reader-task prefetching and errors."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hudi_ray
from hudi_ray import (
    HudiConfigError,
    HudiQueryType,
    HudiReadOptions,
    HudiTableBuilder,
    HudiTableNotFoundError,
    HudiTimestampError,
    ray_source,
)
from hudi_ray import datasource as datasource_module
from hudi_ray.core.storage import PrefetchingStorage
from hudi_ray.core.table import SlicePrefetcher
from hudi_ray.datasource import hudi_datasource
from hudi_ray.planner import HudiPlanner, call, get_or_create_planner
from hudi_ray.reader import ChunkRead, read_chunk
from hudi_testkit import upsert_cow_table
from tests.support import TablePath, api_table, dataset_table, numbered_rows, row_set, write_numbered_table

MOR = "sample_table/mor/avro/v9_txns_simple_meta"

pytestmark = pytest.mark.usefixtures("ray_session")


def test_import_does_not_import_ray() -> None:
    code = "import sys, hudi_ray; assert 'ray' not in sys.modules; hudi_ray.read_hudi; assert 'ray' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_snapshot_isolation_refresh_and_reuse(tmp_path: Path) -> None:
    path = str(write_numbered_table(tmp_path / "t", rows=40, rows_per_file=10))
    planner = get_or_create_planner(path)
    before = hudi_ray.read_hudi(path)
    first = call(planner.info.remote())["current_snapshot"]
    old_rows = api_table(path)

    changes = numbered_rows(35, 10)  # 5 updates (same values) and 5 new keys
    changes = changes.set_column(2, "name", pa.array([f"new-{i}" for i in range(35, 45)]))
    upsert_cow_table(path, changes)
    after = hudi_ray.read_hudi(path)

    # The dataset made before the commit reads the snapshot it was created at, every time.
    assert row_set(dataset_table(before)) == row_set(old_rows)
    assert row_set(dataset_table(after)) == row_set(api_table(path))
    assert dataset_table(after).num_rows == 45
    assert row_set(dataset_table(before)) == row_set(old_rows)
    # One planner served both reads (the default one is the table's named planner).
    assert get_or_create_planner(path) == planner
    info = call(planner.info.remote())
    assert info["current_snapshot"] != first
    assert first in info["snapshots"]
    assert after._logical_plan.dag.datasource.snapshot.snapshot_id == info["current_snapshot"]
    # Without new commits a refresh keeps the snapshot.
    assert call(planner.refresh.remote()).snapshot_id == info["current_snapshot"]


def test_planner_serves_chunks_stats_and_schema(table_path: TablePath) -> None:
    path = str(table_path("sample_table/cow/v9_txns_simple_meta"))
    table = HudiTableBuilder.from_base_uri(path).build()
    planner = get_or_create_planner(path)
    planned = call(planner.plan.remote(HudiReadOptions(), 2))
    expected = table.get_file_slices()
    assert len(planned.chunks) == 2
    assert [s.file_id for s in planned.slices()] == [s.file_id for s in expected]
    assert [len(c) for c in planned.rechunk(10).chunks] == [1] * len(expected)
    rows = [st.num_rows for chunk in planned.stats for st in chunk]
    assert sum(rows) == sum(b.num_rows for b in table.read())
    assert call(planner.get_schema.remote()) == table.get_schema()
    assert call(planner.compute_table_stats.remote()) == table.compute_table_stats()
    pruned = call(planner.plan.remote(HudiReadOptions(filters=[("region", "=", "us")]), 4))
    assert pruned.num_slices < planned.num_slices
    assert all(st.num_rows is None for chunk in pruned.stats for st in chunk)  # filtered: unknown until read


def test_planner_works_without_ray(table_path: TablePath) -> None:
    path = str(table_path(MOR))
    planner = HudiPlanner(path)
    planned = asyncio.run(planner.plan(HudiReadOptions(projection=["txn_id"]), 3))
    tables = [t for chunk in planned.chunks for t in read_chunk(ChunkRead(plan=planned.plan, slices=chunk))]
    assert row_set(pa.concat_tables(tables)) == row_set(api_table(path, HudiReadOptions(projection=["txn_id"])))


def test_repeated_plans_of_a_snapshot_are_served_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived planner plans a snapshot once per distinct options; a
    commit makes a new snapshot, planned anew."""
    path = str(write_numbered_table(tmp_path / "t", rows=40, rows_per_file=10))
    planner = HudiPlanner(path)
    made: list[object] = []
    original = HudiPlanner._plan_sync

    def counting(self: HudiPlanner, *args: object) -> object:
        made.append(args[3])  # the options
        return original(self, *args)

    monkeypatch.setattr(HudiPlanner, "_plan_sync", counting)
    first = asyncio.run(planner.plan(HudiReadOptions(filters=[("id", "<", "15")]), 2))
    again = asyncio.run(planner.plan(HudiReadOptions(filters=[("id", "<", "15")]), 2))
    assert len(made) == 1 and again is first
    # Other options, or another number of chunks, are other plans.
    other = asyncio.run(planner.plan(HudiReadOptions(filters=[("id", "<", "25")]), 2))
    asyncio.run(planner.plan(HudiReadOptions(filters=[("id", "<", "15")]), 3))
    assert len(made) == 3 and other.num_slices > first.num_slices
    upsert_cow_table(path, numbered_rows(35, 10))
    after = asyncio.run(planner.plan(HudiReadOptions(filters=[("id", "<", "15")]), 2))
    assert len(made) == 4 and after.snapshot.snapshot_id != first.snapshot.snapshot_id
    rows = [t for chunk in after.chunks for t in read_chunk(ChunkRead(plan=after.plan, slices=chunk))]
    assert sorted(pa.concat_tables(rows)["id"].to_pylist()) == [i for i in range(45) if i < 15]


def test_incremental_time_travel_and_legacy_keys(tmp_path: Path) -> None:
    path = str(write_numbered_table(tmp_path / "t", rows=30, rows_per_file=10))
    first = HudiTableBuilder.from_base_uri(path).build().get_timeline().data_instants[0].timestamp
    upsert_cow_table(path, numbered_rows(25, 10))
    incremental = HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp(first)
    expected = api_table(path, incremental)
    assert sorted(expected["id"].to_pylist()) == list(range(25, 35))
    got = hudi_ray.read_hudi(path, query_type="incremental", start_timestamp=first)
    assert row_set(dataset_table(got)) == row_set(expected)
    legacy = hudi_ray.read_hudi(
        path, query_type="incremental", hudi_options={"hoodie.read.file_group.start_timestamp": first}
    )
    assert row_set(dataset_table(legacy)) == row_set(expected)
    as_of = hudi_ray.read_hudi(path, as_of_timestamp=first, columns=["id", "name"], batch_size=7)
    expected = api_table(path, HudiReadOptions(projection=["id", "name"]).with_as_of_timestamp(first))
    assert expected.num_rows == 30
    assert row_set(dataset_table(as_of)) == row_set(expected)


def test_prefetching_reads_the_same_rows(table_path: TablePath) -> None:
    path = str(table_path(MOR))
    expected = api_table(path)
    got = hudi_ray.read_hudi(path, prefetch=True, prefetch_depth=2, override_num_blocks=2)
    assert row_set(dataset_table(got)) == row_set(expected)
    narrow = hudi_ray.read_hudi(path, prefetch=True, columns=["txn_id", "region"], filters=[("region", "=", "us")])
    assert row_set(dataset_table(narrow)) == row_set(
        expected.filter(pc.field("region") == "us").select(["txn_id", "region"])
    )


def test_prefetch_fetches_only_what_the_read_decodes(table_path: TablePath) -> None:
    path = str(table_path(MOR))
    table = HudiTableBuilder.from_base_uri(path).build()
    plan = table.plan(HudiReadOptions(projection=["txn_id", "amount"]))
    storage = PrefetchingStorage(plan.context.storage)
    reader = plan.slice_reader(storage)
    prefetcher = SlicePrefetcher(storage, reader)
    batches = []
    for s in plan.slices:
        fetched = prefetcher.fetch([s]).result()
        prefetcher.install(fetched)
        batches.append(plan.read_slice(reader, s))
        prefetcher.discard(fetched)
    assert storage.fallback_reads == 0
    assert storage.prefetched_bytes > 0
    assert row_set(pa.Table.from_batches(batches)) == row_set(
        api_table(path, HudiReadOptions(projection=["txn_id", "amount"]))
    )


def test_errors_name_what_and_where(tmp_path: Path) -> None:
    with pytest.raises(HudiTableNotFoundError, match="Not a Hudi table"):
        hudi_ray.read_hudi(str(tmp_path / "missing"))
    path = str(write_numbered_table(tmp_path / "t", rows=10, rows_per_file=10))
    with pytest.raises(HudiConfigError):
        hudi_ray.read_hudi(path, query_type="streaming")
    with pytest.raises(HudiConfigError, match="as_of_timestamp"):
        hudi_ray.read_hudi(path, query_type="incremental", as_of_timestamp="20240101000000000")
    with pytest.raises(HudiTimestampError):
        hudi_ray.read_hudi(path, as_of_timestamp="not a time").count()
    with pytest.raises(hudi_ray.HudiSchemaError, match="nope"):
        hudi_ray.read_hudi(path, columns=["id", "nope"]).take_all()


def test_reads_get_a_task_per_min_task_bytes_of_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_numbered_table(tmp_path / "t", rows=600, rows_per_file=10)
    source = hudi_datasource(str(path))
    total = source.estimate_inmemory_data_size()
    assert total
    # A third of the data per task (rounded up): three tasks, however many Ray asks for.
    tunables = dataclasses.replace(datasource_module.RAY_TUNABLES, min_task_bytes=-(-total // 3))
    monkeypatch.setattr(datasource_module, "RAY_TUNABLES", tunables)
    monkeypatch.setattr(ray_source, "RAY_TUNABLES", tunables)
    tasks = source.get_read_tasks(40)
    assert len(tasks) == 3
    assert sum(t.num_rows for task in tasks for t in task()) == 600
    assert hudi_ray.read_hudi(str(path)).materialize().num_blocks() == 3


def test_small_reads_get_fewer_tasks_unless_the_caller_fixes_them(tmp_path: Path) -> None:
    # 60 slices of 10 rows: Ray's default parallelism would give each task a
    # few slices; the read is far below RayTunables.min_task_bytes in total.
    path = write_numbered_table(tmp_path / "t", rows=600, rows_per_file=10)
    source = hudi_datasource(str(path))
    slices = source.planned().num_slices
    assert slices == 60
    tasks = source.get_read_tasks(40)
    assert len(tasks) == 1
    fixed = hudi_datasource(str(path), blocks_fixed=True).get_read_tasks(40)
    assert len(fixed) == 40
    # Both read every row once.
    for read in (tasks, fixed):
        assert sum(t.num_rows for task in read for t in task()) == 600
    ds = hudi_ray.read_hudi(str(path), override_num_blocks=7)
    assert ds.materialize().num_blocks() == 7
    # Left to itself, the read is one task, and Ray does not split its output
    # to reach its own default parallelism.
    ds = hudi_ray.read_hudi(str(path)).materialize()
    assert ds.num_blocks() == 1
    assert ds.count() == 600


def test_a_jobs_first_read_has_its_workers_load_the_reader(
    table_path: TablePath, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the planner starts, workers load the reader (``prepare_reader``): once per job,
    and the read is the same."""
    import ray

    job = ray.get_runtime_context().get_job_id()
    monkeypatch.setattr(datasource_module, "_WARMED_JOBS", set())
    started: list[dict] = []
    real_remote = ray.remote

    def counting_remote(*args, **kwargs):  # type: ignore[no-untyped-def]
        remote = real_remote(*args, **kwargs)
        if not args or getattr(args[0], "__name__", "") != "prepare_reader":
            return remote

        class Counted:
            def options(self, **options):  # type: ignore[no-untyped-def]
                started.append(options)
                return remote.options(**options)

        return Counted()

    monkeypatch.setattr(ray, "remote", counting_remote)
    path = str(table_path(MOR))
    first = dataset_table(hudi_ray.read_hudi(path))
    assert len(started) == 1 and started[0]["num_cpus"] == 1, started
    assert job in datasource_module._WARMED_JOBS
    second = dataset_table(hudi_ray.read_hudi(path))
    assert len(started) == 1, "a job's later reads start no more"
    assert row_set(first) == row_set(second) == row_set(api_table(path))


def test_prepare_reader_loads_the_reader_and_its_kernels() -> None:
    code = (
        "import sys; from hudi_ray.core.reading import prepare_reader; prepare_reader(); "
        "assert {'pyarrow.parquet', 'hudi_ray.core.log_file.avro_kernels', 'hudi_ray.core.merge.key_kernels'}"
        " <= set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
