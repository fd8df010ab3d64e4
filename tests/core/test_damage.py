"""A damaged table is reported as damaged, never read as fewer (or more) rows."""

from __future__ import annotations

import io
import json
import re
import shutil
import struct
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import hudi_ray
from hudi_ray import (
    HudiConfigError,
    HudiCorruptFileError,
    HudiFileNotFoundError,
    HudiReadOptions,
    HudiSchemaError,
    HudiTableBuilder,
    HudiTimelineError,
    HudiTimestampError,
)
from hudi_ray.core.log_file.block import BlockType, HeaderKey, LogBlock
from hudi_ray.core.log_file.content import decode_avro_block, decode_parquet_block
from tests.support import row_set

TABLE = "sample_table/cow/v9_txns_simple_meta"
V6_TABLE = "sample_table/cow/v6_simplekeygen_nonhivestyle"


def _rows(table: hudi_ray.HudiTable, options: HudiReadOptions | None = None) -> int:
    return sum(b.num_rows for b in table.read(options))


def _edit_properties(path: Path, old: str, new: str) -> Path:
    props = path / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    assert old in text
    props.write_text(text.replace(old, new))
    return props


# -- 1. table version ------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("hoodie.table.version=9\n", ""),
        # One flipped bit in the key ("r" 0x72 -> "v" 0x76) hides the version.
        ("hoodie.table.version=9", "hoodie.table.vevsion=9"),
    ],
)
def test_table_version_missing(copy_of, old: str, new: str) -> None:
    path = copy_of(TABLE)
    _edit_properties(path, old, new)
    with pytest.raises(HudiConfigError, match=r"hoodie\.table\.version.*hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_table_version_value_with_a_flipped_bit(copy_of) -> None:
    path = copy_of(TABLE)
    # "9" is 0x39; one bit away is "=" (0x3d) and "1" (0x31).
    for bad in ("=", "1"):
        _edit_properties(path, "hoodie.table.version=", f"hoodie.table.version={bad}")
        with pytest.raises(HudiConfigError, match=rf"hoodie\.table\.version.*{bad}"):
            HudiTableBuilder.from_base_uri(str(path)).build()
        _edit_properties(path, f"hoodie.table.version={bad}", "hoodie.table.version=")


def test_table_version_contradicts_layout_property(copy_of) -> None:
    path = copy_of(TABLE)
    _edit_properties(path, "hoodie.table.version=9", "hoodie.table.version=6")
    with pytest.raises(HudiConfigError, match=r"hoodie\.table\.version=6.*hoodie\.timeline\.layout\.version=1"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_table_version_contradicts_timeline_folder(copy_of) -> None:
    path = copy_of(TABLE)
    props = _edit_properties(path, "hoodie.table.version=9", "hoodie.table.version=6")
    _edit_properties(path, "hoodie.timeline.layout.version=2", "hoodie.timeline.layout.version=1")
    with pytest.raises(HudiTimelineError, match=rf"{props.name}.*timeline"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_old_table_version_claiming_new_layout(copy_of) -> None:
    path = copy_of(V6_TABLE)
    _edit_properties(path, "hoodie.table.version=6", "hoodie.table.version=8")
    _edit_properties(path, "hoodie.timeline.layout.version=1", "hoodie.timeline.layout.version=2")
    (path / ".hoodie" / "timeline").mkdir()
    with pytest.raises(HudiTimelineError, match=r"hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


# -- 2. invalid dates ------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "20240230000000",  # February 30th
        "20241301000000",  # month 13
        "20240315142560",  # second 60
        "20240230000000000",
        "-1",
        "-1710512730000",
        "\u0662\u0660\u0662\u0664\u0660\u0663\u0661\u0665\u0661\u0664\u0662\u0665\u0663\u0660",  # Arabic-Indic digits
        "\uff12\uff10\uff12\uff14\uff10\uff13\uff11\uff15\uff11\uff14\uff12\uff15\uff13\uff10",  # full-width digits
        "\uff11\uff17\uff11\uff10\uff15\uff11\uff12\uff17\uff13\uff10",
        "2024-02-30T00:00:00Z",
        "\uff12\uff10\uff12\uff14-03-15T14:25:30Z",
        "2024-03-15T14:25:30+24:00",
    ],
)
def test_invalid_dates_are_errors(table_path, bad: str) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiTimestampError, match="as-of timestamp"):
        table.read(HudiReadOptions().with_as_of_timestamp(bad))
    inc = HudiReadOptions().with_query_type(hudi_ray.HudiQueryType.Incremental)
    with pytest.raises(HudiTimestampError, match="start timestamp"):
        table.read(inc.with_start_timestamp(bad))
    with pytest.raises(HudiTimestampError, match="end timestamp"):
        table.read(inc.with_end_timestamp(bad))


def test_valid_dates_still_parse(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    latest = _rows(table)
    for ok in ("20991231235959", "20991231235959999", "4102444799", "2099-12-31T23:59:59Z"):
        assert _rows(table, HudiReadOptions().with_as_of_timestamp(ok)) == latest


# -- 3. commit metadata ------------------------------------------------------------

OVERWRITE_TABLE = "sample_table/cow/v9_txns_simple_overwrite"


def _incremental(start: str = "0") -> HudiReadOptions:
    return HudiReadOptions().with_query_type(hudi_ray.HudiQueryType.Incremental).with_start_timestamp(start)


def _rewrite_avro_commit(commit: Path, change) -> None:
    """Re-encode a layout-2 commit file after ``change`` edits its record."""
    with commit.open("rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        records = list(reader)
    change(records[0])
    with commit.open("wb") as f:
        fastavro.writer(f, schema, records)


def test_zero_byte_commit_fails_incremental_and_snapshot(copy_of) -> None:
    path = copy_of(TABLE)
    commit = next((path / ".hoodie" / "timeline").glob("20260307162456179_*.commit"))
    commit.write_bytes(b"")
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=r"20260307162456179.*empty"):
        table.read(_incremental())
    with pytest.raises(HudiTimelineError, match=r"20260307162456179.*empty"):
        table.read()


@pytest.mark.parametrize("name", [OVERWRITE_TABLE, TABLE])
def test_zero_byte_replacecommit_does_not_resurrect_file_groups(copy_of, name: str) -> None:
    path = copy_of(name)
    replace = sorted((path / ".hoodie" / "timeline").glob("*_*.replacecommit"))[-1]
    replace.write_bytes(b"")
    for listing in ("true", "false"):
        table = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", listing).build()
        with pytest.raises(HudiTimelineError, match=replace.name.split("_")[0]):
            table.read()


def test_replacecommit_without_replaced_ids(copy_of) -> None:
    path = copy_of(OVERWRITE_TABLE)
    replace = next((path / ".hoodie" / "timeline").glob("*_*.replacecommit"))
    _rewrite_avro_commit(replace, lambda r: r.update(partitionToReplaceFileIds=None))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=r"partitionToReplaceFileIds"):
        table.read()


@pytest.mark.parametrize(
    ("field", "value"),
    [("fileId", "00000000-0000-0000-0000-000000000000-0"), ("partitionPath", "")],
)
def test_write_stat_with_changed_identity(copy_of, field: str, value) -> None:
    path = copy_of(TABLE)
    commit = next((path / ".hoodie" / "timeline").glob("20260307162456179_*.commit"))

    def change(record: dict) -> None:
        for stats in record["partitionToWriteStats"].values():
            stats[0][field] = value

    _rewrite_avro_commit(commit, change)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=rf"20260307162456179.*{field}"):
        table.read(_incremental("20260307162454799"))


