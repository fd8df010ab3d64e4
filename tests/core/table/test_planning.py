"""Planning: scans never touch the slices they hand out, pruners report to an
explain that is always there, per-read tunables are checked, estimates and
chunking, and the shared I/O pool."""

from __future__ import annotations

import copy
import dataclasses
import threading

import pytest

from hudi_ray.core import HudiConfigError, HudiReadOptions, HudiTableBuilder
from hudi_ray.core.config import HudiReadConfig as R
from hudi_ray.core.planning.explain import NoExplain, PlanExplain
from hudi_ray.core.util import split_balanced, split_into_chunks
from hudi_ray.core.util.pools import io_map
from tests.support import row_set, to_table

MOR = "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle"
COW_MDT = "sample_table/cow/v9_txns_simple_meta"
RO = {R.USE_READ_OPTIMIZED_MODE.value: "true"}


def _table(table_path, name: str):
    return HudiTableBuilder.from_base_uri(str(table_path(name))).build()


def test_read_optimized_planning_copies_slices(table_path) -> None:
    table = _table(table_path, MOR)
    snapshot = table.get_file_slices()
    assert any(s.log_file_names for s in snapshot), "the table needs slices with logs for this test"
    before = copy.deepcopy(snapshot)
    ro = table.get_file_slices(HudiReadOptions(hudi_options=RO))
    assert ro and all(not s.log_file_names and not s.log_file_sizes for s in ro)
    # The view's slices, and those handed out before, keep their logs.
    assert snapshot == before
    assert table.get_file_slices() == before


def test_footer_pruning_copies_slices(table_path) -> None:
    # v6: no metadata table, so data filters prune by Parquet footers.
    table = _table(table_path, "sample_table/cow/v6_simplekeygen_nonhivestyle")
    everything = table.get_file_slices()
    before = copy.deepcopy(everything)
    explain = table.explain(HudiReadOptions(filters=[("id", "=", "1")]))
    assert explain.stage("footer stats") is not None
    table.get_file_slices(HudiReadOptions(filters=[("id", "=", "1")]))
    assert everything == before


def test_no_explain_keeps_nothing() -> None:
    quiet = NoExplain()
    quiet.add("listed", 3, 4)
    quiet.note("anything")
    quiet.listed_from("metadata table")
    assert quiet.stages == [] and quiet.notes == [] and quiet.listing == "storage"
    loud = PlanExplain(query_type="snapshot")
    loud.add("listed", 3)
    loud.note("n")
    loud.listed_from("metadata table")
    assert [s.name for s in loud.stages] == ["listed"] and loud.notes == ["n"] and loud.listing == "metadata table"


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        (R.FILE_SLICE_READ_CONCURRENCY.value, "0", "must be > 0"),
        (R.FILE_SLICE_READ_CONCURRENCY.value, "many", "not an integer"),
        (R.INPUT_PARTITIONS.value, "-1", "must be >= 0"),
        (R.FILE_GROUP_READER_VERSION.value, "3", r"must be one of \['1', '2'\]"),
        (R.MERGE_USE_RECORD_POSITIONS.value, "yes", "must be one of"),
        (R.SCAN_MAX_MEMORY_SIZE.value, "big", "not an integer"),
    ],
)
def test_bad_read_tunables_name_the_key(table_path, key: str, value: str, match: str) -> None:
    table = _table(table_path, COW_MDT)
    with pytest.raises(HudiConfigError, match=match) as err:
        table.read(HudiReadOptions(hudi_options={key: value}))
    assert key in str(err.value)


def test_read_tunables_never_change_rows(table_path) -> None:
    table = _table(table_path, MOR)
    expected = row_set(to_table(table.read()))
    for opts in (
        {R.FILE_SLICE_READ_CONCURRENCY.value: "1"},
        {R.FILE_SLICE_READ_CONCURRENCY.value: "16"},
        {R.INPUT_PARTITIONS.value: "3"},
        {R.FILE_GROUP_READER_VERSION.value: "1", R.MERGE_USE_RECORD_POSITIONS.value: "true"},
        {R.SCAN_MAX_MEMORY_SIZE.value: "1024"},
    ):
        assert row_set(to_table(table.read(HudiReadOptions(hudi_options=opts)))) == expected, opts
        streamed = list(table.read_stream(HudiReadOptions(hudi_options=opts)))
        assert row_set(to_table(streamed)) == expected, opts


