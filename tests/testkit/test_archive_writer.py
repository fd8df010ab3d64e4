"""The archived timeline writer (``hudi_testkit.archive``): the bytes it writes are
checked here without hudi-ray's archive reader. Layout 1 (table version 6) through
the core's log block parser and fastavro with each block's own SCHEMA header;
layout 2 (versions 8 and 9) through pyarrow and the manifests' JSON. Every
archival must take exactly the archived instants' files off the active timeline,
and its history must hold exactly what those files held."""

from __future__ import annotations

import io
import json
import os
import struct
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray.core.log_file import BlockType, HeaderKey, read_log_blocks
from hudi_ray.core.timeline import HudiInstant
from hudi_testkit import (
    CowTableWriter,
    MorTableWriter,
    archive_as_hudi,
    archive_instants,
    delete_archive,
    write_cow_table,
)
from hudi_testkit.common import latest_time, list_instants, next_instant_time
from hudi_testkit.errors import ArchiveError, TestkitError
from hudi_testkit.history import archive_oldest, clean_files, hold_in_flight

ENTRY_FIELDS = [
    "hoodieCommitMetadata",
    "hoodieCleanMetadata",
    "hoodieCompactionMetadata",
    "hoodieRollbackMetadata",
    "hoodieSavePointMetadata",
    "commitTime",
    "actionType",
    "version",
    "hoodieCompactionPlan",
    "hoodieCleanerPlan",
    "actionState",
    "hoodieReplaceCommitMetadata",
    "hoodieRequestedReplaceMetadata",
    "HoodieInflightReplaceMetadata",
    "hoodieIndexCommitMetadata",
    "stateTransitionTime",
]


# -- tables ----------------------------------------------------------------------------------------


def rows(ids: range | list[int], value: int) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "value": pa.array([value] * len(ids), pa.int64()),
            "region": pa.array([f"r{i % 2}" for i in ids]),
        }
    )


def cow_table(path: Path, version: int, commits: int) -> list[str]:
    """A partitioned COPY_ON_WRITE table of ``commits`` commits, each rewriting the last's file groups."""
    first = write_cow_table(
        path, rows(range(20), 0), table_name="t", record_key="id", partition_field="region", table_version=version
    )
    writer = CowTableWriter.open(path)
    return [first.instant_time] + [writer.upsert(rows(range(i, 20), i)).instant_time for i in range(1, commits)]


def mor_table(path: Path, version: int, commits: int) -> list[str]:
    """A MERGE_ON_READ table: a base file commit, then delta commits appending log files."""
    writer = MorTableWriter.create(
        path, rows(range(20), 0), table_name="t", record_key="id", partition_field="region", table_version=version
    )
    return [writer.commits[0].instant_time] + [
        writer.upsert(rows(range(i, 9), i)).instant_time for i in range(1, commits)
    ]


def timeline_dir(path: Path, version: int) -> Path:
    return path / ".hoodie" if version < 8 else path / ".hoodie" / "timeline"


def instant_files(timeline: Path) -> dict[str, bytes]:
    """Every instant file of the active timeline, by name."""
    return {i.file_name: (timeline / i.file_name).read_bytes() for i in list_instants(timeline)}


def parsed(names: set[str] | list[str]) -> list[HudiInstant]:
    out = [HudiInstant.parse(n) for n in names]
    assert all(i is not None for i in out)
    return sorted(i for i in out if i is not None)


def add_clean(path: Path, version: int) -> str:
    """A completed clean on the timeline (of a file no commit lists, so the writers never miss it)."""
    junk = path / "region=r0" / "leftover.parquet"
    junk.write_bytes(b"")
    clean = clean_files(path, ["region=r0/leftover.parquet"])
    assert clean is not None and not junk.exists()
    return clean


# -- reading layout 1 without hudi-ray's archive reader ---------------------------------------------


