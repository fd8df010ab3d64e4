"""Files and partitions a completed commit names but storage lacks are damage, reported
naming them (never read as fewer rows), unless a later slice, replace or clean explains
their absence; files of instants that never completed are never read."""

from __future__ import annotations

import json
import re
import shutil

import pytest

import hudi_ray
from hudi_ray import HudiFileNotFoundError, HudiReadOptions, HudiTableBuilder
from tests.core.damage import MOR_TABLE, OVERWRITE_TABLE, TABLE, V6_TABLE, builds, listing, row_count

# -- partitions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "partition", "other"), [(TABLE, "region=eu", "us"), (V6_TABLE, "30", "10")])
def test_missing_partition_directory(copy_of, name: str, partition: str, other: str) -> None:
    path = copy_of(name)
    shutil.rmtree(path / partition)
    field = "region" if name == TABLE else "byteField"
    for table in builds(path):
        with pytest.raises(HudiFileNotFoundError, match=partition):
            table.read()
        # A read that prunes the damaged partition away is unaffected.
        assert row_count(table, HudiReadOptions(filters=[(field, "=", other)])) > 0


def test_missing_partition_directory_in_time_travel(copy_of) -> None:
    path = copy_of(V6_TABLE)
    shutil.rmtree(path / "30")
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    first, second = table.get_timeline().get_completed_commits()
    # The first commit did not write partition 30; the second did.
    with pytest.raises(HudiFileNotFoundError, match=r"30.*20240418172804498"):
        table.read(HudiReadOptions().with_as_of_timestamp(second.timestamp))
    assert row_count(table, HudiReadOptions().with_as_of_timestamp(first.timestamp)) > 0


@pytest.mark.parametrize(("name", "partition"), [(TABLE, "region=eu"), (V6_TABLE, "30")])
def test_missing_partition_metafile(copy_of, name: str, partition: str) -> None:
    path = copy_of(name)
    (path / partition / ".hoodie_partition_metadata").unlink()
    table = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()
    with pytest.raises(HudiFileNotFoundError, match=rf"{partition}/\.hoodie_partition_metadata"):
        table.read()


def test_listing_partitions_walks_no_write_stats(table_path, monkeypatch) -> None:
    from hudi_ray.core.timeline import HudiTimeline

    table = listing(table_path(TABLE))

    def fail(*_args, **_kwargs):
        raise AssertionError("write stats walked to list partitions")

    monkeypatch.setattr(HudiTimeline, "write_stats", fail)
    assert table._view.partition_paths() == ["region=apac", "region=eu", "region=us"]


# -- base and log files ----------------------------------------------------------------------------


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


@pytest.mark.parametrize(
    ("name", "partition"),
    [
        ("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle", "10"),
        ("sample_table/mor/parquet/v6_nonpartitioned", ""),
        ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d", "city=sao_paulo"),
    ],
)
def test_missing_log_file_of_latest_slice(copy_of, name: str, partition: str) -> None:
    path = copy_of(name)
    victim = next((path / partition).glob(".*.log.*"))
    victim.unlink()
    for table in builds(path):
        with pytest.raises(HudiFileNotFoundError, match=re.escape(victim.name)) as caught:
            table.read()
        assert "clean" not in str(caught.value)  # nothing supersedes it: damage
        with pytest.raises(HudiFileNotFoundError, match=re.escape(victim.name)):
            list(table.read_stream())


def test_missing_log_file_superseded_by_compaction(copy_of) -> None:
    path = copy_of(MOR_TABLE)
    before = row_count(HudiTableBuilder.from_base_uri(str(path)).build())
    victim = next((path / "region=us").glob(".*_20260307162604102.log.*"))
    victim.unlink()
    # The compaction at 20260307162618152 made a new slice: the latest
    # snapshot does not need the log, a read as of before the compaction does.
    for table in builds(path):
        assert row_count(table) == before
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiFileNotFoundError, match=re.escape(victim.name)):
        table.read(HudiReadOptions().with_as_of_timestamp("20260307162606034"))
    # Once a clean records having deleted it, fewer rows are what time travel gives.
    clean = {"partitionMetadata": {"region=us": {"partitionPath": "region=us", "successDeleteFiles": [victim.name]}}}
    (path / ".hoodie" / "timeline" / "20260307162630000_20260307162631000.clean").write_text(json.dumps(clean))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    table.read(HudiReadOptions().with_as_of_timestamp("20260307162606034"))