def _row_set(batches: list[pa.RecordBatch]) -> list[str]:
    return row_set(batches) if batches else []


def test_write_stat_without_partition_path_is_listed_under_its_map_key(copy_of) -> None:
    """Hudi's own readers take the partition from the map key."""
    path = copy_of(TABLE)
    expected = [_row_set(HudiTableBuilder.from_base_uri(str(path)).build().read(o)) for o in (None, _incremental())]
    commit = next((path / ".hoodie" / "timeline").glob("20260307162456179_*.commit"))

    def change(record: dict) -> None:
        for stats in record["partitionToWriteStats"].values():
            for stat in stats:
                stat["partitionPath"] = None

    _rewrite_avro_commit(commit, change)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert [_row_set(table.read(o)) for o in (None, _incremental())] == expected


@pytest.mark.parametrize(
    "ghost",
    [
        {"fileId": None, "path": "30/ghost.parquet", "partitionPath": "30", "numWrites": 1},
        {"fileId": "ghost-0", "path": None, "partitionPath": "30", "numWrites": 1},
        {"fileId": "ghost-0", "path": "", "partitionPath": "30"},
        {"partitionPath": "30"},
    ],
)
def test_write_stat_naming_no_file_is_skipped(copy_of, ghost: dict) -> None:
    """Hudi skips stats with a null fileId or path (they name no file); so does the reader."""
    path = copy_of(V6_TABLE)
    expected = [_row_set(HudiTableBuilder.from_base_uri(str(path)).build().read(o)) for o in (None, _incremental())]
    commit = path / ".hoodie" / "20240418172804498.commit"
    meta = json.loads(commit.read_text())
    meta["partitionToWriteStats"]["30"].append(ghost)
    commit.write_text(json.dumps(meta))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert [_row_set(table.read(o)) for o in (None, _incremental())] == expected
    stats = table.get_timeline().write_stats(table.get_timeline().find("20240418172804498"))
    assert all(st["fileId"] and st["path"] for st in stats)