def layout1_blocks(path: Path) -> list[list[dict[str, Any]]]:
    """The records of every block of an archive log file, decoded with the block's schema."""
    blocks = read_log_blocks(path.read_bytes(), str(path))
    out = []
    for block in blocks:
        assert block.block_type == BlockType.AVRO_DATA
        assert set(block.header) == {HeaderKey.SCHEMA}, "the schema is the only header Hudi's archiver writes"
        schema_json = json.loads(block.header[HeaderKey.SCHEMA])
        assert [f["name"] for f in schema_json["fields"]] == ENTRY_FIELDS
        schema = fastavro.parse_schema(schema_json)
        content = bytes(block.content)
        version, count = struct.unpack_from(">ii", content, 0)
        assert version == 3
        pos, records = 8, []
        for _ in range(count):
            (length,) = struct.unpack_from(">i", content, pos)
            datum = io.BytesIO(content[pos + 4 : pos + 4 + length])
            records.append(fastavro.schemaless_reader(datum, schema))
            assert datum.tell() == length, "a record's length prefix covers exactly its datum"
            pos += 4 + length
        assert pos == len(content)
        out.append(records)
    return out


def assert_stats_equal(avro: dict[str, Any] | None, meta: dict[str, Any]) -> None:
    """Avro HoodieCommitMetadata converted from the JSON ``meta``: every write stat field the
    Avro record has is the JSON's value, or null where the JSON has none."""
    assert avro is not None
    assert avro["operationType"] == meta["operationType"]
    assert avro["extraMetadata"] == meta["extraMetadata"]
    assert avro["version"] is None, "Jackson's conversion sets no field the JSON lacks"
    assert avro["partitionToWriteStats"].keys() == meta["partitionToWriteStats"].keys()
    for partition, stats in meta["partitionToWriteStats"].items():
        got = avro["partitionToWriteStats"][partition]
        assert len(got) == len(stats) > 0
        for g, s in zip(got, stats):
            assert {k: v for k, v in g.items() if k in s} == {k: v for k, v in s.items() if k in g}
            assert all(v is None for k, v in g.items() if k not in s)
            assert g["fileId"] == s["fileId"] and g["path"] == s["path"]


def archived_state_files(records: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(r["commitTime"], r["actionType"], r["actionState"]) for r in records}


# -- layout 1 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_layout_1_holds_one_entry_per_removed_instant_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "t"
    commits = (cow_table if kind == "cow" else mor_table)(path, 6, 3)
    clean = add_clean(path, 6)
    writer = CowTableWriter.open(path) if kind == "cow" else MorTableWriter.open(path)
    commits += [writer.upsert(rows(range(5), 9)).instant_time for _ in range(2)]
    timeline = timeline_dir(path, 6)
    before = instant_files(timeline)

    archived = archive_instants(path, 4)

    assert archived == [*commits[:3], clean]
    after = instant_files(timeline)
    removed = set(before) - set(after)
    assert {i.timestamp for i in parsed(removed)} == set(archived)
    assert all(after[n] == before[n] for n in after), "files kept are untouched"
    assert {i.timestamp for i in parsed(set(after))} == set(commits[3:])

    archive = path / ".hoodie" / "archived"
    assert sorted(os.listdir(archive)) == [".commits_.archive.1_1-0-1"]
    blocks = layout1_blocks(archive / ".commits_.archive.1_1-0-1")
    # 3 commits of 3 files each and a clean of one: 10 records, one block.
    assert [len(b) for b in blocks] == [10]
    records = blocks[0]
    action = "commit" if kind == "cow" else "deltacommit"
    assert archived_state_files(records) == {(i.timestamp, i.action, i.state) for i in parsed(removed)}
    assert len(records) == len(removed)
    assert [r["commitTime"] for r in records] == sorted(r["commitTime"] for r in records)
    for r in records:
        assert r["version"] is None
        assert len(r["stateTransitionTime"]) == 17 and r["stateTransitionTime"].isdigit()
        if r["actionType"] == action and r["actionState"] == "REQUESTED":
            assert r["hoodieCommitMetadata"] is None, "an empty requested file has no metadata"
        elif r["actionType"] == action:
            name = next(
                i.file_name for i in parsed(removed) if i.timestamp == r["commitTime"] and i.state == r["actionState"]
            )
            assert_stats_equal(r["hoodieCommitMetadata"], json.loads(before[name]))
        else:
            assert r["actionType"] == "clean" and r["actionState"] == "COMPLETED"
            meta = json.loads(before[f"{clean}.clean"])
            got = r["hoodieCleanMetadata"]
            assert got["startCleanTime"] == meta["startCleanTime"] == clean
            assert got["totalFilesDeleted"] == meta["totalFilesDeleted"]
            assert got["earliestCommitToRetain"] == "" and got["lastCompletedCommitTimestamp"] == ""
            assert got["version"] == 1, "fields the JSON lacks take the schema's defaults"
            for partition, part in meta["partitionMetadata"].items():
                assert got["partitionMetadata"][partition]["successDeleteFiles"] == part["successDeleteFiles"]
                assert got["partitionMetadata"][partition]["deletePathPatterns"] == part["deletePathPatterns"]
                assert got["partitionMetadata"][partition]["isPartitionDeleted"] is None

    # The next archival writes a new file and leaves the first as it was.
    first_bytes = (archive / ".commits_.archive.1_1-0-1").read_bytes()
    assert archive_instants(path, 1) == [commits[3]]
    assert sorted(os.listdir(archive)) == [".commits_.archive.1_1-0-1", ".commits_.archive.2_1-0-1"]
    assert (archive / ".commits_.archive.1_1-0-1").read_bytes() == first_bytes
    [second] = layout1_blocks(archive / ".commits_.archive.2_1-0-1")
    assert archived_state_files(second) == {(commits[3], action, s) for s in ("REQUESTED", "INFLIGHT", "COMPLETED")}


