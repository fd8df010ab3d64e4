"""The reader-spec API surface: options, builders, timeline, file group reader, helpers."""

from __future__ import annotations

import json
import pickle

import hudi
import pyarrow as pa
import pytest

import hudi_ray
from hudi_ray import (
    ExprOperator,
    Filter,
    HudiConfigError,
    HudiFilterError,
    HudiQueryType,
    HudiReadConfig,
    HudiReadOptions,
    HudiTableBuilder,
    HudiTableConfig,
    col,
    from_str_tuples,
    split_into_chunks,
)
from hudi_ray.core.config import parse_properties
from hudi_ray.core.timeline.timestamps import parse_timestamp
from tests.support import row_set, to_table

TABLE = "sample_table/cow/v9_txns_simple_meta"


# -- HudiReadOptions -------------------------------------------------------


def test_read_options_builders_store_in_hudi_options() -> None:
    base = HudiReadOptions(filters=[("a", "in", "x\\,y, z")], projection=["a"])
    opts = (
        base.with_query_type(HudiQueryType.Incremental)
        .with_start_timestamp("20240101000000000")
        .with_end_timestamp("20240201000000000")
        .with_as_of_timestamp("20240115000000000")
        .with_batch_size(4096)
        .with_hudi_option(HudiReadConfig.USE_READ_OPTIMIZED_MODE, "true")
    )
    assert opts.hudi_options == {
        "hoodie.read.query.type": "incremental",
        "hoodie.read.start.timestamp": "20240101000000000",
        "hoodie.read.end.timestamp": "20240201000000000",
        "hoodie.read.as.of.timestamp": "20240115000000000",
        "hoodie.read.stream.batch_size": "4096",
        "hoodie.read.use.read_optimized.mode": "true",
    }
    assert opts.query_type() is HudiQueryType.Incremental
    assert opts.start_timestamp() == "20240101000000000"
    assert opts.end_timestamp() == "20240201000000000"
    assert opts.as_of_timestamp() == "20240115000000000"
    assert opts.batch_size() == 4096
    # Builders return new objects; the original is untouched.
    assert base.hudi_options == {}
    assert base.batch_size() is None
    assert base.query_type() is HudiQueryType.Snapshot
    assert base.filters == [("a", "IN", "x\\,y,z")]
    assert base.projection == ["a"]


def test_read_options_match_hudi_rs_normalization() -> None:
    cases = [[("a", "in", "x\\,y, z")], [("b", "not in", " 1 ,2")], [("c", "<=", "5")], [("d", "!=", "q")]]
    for filters in cases:
        assert HudiReadOptions(filters=filters).filters == hudi.HudiReadOptions(filters=filters).filters


def test_query_type_enum() -> None:
    assert HudiQueryType.Snapshot.name == "Snapshot"
    assert HudiQueryType.Snapshot.value == "snapshot"
    assert HudiQueryType.Incremental.value == "incremental"


@pytest.mark.parametrize(
    "build",
    [
        lambda: HudiReadOptions().with_batch_size(0),
        lambda: HudiReadOptions().with_batch_size(-3),
        lambda: HudiReadOptions().with_hudi_option("hoodie.read.stream.batch_size", "x").batch_size(),
    ],
)
def test_bad_batch_size_raises(build) -> None:
    with pytest.raises(HudiConfigError, match=r"hoodie\.read\.stream\.batch_size"):
        build()


@pytest.mark.parametrize(
    "filters, message",
    [
        ([("a", "~", "1")], "operator"),
        ([("a", "LIKE", "1")], "operator"),
        ([("a", "IN", "")], "IN operator requires at least one value"),
        ([("a", "NOT IN", " , ")], "NOT IN operator requires at least one value"),
        ([("a", "=")], "tuple"),
        ([("", "=", "1")], "field"),
    ],
)
def test_bad_filters_raise_at_the_builder(filters, message) -> None:
    with pytest.raises(HudiFilterError, match=message):
        HudiReadOptions(filters=filters)
    with pytest.raises(HudiFilterError, match=message):
        HudiReadOptions().with_filters(filters)