@pytest.mark.parametrize(
    ("field", "value"),
    [("fileId", 7), ("path", 7), ("partitionPath", 30), ("fileId", ""), ("partitionPath", "10")],
)
def test_write_stat_with_wrong_field(copy_of, field: str, value) -> None:
    path = copy_of(V6_TABLE)
    commit = path / ".hoodie" / "20240418172804498.commit"
    meta = json.loads(commit.read_text())
    meta["partitionToWriteStats"]["30"][0][field] = value
    commit.write_text(json.dumps(meta))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=rf"20240418172804498.*{field}"):
        table.read()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda m: m.update(partitionToWriteStats=list(m["partitionToWriteStats"].values())), "must be a map"),
        (lambda m: m.update(partitionToWriteStats={"30": "oops"}), "must be a list"),
        (lambda m: m.update(partitionToWriteStats={"30": ["oops"]}), "not a record"),
        (lambda m: m["partitionToWriteStats"]["30"][0].update(numWrites="1"), "numWrites"),
        (lambda m: m["partitionToWriteStats"]["30"][0].update(numWrites=-1), "numWrites"),
        (lambda m: m.pop("partitionToWriteStats"), "partitionToWriteStats"),
    ],
)
def test_malformed_json_commit_metadata(copy_of, damage, message: str) -> None:
    path = copy_of(V6_TABLE)
    commit = path / ".hoodie" / "20240418172804498.commit"
    meta = json.loads(commit.read_text())
    damage(meta)
    commit.write_text(json.dumps(meta))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiTimelineError, match=rf"20240418172804498.*{message}"):
        table.read(_incremental())
    with pytest.raises(HudiTimelineError, match=rf"20240418172804498.*{message}"):
        table.read()


# -- 4. files and partitions a commit wrote ----------------------------------------

MOR_TABLE = "sample_table/mor/avro/v9_txns_simple_meta"


def _builds(path: Path) -> list[hudi_ray.HudiTable]:
    """The table planned from its metadata table (when it has one) and from storage listing."""
    return [
        HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", enable).build()
        for enable in ("true", "false")
    ]


