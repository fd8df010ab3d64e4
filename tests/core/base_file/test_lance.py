"""Tables whose base files are Lance files read like hudi-rs reads them:
snapshot, time travel at every completed instant, incremental between
consecutive completion times, filters and projections, streaming and file
slices; plus the errors of a missing pylance, an unknown base file format and
a damaged Lance file, and Lance's footer used for estimates but not pruning."""

from __future__ import annotations

import itertools
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import hudi_ray
from hudi_ray import HudiCorruptFileError, HudiFileGroupReader, HudiReadOptions, HudiUnsupportedError
from hudi_ray.core.base_file import FooterCache, LanceReader, base_file_reader, is_parquet
from hudi_ray.core.expr import from_str_tuples
from hudi_ray.core.planning.explain import PlanExplain
from hudi_ray.core.planning.file_pruning import FooterStatsPruner
from hudi_ray.core.storage import Storage
from tests.support import (
    TablePath,
    all_table_names,
    assert_same_as_hudi_rs,
    incremental_opts,
    ours_options,
    row_set,
    rs_options,
    snapshot_opts,
    table_pair,
    to_table,
    upload,
)

# Rows of the latest snapshot, as hudi-rs reads them.
SNAPSHOT_ROWS = {
    "quickstart_trips_table/cow/v9_trips_lance": 11,
    "quickstart_trips_table/mor/avro/v9_trips_lance": 12,
    "sample_table/cow/v9_lance_nonpartitioned": 9,
    "sample_table/cow/v9_lance_txns_nonpart": 14,
    "sample_table/cow/v9_lance_txns_simple": 14,
    "sample_table/mor/avro/v9_lance_nonhivestyle": 14,
}
TABLES = sorted(SNAPSHOT_ROWS)
COW_TABLES = [n for n in TABLES if "/cow/" in n]

FILTERS: dict[str, list[list[tuple[str, str, str]]]] = {
    "quickstart_trips_table/cow/v9_trips_lance": [
        [("city", "=", "chennai")],
        [("fare", ">", "40")],
        [("city", "!=", "san_francisco"), ("rider", "IN", "rider-I,rider-J,rider-L")],
    ],
    "quickstart_trips_table/mor/avro/v9_trips_lance": [
        [("city", "IN", "chennai,sao_paulo")],
        [("fare", "<=", "30")],
        [("_hoodie_record_key", "!=", "nope"), ("driver", "!=", "driver-T")],
    ],
    "sample_table/cow/v9_lance_nonpartitioned": [
        [("category", "=", "vision")],
        [("score", ">=", "0.95")],
        [("id", "<", "3"), ("updated_at", ">", "1700000000000")],
    ],
    "sample_table/cow/v9_lance_txns_nonpart": [
        [("txn_type", "=", "credit")],
        [("amount", ">=", "2000")],
        [("txn_date", ">=", "2024-01-16"), ("is_international", "=", "true")],
    ],
    "sample_table/cow/v9_lance_txns_simple": [
        [("region", "=", "us")],
        [("region", "IN", "us,eu")],
        [("amount", ">", "1000"), ("region", "!=", "apac")],
        [("fee_amount", "<=", "3.50")],
    ],
    "sample_table/mor/avro/v9_lance_nonhivestyle": [
        [("event_date", "=", "2023-11-14")],
        [("event_type", "=", "click")],
        [("event_ts", ">", "1700000060000"), ("event_date", "!=", "2023-11-15")],
    ],
}


def _slice_key(s: object) -> tuple:
    return (
        s.partition_path,
        s.file_id,
        s.creation_instant_time,
        s.base_file_name,
        s.base_file_size,
        s.base_file_relative_path(),
        tuple(s.log_file_names),
    )


def test_every_lance_table_is_covered() -> None:
    assert sorted(n for n in all_table_names() if "lance" in n) == TABLES


