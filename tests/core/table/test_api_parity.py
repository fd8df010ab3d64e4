"""Parity with the hudi-rs Python API: every public name, the planning configs,
``HudiFileSlice.base_file_column_stats``, error wording and error types that
code written against ``hudi`` relies on. hudi-rs (the ``hudi`` package) is the
oracle wherever it applies."""

from __future__ import annotations

import dataclasses
import pickle
import threading
import time
import warnings
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any

import hudi
import pyarrow as pa
import pytest

import hudi_ray
import hudi_ray.core
import hudi_ray.core.config
from hudi_ray import (
    HudiConfigError,
    HudiCoreError,
    HudiFilterError,
    HudiPlanConfig,
    HudiQueryType,
    HudiReadOptions,
    HudiSchemaError,
    HudiTable,
    HudiTableBuilder,
    HudiUnsupportedError,
)
from hudi_ray.core.base_file import FooterCache
from hudi_ray.core.storage import Storage

COW = "sample_table/cow/v9_txns_simple_nometa"
COW_META = "sample_table/cow/v9_txns_simple_meta"
MOR = "sample_table/mor/avro/v9_txns_simple_nometa"
TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"
LANCE = "sample_table/mor/avro/v9_lance_nonhivestyle"
LISTING = "hoodie.plan.listing.parallelism"
RO = {"hoodie.read.use.read_optimized.mode": "true"}

# Names hudi exports that hudi_ray deliberately lacks, and why.
EXCLUDED = {
    # A DataFusion TableProvider: hudi-rs's integration with the DataFusion
    # engine. This package's engines are Ray Data and Spark (read_hudi).
    "HudiDataFusionDataSource",
}


# -- public names ----------------------------------------------------------------------


def test_exports_every_public_name_of_hudi_rs() -> None:
    theirs = set(hudi.__all__)
    assert theirs >= EXCLUDED, "an exclusion names something hudi no longer exports"
    missing = sorted(n for n in theirs - EXCLUDED if n not in hudi_ray.__all__ or not hasattr(hudi_ray, n))
    assert missing == []
    # Every name ported code imports is the same object at every level.
    for name in theirs - EXCLUDED:
        assert getattr(hudi_ray, name) is getattr(hudi_ray.core, name)


def _members(obj: Any) -> set[str]:
    return {m for m in dir(obj) if not m.startswith("_")}


def test_classes_have_every_public_member_of_hudi_rs() -> None:
    lacking: dict[str, list[str]] = {}
    for name in sorted(set(hudi.__all__) - EXCLUDED):
        theirs, ours = getattr(hudi, name), getattr(hudi_ray, name)
        if not isinstance(theirs, type):
            continue
        have = _members(ours)
        if dataclasses.is_dataclass(ours):
            have |= {f.name for f in dataclasses.fields(ours)}
        if issubclass(ours, Enum):
            # hudi-rs's query type is a class whose members carry name/value.
            have |= _members(next(iter(ours)))
        if name == "HudiInstant":
            have |= {"timestamp", "action", "state", "epoch_mills"}  # instance attributes
        gaps = sorted(_members(theirs) - have)
        if gaps:
            lacking[name] = gaps
    assert lacking == {}


def test_instants_have_hudi_rs_attributes(table_path) -> None:
    path = str(table_path(COW))
    ours = HudiTable(path).get_timeline().get_completed_commits()
    theirs = hudi.HudiTable(path).get_timeline().get_completed_commits()
    assert [(i.timestamp, i.action) for i in ours] == [(i.timestamp, i.action) for i in theirs]


# -- HudiPlanConfig -------------------------------------------------------------------


def test_plan_config_enum() -> None:
    assert issubclass(HudiPlanConfig, str) and issubclass(HudiPlanConfig, Enum)
    assert HudiPlanConfig.LISTING_PARALLELISM == LISTING
    assert HudiPlanConfig.LISTING_PARALLELISM.value == LISTING
    assert str(HudiPlanConfig.LISTING_PARALLELISM) == LISTING
    assert HudiPlanConfig(LISTING) is HudiPlanConfig.LISTING_PARALLELISM
    assert HudiPlanConfig["LISTING_PARALLELISM"] is HudiPlanConfig.LISTING_PARALLELISM
    assert hudi_ray.core.config.HudiPlanConfig is hudi_ray.core.HudiPlanConfig is hudi_ray.HudiPlanConfig
    assert "HudiPlanConfig" in hudi_ray.core.config.__all__


@pytest.mark.parametrize("enum_name", ["HudiTableConfig", "HudiReadConfig", "HudiPlanConfig"])
def test_config_enums_hold_every_hudi_rs_member(enum_name: str) -> None:
    theirs = {m.name: m.value for m in getattr(hudi, enum_name)}
    ours = {m.name: m.value for m in getattr(hudi_ray, enum_name)}
    assert {k: ours.get(k) for k in theirs} == theirs