@pytest.mark.parametrize(("name", "partition", "other"), [(TABLE, "region=eu", "us"), (V6_TABLE, "30", "10")])
def test_missing_partition_directory(copy_of, name: str, partition: str, other: str) -> None:
    path = copy_of(name)
    shutil.rmtree(path / partition)
    field = "region" if name == TABLE else "byteField"
    for table in _builds(path):
        with pytest.raises(HudiFileNotFoundError, match=partition):
            table.read()
        # A read that prunes the damaged partition away is unaffected.
        assert _rows(table, HudiReadOptions(filters=[(field, "=", other)])) > 0


def test_missing_partition_directory_in_time_travel(copy_of) -> None:
    path = copy_of(V6_TABLE)
    shutil.rmtree(path / "30")
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    first, second = table.get_timeline().get_completed_commits()
    # The first commit did not write partition 30; the second did.
    with pytest.raises(HudiFileNotFoundError, match=r"30.*20240418172804498"):
        table.read(HudiReadOptions().with_as_of_timestamp(second.timestamp))
    assert _rows(table, HudiReadOptions().with_as_of_timestamp(first.timestamp)) > 0


@pytest.mark.parametrize(("name", "partition"), [(TABLE, "region=eu"), (V6_TABLE, "30")])
def test_missing_partition_metafile(copy_of, name: str, partition: str) -> None:
    path = copy_of(name)
    (path / partition / ".hoodie_partition_metadata").unlink()
    table = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()
    with pytest.raises(HudiFileNotFoundError, match=rf"{partition}/\.hoodie_partition_metadata"):
        table.read()


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
    for table in _builds(path):
        with pytest.raises(HudiFileNotFoundError, match=re.escape(victim.name)) as caught:
            table.read()
        assert "clean" not in str(caught.value)  # nothing supersedes it: damage
        with pytest.raises(HudiFileNotFoundError, match=re.escape(victim.name)):
            list(table.read_stream())


def test_missing_log_file_superseded_by_compaction(copy_of) -> None:
    path = copy_of(MOR_TABLE)
    before = _rows(HudiTableBuilder.from_base_uri(str(path)).build())
    victim = next((path / "region=us").glob(".*_20260307162604102.log.*"))
    victim.unlink()
    # The compaction at 20260307162618152 made a new slice: the latest
    # snapshot does not need the log, a read as of before the compaction does.
    for table in _builds(path):
        assert _rows(table) == before
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
    expected = _rows(HudiTableBuilder.from_base_uri(str(path)).build())
    victim.unlink()
    for table in _builds(path):
        assert _rows(table) == expected
        with pytest.raises(HudiFileNotFoundError, match=victim.name):
            table.read(HudiReadOptions().with_as_of_timestamp("20260307162440672"))
    # The clean that removed it may have been archived: gone, but not called damage.
    with pytest.raises(HudiFileNotFoundError, match=rf"{victim.name}.*probably removed it"):
        _listing(path).read(HudiReadOptions().with_as_of_timestamp("20260307162440672"))