def test_layout_1_splits_blocks_at_ten_records(tmp_path: Path) -> None:
    path = tmp_path / "t"
    commits = cow_table(path, 6, 5)
    archive_oldest(path, 4)  # the history helper writes the real archive
    blocks = layout1_blocks(path / ".hoodie" / "archived" / ".commits_.archive.1_1-0-1")
    assert [len(b) for b in blocks] == [10, 2]
    assert [r["commitTime"] for b in blocks for r in b] == [c for c in commits[:4] for _ in range(3)]
    assert [r["actionState"] for b in blocks for r in b] == ["REQUESTED", "INFLIGHT", "COMPLETED"] * 4


def _avro_file(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, schema, [record])
    return buf.getvalue()


# Plans and metadata as a Hudi writer of another release might shape them: fields in another
# order, a field the archive schema lacks, fields it has left out (they take its defaults).
ROLLBACK_SCHEMA = {
    "type": "record",
    "name": "HoodieRollbackMetadata",
    "fields": [
        {"name": "startRollbackTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
        {
            "name": "partitionMetadata",
            "type": {
                "type": "map",
                "values": {
                    "type": "record",
                    "name": "HoodieRollbackPartitionMetadata",
                    "fields": [
                        {"name": "partitionPath", "type": "string"},
                        {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
                        {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
                    ],
                },
            },
        },
        {"name": "somethingNewer", "type": "string"},
    ],
}
COMPACTION_PLAN_SCHEMA = {
    "type": "record",
    "name": "HoodieCompactionPlan",
    "fields": [
        {
            "name": "operations",
            "type": [
                "null",
                {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieCompactionOperation",
                        "fields": [
                            {"name": "fileId", "type": ["null", "string"]},
                            {"name": "baseInstantTime", "type": ["null", "string"]},
                            {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}]},
                            {"name": "partitionPath", "type": ["null", "string"]},
                        ],
                    },
                },
            ],
        },
        {"name": "version", "type": ["int", "null"]},
    ],
}


