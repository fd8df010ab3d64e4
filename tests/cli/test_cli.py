"""``hudi-ray``: every command on the shared tables (copy-on-write and
merge-on-read, partitioned and not), its answers compared with the library
API's; ``--json`` parsed back; bad input as one line and exit code 2."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hudi_ray
from hudi_ray.cli.main import parse_filter
from hudi_ray.cli.output import cell, plain
from hudi_ray.cli.progress import Progress
from tests.cli.conftest import CliRunner
from tests.support import REPO, TablePath, row_set

COW_PARTITIONED = "sample_table/cow/v8_simplekeygen_nonhivestyle"
COW_FLAT = "sample_table/cow/v6_nonpartitioned"
MOR_PARTITIONED = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"
MOR_FLAT = "sample_table/mor/parquet/v6_nonpartitioned"
EMPTY = "sample_table/cow/v8_empty"
TABLES = [COW_PARTITIONED, COW_FLAT, MOR_PARTITIONED, MOR_FLAT]


def open_table(table_path: TablePath, name: str) -> hudi_ray.HudiTable:
    return hudi_ray.HudiTableBuilder.from_base_uri(str(table_path(name))).build()


def api_rows(table: hudi_ray.HudiTable, options: hudi_ray.HudiReadOptions | None = None) -> pa.Table:
    batches = table.read(options)
    return pa.Table.from_batches(batches) if batches else pa.table({})


# -- info --------------------------------------------------------------------------


@pytest.mark.parametrize("name", TABLES)
def test_info_json_matches_the_table_api(cli: CliRunner, table_path: TablePath, name: str) -> None:
    table = open_table(table_path, name)
    got = cli("info", str(table_path(name)), "--json").json()
    assert got["name"] == table.table_name
    assert got["type"] == table.table_type
    assert got["table_version"] == table.table_version
    assert got["timeline_layout_version"] == (2 if table.table_version >= 8 else 1)
    assert got["partition_fields"] == table.get_partition_schema().names
    assert [f["name"] for f in got["schema"]] == table.get_schema().names
    assert [f["type"] for f in got["schema"]] == [str(f.type) for f in table.get_schema()]
    assert got["completed_instants"] == len(table.get_timeline().instants)
    assert got["latest_commit"] == table.get_timeline().get_latest_commit_timestamp()


def test_info_of_a_mor_table_with_a_metadata_table(cli: CliRunner, table_path: TablePath) -> None:
    path = str(table_path(MOR_PARTITIONED))
    got = cli("info", path, "--json").json()
    assert got["record_key_fields"] == ["uuid"]
    assert got["partition_fields"] == ["city"]
    assert got["hive_style_partitioning"] is True
    assert got["ordering_fields"] == ["ts"]
    assert got["merge_mode"] == "EVENT_TIME_ORDERING"
    assert got["timeline_path"] == ".hoodie/timeline"
    assert got["metadata_table"]["partitions"] == [
        "column_stats",
        "files",
        "partition_stats",
        "record_index",
        "secondary_index_rider_idx",
    ]
    text = cli("info", path)
    assert text.code == 0
    lines = text.out.splitlines()
    assert lines[0].split() == ["table", "v8_trips_8i3u1d", "(MERGE_ON_READ)"]
    assert "merge mode   EVENT_TIME_ORDERING" in lines
    assert "partitioned  by city (hive style)" in lines
    assert "schema (6 columns)" in lines
    assert lines[-1].split() == ["city", "string"]


def test_info_of_a_v6_table_without_a_metadata_table(cli: CliRunner, table_path: TablePath) -> None:
    got = cli("info", str(table_path(COW_FLAT)), "--json").json()
    assert got["table_version"] == 6
    assert got["timeline_path"] == ".hoodie"
    assert got["partition_fields"] == []
    assert got["metadata_table"]["partitions"] == []
    assert got["type"] == "COPY_ON_WRITE"


def test_info_of_an_empty_table(cli: CliRunner, table_path: TablePath) -> None:
    got = cli("info", str(table_path(EMPTY)), "--json").json()
    assert got["completed_instants"] == 0
    assert got["latest_commit"] is None


# -- timeline ----------------------------------------------------------------------


def test_timeline_lists_instants_newest_first_with_what_each_commit_wrote(
    cli: CliRunner, table_path: TablePath
) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    timeline = table.get_timeline()
    got = cli("timeline", str(table_path(MOR_PARTITIONED)), "--json", "--limit", "0").json()
    assert got["total"] == len(timeline.instants) == 8
    assert [e["instant"] for e in got["instants"]] == [i.timestamp for i in reversed(timeline.instants)]
    by_ts = {i.timestamp: i for i in timeline.instants}
    for entry in got["instants"]:
        instant = by_ts[entry["instant"]]
        assert entry["action"] == instant.action
        assert entry["state"] == "COMPLETED"
        assert entry["completed"] == instant.completion_timestamp
        if instant.action == "indexing":
            assert entry["written"] is None
            continue
        stats = timeline.write_stats(instant)
        assert entry["written"]["records"] == sum(s["numWrites"] for s in stats)
        assert entry["written"]["files"] == len(stats)
    # The compaction commit: three files, five inserts, one update, two deletes.
    compaction = next(e for e in got["instants"] if e["action"] == "commit")
    assert compaction["written"] == {
        "files": 3,
        "records": 6,
        "inserts": 5,
        "updates": 1,
        "deletes": 2,
        "bytes": compaction["written"]["bytes"],
    }
    assert compaction["written"]["bytes"] > 1_000_000


def test_timeline_limit_and_pending_instants(cli: CliRunner, table_path: TablePath) -> None:
    path = str(table_path(MOR_PARTITIONED))
    got = cli("timeline", path, "--json", "--limit", "2").json()
    assert [e["instant"] for e in got["instants"]] == ["20251220210130911", "20251220210129235"]
    assert got["total"] == 8
    # The compaction's requested/inflight files stay pending next to its completed commit.
    pending = cli("timeline", path, "--json", "--all", "--limit", "0").json()
    states = [(e["instant"], e["action"], e["state"]) for e in pending["instants"] if e["state"] != "COMPLETED"]
    assert states == [("20251220210129235", "compaction", "INFLIGHT")]
    text = cli("timeline", path, "--limit", "3")
    assert text.code == 0
    lines = text.out.splitlines()
    assert lines[0].split()[:4] == ["requested", "completed", "action", "state"]
    assert lines[1].split()[:4] == ["20251220210130911", "20251220210131755", "deltacommit", "COMPLETED"]
    assert lines[-1] == "(3 newest of 8 instants; --limit 0 shows all)"


def test_timeline_of_a_v6_table_has_no_completion_times(cli: CliRunner, table_path: TablePath) -> None:
    got = cli("timeline", str(table_path(COW_FLAT)), "--json").json()
    assert [e["action"] for e in got["instants"]] == ["commit", "commit"]
    assert all(e["completed"] is None for e in got["instants"])
    assert all(e["written"]["files"] == 1 for e in got["instants"])


# -- slices ------------------------------------------------------------------------


def _slice_keys(slices: list[hudi_ray.HudiFileSlice]) -> list[tuple]:
    return sorted(
        (s.partition_path, s.file_id, s.base_file_name or None, tuple(s.log_file_names), s.total_size_bytes())
        for s in slices
    )


def _cli_slice_keys(got: dict) -> list[tuple]:
    return sorted(
        (p["partition"], fs["file_id"], fs["base_file"], tuple(lf["name"] for lf in fs["log_files"]), fs["total_size"])
        for p in got["partitions"]
        for fs in p["file_slices"]
    )


@pytest.mark.parametrize("name", TABLES)
def test_slices_match_get_file_slices(cli: CliRunner, table_path: TablePath, name: str) -> None:
    table = open_table(table_path, name)
    got = cli("slices", str(table_path(name)), "--json").json()
    assert _cli_slice_keys(got) == _slice_keys(table.get_file_slices())
    assert got["total"]["file_slices"] == len(table.get_file_slices())
    assert got["as_of"] == table.get_timeline().get_latest_commit_timestamp()


def test_slices_as_of_an_earlier_instant_and_text(cli: CliRunner, table_path: TablePath) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    first = table.get_timeline().data_instants[0].timestamp
    got = cli("slices", str(table_path(MOR_PARTITIONED)), "--json", "--as-of", first).json()
    expected = table.get_file_slices(hudi_ray.HudiReadOptions().with_as_of_timestamp(first))
    assert _cli_slice_keys(got) == _slice_keys(expected)
    assert got["as_of"] == first
    text = cli("slices", str(table_path(MOR_PARTITIONED))).out.splitlines()
    assert text[-1].startswith("3 file slices in 3 partitions as of 20251220210130911: 3 base files, 1 log files")
    assert [line.split()[0] for line in text if not line.startswith(" ")][:3] == [
        "city=chennai",
        "city=san_francisco",
        "city=sao_paulo",
    ]
    assert sum(1 for line in text if line.strip().startswith("log ")) == 1


# -- explain -----------------------------------------------------------------------


def test_explain_reports_what_each_stage_kept(cli: CliRunner, table_path: TablePath) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    options = hudi_ray.HudiReadOptions(filters=[("city", "=", "san_francisco"), ("fare", ">", "20")])
    expected = table.explain(options)
    path = str(table_path(MOR_PARTITIONED))
    got = cli("explain", path, "--json", "-f", "city = san_francisco", "--filter", "fare>20").json()
    assert got["query_type"] == "snapshot"
    assert got["listing"] == expected.listing == "metadata table"
    assert [(s["name"], s["partitions"], s["file_slices"]) for s in got["stages"]] == [
        (s.name, s.partitions, s.file_slices) for s in expected.stages
    ]
    assert got["filters"] == [["city", "=", "san_francisco"], ["fare", ">", "20"]]
    assert got["file_slices"] == expected.file_slices == 1
    text = cli("explain", path, "-f", "city = san_francisco", "--filter", "fare>20")
    assert text.out.rstrip("\n") == str(expected)


def test_explain_shows_what_the_secondary_index_kept(cli: CliRunner, table_path: TablePath) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    expected = table.explain(hudi_ray.HudiReadOptions(filters=[("rider", "IN", "rider-C,rider-G")]))
    path = str(table_path(MOR_PARTITIONED))
    got = cli("explain", path, "--json", "-f", "rider IN rider-C,rider-G").json()
    stages = {s["name"]: s["file_slices"] for s in got["stages"]}
    assert stages["secondary index"] == expected.stage("secondary index").file_slices == 2
    assert any("secondary_index_rider_idx" in n for n in got["notes"])
    text = cli("explain", path, "-f", "rider IN rider-C,rider-G")
    assert "secondary index" in text.out and text.out.rstrip("\n") == str(expected)


def test_explain_of_an_incremental_read(cli: CliRunner, table_path: TablePath) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    instants = table.get_timeline().data_instants
    start, end = instants[0].completed_at, instants[2].completed_at
    got = cli("explain", str(table_path(MOR_PARTITIONED)), "--json", "--start", start, "--end", end).json()
    options = hudi_ray.HudiReadOptions().with_query_type("incremental").with_start_timestamp(start)
    expected = table.explain(options.with_end_timestamp(end))
    assert got["query_type"] == "incremental"
    assert got["file_slices"] == expected.file_slices


# -- stats -------------------------------------------------------------------------


def test_stats_of_a_table_with_a_metadata_table(cli: CliRunner, table_path: TablePath) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    got = cli("stats", str(table_path(MOR_PARTITIONED)), "--json").json()
    rows, size = table.compute_table_stats()
    assert got["table_stats"] == {"rows": rows, "bytes": size}
    plan = table.plan()
    assert [p["partition"] for p in got["partitions"]] == ["city=chennai", "city=san_francisco", "city=sao_paulo"]
    assert got["total"]["file_slices"] == len(plan.slices) == 3
    assert got["total"]["size_on_disk"] == sum(s.total_size_bytes() for s in plan.slices)
    assert got["total"]["bytes"] == sum(e.size_bytes for e in plan.estimate())
    # Base files without logs count exactly; the slice with a log file is estimated.
    exact = {p["partition"]: (p["rows"], p["rows_exact"]) for p in got["partitions"]}
    assert exact["city=chennai"] == (1, True)
    assert exact["city=san_francisco"] == (4, True)
    assert exact["city=sao_paulo"][1] is False


@pytest.mark.parametrize("name", [COW_PARTITIONED, COW_FLAT])
def test_stats_rows_of_a_cow_table_are_its_rows(cli: CliRunner, table_path: TablePath, name: str) -> None:
    table = open_table(table_path, name)
    got = cli("stats", str(table_path(name)), "--json").json()
    assert got["table_stats"] is None  # no metadata table
    assert got["total"]["rows"] == api_rows(table).num_rows == 4
    assert got["total"]["rows_exact"] is True
    per_partition: dict[str, int] = {}
    for r in api_rows(table).to_pylist():
        per_partition[r["_hoodie_partition_path"]] = per_partition.get(r["_hoodie_partition_path"], 0) + 1
    assert {p["partition"]: p["rows"] for p in got["partitions"]} == per_partition


# -- read --------------------------------------------------------------------------


@pytest.mark.parametrize("name", TABLES)
def test_read_json_lines_equal_the_api_rows(cli: CliRunner, table_path: TablePath, name: str) -> None:
    table = open_table(table_path, name)
    got = cli("read", str(table_path(name)), "--format", "json").json_lines()
    expected = [json.loads(json.dumps(plain(r))) for r in api_rows(table).to_pylist()]
    key = "_hoodie_record_key"
    assert sorted(got, key=lambda r: r[key]) == sorted(expected, key=lambda r: r[key])


def test_read_csv_with_columns_and_filters(cli: CliRunner, table_path: TablePath) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    options = hudi_ray.HudiReadOptions(filters=[("city", "IN", "san_francisco,chennai")], projection=["uuid", "fare"])
    expected = sorted([cell(r["uuid"]), cell(r["fare"])] for r in api_rows(table, options).to_pylist())
    run = cli(
        "read",
        str(table_path(MOR_PARTITIONED)),
        "-f",
        "city IN (san_francisco, chennai)",
        "-c",
        "uuid,fare",
        "--format",
        "csv",
    )
    assert run.code == 0, run.err
    rows = list(csv.reader(io.StringIO(run.out)))
    assert rows[0] == ["uuid", "fare"]
    assert sorted(rows[1:]) == expected
    assert len(expected) == 5


def test_read_as_of_and_incremental_equal_the_api(cli: CliRunner, table_path: TablePath) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    path = str(table_path(MOR_PARTITIONED))
    instants = table.get_timeline().data_instants
    as_of = instants[1].timestamp
    got = cli("read", path, "--json", "--as-of", as_of).json_lines()
    expected = api_rows(table, hudi_ray.HudiReadOptions().with_as_of_timestamp(as_of))
    assert sorted(r["uuid"] for r in got) == sorted(expected.column("uuid").to_pylist())
    start, end = instants[1].completed_at, instants[3].completed_at
    got = cli("read", path, "--json", "--start", start, "--end", end).json_lines()
    options = hudi_ray.HudiReadOptions().with_query_type("incremental").with_start_timestamp(start)
    expected = api_rows(table, options.with_end_timestamp(end))
    assert sorted(r["uuid"] for r in got) == sorted(expected.column("uuid").to_pylist())
    assert expected.num_rows > 0


def test_read_aligned_table_hides_meta_columns_and_says_when_there_is_more(
    cli: CliRunner, table_path: TablePath
) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    run = cli("read", str(table_path(MOR_PARTITIONED)), "--limit", "3")
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0].split() == table.get_schema().names
    assert len(lines) == 5
    assert lines[-1] == "(3 rows; more not shown: --limit N)"
    first_uuids = api_rows(table).column("uuid").to_pylist()
    assert {line.split()[1] for line in lines[1:4]} <= set(first_uuids)
    everything = cli("read", str(table_path(MOR_PARTITIONED)), "--limit", "100")
    assert everything.out.splitlines()[-1] == "(6 rows)"


def test_read_out_parquet_round_trips(cli: CliRunner, table_path: TablePath, tmp_path: Path) -> None:
    for name in (COW_PARTITIONED, MOR_PARTITIONED):
        table = open_table(table_path, name)
        out = tmp_path / f"{Path(name).name}.parquet"
        run = cli("read", str(table_path(name)), "--out", str(out))
        assert run.code == 0, run.err
        written = pq.read_table(out)
        expected = api_rows(table)
        assert written.schema == expected.schema
        assert row_set(written) == row_set(expected)
        assert run.out == ""
        assert run.err.startswith(f"wrote {expected.num_rows} rows from ")
        assert run.err.rstrip().endswith(f"to {out} (parquet)")


def test_read_out_of_an_empty_table_writes_an_empty_file(cli: CliRunner, table_path: TablePath, tmp_path: Path) -> None:
    out = tmp_path / "empty.jsonl"
    run = cli("read", str(table_path(EMPTY)), "--out", str(out))
    assert run.code == 0, run.err
    assert out.read_text() == ""
    assert run.err.startswith("wrote 0 rows from 0 file slices")


def test_read_limit_stops_early(cli: CliRunner, table_path: TablePath) -> None:
    got = cli("read", str(table_path(COW_PARTITIONED)), "--json", "--limit", "2").json_lines()
    assert len(got) == 2
    assert cli("read", str(table_path(COW_PARTITIONED)), "--json", "--limit", "0").out == ""


def test_read_through_ray(cli: CliRunner, table_path: TablePath, ray_session: None) -> None:
    table = open_table(table_path, MOR_PARTITIONED)
    got = cli("read", str(table_path(MOR_PARTITIONED)), "--ray", "--json", "-c", "uuid,city", "-f", "city != chennai")
    rows = got.json_lines()
    options = hudi_ray.HudiReadOptions(filters=[("city", "!=", "chennai")], projection=["uuid", "city"])
    assert sorted(rows, key=lambda r: r["uuid"]) == sorted(
        api_rows(table, options).to_pylist(), key=lambda r: r["uuid"]
    )
    assert len(rows) == 5


def _json_rows(table: hudi_ray.HudiTable, options: hudi_ray.HudiReadOptions | None = None) -> list[dict]:
    """The API's rows as ``--format json`` writes them, in a fixed order."""
    rows = [json.loads(json.dumps(plain(r))) for r in api_rows(table, options).to_pylist()]
    return sorted(rows, key=json.dumps)