def test_missing_superseded_base_file_in_time_travel(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=apac").glob("07838327-*_20260307162434124.parquet"))
    expected = row_count(HudiTableBuilder.from_base_uri(str(path)).build())
    victim.unlink()
    for table in builds(path):
        assert row_count(table) == expected
        with pytest.raises(HudiFileNotFoundError, match=victim.name):
            table.read(HudiReadOptions().with_as_of_timestamp("20260307162440672"))
    # The clean that removed it may have been archived: gone, but not called damage.
    with pytest.raises(HudiFileNotFoundError, match=rf"{victim.name}.*probably removed it"):
        listing(path).read(HudiReadOptions().with_as_of_timestamp("20260307162440672"))


def test_superseded_file_older_than_the_commits_a_clean_retains(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=apac").glob("07838327-*_20260307162434124.parquet"))
    as_of = HudiReadOptions().with_as_of_timestamp("20260307162440672")
    expected = row_count(HudiTableBuilder.from_base_uri(str(path)).build(), as_of)
    victim.unlink()
    timeline = path / ".hoodie" / "timeline"
    # Its group's next version is 20260307162447985. A clean retaining commits from
    # 20260307162449244 on keeps only that version of the two: the file was cleaned.
    clean = {"earliestCommitToRetain": "20260307162449244", "partitionMetadata": {}}
    (timeline / "20260307162459500_20260307162459600.clean").write_text(json.dumps(clean))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert 0 < row_count(table, as_of) < expected
    # Retaining from 20260307162440672 on, the cleaner keeps the file: the last
    # version before the earliest retained commit. Its absence is not explained.
    clean["earliestCommitToRetain"] = "20260307162440672"
    (timeline / "20260307162459700_20260307162459800.clean").write_text(json.dumps(clean))
    with pytest.raises(HudiFileNotFoundError, match=rf"{victim.name}.*probably removed it"):
        HudiTableBuilder.from_base_uri(str(path)).build().read(as_of)


def test_missing_file_of_a_group_replaced_later(copy_of) -> None:
    path = copy_of(OVERWRITE_TABLE)
    victim = next((path / "us").glob("fbafeb04-*_20260403183955124.parquet"))
    before_replace = "20260403183959838"
    victim.unlink()
    # The insert overwrite at 20260403184001282 replaced the group.
    assert row_count(HudiTableBuilder.from_base_uri(str(path)).build()) == 3
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiFileNotFoundError, match=victim.name):
        table.read(HudiReadOptions().with_as_of_timestamp(before_replace))
    clean = {"partitionMetadata": {"us": {"partitionPath": "us", "successDeleteFiles": [victim.name]}}}
    (path / ".hoodie" / "timeline" / "20260403184010000_20260403184011000.clean").write_text(json.dumps(clean))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert row_count(table, HudiReadOptions().with_as_of_timestamp(before_replace)) > 0


def test_file_group_reader_on_missing_file(table_path) -> None:
    path = str(table_path(TABLE))
    fgr = hudi_ray.HudiFileGroupReader(path)
    with pytest.raises(HudiFileNotFoundError, match=r"missing\.parquet"):
        fgr.read_file_slice_from_paths("region=us/missing.parquet", [])


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


def test_a_dangling_link_in_a_partition_is_no_file(copy_of) -> None:
    """A link to nowhere beside the data files is listed as nothing (as Arrow's listing had
    it), not as a failed listing of the partition."""
    path = copy_of(V6_TABLE)
    expected = row_count(listing(path))
    (path / "30" / "dangling.parquet").symlink_to(path / "nowhere.parquet")
    table = listing(path)
    assert row_count(table) == expected
    assert all(s.base_file_name != "dangling.parquet" for s in table.get_file_slices())