@pytest.mark.parametrize("name", TABLES)
def test_snapshot(name: str, table_path: TablePath) -> None:
    ours, theirs = table_pair(str(table_path(name)))
    assert assert_same_as_hudi_rs(ours, theirs) == SNAPSHOT_ROWS[name]
    assert ours.get_schema().equals(theirs.get_schema())
    assert ours.hudi_options()["hoodie.table.base.file.format"] == "LANCE"
    assert all(s.base_file_name.endswith(".lance") for s in ours.get_file_slices() if s.base_file_name)


@pytest.mark.parametrize("name", TABLES)
def test_time_travel_at_every_instant(name: str, table_path: TablePath) -> None:
    ours, theirs = table_pair(str(table_path(name)))
    instants = ours.get_timeline().data_instants
    assert len(instants) >= 5
    counts = [assert_same_as_hudi_rs(ours, theirs, **snapshot_opts(i.timestamp)) for i in instants]
    assert counts[0] > 0
    assert counts[-1] == SNAPSHOT_ROWS[name]


@pytest.mark.parametrize("name", TABLES)
def test_incremental_between_consecutive_instants(name: str, table_path: TablePath) -> None:
    ours, theirs = table_pair(str(table_path(name)))
    instants = ours.get_timeline().data_instants
    counts = [
        assert_same_as_hudi_rs(ours, theirs, **incremental_opts(prev.completed_at, cur.completed_at))
        for prev, cur in itertools.pairwise(instants)
    ]
    # Some commits (deletes, updates that matched nothing) return no rows; others do.
    assert sum(counts) > 0, counts
    everything = incremental_opts("0", instants[-1].completed_at)
    assert assert_same_as_hudi_rs(ours, theirs, **everything) == SNAPSHOT_ROWS[name]


@pytest.mark.parametrize("name", TABLES)
def test_filters_and_projections(name: str, table_path: TablePath) -> None:
    ours, theirs = table_pair(str(table_path(name)))
    names = ours.get_schema().names
    partition_cols = ours.get_partition_schema().names
    projections = [None, [names[0], names[-1]], [*partition_cols[:1], names[1]]]
    matched = []
    for filters in FILTERS[name]:
        for projection in projections:
            matched.append(assert_same_as_hudi_rs(ours, theirs, filters=filters, projection=projection))
        kept = ours.get_file_slices(ours_options(filters=filters))
        assert len(kept) <= len(theirs.get_file_slices(rs_options(filters=filters))), filters
    # The filters select some rows, never all of them.
    assert 0 < max(matched) < SNAPSHOT_ROWS[name]


@pytest.mark.parametrize("name", TABLES)
def test_read_stream(name: str, table_path: TablePath) -> None:
    ours, theirs = table_pair(str(table_path(name)))
    first = ours.get_schema().field(0).name
    cases: list[dict] = [{}, {"projection": [first]}, {"filters": [(first, "!=", "0")]}]
    for kw in cases:
        expected = row_set(to_table(ours.read(ours_options(**kw))))
        assert expected == row_set(to_table(list(theirs.read_stream(rs_options(**kw)))))
        for size in (1, 2):
            batches = list(ours.read_stream(ours_options(**kw).with_batch_size(size)))
            assert all(0 < b.num_rows <= size for b in batches), kw
            assert row_set(to_table(batches)) == expected, kw
        sizes = [b.num_rows for b in ours.read_stream(ours_options(**kw).with_batch_size(2))]
        assert max(sizes) == 2 and sum(sizes) == SNAPSHOT_ROWS[name], (kw, sizes)


@pytest.mark.parametrize("name", COW_TABLES)
def test_read_stream_decodes_lance_files_in_batches(name: str, table_path: TablePath, monkeypatch) -> None:
    ours = hudi_ray.HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    expected = row_set(to_table(ours.read()))

    def whole_file(*args: object, **kwargs: object) -> pa.Table:
        raise AssertionError("the streaming read decoded a whole Lance file")

    monkeypatch.setattr(LanceReader, "read", whole_file)
    batches = list(ours.read_stream(HudiReadOptions().with_batch_size(1)))
    assert len(batches) == SNAPSHOT_ROWS[name]
    assert row_set(to_table(batches)) == expected