def test_superseded_file_older_than_the_commits_a_clean_retains(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=apac").glob("07838327-*_20260307162434124.parquet"))
    as_of = HudiReadOptions().with_as_of_timestamp("20260307162440672")
    expected = _rows(HudiTableBuilder.from_base_uri(str(path)).build(), as_of)
    victim.unlink()
    timeline = path / ".hoodie" / "timeline"
    # Its group's next version is 20260307162447985. A clean retaining commits from
    # 20260307162449244 on keeps only that version of the two: the file was cleaned.
    clean = {"earliestCommitToRetain": "20260307162449244", "partitionMetadata": {}}
    (timeline / "20260307162459500_20260307162459600.clean").write_text(json.dumps(clean))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert 0 < _rows(table, as_of) < expected
    # Retaining from 20260307162440672 on, the cleaner keeps the file: the last
    # version before the earliest retained commit. Its absence is not explained.
    clean["earliestCommitToRetain"] = "20260307162440672"
    (timeline / "20260307162459700_20260307162459800.clean").write_text(json.dumps(clean))
    with pytest.raises(HudiFileNotFoundError, match=rf"{victim.name}.*probably removed it"):
        HudiTableBuilder.from_base_uri(str(path)).build().read(as_of)


def test_listing_partitions_walks_no_write_stats(table_path, monkeypatch) -> None:
    from hudi_ray.core.timeline import HudiTimeline

    table = _listing(table_path(TABLE))

    def fail(*_args, **_kwargs):
        raise AssertionError("write stats walked to list partitions")

    monkeypatch.setattr(HudiTimeline, "write_stats", fail)
    assert table._view.partition_paths() == ["region=apac", "region=eu", "region=us"]


def test_missing_file_of_a_group_replaced_later(copy_of) -> None:
    path = copy_of(OVERWRITE_TABLE)
    victim = next((path / "us").glob("fbafeb04-*_20260403183955124.parquet"))
    before_replace = "20260403183959838"
    victim.unlink()
    # The insert overwrite at 20260403184001282 replaced the group.
    assert _rows(HudiTableBuilder.from_base_uri(str(path)).build()) == 3
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiFileNotFoundError, match=victim.name):
        table.read(HudiReadOptions().with_as_of_timestamp(before_replace))
    clean = {"partitionMetadata": {"us": {"partitionPath": "us", "successDeleteFiles": [victim.name]}}}
    (path / ".hoodie" / "timeline" / "20260403184010000_20260403184011000.clean").write_text(json.dumps(clean))
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert _rows(table, HudiReadOptions().with_as_of_timestamp(before_replace)) > 0


# -- 5. invalid UTF-8 in log blocks --------------------------------------------------

TRIPS_MOR = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"


def _damage_trips_log(path: Path, old: bytes, new: bytes) -> Path:
    """Replace the one occurrence of ``old`` in a log file of the trips table's copy."""
    log_file = next((path / "city=sao_paulo").glob(".*_20251220210130911.log.*"))
    raw = log_file.read_bytes()
    assert raw.count(old) == 1
    log_file.write_bytes(raw.replace(old, new))
    return log_file


def test_invalid_utf8_in_avro_log_block(copy_of) -> None:
    path = copy_of(TRIPS_MOR)
    # Same length, so the block's structure stays intact and only the text is bad.
    log_file = _damage_trips_log(path, b"rider-G", b"rider\xff\xfe")
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    where = rf"AVRO_DATA block at byte \d+ of .*{re.escape(log_file.name)}.*'rider'.*UTF-8"
    with pytest.raises(HudiCorruptFileError, match=where):
        table.read()
    with pytest.raises(HudiCorruptFileError, match=where):
        list(table.read_stream())


def _avro_block(schema: dict, record: dict, old: bytes, new: bytes) -> LogBlock:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    datum = buf.getvalue().replace(old, new)
    content = struct.pack(">iii", 3, 1, len(datum)) + datum
    header = {HeaderKey.SCHEMA: json.dumps(schema)}
    return LogBlock(BlockType.AVRO_DATA, header, content, "file:///t/p/.f-0_1.log.1_0-1-1", 42)


@pytest.mark.parametrize("nested", [False, True])
def test_invalid_utf8_in_both_avro_decoders(nested: bool) -> None:
    fields = [{"name": "s", "type": ["null", "string"]}]
    record: dict = {"s": "abc"}
    if nested:
        # A nested record takes the fastavro path instead of the columnar one.
        fields.append(
            {"name": "n", "type": {"type": "record", "name": "inner", "fields": [{"name": "x", "type": "int"}]}}
        )
        record["n"] = {"x": 1}
    schema = {"type": "record", "name": "r", "fields": fields}
    block = _avro_block(schema, record, b"abc", b"a\xff\xfe")
    with pytest.raises(HudiCorruptFileError, match=r"AVRO_DATA block at byte 42 of .*\.f-0_1\.log"):
        decode_avro_block(block)
    assert decode_avro_block(_avro_block(schema, record, b"abc", b"xyz")).column("s").to_pylist() == ["xyz"]