def test_filter_dsl_and_parsing() -> None:
    f = Filter.new("name", "IN", "Smith\\, John,Jane")
    assert f.values == ("Smith, John", "Jane")
    assert f.operator is ExprOperator.In
    assert f.negate().operator is ExprOperator.NotIn
    assert col("city").eq("sf") == Filter("city", ExprOperator.Eq, ("sf",))
    assert col("x").gte(3).negate() == Filter("x", ExprOperator.Lt, ("3",))
    assert col("x").in_list(["a,b", "c"]).to_tuple() == ("x", "IN", "a\\,b,c")
    assert from_str_tuples([("a", "=", "1")]) == [Filter("a", ExprOperator.Eq, ("1",))]
    assert Filter.new("p", "IN", "a\\\\,b").values == ("a\\", "b")


def test_read_options_pickle_roundtrip() -> None:
    opts = HudiReadOptions(filters=[("a", "=", "1")], projection=["a"]).with_batch_size(7)
    assert pickle.loads(pickle.dumps(opts)) == opts


# -- timestamps ------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        ("20240315142530123", "20240315142530123"),
        ("20240315142530", "20240315142530000"),
        ("1710512730", "20240315142530000"),
        ("1710512730123", "20240315142530123"),
        ("1710512730123456", "20240315142530123"),
        ("1710512730123456789", "20240315142530123"),
        ("2024-03-15T14:25:30Z", "20240315142530000"),
        ("2024-03-15T14:25:30+00:00", "20240315142530000"),
        ("2024-03-15T14:25:30.123Z", "20240315142530123"),
        ("2024-03-15T16:25:30.5+02:00", "20240315142530500"),
    ],
)
def test_timestamp_formats(value: str, expected: str) -> None:
    assert parse_timestamp(value, "UTC") == expected


def test_timestamp_formats_read_like_hudi_rs(table_path) -> None:
    path = str(table_path(TABLE))
    ours = HudiTableBuilder.from_base_uri(path).build()
    theirs = hudi.HudiTableBuilder.from_base_uri(path).build()
    for ts in ["2026-03-07T16:24:41Z", "1772900681", "1772900681000", "20260307162441", "2026-03-07T17:24:41+01:00"]:
        a = to_table(ours.read(HudiReadOptions().with_as_of_timestamp(ts)))
        b = to_table(theirs.read(hudi.HudiReadOptions().with_as_of_timestamp(ts)))
        assert row_set(a) == row_set(b), ts


# -- table, builder, timeline ------------------------------------------------


def test_builder_routes_options_and_drops_read_configs(table_path) -> None:
    path = str(table_path(TABLE))
    table = (
        HudiTableBuilder.from_base_uri(path)
        .with_hudi_option(HudiTableConfig.METADATA_TABLE_ENABLED, "false")
        .with_hudi_option("hoodie.read.as.of.timestamp", "20200101000000000")
        .with_storage_option("some_storage_key", "v")
        .with_options({"hoodie.read.query.type": "incremental", "other_storage_key": "w"})
        .build()
    )
    opts = table.hudi_options()
    assert opts["hoodie.metadata.enable"] == "false"
    assert opts["hoodie.base.path"] == path
    assert not any(k.startswith("hoodie.read.") for k in opts)
    assert table.storage_options() == {"some_storage_key": "v", "other_storage_key": "w"}
    # The dropped as-of did not turn reads into time travel.
    assert sum(b.num_rows for b in table.read()) == 12


def test_file_uri_and_trailing_slash(table_path) -> None:
    path = table_path(TABLE)
    for uri in (path.as_uri(), str(path) + "/"):
        table = hudi_ray.HudiTable(uri)
        assert table.base_url == path.as_uri()
        assert sum(b.num_rows for b in table.read()) == 12