@pytest.mark.parametrize("name", TABLES)
def test_file_slices(name: str, table_path: TablePath) -> None:
    ours, theirs = table_pair(str(table_path(name)))
    latest = sorted(map(_slice_key, ours.get_file_slices()))
    assert latest == sorted(map(_slice_key, theirs.get_file_slices()))
    assert latest and all(k[3].endswith(".lance") for k in latest)
    for instant in ours.get_timeline().data_instants:
        o = {_slice_key(s)[:6]: s for s in ours.get_file_slices(ours_options(**snapshot_opts(instant.timestamp)))}
        t = {_slice_key(s)[:6]: s for s in theirs.get_file_slices(rs_options(**snapshot_opts(instant.timestamp)))}
        assert sorted(o) == sorted(t), instant.timestamp
        for k, s in o.items():
            assert set(s.log_file_names) <= set(t[k].log_file_names), instant.timestamp


@pytest.mark.parametrize("name", COW_TABLES)
def test_estimates_come_from_lance_footers(name: str, table_path: TablePath) -> None:
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    slices = table.get_file_slices()
    estimates = table.plan().estimate()
    assert len(estimates) == len(slices)
    # Rows exactly as the files hold them, bytes from their columns: far below
    # the files' on-disk size, which Hudi's bloom filter in the footer dominates.
    assert sum(e.num_rows for e in estimates) == SNAPSHOT_ROWS[name]
    for e, s in zip(estimates, slices):
        assert 0 < e.size_bytes < int(s.base_file_size)


@pytest.mark.parametrize("name", COW_TABLES)
def test_footer_stats_pruner_keeps_lance_slices(name: str, table_path: TablePath) -> None:
    path = str(table_path(name))
    table = hudi_ray.HudiTableBuilder.from_base_uri(path).build()
    slices = table.get_file_slices()
    schema = table.get_schema_with_meta_fields()
    field = table.get_schema().names[0]
    pruner = FooterStatsPruner(Storage(path), FooterCache(), from_str_tuples([(field, "=", "no such value")]), schema)
    explain = PlanExplain(query_type="snapshot")
    kept = pruner.prune(slices, explain)
    # A Lance file has no min/max to prove a miss: every slice is kept, unchanged.
    assert kept == slices
    assert explain.stage("footer stats").file_slices == len(slices)


def test_partition_stats_do_not_prune_lance_partitions(table_path: TablePath) -> None:
    # Hudi's partition stats of a Lance table cover its log files only: for
    # 2023-11-14 they hold the one updated row (a page_view), not the base
    # file's click, so trusting them would lose evt-002.
    path = table_path("sample_table/mor/avro/v9_lance_nonhivestyle")
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    options = HudiReadOptions(filters=[("event_type", "=", "click")])
    explain = table.explain(options)
    assert explain.listing == "metadata table"
    assert explain.stage("partition stats").partitions == 4
    rows = to_table(table.read(options)).select(["event_id", "event_date"]).to_pylist()
    assert sorted(r["event_id"] for r in rows) == ["evt-002", "evt-006"]


# -- errors --------------------------------------------------------------------------


def test_missing_pylance_names_the_extra(table_path: TablePath, monkeypatch) -> None:
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(table_path("sample_table/cow/v9_lance_txns_simple"))).build()
    monkeypatch.setitem(sys.modules, "lance", None)
    monkeypatch.setitem(sys.modules, "lance.file", None)
    missing = r"\.lance: pylance is not installed \(pip install 'hudi-ray\[lance\]'\)"
    with pytest.raises(HudiUnsupportedError, match=missing):
        table.read()
    with pytest.raises(HudiUnsupportedError, match=r"hudi-ray\[lance\]"):
        list(table.read_stream())
    # Estimates do without the footers; the read reports the missing package.
    assert len(table.plan().estimate()) == len(table.get_file_slices())