def test_invalid_utf8_in_parquet_log_block() -> None:
    buf = io.BytesIO()
    pq.write_table(pa.table({"s": ["abcdefgh"]}), buf, compression="NONE", use_dictionary=False, write_statistics=False)
    content = buf.getvalue().replace(b"abcdefgh", b"ab\xff\xfeefgh")
    block = LogBlock(BlockType.PARQUET_DATA, {}, content, "file:///t/p/.f-0_1.log.1_0-1-1", 7)
    with pytest.raises(HudiCorruptFileError, match=r"PARQUET_DATA block at byte 7 of .*\.f-0_1\.log.*UTF8"):
        decode_parquet_block(block)


# -- 6. damaged column names -----------------------------------------------------------


def _flip_in_parquet_footer(parquet: Path, old: bytes, new: bytes) -> None:
    """Rename a column in the footer's schema, the name Arrow reads columns by."""
    raw = parquet.read_bytes()
    start = len(raw) - 8 - int.from_bytes(raw[-8:-4], "little")
    at = raw.index(old, start)
    parquet.write_bytes(raw[:at] + new + raw[at + len(old) :])


LATEST_COMMIT = "20260307162456179"  # TABLE's latest commit; the clustering before it is 20260307162454799


def _edit_commit_schemas(path: Path, edit) -> None:
    """Rewrite the writer schema of every data commit: ``edit(fields, instant time)``."""
    timeline = path / ".hoodie" / "timeline"
    for commit in [*timeline.glob("*_*.commit"), *timeline.glob("*_*.replacecommit")]:
        ts = commit.name.split("_")[0]

        def change(record: dict, ts: str = ts) -> None:
            extra = record.get("extraMetadata") or {}
            if extra.get("schema"):
                schema = json.loads(extra["schema"])
                schema["fields"] = edit(schema["fields"], ts)
                extra["schema"] = json.dumps(schema)

        _rewrite_avro_commit(commit, change)


def _required_since(path: Path, column: str, since: str, **extra) -> None:
    """``column`` is absent from the schemas of commits before ``since`` and a
    non-nullable string without a default (plus ``extra``) from then on."""

    def edit(fields: list[dict], ts: str) -> list[dict]:
        if ts < since:
            return [f for f in fields if f["name"] != column]
        return [{"name": column, "type": "string", **extra} if f["name"] == column else f for f in fields]

    _edit_commit_schemas(path, edit)


def _listing(path: Path) -> hudi_ray.HudiTable:
    return HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # One flipped bit each: "i" 0x69 -> "a" 0x61, "e" 0x65 -> "g" 0x67.
        (b"_hoodie_commit_time", b"_hoodie_commit_tame"),
        (b"merchant_name", b"merchant_namg"),
    ],
)
def test_damaged_column_name_in_parquet_footer(copy_of, old: bytes, new: bytes) -> None:
    path = copy_of(TABLE)
    if old == b"merchant_name":
        # Only a column the file must hold is reported damaged (see below).
        _required_since(path, "merchant_name", LATEST_COMMIT)
    victim = next((path / "region=us").glob("*_20260307162456179.parquet"))
    _flip_in_parquet_footer(victim, old, new)
    for table in _builds(path):
        match = rf"'{old.decode()}'.*{victim.name}.*'{new.decode()}'"
        with pytest.raises(HudiSchemaError, match=match):
            table.read()
        with pytest.raises(HudiSchemaError, match=match):
            list(table.read_stream())