@pytest.mark.parametrize("method", ["with_option", "with_hudi_option"])
def test_builder_takes_plan_config_as_a_known_table_option(table_path, method: str) -> None:
    path = str(table_path(COW))
    builder = getattr(HudiTableBuilder.from_base_uri(path), method)(HudiPlanConfig.LISTING_PARALLELISM, 4)
    attr = "options" if method == "with_option" else "hudi_options"
    assert getattr(builder, attr) == {LISTING: "4"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a known key: no unknown-option warning
        table = builder.build()
    theirs = getattr(hudi.HudiTableBuilder.from_base_uri(path), method)(hudi.HudiPlanConfig.LISTING_PARALLELISM, "4")
    # A table option, kept by the table as hudi-rs keeps it.
    assert table.hudi_options()[LISTING] == theirs.build().hudi_options()[LISTING] == "4"
    assert [s.base_file_name for s in table.get_file_slices()] != []


@pytest.mark.parametrize("value", ["abc", "-1", "0", "1.5", ""])
def test_listing_parallelism_is_validated_when_the_table_is_built(table_path, value: str) -> None:
    path = str(table_path(COW))
    builder = HudiTableBuilder.from_base_uri(path).with_option(HudiPlanConfig.LISTING_PARALLELISM, value)
    with pytest.raises(HudiConfigError, match=LISTING) as info:
        builder.build()
    assert isinstance(info.value, ValueError)
    with pytest.raises(HudiConfigError, match=LISTING):
        HudiTable(path, {LISTING: value})


@pytest.mark.parametrize("value", ["abc", "-1"])
def test_listing_parallelism_rejected_like_hudi_rs(table_path, value: str) -> None:
    # hudi-rs fails the build for these too (it hangs on "0", so that one is
    # only checked on this side).
    path = str(table_path(COW))
    with pytest.raises(Exception, match=LISTING):
        hudi.HudiTableBuilder.from_base_uri(path).with_option(LISTING, value).build()


@pytest.fixture
def listing_concurrency(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts how many ``Storage.list_dir`` calls run at once; each lingers a
    little so that calls allowed to overlap do overlap."""
    state = {"now": 0, "max": 0, "calls": 0}
    lock = threading.Lock()
    original = Storage.list_dir

    def spy(self: Storage, *args: Any, **kwargs: Any) -> Any:
        with lock:
            state["now"] += 1
            state["calls"] += 1
            state["max"] = max(state["max"], state["now"])
        try:
            time.sleep(0.05)
            return original(self, *args, **kwargs)
        finally:
            with lock:
                state["now"] -= 1

    monkeypatch.setattr(Storage, "list_dir", spy)
    return state


def _on_s3(s3_endpoint: str, table_path: Any, bucket: str, **options: str) -> HudiTable:
    from hudi_testkit.s3proxy import storage_options
    from tests.support import upload

    upload(s3_endpoint, bucket, [COW], table_path)
    builder = HudiTableBuilder.from_base_uri(f"s3://{bucket}/{COW}").with_storage_options(storage_options(s3_endpoint))
    return builder.with_hudi_options(options).build()


@pytest.mark.parametrize(("parallelism", "expect_max"), [("1", 1), ("3", 3)])
def test_listing_parallelism_bounds_concurrent_listings(
    s3_endpoint: str, table_path, listing_concurrency: dict[str, int], parallelism: str, expect_max: int
) -> None:
    # No metadata table: the three region partitions are listed from the store.
    table = _on_s3(
        s3_endpoint, table_path, f"listing-{parallelism}", **{HudiPlanConfig.LISTING_PARALLELISM.value: parallelism}
    )
    listing_concurrency.update(now=0, max=0, calls=0)
    slices = table.get_file_slices()
    assert sorted({s.partition_path for s in slices}) == ["region=apac", "region=eu", "region=us"]
    assert listing_concurrency["calls"] >= 3
    assert listing_concurrency["max"] == expect_max


def test_listing_parallelism_default(s3_endpoint: str, table_path, listing_concurrency: dict[str, int]) -> None:
    table = _on_s3(s3_endpoint, table_path, "listing-default")
    listing_concurrency.update(now=0, max=0, calls=0)
    table.get_file_slices()
    # The default (16) lets all three partitions be listed at once.
    assert listing_concurrency["max"] == 3


def test_local_listings_run_one_after_another(table_path, listing_concurrency: dict[str, int]) -> None:
    """os.scandir's loop holds the GIL: on local disk threads only contend for it."""
    path = str(table_path(COW))
    table = HudiTableBuilder.from_base_uri(path).with_option(HudiPlanConfig.LISTING_PARALLELISM, "3").build()
    listing_concurrency.update(now=0, max=0, calls=0)
    assert sorted({s.partition_path for s in table.get_file_slices()}) == ["region=apac", "region=eu", "region=us"]
    assert listing_concurrency["calls"] >= 3
    assert listing_concurrency["max"] == 1


# -- HudiFileSlice.base_file_column_stats ------------------------------------------------


def _decimal_from_parquet_bytes(raw: bytes, dtype: pa.Decimal128Type) -> Decimal:
    """hudi-rs hands decimal bounds back as the footer's raw big-endian
    two's-complement bytes; this is the value they encode."""
    return Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-dtype.scale)


def _stats_values(stats: dict[str, tuple[Any, Any]] | None, schema: pa.Schema) -> dict[str, tuple[Any, Any]] | None:
    if stats is None:
        return None

    def value(arr: pa.Array | None, dtype: pa.DataType) -> Any:
        if arr is None:
            return None
        assert len(arr) == 1
        v = arr.to_pylist()[0]
        if pa.types.is_decimal(dtype) and isinstance(v, bytes):
            return _decimal_from_parquet_bytes(v, dtype)
        return v

    return {c: (value(lo, schema.field(c).type), value(hi, schema.field(c).type)) for c, (lo, hi) in stats.items()}


def _both_stats(path: str, filters: list[tuple[str, str, str]], hudi_options: dict[str, str]) -> tuple[dict, dict]:
    ours_table = HudiTable(path)
    schema = ours_table.get_schema_with_meta_fields()
    ours = ours_table.get_file_slices(HudiReadOptions(filters=filters, hudi_options=hudi_options))
    theirs = hudi.HudiTable(path).get_file_slices(hudi.HudiReadOptions(filters=filters, hudi_options=hudi_options))
    return (
        {s.base_file_name: _stats_values(s.base_file_column_stats(), schema) for s in ours},
        {s.base_file_name: _stats_values(s.base_file_column_stats(), schema) for s in theirs},
    )


@pytest.mark.parametrize(
    ("name", "filters", "hudi_options"),
    [
        (COW, [("txn_id", "=", "TXN-001")], {}),
        (COW_META, [("txn_id", "=", "TXN-001")], {}),
        ("sample_table/cow/v9_txns_complex_nometa", [("amount", ">", "10")], {}),
        ("sample_table/cow/v9_txns_nonpart_meta", [("txn_id", "<", "TXN-009")], {}),
        (MOR, [("txn_id", ">", "TXN-001")], RO),
        (TRIPS, [("rider", "=", "rider-A")], RO),
        (TRIPS, [("_hoodie_record_key", "!=", "x")], RO),
    ],
)
def test_column_stats_match_hudi_rs(table_path, name: str, filters: list, hudi_options: dict[str, str]) -> None:
    path = str(table_path(name))
    ours, theirs = _both_stats(path, filters, hudi_options)
    assert ours.keys() == theirs.keys()
    assert all(v is not None for v in ours.values())
    assert ours == theirs


def test_column_stats_shape(table_path) -> None:
    table = HudiTable(str(table_path(COW)))
    schema = table.get_schema_with_meta_fields()
    (fs,) = table.get_file_slices(HudiReadOptions(filters=[("txn_id", "=", "TXN-001")]))
    stats = fs.base_file_column_stats()
    assert stats is not None and list(stats) == schema.names
    for column, (lo, hi) in stats.items():
        for bound in (lo, hi):
            assert isinstance(bound, pa.Array) and len(bound) == 1
            assert bound.type == schema.field(column).type
    assert stats["txn_id"][0].to_pylist() == ["TXN-001"]
    assert stats["region"][0].to_pylist() == stats["region"][1].to_pylist() == ["us"]
    assert stats["amount"][0].type == pa.decimal128(15, 2)
    assert stats["amount"][0].to_pylist() == [Decimal("125.50")]
    # The stats describe the file, not the slice: equality and pickling ignore / keep them.
    bare = dataclasses.replace(fs, column_stats=None)
    assert bare == fs and bare.base_file_column_stats() is None
    again = pickle.loads(pickle.dumps(fs))
    assert _stats_values(again.base_file_column_stats(), schema) == _stats_values(stats, schema)
    # Callers get their own dict.
    stats.clear()
    assert fs.base_file_column_stats()


def test_column_stats_are_worked_out_when_looked_at(table_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planning keeps each footer; bounds of every column come when a caller asks, once."""
    from hudi_ray.core.planning import slice_stats

    worked: list[int] = []
    original = slice_stats.footer_bounds

    def counting(metadatas: list, *args: Any, **kwargs: Any) -> Any:
        worked.append(len(metadatas))
        return original(metadatas, *args, **kwargs)

    monkeypatch.setattr(slice_stats, "footer_bounds", counting)
    slices = HudiTable(str(table_path(COW_META))).get_file_slices(HudiReadOptions(filters=[("txn_id", ">", "TXN-001")]))
    assert len(slices) > 1 and worked == []
    first = slices[0].base_file_column_stats()
    assert first and worked == [1]
    assert slices[0].base_file_column_stats() == first and worked == [1]
    assert type(pickle.loads(pickle.dumps(slices[1])).column_stats) is dict and worked == [1, 1]


@pytest.mark.parametrize(
    ("name", "options"),
    [
        (COW, HudiReadOptions()),  # no filters
        (COW, HudiReadOptions(filters=[("region", "=", "us")])),  # partition filters only
        (MOR, HudiReadOptions(filters=[("txn_id", ">", "TXN-001")])),  # log files may change values
        (TRIPS, HudiReadOptions(filters=[("rider", "=", "rider-A")])),
        (LANCE, HudiReadOptions(filters=[("event_id", "!=", "x")], hudi_options=RO)),  # not Parquet
    ],
)
def test_column_stats_absent_where_hudi_rs_has_none(table_path, name: str, options: HudiReadOptions) -> None:
    path = str(table_path(name))
    ours = HudiTable(path).get_file_slices(options)
    theirs = hudi.HudiTable(path).get_file_slices(
        hudi.HudiReadOptions(filters=options.filters, hudi_options=options.hudi_options)
    )
    # (The slices kept may differ: pruning by the metadata table's indexes is
    # best-effort and differs between the two; the stats rule does not.)
    assert ours and theirs and all(s.base_file_column_stats() is None for s in ours)
    assert all(s.base_file_column_stats() is None for s in theirs)


def test_column_stats_absent_on_incremental_reads(table_path) -> None:
    path = str(table_path(COW))
    table = HudiTable(path)
    commits = table.get_timeline().get_completed_commits()
    options = (
        HudiReadOptions(filters=[("txn_id", "!=", "x")])
        .with_query_type(HudiQueryType.Incremental)
        .with_start_timestamp(commits[0].timestamp)
        .with_end_timestamp(commits[1].timestamp)
    )
    slices = table.get_file_slices(options)
    assert slices and all(s.base_file_column_stats() is None for s in slices)


def test_column_stats_reuse_footers_read_by_pruning(table_path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Footer pruning (no metadata table) reads each footer once; attaching the
    # stats takes them from the table's footer cache instead of decoding again.
    table = HudiTable(str(table_path(COW)))
    decoded: list[str] = []
    original = FooterCache.put

    def spy(self: FooterCache, rel: str, *args: Any, **kwargs: Any) -> Any:
        decoded.append(rel)
        return original(self, rel, *args, **kwargs)

    monkeypatch.setattr(FooterCache, "put", spy)
    slices = table.get_file_slices(HudiReadOptions(filters=[("txn_id", ">=", "TXN-001")]))
    assert len(slices) > 1 and all(s.base_file_column_stats() is not None for s in slices)
    assert sorted(decoded) == sorted(s.base_file_relative_path() for s in slices)


# -- error wording and types -------------------------------------------------------------


def test_streaming_an_incremental_read_says_not_yet_supported(table_path) -> None:
    path = str(table_path(TRIPS))
    with pytest.raises(Exception, match="not yet supported"):
        hudi.HudiTable(path).read_stream(hudi.HudiReadOptions().with_query_type(hudi.HudiQueryType.Incremental))
    with pytest.raises(HudiUnsupportedError, match="not yet supported") as info:
        HudiTable(path).read_stream(HudiReadOptions().with_query_type(HudiQueryType.Incremental))
    # Ours still names the table and the option.
    message = str(info.value)
    assert Path(path).name in message and "hoodie.read.query.type=incremental" in message


def test_schema_errors_are_value_errors(table_path) -> None:
    assert issubclass(HudiSchemaError, ValueError) and issubclass(HudiSchemaError, HudiCoreError)
    assert issubclass(HudiFilterError, ValueError)
    # Not every error is a ValueError: damage and storage errors stay apart.
    assert not issubclass(HudiCoreError, ValueError)
    assert not issubclass(hudi_ray.HudiCorruptFileError, ValueError)
    table = HudiTable(str(table_path(COW)))
    with pytest.raises(ValueError, match="nope"):
        table.read(HudiReadOptions(projection=["nope"]))
    with pytest.raises(ValueError, match="nope"):
        table.get_file_slices(HudiReadOptions(filters=[("nope", "=", "x")]))