@pytest.fixture(params=["here", "ray"])
def read_path(request: pytest.FixtureRequest) -> list[str]:
    """The arguments choosing a read path: the core's pipeline here, or read_hudi on Ray."""
    if request.param == "ray":
        request.getfixturevalue("ray_session")
        return ["--ray"]
    return []


def test_every_read_option_reaches_both_read_paths(cli: CliRunner, table_path: TablePath, read_path: list[str]) -> None:
    """Each read option changes the rows as the table API's own option does, read here or on Ray."""
    instants = open_table(table_path, MOR_PARTITIONED).get_timeline().data_instants
    as_of, start, end = instants[1].timestamp, instants[1].completed_at, instants[3].completed_at
    incremental = hudi_ray.HudiReadOptions().with_query_type("incremental").with_start_timestamp(start)
    incremental_configs = ["hoodie.read.query.type=incremental", f"hoodie.read.start.timestamp={start}"]
    read_optimized = hudi_ray.HudiReadConfig.USE_READ_OPTIMIZED_MODE.value
    cases = [
        (
            MOR_PARTITIONED,
            ["-f", "city != chennai", "-c", "uuid,city"],
            hudi_ray.HudiReadOptions(filters=[("city", "!=", "chennai")], projection=["uuid", "city"]),
        ),
        (MOR_PARTITIONED, ["--as-of", as_of], hudi_ray.HudiReadOptions().with_as_of_timestamp(as_of)),
        (MOR_PARTITIONED, ["--start", start, "--end", end], incremental.with_end_timestamp(end)),
        # Per-read configs: an incremental range, and base files only (this table's differ from its merged rows).
        (
            MOR_PARTITIONED,
            [arg for kv in incremental_configs for arg in ("--hudi-option", kv)],
            incremental,
        ),
        (
            MOR_FLAT,
            ["--hudi-option", f"{read_optimized}=true"],
            hudi_ray.HudiReadOptions(hudi_options={read_optimized: "true"}),
        ),
    ]
    for name, argv, options in cases:
        table = open_table(table_path, name)
        expected = _json_rows(table, options)
        assert expected != _json_rows(table), f"{argv} does not change the rows: the case tests nothing"
        got = cli("read", str(table_path(name)), *read_path, "--format", "json", *argv).json_lines()
        assert sorted(got, key=json.dumps) == expected, argv
    # A bad value of a per-read config fails the read, as the API's would.
    key = hudi_ray.HudiReadConfig.FILE_SLICE_READ_CONCURRENCY.value
    run = cli("read", str(table_path(MOR_PARTITIONED)), *read_path, "--hudi-option", f"{key}=0")
    assert run.code == 2, run.err
    assert run.err.startswith(f"hudi-ray: error: Config {key} must be > 0"), run.err