def test_near_name_of_an_optional_column_reads_as_nulls(copy_of) -> None:
    """A table that dropped ``v1`` and added ``v2`` has old files holding
    ``v1`` and lacking ``v2``: schema evolution, not a damaged name."""
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob(f"*_{LATEST_COMMIT}.parquet"))
    _flip_in_parquet_footer(victim, b"merchant_name", b"merchant_namg")
    for table in _builds(path):
        rows = pa.Table.from_batches(table.read())
        names = rows.filter(pc.equal(rows.column("_hoodie_file_name"), victim.name)).column("merchant_name")
        assert len(names) > 0 and names.null_count == len(names)
    # The same with the evolution in the table schema: the latest commit renamed the column.
    _flip_in_parquet_footer(victim, b"merchant_namg", b"merchant_name")
    _edit_commit_schemas(
        path,
        lambda fields, ts: [
            {**f, "name": "merchant_namf"} if f["name"] == "merchant_name" and ts == LATEST_COMMIT else f
            for f in fields
        ],
    )
    rows = pa.Table.from_batches(_listing(path).read())
    assert "merchant_name" not in rows.column_names
    assert rows.column("merchant_namf").null_count == rows.num_rows


def test_required_column_added_later(copy_of) -> None:
    """A non-nullable column without a default, added by the latest commit:
    older files lack it and read it as NULL; files the commit wrote must hold it."""
    path = copy_of(TABLE)
    _required_since(path, "merchant_name", LATEST_COMMIT)
    older = [*path.glob("region=*/*_20260307162454799.parquet")]
    for victim in older:
        pq.write_table(pq.read_table(victim).drop_columns(["merchant_name"]), victim)
    rows = pa.Table.from_batches(_listing(path).read())
    from_older = rows.filter(pc.is_in(rows.column("_hoodie_file_name"), pa.array([v.name for v in older])))
    assert from_older.num_rows > 0 and from_older.column("merchant_name").null_count == from_older.num_rows
    victim = next((path / "region=us").glob(f"*_{LATEST_COMMIT}.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["merchant_name"]), victim)
    match = rf"Required column 'merchant_name' \(not nullable and without a default.*\).*{victim.name}"
    with pytest.raises(HudiSchemaError, match=match):
        _listing(path).read()
    with pytest.raises(HudiSchemaError, match=match):
        list(_listing(path).read_stream())


def test_required_column_in_every_schema_and_the_create_schema(copy_of) -> None:
    """No commit lacks the column and the table was created with it: every file must hold it."""
    path = copy_of(TABLE)
    _required_since(path, "merchant_name", "0")
    victim = next(path.glob("region=*/*_20260307162454799.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["merchant_name"]), victim)
    with pytest.raises(HudiSchemaError, match=rf"Required column 'merchant_name'.*{victim.name}"):
        _listing(path).read()


def test_non_nullable_column_with_a_default_reads_as_nulls(copy_of) -> None:
    """Avro defaults are not materialised: a missing column with one reads as NULL."""
    path = copy_of(TABLE)
    _required_since(path, "merchant_name", "0", default="none")
    victim = next((path / "region=us").glob(f"*_{LATEST_COMMIT}.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["merchant_name"]), victim)
    rows = pa.Table.from_batches(_listing(path).read())
    names = rows.filter(pc.equal(rows.column("_hoodie_file_name"), victim.name)).column("merchant_name")
    assert len(names) > 0 and names.null_count == len(names)


def test_meta_field_missing_when_the_table_does_not_populate_them(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob(f"*_{LATEST_COMMIT}.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["_hoodie_record_key"]), victim)
    table = (
        HudiTableBuilder.from_base_uri(str(path))
        .with_hudi_option("hoodie.metadata.enable", "false")
        .with_hudi_option("hoodie.populate.meta.fields", "false")
        .build()
    )
    assert sum(b.num_rows for b in table.read()) > 0


def test_near_name_in_log_block_of_an_optional_column_reads_as_nulls(copy_of) -> None:
    path = copy_of(TRIPS_MOR)
    _damage_trips_log(path, b'"name":"rider"', b'"name":"rhder"')
    rows = pa.Table.from_batches(HudiTableBuilder.from_base_uri(str(path)).build().read())
    assert rows.column("rider").null_count > 0


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # The block's other columns are not decoded, yet the near name is still found in its schema.
        (
            b'"name":"_hoodie_commit_seqno"',
            b'"name":"_hoodie_commit_seqnp"',
            r"'_hoodie_commit_seqno' is missing from .*which has a column '_hoodie_commit_seqnp' .*damaged",
        ),
        # Not a near miss: the column is simply absent, and it is required.
        (b'"name":"_hoodie_file_name"', b'"name":"_xxxxxx_xxxx_xxxx"', r"Required column '_hoodie_file_name'"),
    ],
)
def test_damaged_column_name_in_log_block_schema(copy_of, old: bytes, new: bytes, message: str) -> None:
    path = copy_of(TRIPS_MOR)
    log_file = _damage_trips_log(path, old, new)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiSchemaError, match=message) as caught:
        table.read()
    assert re.search(rf"AVRO_DATA block at byte \d+ of .*{re.escape(log_file.name)}", str(caught.value))


def test_required_column_missing_from_parquet_file(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob("*_20260307162456179.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["_hoodie_record_key"]), victim)
    table = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()
    with pytest.raises(HudiSchemaError, match=rf"Required column '_hoodie_record_key'.*{victim.name}"):
        table.read()


def test_nullable_column_added_later_still_reads_as_nulls(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob("*_20260307162456179.parquet"))
    pq.write_table(pq.read_table(victim).drop_columns(["txn_metadata"]), victim)
    table = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()
    rows = pa.Table.from_batches(table.read())
    assert rows.column("txn_metadata").null_count > 0


# -- 7. bounded checks in decoders and configs -------------------------------------------


def test_negative_record_length_in_columnar_avro_block() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": ["null", "string"]}]}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), {"s": "abc"})
    datum = buf.getvalue()
    content = struct.pack(">iii", 3, 2, len(datum)) + datum + struct.pack(">i", -3) + datum
    block = LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: json.dumps(schema)}, content, "file:///t/.f-0_1.log.1", 9)
    with pytest.raises(HudiCorruptFileError, match=r"record 1 has negative length -3 at content offset"):
        decode_avro_block(block)


def test_parquet_block_checks_utf8_of_string_columns_only() -> None:
    from hudi_ray.core.log_file.content import _holds_strings

    assert _holds_strings(pa.list_(pa.struct([("a", pa.string())])))
    assert _holds_strings(pa.map_(pa.string(), pa.int32()))
    assert _holds_strings(pa.dictionary(pa.int32(), pa.string()))
    assert not _holds_strings(pa.struct([("a", pa.int64()), ("b", pa.binary())]))
    # Invalid UTF-8 nested in a list of strings is still found; binary bytes are not text.
    buf = io.BytesIO()
    table = pa.table({"l": [["abcdefgh"]], "b": [b"\xff\xfe"]})
    pq.write_table(table, buf, compression="NONE", use_dictionary=False, write_statistics=False)
    block = LogBlock(BlockType.PARQUET_DATA, {}, buf.getvalue(), "file:///t/p/.f-0_1.log.1_0-1-1", 7)
    assert decode_parquet_block(block).column("b").to_pylist() == [b"\xff\xfe"]
    bad = buf.getvalue().replace(b"abcdefgh", b"ab\xff\xfeefgh")
    block = LogBlock(BlockType.PARQUET_DATA, {}, bad, "file:///t/p/.f-0_1.log.1_0-1-1", 7)
    with pytest.raises(HudiCorruptFileError, match=r"PARQUET_DATA block at byte 7"):
        decode_parquet_block(block)


@pytest.mark.parametrize(("value", "enabled"), [(None, True), ("true", True), ("false", False), ("FALSE", False)])
def test_metadata_table_enabled_config(value: str | None, enabled: bool) -> None:
    from hudi_ray.core.config import TableConfig

    options = {} if value is None else {"hoodie.metadata.enable": value}
    assert TableConfig(options).metadata_table_enabled is enabled
