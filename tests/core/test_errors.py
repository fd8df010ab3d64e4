"""Bad input gets a specific exception that names what was wrong and where."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import hudi_ray
from hudi_ray import (
    HudiConfigError,
    HudiCorruptFileError,
    HudiFileNotFoundError,
    HudiFilterError,
    HudiReadOptions,
    HudiSchemaError,
    HudiTableBuilder,
    HudiTableNotFoundError,
    HudiTimelineError,
    HudiTimestampError,
    HudiUnsupportedError,
)

TABLE = "sample_table/cow/v9_txns_simple_meta"
V6_TABLE = "sample_table/cow/v6_simplekeygen_nonhivestyle"


def test_missing_hoodie_folder(tmp_path: Path) -> None:
    with pytest.raises(HudiTableNotFoundError, match=r"\.hoodie"):
        HudiTableBuilder.from_base_uri(str(tmp_path)).build()


def test_missing_base_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(HudiTableNotFoundError, match=str(missing)):
        hudi_ray.HudiTable(str(missing))


def test_missing_properties(copy_of) -> None:
    path = copy_of(TABLE)
    (path / ".hoodie" / "hoodie.properties").unlink()
    with pytest.raises(HudiTableNotFoundError, match=r"hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_properties_backup_is_used_when_properties_missing(copy_of) -> None:
    path = copy_of(TABLE)
    props = path / ".hoodie" / "hoodie.properties"
    props.rename(path / ".hoodie" / "hoodie.properties.backup")
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert table.table_name == "v9_txns_cow_simple_meta"


def test_corrupt_properties(copy_of) -> None:
    path = copy_of(TABLE)
    (path / ".hoodie" / "hoodie.properties").write_bytes(b"\x00\xff\xfe garbage \x00")
    with pytest.raises(HudiCorruptFileError, match=r"hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_properties_without_required_keys(copy_of) -> None:
    path = copy_of(TABLE)
    (path / ".hoodie" / "hoodie.properties").write_text("hoodie.table.version=9\n")
    with pytest.raises(HudiConfigError, match=r"hoodie\.table\.name.*hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_properties_with_bad_value(copy_of) -> None:
    path = copy_of(TABLE)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "\nhoodie.table.type=SOMETHING_ELSE\n")
    with pytest.raises(HudiConfigError, match=r"hoodie\.table\.type.*SOMETHING_ELSE"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_missing_base_file_named_by_a_commit(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob("*_20260307162456179.parquet"))
    victim.unlink()
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiFileNotFoundError, match=victim.name):
        table.read()
    with pytest.raises(HudiFileNotFoundError, match=victim.name):
        list(table.read_stream())
    # Planning from storage listing notices the gap before reading; planning
    # from the metadata table (which still lists the file) fails at the read.
    listed = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()
    with pytest.raises(HudiFileNotFoundError, match=victim.name):
        listed.get_file_slices()
    # Partitions the filter prunes are not checked, so other regions still read.
    for t in (table, listed):
        rows = sum(b.num_rows for b in t.read(HudiReadOptions(filters=[("region", "=", "eu")])))
        assert rows == 3


def test_truncated_parquet_base_file(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob("*_20260307162456179.parquet"))
    victim.write_bytes(victim.read_bytes()[:1000])
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiCorruptFileError, match=victim.name):
        table.read()
    with pytest.raises(HudiCorruptFileError, match=victim.name):
        list(table.read_stream())


def test_malformed_commit_file_v9(copy_of) -> None:
    path = copy_of(TABLE)
    commit = next((path / ".hoodie" / "timeline").glob("20260307162456179_*.commit"))
    commit.write_bytes(b"Obj\x01" + b"\x00" * 20)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=commit.name):
        table.read()


def test_malformed_commit_file_v6(copy_of) -> None:
    path = copy_of(V6_TABLE)
    commit = path / ".hoodie" / "20240418172804498.commit"
    commit.write_text('{"partitionToWriteStats": {')
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=commit.name):
        table.get_schema()
    with pytest.raises(HudiTimelineError, match=commit.name):
        table.get_timeline().get_instant_metadata_in_json(table.get_timeline().get_completed_commits()[-1])


def test_files_of_uncommitted_instants_are_never_read(copy_of) -> None:
    path = copy_of(TABLE)
    src = next((path / "region=us").glob("*_20260307162456179.parquet"))
    # A file from an instant that only has a requested/inflight file, and one
    # from an instant absent from the timeline: both invisible.
    for ts in ("20260307162458438", "20270101000000000"):
        fake = src.with_name(f"{src.name.split('_')[0]}_0-1-1_{ts}.parquet")
        shutil.copy(src, fake)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    names = {s.base_file_name for s in table.get_file_slices()}
    assert src.name in names
    assert not any("20260307162458438" in n or "20270101000000000" in n for n in names)


# -- spec errors -----------------------------------------------------------


def test_unknown_filter_column_errors_before_rows(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    opts = HudiReadOptions(filters=[("no_such_column", "=", "1")])
    with pytest.raises(HudiFilterError, match="no_such_column"):
        table.read(opts)
    with pytest.raises(HudiFilterError, match="no_such_column"):
        table.read_stream(opts)
    with pytest.raises(HudiFilterError, match="no_such_column"):
        table.get_file_slices(opts)


def test_unparseable_filter_value(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiFilterError, match=r"'abc'.*txn_ts.*int64"):
        table.read(HudiReadOptions(filters=[("txn_ts", ">", "abc")]))
    with pytest.raises(HudiFilterError, match="is_international"):
        table.read(HudiReadOptions(filters=[("is_international", "=", "maybe")]))


def test_unknown_projection_column(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiSchemaError, match="nope"):
        table.read(HudiReadOptions(projection=["txn_id", "nope"]))


def test_file_group_reader_validates_filters(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    fgr = table.create_file_group_reader_with_options()
    fs = table.get_file_slices()[0]
    with pytest.raises(HudiFilterError, match="nope"):
        fgr.read_file_slice(fs, HudiReadOptions(filters=[("nope", "=", "1")]))
    with pytest.raises(HudiFilterError, match="nope"):
        next(iter(fgr.read_file_slice_stream(fs, HudiReadOptions(filters=[("nope", "=", "1")]))))


def test_incremental_stream_is_unsupported(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiUnsupportedError, match="incremental"):
        table.read_stream(HudiReadOptions().with_query_type(hudi_ray.HudiQueryType.Incremental))


@pytest.mark.parametrize("bad", ["2024-03-15T14:25:30", "2024-03-15", "yesterday", "2024-13-45T00:00:00Z"])
def test_bad_timestamps(table_path, bad: str) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiTimestampError, match="as-of timestamp"):
        table.read(HudiReadOptions().with_as_of_timestamp(bad))
    inc = HudiReadOptions().with_query_type(hudi_ray.HudiQueryType.Incremental)
    with pytest.raises(HudiTimestampError, match="start timestamp"):
        table.read(inc.with_start_timestamp(bad))


def test_bad_query_type_and_read_optimized_flag(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiConfigError, match=r"hoodie\.read\.query\.type"):
        table.read(HudiReadOptions(hudi_options={"hoodie.read.query.type": "sideways"}))
    with pytest.raises(HudiConfigError, match=r"read_optimized"):
        table.read(HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "perhaps"}))


def test_file_group_reader_on_missing_file(table_path) -> None:
    path = str(table_path(TABLE))
    fgr = hudi_ray.HudiFileGroupReader(path)
    with pytest.raises(HudiFileNotFoundError, match=r"missing\.parquet"):
        fgr.read_file_slice_from_paths("region=us/missing.parquet", [])