def test_table_configs_reach_the_ray_read(cli: CliRunner, table_path: TablePath, ray_session: None) -> None:
    from hudi_ray.planner import get_planner, planner_name

    path = str(table_path(MOR_PARTITIONED))
    run = cli("read", path, "--ray", "--format", "json", "--hudi-option", "hoodie.metadata.enable=false")
    assert run.code == 0, run.err
    # read_hudi names the table's planner after the table configs it was given.
    get_planner(planner_name(path, {"hoodie.metadata.enable": "false"}))


# -- the progress bar ----------------------------------------------------------------


def test_no_progress_bar_when_stderr_is_not_a_terminal(cli: CliRunner, table_path: TablePath, tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    run = cli("read", str(table_path(MOR_PARTITIONED)), "--out", str(out), tty=False)
    assert run.code == 0
    assert "\r" not in run.err and "[" not in run.err
    assert run.err.count("\n") == 1  # only the summary line


def test_progress_bar_counts_files_rows_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")  # the bar fits the terminal's width
    stream = io.StringIO()
    bar = Progress(4, 4096, stream, enabled=True, delay=0.0, interval=0.0)
    bar.advance(files=1, rows=1500, nbytes=1024)
    bar.advance(files=1, rows=500, nbytes=1024)
    assert bar.drawn
    last = stream.getvalue().split("\r")[-1]
    assert last == "[####################....................] 2/4 files  2,000 rows  2.0 KiB of 4.0 KiB"
    # A narrower terminal gets a shorter bar, the counts kept whole.
    assert bar.line(60) == "[#######........] 2/4 files  2,000 rows  2.0 KiB of 4.0 KiB"
    bar.close()
    assert stream.getvalue().endswith("\r" + " " * 119 + "\r")
    silent = io.StringIO()
    off = Progress(4, 4096, silent, enabled=False, delay=0.0, interval=0.0)
    off.advance(files=4, rows=10, nbytes=4096)
    off.close()
    assert silent.getvalue() == "" and not off.drawn


# -- errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["info", "/no/such/table"], "hudi-ray: error: Not a Hudi table: file:///no/such/table/.hoodie does not exist"),
        (["info", "nosuchscheme://bucket/t"], "hudi-ray: error: Unknown storage scheme 'nosuchscheme'"),
        (["read", "{table}", "-f", "city"], "hudi-ray: error: Bad --filter 'city': expected 'column op value'"),
        (["explain", "{table}", "-f", "city ~ x"], "hudi-ray: error: Bad --filter 'city ~ x'"),
        (["read", "{table}", "-f", "nope = 1"], "hudi-ray: error: Filter field 'nope' not found in the schema"),
        (["stats", "{table}", "-f", "nope = 1"], "hudi-ray: error: Filter field 'nope' not found in the schema"),
        (["read", "{table}", "-c", "uuid,nope"], "hudi-ray: error: Projected columns ['nope'] not found in the schema"),
        (["read", "{table}", "-f", "fare > abc"], "hudi-ray: error: Cannot parse filter value 'abc' for column 'fare'"),
        (["read", "{table}", "--as-of", "yesterday"], "hudi-ray: error: Cannot parse as-of timestamp 'yesterday'"),
        (["read", "{table}", "--format", "parquet"], "hudi-ray: error: --format parquet writes a file"),
        (["read", "{table}", "-s", "novalue"], "hudi-ray: error: Bad --storage-option 'novalue': expected key=value"),
        (["timeline", "{table}", "--limit", "x"], "hudi-ray: error: argument -n/--limit: invalid int value: 'x'"),
        (["frobnicate", "{table}"], "hudi-ray: error: argument COMMAND: invalid choice: 'frobnicate'"),
        (["info"], "hudi-ray: error: the following arguments are required: uri"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(
    cli: CliRunner, table_path: TablePath, argv: list[str], message: str
) -> None:
    path = str(table_path(MOR_PARTITIONED))
    run = cli(*[a.replace("{table}", path) for a in argv])
    assert run.code == 2
    assert run.out == ""
    assert run.err.count("\n") == 1, run.err
    assert run.err.startswith(message), run.err
    assert "Traceback" not in run.err


def test_debug_shows_the_traceback(cli: CliRunner) -> None:
    run = cli("info", "/no/such/table", "--debug")
    assert run.code == 2
    assert run.err.startswith("Traceback (most recent call last):")
    assert "HudiTableNotFoundError" in run.err
    assert run.err.rstrip().splitlines()[-1].startswith("hudi-ray: error: Not a Hudi table")


def test_other_failures_exit_1(cli: CliRunner, copy_of_table: Path) -> None:
    # A completed commit names a base file that storage lacks: damage, not bad input.
    victim = next(p for p in copy_of_table.rglob("*.parquet") if ".hoodie" not in p.parts)
    victim.unlink()
    run = cli("read", str(copy_of_table), "--format", "csv")
    assert run.code == 1
    assert run.err.count("\n") == 1
    assert run.err.startswith("hudi-ray: error: ")
    assert victim.name in run.err


@pytest.fixture
def copy_of_table(table_path: TablePath, tmp_path: Path) -> Path:
    import shutil

    dest = tmp_path / "table"
    shutil.copytree(table_path(COW_FLAT), dest)
    return dest


def test_filters_parse_as_the_shell_writes_them() -> None:
    assert parse_filter("city = sf") == ("city", "=", "sf")
    assert parse_filter("city=sf") == ("city", "=", "sf")
    assert parse_filter("fare>=10.5") == ("fare", ">=", "10.5")
    assert parse_filter("city <> 'sf'") == ("city", "<>", "sf")
    assert parse_filter("city in (sf, nyc)") == ("city", "IN", "sf, nyc")
    assert parse_filter("city NOT  IN sf,nyc") == ("city", "NOT IN", "sf,nyc")
    assert parse_filter('name = "two words"') == ("name", "=", "two words")


# -- as installed --------------------------------------------------------------------


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def test_the_console_script(table_path: TablePath) -> None:
    script = Path(sys.executable).with_name("hudi-ray")
    assert script.exists(), "pip install -e . makes the hudi-ray script"
    done = subprocess.run(
        [str(script), "info", str(table_path(MOR_PARTITIONED)), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "v8_trips_8i3u1d"
    assert done.stderr == ""
    bad = subprocess.run([str(script), "info", "/no/such/table"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr == "hudi-ray: error: Not a Hudi table: file:///no/such/table/.hoodie does not exist\n"


def test_python_dash_m(table_path: TablePath) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hudi_ray", "read", str(table_path(COW_FLAT)), "--format", "csv", "-c", "id,name"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert rows[0] == ["id", "name"]
    assert len(rows) == 5
    assert done.stderr == ""


def test_quiet_spark_configs_point_log4j2_at_a_warning_level_file() -> None:
    from hudi_ray.cli.quiet import SPARK_LOG4J2, quiet_spark_configs

    configs = quiet_spark_configs()
    assert configs["spark.ui.showConsoleProgress"] == "false"
    written = Path(configs["spark.log4j.config.file.name"]).read_text(encoding="utf-8")
    assert written == SPARK_LOG4J2
    assert "rootLogger.level = warn" in written.splitlines()
    assert quiet_spark_configs() == configs  # the same file, rewritten only when it differs