def test_layout_1_converts_table_service_instants(tmp_path: Path) -> None:
    """A rollback (plan, empty inflight, Avro metadata) and a compaction (Avro plan, empty
    inflight, JSON commit) hand-written after a table's commits, archived with them."""
    path = tmp_path / "t"
    commits = cow_table(path, 6, 2)
    timeline = timeline_dir(path, 6)
    rollback = next_instant_time(latest_time(list_instants(timeline)))
    (timeline / f"{rollback}.rollback.requested").write_bytes(b"Obj\x01 a plan the archive does not keep")
    (timeline / f"{rollback}.rollback.inflight").write_bytes(b"")
    rolled = {
        "startRollbackTime": rollback,
        "timeTakenInMillis": 12,
        "totalFilesDeleted": 1,
        "commitsRollback": ["20200101000000000"],
        "partitionMetadata": {
            "region=r0": {"partitionPath": "region=r0", "successDeleteFiles": ["f"], "failedDeleteFiles": []}
        },
        "somethingNewer": "dropped",
    }
    (timeline / f"{rollback}.rollback").write_bytes(_avro_file(ROLLBACK_SCHEMA, rolled))
    compaction = next_instant_time(rollback)
    operation = {
        "fileId": "fg-1",
        "baseInstantTime": commits[0],
        "deltaFilePaths": [".fg-1_x.log.1_0-1-0"],
        "partitionPath": "region=r1",
    }
    plan = {"operations": [operation], "version": 2}
    (timeline / f"{compaction}.compaction.requested").write_bytes(_avro_file(COMPACTION_PLAN_SCHEMA, plan))
    (timeline / f"{compaction}.compaction.inflight").write_bytes(b"")
    done = {"partitionToWriteStats": {}, "compacted": True, "extraMetadata": {}, "operationType": "COMPACT"}
    (timeline / f"{compaction}.commit").write_bytes(json.dumps(done).encode())

    assert archive_instants(path, 4) == [*commits, rollback, compaction]
    assert list_instants(timeline) == []
    blocks = layout1_blocks(path / ".hoodie" / "archived" / ".commits_.archive.1_1-0-1")
    assert [len(b) for b in blocks] == [10, 2]
    records = [r for b in blocks for r in b]
    by_state = {(r["commitTime"], r["actionState"]): r for r in records if r["commitTime"] in (rollback, compaction)}
    assert {k: (r["actionType"]) for k, r in by_state.items()} == {
        (rollback, "REQUESTED"): "rollback",
        (rollback, "INFLIGHT"): "rollback",
        (rollback, "COMPLETED"): "rollback",
        (compaction, "REQUESTED"): "compaction",
        (compaction, "INFLIGHT"): "compaction",
        (compaction, "COMPLETED"): "commit",
    }
    payload_fields = {
        k: [f for f in ENTRY_FIELDS[:5] + ENTRY_FIELDS[8:10] + ENTRY_FIELDS[11:15] if r[f] is not None]
        for k, r in by_state.items()
    }
    assert payload_fields == {
        (rollback, "REQUESTED"): [],
        (rollback, "INFLIGHT"): [],
        (rollback, "COMPLETED"): ["hoodieRollbackMetadata"],
        (compaction, "REQUESTED"): ["hoodieCompactionPlan"],
        (compaction, "INFLIGHT"): [],
        (compaction, "COMPLETED"): ["hoodieCommitMetadata"],
    }
    got = by_state[(rollback, "COMPLETED")]["hoodieRollbackMetadata"]
    assert {k: got[k] for k in ("startRollbackTime", "timeTakenInMillis", "totalFilesDeleted", "commitsRollback")} == {
        k: rolled[k] for k in ("startRollbackTime", "timeTakenInMillis", "totalFilesDeleted", "commitsRollback")
    }
    part = got["partitionMetadata"]["region=r0"]
    assert part["successDeleteFiles"] == ["f"] and part["rollbackLogFiles"] is None
    assert got["version"] == 1 and got["instantsRollback"] == [], "missing fields take their defaults"
    got_plan = by_state[(compaction, "REQUESTED")]["hoodieCompactionPlan"]
    assert got_plan["version"] == 2 and got_plan["extraMetadata"] is None
    [op] = got_plan["operations"]
    assert {k: op[k] for k in operation} == operation and op["dataFilePath"] is None
    assert by_state[(compaction, "COMPLETED")]["hoodieCommitMetadata"]["operationType"] == "COMPACT"


def test_layout_1_honours_the_archive_folder_property(tmp_path: Path) -> None:
    path = tmp_path / "t"
    commits = cow_table(path, 6, 3)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.archivelog.folder=archived", "hoodie.archivelog.folder=old/log"))
    assert archive_instants(path, 2) == commits[:2]
    assert os.listdir(path / ".hoodie" / "old" / "log") == [".commits_.archive.1_1-0-1"]
    assert os.listdir(path / ".hoodie" / "archived") == []
    timeline = instant_files(path / ".hoodie")
    delete_archive(path)
    assert os.listdir(path / ".hoodie" / "old" / "log") == []
    assert instant_files(path / ".hoodie") == timeline


# -- layout 2 --------------------------------------------------------------------------------------


def jackson_manifest(entries: list[tuple[str, int]]) -> str:
    """Jackson's default pretty printer, written out by hand."""
    items = ", ".join(f'{{\n    "fileName" : "{n}",\n    "fileLen" : {size}\n  }}' for n, size in entries)
    return f'{{\n  "files" : [ {items} ]\n}}'