def test_estimates_follow_the_plan(table_path) -> None:
    table = _table(table_path, COW_MDT)
    plan = table.plan()
    estimates = plan.estimate()
    assert len(estimates) == len(plan.slices)
    # An unfiltered snapshot of base files only: row counts are exact.
    assert sum(e.num_rows or 0 for e in estimates) == sum(b.num_rows for b in table.read())
    assert all(e.size_bytes > 0 for e in estimates)
    narrow = table.plan(HudiReadOptions(projection=["txn_id"])).estimate()
    assert sum(e.size_bytes for e in narrow) < sum(e.size_bytes for e in estimates)
    filtered = table.plan(HudiReadOptions(filters=[("amount", ">", "0")])).estimate()
    assert all(e.num_rows is None for e in filtered)


def test_mor_estimates_count_logs(table_path) -> None:
    plan = _table(table_path, MOR).plan()
    with_logs = [(s, e) for s, e in zip(plan.slices, plan.estimate()) if s.log_file_names]
    assert with_logs
    bases_only = plan.estimate([dataclasses.replace(s, log_file_names=[], log_file_sizes=[]) for s, _ in with_logs])
    for (_, e), base in zip(with_logs, bases_only):
        assert e.num_rows is None  # merging may change the count
        assert e.size_bytes > base.size_bytes  # the logs' bytes are counted too


def test_split_balanced() -> None:
    items = list("abcdef")
    assert split_balanced(items, [10, 1, 1, 1, 1, 10], 3) == [["a"], ["b", "c", "d", "e"], ["f"]]
    assert split_balanced(items, [1] * 6, 3) == [["a", "b"], ["c", "d"], ["e", "f"]]
    assert split_balanced(items, [0] * 6, 4) == split_into_chunks(items, 4)
    assert split_balanced(["a", "b"], [5, 5], 8) == [["a"], ["b"]]
    assert split_balanced([], [], 3) == []
    for n in range(1, 9):
        chunks = split_balanced(items, [3, 1, 4, 1, 5, 9], n)
        assert [x for c in chunks for x in c] == items and 0 < len(chunks) <= n and all(chunks)
    with pytest.raises(ValueError, match="6 items but 2 sizes"):
        split_balanced(items, [1, 2], 2)


def test_io_map_keeps_order_bounds_width_and_runs_nested_calls_inline() -> None:
    assert io_map(lambda x: x * 2, range(50)) == [x * 2 for x in range(50)]
    running = 0
    peak = 0
    lock = threading.Lock()
    gate = threading.Event()

    def slow(x: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        gate.wait(0.01)
        with lock:
            running -= 1
        return x

    assert io_map(slow, range(20), limit=3) == list(range(20))
    assert 1 <= peak <= 3
    # A fan-out inside pool work runs on its own thread: no deadlock however deep.
    assert io_map(lambda x: sum(io_map(lambda y: y, range(x))), range(40)) == [sum(range(x)) for x in range(40)]
    with pytest.raises(ZeroDivisionError):
        io_map(lambda x: 1 // x, [1, 0, 2])


def test_io_map_starts_the_next_item_when_any_finishes() -> None:
    # The first item waits for the last one: a window freed only by its
    # oldest item would hold the last one back until the first timed out.
    last = 11
    reached = threading.Event()

    def item(x: int) -> bool:
        if x == last:
            reached.set()
        return reached.wait(10) if x == 0 else True

    assert io_map(item, range(12), limit=2) == [True] * 12


def test_io_map_starts_nothing_after_a_failure() -> None:
    started: list[int] = []

    def item(x: int) -> int:
        started.append(x)
        if x == 0:
            raise ZeroDivisionError
        threading.Event().wait(0.02)
        return x

    with pytest.raises(ZeroDivisionError):
        io_map(item, range(20), limit=2)
    assert len(started) < 20