def test_timeline_matches_hudi_rs(table_path) -> None:
    path = str(table_path(TABLE))
    ours = HudiTableBuilder.from_base_uri(path).build().get_timeline()
    theirs = hudi.HudiTableBuilder.from_base_uri(path).build().get_timeline()
    for getter in ("get_completed_commits", "get_completed_deltacommits", "get_completed_replacecommits"):
        for desc in (False, True):
            a = getattr(ours, getter)(desc)
            b = getattr(theirs, getter)(desc)
            assert [(i.timestamp, i.action, i.epoch_mills) for i in a] == [
                (i.timestamp, i.action, i.epoch_mills) for i in b
            ]
    assert ours.get_latest_commit_timestamp() == theirs.get_latest_commit_timestamp()
    assert ours.get_latest_avro_schema() == theirs.get_latest_avro_schema()
    assert ours.get_latest_schema().equals(theirs.get_latest_schema())

    # hudi-rs re-serializes through its own structs (dropping e.g. runtimeStats
    # and adding null keys); we hand back the whole Avro record. Every value
    # hudi-rs has must be ours too.
    def non_null(x: object) -> object:
        if isinstance(x, dict):
            return {k: non_null(v) for k, v in x.items() if v is not None}
        if isinstance(x, list):
            return [non_null(v) for v in x]
        return x

    def contained(small: object, big: object) -> bool:
        if isinstance(small, dict):
            return isinstance(big, dict) and all(k in big and contained(v, big[k]) for k, v in small.items())
        if isinstance(small, list):
            return isinstance(big, list) and len(small) == len(big) and all(map(contained, small, big))
        return small == big

    for a, b in zip(ours.get_completed_commits(), theirs.get_completed_commits()):
        mine = json.loads(ours.get_instant_metadata_in_json(a))
        assert contained(non_null(json.loads(theirs.get_instant_metadata_in_json(b))), mine)
        assert mine["partitionToWriteStats"]
    # hudi-rs leaves state empty; completed instants say so here.
    assert {i.state for i in ours.get_completed_commits()} == {"COMPLETED"}


def test_clustering_commits(table_path) -> None:
    ours = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build().get_timeline()
    # The SQL runs one clustering (at 20260307162454799); hudi-rs 0.5.0 lists no
    # clustering commits for layout-2 timelines, where clustering completes as a
    # replacecommit. The SQL wins: the clustering instant is listed.
    assert [i.timestamp for i in ours.get_completed_clustering_commits()] == ["20260307162454799"]
    assert [i.timestamp for i in ours.get_completed_replacecommits()] == ["20260307162450901", "20260307162454799"]


def test_schemas_in_avro(table_path) -> None:
    path = str(table_path(TABLE))
    ours = HudiTableBuilder.from_base_uri(path).build()
    theirs = hudi.HudiTableBuilder.from_base_uri(path).build()
    assert json.loads(ours.get_schema_in_avro_str()) == json.loads(theirs.get_schema_in_avro_str())
    assert json.loads(ours.get_schema_in_avro_str_with_meta_fields()) == json.loads(
        theirs.get_schema_in_avro_str_with_meta_fields()
    )


def test_empty_tables(table_path) -> None:
    for name in ("sample_table/cow/v6_empty", "sample_table/cow/v8_empty"):
        table = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
        assert table.read() == []
        assert table.get_file_slices() == []
        assert list(table.read_stream()) == []
        inc = HudiReadOptions().with_query_type(HudiQueryType.Incremental)
        assert table.read(inc) == []