def manifest(history: Path) -> list[str]:
    """The current manifest's files, checking ``_version_`` names the newest manifest and its lengths."""
    version = (history / "_version_").read_text("utf-8")
    assert version.isdigit(), "decimal digits, no newline"
    newest = max(int(n.split("_")[1]) for n in os.listdir(history) if n.startswith("manifest_"))
    assert int(version) == newest
    text = (history / f"manifest_{version}").read_text("utf-8")
    files = [(f["fileName"], f["fileLen"]) for f in json.loads(text)["files"]]
    assert text == jackson_manifest(files)
    for name, size in files:
        assert (history / name).stat().st_size == size
    return [n for n, _ in files]


def lsm_rows(history: Path, name: str) -> list[dict[str, Any]]:
    f = pq.ParquetFile(history / name)
    assert [(c.name, c.physical_type) for c in f.schema] == [
        ("instantTime", "BYTE_ARRAY"),
        ("completionTime", "BYTE_ARRAY"),
        ("action", "BYTE_ARRAY"),
        ("metadata", "BYTE_ARRAY"),
        ("plan", "BYTE_ARRAY"),
        ("version", "INT32"),
    ]
    assert f.schema.column(5).max_definition_level == 0, "version is required"
    assert f.metadata.metadata[b"writer.model.name"] == b"avro"
    assert json.loads(f.metadata.metadata[b"parquet.avro.schema"])["name"] == "HoodieLSMTimelineInstant"
    return f.read().to_pylist()


@pytest.mark.parametrize(("kind", "version"), [("cow", 9), ("mor", 8)])
def test_layout_2_rows_are_the_removed_completed_instants(tmp_path: Path, kind: str, version: int) -> None:
    path = tmp_path / "t"
    commits = (cow_table if kind == "cow" else mor_table)(path, version, 3)
    clean = add_clean(path, version)
    timeline = timeline_dir(path, version)
    before = instant_files(timeline)

    assert archive_instants(path, 2) == commits[:2]
    history = timeline / "history"
    [first] = manifest(history)
    assert first == f"{commits[0]}_{commits[1]}_0.parquet"
    assert archive_instants(path, 2) == [commits[2], clean]
    files = manifest(history)
    assert files == [first, f"{commits[2]}_{clean}_0.parquet"]
    assert (history / "manifest_1").read_text() == jackson_manifest([(first, (history / first).stat().st_size)])

    after = instant_files(timeline)
    removed = parsed(set(before) - set(after))
    assert {i.timestamp for i in removed} == {*commits[:3], clean}
    assert not {i.timestamp for i in parsed(set(after))} & {*commits[:3], clean}
    completed = [i for i in removed if i.is_completed]
    got = [r for name in files for r in lsm_rows(history, name)]
    assert [(r["instantTime"], r["completionTime"], r["action"]) for r in got] == [
        (i.timestamp, i.completion_timestamp, i.action) for i in completed
    ]
    assert [r["metadata"] for r in got] == [before[i.file_name] for i in completed]
    assert all(r["metadata"].startswith(b"Obj\x01") for r in got if r["action"] != "clean")
    assert [r["plan"] for r in got] == [None] * 4, "commits and a clean without a plan file have no plan"
    assert {r["version"] for r in got} == {1}


def test_layout_2_plans_of_table_services(tmp_path: Path) -> None:
    """Hand-written pending files of a compaction, a replace commit and a clustering: the plan
    column holds the requested file, or the inflight one where it is not empty."""
    path = tmp_path / "t"
    commits = cow_table(path, 9, 1)
    timeline = timeline_dir(path, 9)
    t1 = next_instant_time(latest_time(list_instants(timeline)))
    t2 = next_instant_time(t1)
    t3 = next_instant_time(t2)
    end = next_instant_time(t3)
    files = {
        f"{t1}.compaction.requested": b"compaction plan",
        f"{t1}.compaction.inflight": b"",
        f"{t1}_{end}.commit": b"compaction commit",
        f"{t2}.replacecommit.requested": b"requested replace",
        f"{t2}.replacecommit.inflight": b"",
        f"{t2}_{end}.replacecommit": b"",
        f"{t3}.clustering.requested": b"clustering plan",
        f"{t3}.clustering.inflight": b"inflight replace",
        f"{t3}_{end}.replacecommit": b"clustering commit",
    }
    for name, body in files.items():
        (timeline / name).write_bytes(body)
    assert archive_instants(path, 4) == [commits[0], t1, t2, t3]
    assert list_instants(timeline) == []
    history = timeline / "history"
    [name] = manifest(history)
    got = [
        (r["instantTime"], r["completionTime"], r["action"], r["metadata"], r["plan"]) for r in lsm_rows(history, name)
    ][1:]
    assert got == [
        (t1, end, "commit", b"compaction commit", b"compaction plan"),
        (t2, end, "replacecommit", None, b"requested replace"),
        (t3, end, "replacecommit", b"clustering commit", b"inflight replace"),
    ]