def test_unknown_base_file_format_is_unsupported(copy_of) -> None:
    root = copy_of("sample_table/cow/v9_lance_nonpartitioned")
    lance_file = sorted(root.glob("*.lance"))[0]
    orc = lance_file.with_suffix(".orc")
    shutil.copy(lance_file, orc)
    reader = HudiFileGroupReader(str(root))
    with pytest.raises(HudiUnsupportedError, match=rf"{orc.name}: ORC base files are not supported"):
        reader.read_file_slice_from_paths(str(orc), [])
    with pytest.raises(HudiUnsupportedError, match="HFILE base files are not supported"):
        base_file_reader(Storage(str(root)), "x/y.hfile")
    assert not is_parquet(orc.name) and is_parquet("a/b.parquet")
    # The same bytes under their own name read fine.
    assert reader.read_file_slice_from_paths(str(lance_file), []).num_rows > 0


def _latest_base_file(root: Path) -> Path:
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(root)).build()
    rel = max((s for s in table.get_file_slices() if s.base_file_name), key=lambda s: s.base_file_name)
    return root / rel.base_file_relative_path()


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: bytes(len(b)), id="zeroed"),
        pytest.param(lambda b: b[:4], id="shorter-than-a-footer"),
        pytest.param(lambda b: b"", id="empty"),
    ],
)
def test_damaged_lance_file_is_corrupt(copy_of, damage) -> None:
    root = copy_of("sample_table/cow/v9_lance_txns_simple")
    victim = _latest_base_file(root)
    victim.write_bytes(damage(victim.read_bytes()))
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(root)).build()
    with pytest.raises(HudiCorruptFileError, match=rf"Cannot decode Lance base file .*{victim.name}"):
        table.read()
    with pytest.raises(HudiCorruptFileError, match=victim.name):
        list(table.read_stream())


def test_damaged_lance_data_page_is_corrupt(copy_of) -> None:
    root = copy_of("quickstart_trips_table/cow/v9_trips_lance")
    victim = _latest_base_file(root)
    data = bytearray(victim.read_bytes())
    # The data pages come first; the footer (schema, offsets) stays intact.
    for i in range(600):
        data[i] ^= 0xFF
    victim.write_bytes(bytes(data))
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(root)).build()
    with pytest.raises(HudiCorruptFileError, match=victim.name):
        table.read()


def test_lance_file_missing_is_not_found(copy_of) -> None:
    root = copy_of("sample_table/cow/v9_lance_txns_simple")
    victim = _latest_base_file(root)
    victim.unlink()
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(root)).build()
    with pytest.raises(hudi_ray.HudiFileNotFoundError, match=victim.name):
        table.read()


def test_lance_reader_stays_inside_the_table(table_path: TablePath) -> None:
    storage = Storage(str(table_path("sample_table/cow/v9_lance_nonpartitioned")))
    with pytest.raises(hudi_ray.HudiUnsafePathError):
        LanceReader(storage).read("../v9_lance_txns_simple/x.lance")
    with pytest.raises(hudi_ray.HudiUnsafePathError):
        LanceReader(storage).read("file:///etc/passwd.lance")


# -- object storage --------------------------------------------------------------------

S3_TABLES = ["sample_table/cow/v9_lance_txns_simple", "sample_table/mor/avro/v9_lance_nonhivestyle"]


@pytest.fixture(scope="module")
def bucket(s3_endpoint: str, table_path: TablePath) -> str:
    return upload(s3_endpoint, "lance", S3_TABLES, table_path)


@pytest.mark.parametrize("name", S3_TABLES)
def test_s3_lance_table_reads_like_local(
    name: str, bucket: str, storage_options: dict[str, str], table_path: TablePath
) -> None:
    uri = f"s3://{bucket}/{name}"
    remote = hudi_ray.HudiTableBuilder.from_base_uri(uri).with_storage_options(storage_options).build()
    local = hudi_ray.HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    first = local.get_timeline().data_instants[0].timestamp
    for opts in (HudiReadOptions(), HudiReadOptions().with_as_of_timestamp(first)):
        got = to_table(remote.read(opts))
        assert got.num_rows > 0
        assert row_set(got) == row_set(to_table(local.read(opts)))
        assert row_set(to_table(list(remote.read_stream(opts.with_batch_size(3))))) == row_set(got)
    assert to_table(remote.read()).num_rows == SNAPSHOT_ROWS[name]