def test_compute_table_stats_none_for_incremental(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    assert table.compute_table_stats(HudiReadOptions().with_query_type(HudiQueryType.Incremental)) is None


# -- file group reader -----------------------------------------------------


def test_file_group_reader_paths(table_path) -> None:
    path = str(table_path(TABLE))
    table = HudiTableBuilder.from_base_uri(path).build()
    theirs = hudi.HudiTableBuilder.from_base_uri(path).build()
    fgr = table.create_file_group_reader_with_options()
    assert not fgr.is_metadata_table
    direct = hudi_ray.HudiFileGroupReader(path)
    rs_fgr = theirs.create_file_group_reader_with_options()
    opts = HudiReadOptions(filters=[("txn_type", "!=", "x")], projection=["txn_id", "amount"])
    rs_opts = hudi.HudiReadOptions(filters=[("txn_type", "!=", "x")], projection=["txn_id", "amount"])
    total = 0
    for s in table.get_file_slices():
        rel = s.base_file_relative_path()
        a = fgr.read_file_slice(s, opts)
        assert isinstance(a, pa.RecordBatch)
        assert a.schema.names == ["txn_id", "amount"]
        b = direct.read_file_slice_from_paths(rel, [], opts)
        c = pa.Table.from_batches(list(fgr.read_file_slice_stream(s, opts.with_batch_size(1))), schema=a.schema)
        d = pa.Table.from_batches(list(direct.read_file_slice_from_paths_stream(rel, [], opts)), schema=a.schema)
        expected = rs_fgr.read_file_slice_from_paths(rel, [], rs_opts)
        for got in (a, b, c, d):
            assert row_set(pa.Table.from_batches([got]) if isinstance(got, pa.RecordBatch) else got) == row_set(
                pa.Table.from_batches([expected])
            )
        total += a.num_rows
    assert total == 12


def test_file_group_reader_commit_range(table_path) -> None:
    path = str(table_path(TABLE))
    table = HudiTableBuilder.from_base_uri(path).build()
    commits = table.get_timeline().get_completed_commits()
    # Per spec, start/end timestamps bound rows by commit time in the file group reader.
    opts = HudiReadOptions().with_start_timestamp(commits[0].timestamp).with_end_timestamp(commits[1].timestamp)
    fgr = hudi_ray.HudiFileGroupReader(path)
    times = set()
    for s in table.get_file_slices():
        times |= set(fgr.read_file_slice(s, opts).column("_hoodie_commit_time").to_pylist())
    assert times <= {commits[1].timestamp}


def test_split_into_chunks() -> None:
    assert split_into_chunks([1, 2, 3, 4, 5], 2) == [[1, 2, 3], [4, 5]]
    assert split_into_chunks([1, 2, 3], 5) == [[1], [2], [3]]
    assert split_into_chunks([1, 2, 3], 0) == [[1, 2, 3]]
    assert split_into_chunks([], 3) == []
    items = list(range(103))
    chunks = split_into_chunks(items, 8)
    assert len(chunks) == 8
    assert [x for c in chunks for x in c] == items


def test_file_slice_api(table_path) -> None:
    path = str(table_path(TABLE))
    table = HudiTableBuilder.from_base_uri(path).build()
    for s in table.get_file_slices():
        assert s.total_size_bytes() == s.base_file_size > 0
        assert not s.has_log_files()
        assert s.log_files_relative_paths() == []
        assert s.base_file_relative_path() == f"{s.partition_path}/{s.base_file_name}"
        assert s.num_records > 0
        assert pickle.loads(pickle.dumps(s)) == s


# -- properties ------------------------------------------------------------


def test_properties_parsing() -> None:
    text = "\n".join(
        [
            "# comment",
            "! another comment",
            "hoodie.table.name=t1",
            "a.b\\:c = x\\:y\\=z",
            "spaced   :  value with spaces  ",
            "multi=one \\",
            "    two",
            "unicode=caf\\u00e9",
            "empty=",
            "tab\\tkey=v",
        ]
    )
    props = parse_properties(text)
    assert props["hoodie.table.name"] == "t1"
    assert props["a.b:c"] == "x:y=z"
    assert props["spaced"] == "value with spaces  "
    assert props["multi"] == "one two"
    assert props["unicode"] == "café"
    assert props["empty"] == ""
    assert props["tab\tkey"] == "v"


def test_escaped_create_schema_is_unescaped(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    schema = json.loads(table.hudi_options()["hoodie.table.create.schema"])
    assert schema["type"] == "record"


def test_split_by_size() -> None:
    from hudi_ray.core.util import split_by_size

    assert split_by_size("abcdef", [10] * 6, 20) == [["a", "b"], ["c", "d"], ["e", "f"]]
    # A slice larger than the cap is a chunk of its own; the small ones share one.
    assert split_by_size("abcdef", [100, 1, 1, 1, 1, 1], 20) == [["a"], ["b", "c", "d", "e", "f"]]
    # At least min_splits chunks, by equal shares of the total.
    assert split_by_size("abcd", [5, 5, 5, 5], 100, 4) == [["a"], ["b"], ["c"], ["d"]]
    assert split_by_size("abcd", [5, 5, 5, 5], 100, 2) == [["a", "b"], ["c", "d"]]
    # Unknown sizes split by count; nothing in, nothing out.
    assert split_by_size("abc", [0, 0, 0], 20, 2) == [["a", "b"], ["c"]]
    assert split_by_size([], [], 20) == []
    items = list(range(50))
    chunks = split_by_size(items, [i % 7 + 1 for i in items], 30, 3)
    assert [x for c in chunks for x in c] == items
    assert all(sum(i % 7 + 1 for i in c) <= 30 or len(c) == 1 for c in chunks)
    with pytest.raises(ValueError, match="sizes"):
        split_by_size("ab", [1], 10)