def test_layout_2_compacts_levels_and_cleans_old_versions(tmp_path: Path) -> None:
    path = tmp_path / "t"
    commits = cow_table(path, 9, 6)
    history = timeline_dir(path, 9) / "history"
    archived: list[str] = []
    for _ in range(3):
        archived += archive_instants(path, 1, compaction_batch=2)
    # Archival 2 merged the first two level-0 files into level 1; archival 3 added one at level 0.
    level1 = f"{commits[0]}_{commits[1]}_1.parquet"
    assert manifest(history) == [level1, f"{commits[2]}_{commits[2]}_0.parquet"]
    assert [r["instantTime"] for r in lsm_rows(history, level1)] == commits[:2]
    stray = "00000000000000001_00000000000000002_0.parquet"
    (history / stray).write_bytes(b"left by a failed archival")
    (history / "notes.txt").write_text("not the history's")

    archived += archive_instants(path, 1, compaction_batch=2)
    assert archived == commits[:4]
    # Level 0 merged into a second level-1 file, then both level-1 files into level 2.
    level2 = f"{commits[0]}_{commits[3]}_2.parquet"
    assert manifest(history) == [level2]
    assert [r["instantTime"] for r in lsm_rows(history, level2)] == commits[:4]
    assert (history / "_version_").read_text() == "7"
    # Hudi keeps 3 manifest versions plus one per compaction of this archival, and the files they list.
    versions = sorted(int(n.split("_")[1]) for n in os.listdir(history) if n.startswith("manifest_"))
    assert versions == [3, 4, 5, 6, 7]
    listed = {f["fileName"] for v in versions for f in json.loads((history / f"manifest_{v}").read_text())["files"]}
    on_disk = {n for n in os.listdir(history) if n.endswith(".parquet")}
    assert on_disk == listed and stray not in on_disk
    assert f"{commits[0]}_{commits[0]}_0.parquet" not in on_disk, "listed only by deleted manifests"
    assert (history / "notes.txt").exists()


def test_layout_2_reaches_level_1_after_ten_archivals(tmp_path: Path) -> None:
    path = tmp_path / "t"
    commits = cow_table(path, 9, 12)
    history = timeline_dir(path, 9) / "history"
    for i in range(9):
        archive_instants(path, 1)
        assert len(manifest(history)) == i + 1
    archive_instants(path, 1)
    merged = f"{commits[0]}_{commits[9]}_1.parquet"
    assert manifest(history) == [merged]
    assert [r["instantTime"] for r in lsm_rows(history, merged)] == commits[:10]
    # 11 manifests written (10 archivals, one merge): Hudi keeps the newest 3 plus 1 for the merge,
    # and the files they list (manifest 8 still lists level-0 files).
    versions = [8, 9, 10, 11]
    assert sorted(int(n.split("_")[1]) for n in os.listdir(history) if n.startswith("manifest_")) == versions
    listed = {f["fileName"] for v in versions for f in json.loads((history / f"manifest_{v}").read_text())["files"]}
    assert {n for n in os.listdir(history) if n.endswith(".parquet")} == listed
    archive_instants(path, 1)
    assert manifest(history) == [merged, f"{commits[10]}_{commits[10]}_0.parquet"]
    assert [i.timestamp for i in list_instants(timeline_dir(path, 9))] == [commits[11]] * 3


def test_layout_2_honours_the_timeline_and_history_paths(tmp_path: Path) -> None:
    """``hoodie.timeline.path`` moves the timeline; an empty history path puts the history in it."""
    path = tmp_path / "t"
    commits = cow_table(path, 9, 3)
    os.rename(path / ".hoodie" / "timeline", path / ".hoodie" / "tl")
    props = path / ".hoodie" / "hoodie.properties"
    text = props.read_text().replace("hoodie.timeline.path=timeline", "hoodie.timeline.path=tl")
    props.write_text(text.replace("hoodie.timeline.history.path=history", "hoodie.timeline.history.path="))
    timeline = path / ".hoodie" / "tl"
    assert archive_instants(path, 2) == commits[:2]
    assert manifest(timeline) == [f"{commits[0]}_{commits[1]}_0.parquet"]
    kept = instant_files(timeline)
    assert {i.timestamp for i in parsed(set(kept))} == {commits[2]}
    delete_archive(path)
    assert instant_files(timeline) == kept
    assert sorted(os.listdir(timeline)) == sorted([*kept, "history"])


def test_delete_archive_keeps_the_active_timeline(tmp_path: Path) -> None:
    path = tmp_path / "t"
    cow_table(path, 9, 4)
    archive_instants(path, 2)
    history = timeline_dir(path, 9) / "history"
    assert os.listdir(history)
    timeline = instant_files(timeline_dir(path, 9))
    delete_archive(path)
    assert os.listdir(history) == []
    assert instant_files(timeline_dir(path, 9)) == timeline
    # A new history starts at version 1.
    archive_instants(path, 1)
    assert (history / "_version_").read_text() == "1"


# -- refusals and Hudi's archival rule ----------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 9])
def test_never_archives_at_or_past_a_pending_instant(tmp_path: Path, version: int) -> None:
    path = tmp_path / "t"
    commits = cow_table(path, version, 4)
    hold_in_flight(path, commits[2])
    timeline = timeline_dir(path, version)
    before = instant_files(timeline)
    for count, says in ((3, f"instant {commits[2]}"), (4, "has 3 completed"), (0, "has 3 completed")):
        with pytest.raises(ArchiveError, match=says) as err:
            archive_instants(path, count)
        assert isinstance(err.value, TestkitError)
    assert instant_files(timeline) == before, "a refused archival changes nothing"
    archive = path / ".hoodie" / "archived" if version < 8 else timeline / "history"
    assert not os.listdir(archive)
    assert archive_instants(path, 2) == commits[:2]


@pytest.mark.parametrize("version", [6, 9])
def test_archive_as_hudi_follows_keep_min_and_keep_max(tmp_path: Path, version: int) -> None:
    path = tmp_path / "t"
    commits = cow_table(path, version, 2)
    clean = add_clean(path, version)
    writer = CowTableWriter.open(path)
    commits += [writer.upsert(rows(range(3), i)).instant_time for i in range(4)]
    timeline = timeline_dir(path, version)
    before = instant_files(timeline)
    assert archive_as_hudi(path, keep_min=2, keep_max=6) == [], "6 commits do not exceed keep_max"
    assert instant_files(timeline) == before
    with pytest.raises(ArchiveError):
        archive_as_hudi(path, keep_min=3, keep_max=3)

    # 6 commits > 5: the oldest archived until 2 remain, and the clean requested before the last of them.
    assert archive_as_hudi(path, keep_min=2, keep_max=5) == [commits[0], commits[1], clean, commits[2], commits[3]]
    assert {i.timestamp for i in list_instants(timeline)} == set(commits[4:])


@pytest.mark.parametrize("version", [6, 9])
def test_archive_as_hudi_keeps_the_commit_before_a_pending_write(tmp_path: Path, version: int) -> None:
    path = tmp_path / "t"
    commits = cow_table(path, version, 2)
    clean = add_clean(path, version)
    writer = CowTableWriter.open(path)
    commits += [writer.upsert(rows(range(3), i)).instant_time for i in range(4)]
    hold_in_flight(path, commits[2])
    # Five completed commits > 4, but only those before the last commit preceding the pending one
    # may go: commits[0]. The clean is newer than it and stays.
    assert archive_as_hudi(path, keep_min=2, keep_max=4) == [commits[0]]
    remaining = {i.timestamp for i in list_instants(timeline_dir(path, version))}
    assert remaining == {commits[1], clean, *commits[2:]}
