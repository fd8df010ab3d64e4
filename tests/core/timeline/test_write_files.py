"""The compiled walk of commit metadata (``core.timeline.write_files``): what it takes it
reads exactly as the full decode and its checks do; what those checks would look at
twice it leaves to them, so the guards see the same files or the same error."""

from __future__ import annotations

import copy
import io
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import pytest

import hudi_ray
from hudi_ray.core.planning.record_index import every_write
from hudi_ray.core.timeline.commit_validation import validate_commit_metadata
from hudi_ray.core.timeline.write_files import WriteFiles, extract
from hudi_testkit.longlived import COPY_ON_WRITE, MERGE_ON_READ, LongLivedSpec, write_long_lived_table
from hudi_testkit.metadata import COMMIT_METADATA_SCHEMA

SCHEMA = json.dumps(COMMIT_METADATA_SCHEMA)
PARSED = fastavro.parse_schema(copy.deepcopy(COMMIT_METADATA_SCHEMA))


def _stat(partition: str | None, file_id: str | None, path: str | None, inserts: int | None = 3) -> dict[str, Any]:
    return {"partitionPath": partition, "fileId": file_id, "path": path, "numInserts": inserts, "numWrites": 5}


def _datum(stats: dict[str, list[dict[str, Any]]] | None, operation: str | None = "UPSERT") -> bytes:
    record = {"partitionToWriteStats": stats, "extraMetadata": {"schema": "{}"}, "operationType": operation}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, PARSED, record)
    return buf.getvalue()


def _rows(files: WriteFiles) -> list[tuple[int, str, str, str, int]]:
    return sorted(zip(files.instant.tolist(), files.partition, files.file_id, files.name, files.inserts.tolist()))


def test_the_files_and_operations_are_read() -> None:
    records = [
        _datum(
            {
                "p=1": [
                    _stat("p=1", "g1-0", "p=1/g1-0_1-2-3_001.parquet"),
                    _stat(None, "g2-0", "p=1/.g2-0_001.log.1_1-2-3", inserts=None),
                ],
                "p=2": [_stat("p=2", "g3-0", "p=2/g3-0_1-2-3_001.parquet", inserts=0)],
            }
        ),
        _datum({"": [_stat("", "g4-0", "g4-0_0-1-1_002.parquet")]}, operation="INSERT"),
        _datum({}, operation=None),
    ]
    files = extract(records, SCHEMA)
    assert files is not None
    assert files.operations == ("UPSERT", "INSERT", None)
    assert _rows(files) == [
        (0, "p=1", "g1-0", "g1-0_1-2-3_001.parquet", 3),
        (0, "p=1", "g2-0", ".g2-0_001.log.1_1-2-3", -1),
        (0, "p=2", "g3-0", "g3-0_1-2-3_001.parquet", 0),
        (1, "", "g4-0", "g4-0_0-1-1_002.parquet", 3),
    ]


def test_stats_naming_no_file_are_left_out() -> None:
    records = [_datum({"p": [_stat("p", None, "p/x_1_2.parquet"), _stat("p", "x", None), _stat("p", "x", "")]})]
    files = extract(records, SCHEMA)
    assert files is not None and files.name == []


def test_many_stats_outgrow_the_first_room() -> None:
    stats = {f"p{k}": [_stat(f"p{k}", f"g{i}", f"p{k}/g{i}_1-0-1_001.parquet") for i in range(300)] for k in range(4)}
    files = extract([_datum(stats)] * 3, SCHEMA)
    assert files is not None
    assert len(files.name) == 3 * 4 * 300
    assert sorted(set(files.instant.tolist())) == [0, 1, 2]


@pytest.mark.parametrize(
    "stats",
    [
        pytest.param(None, id="no-map-of-stats"),
        pytest.param({"p": [_stat("p", "", "p/x_1_2.parquet")]}, id="empty-file-id"),
        pytest.param({"p": [_stat("q", "x", "p/x_1_2.parquet")]}, id="partition-not-the-key"),
        pytest.param({"p": [_stat("p", "x", "../x_1_2.parquet")]}, id="path-leaves-the-table"),
        pytest.param({"p": [_stat("p", "x", "/abs/x_1_2.parquet")]}, id="absolute-path"),
        pytest.param({"p": [_stat("p", "x", "s3://b/x_1_2.parquet")]}, id="uri"),
        pytest.param({"..": [_stat("..", "x", "x_1_2.parquet")]}, id="partition-leaves-the-table"),
        pytest.param({"p": [_stat("p", "x", "p/y_1_2.parquet")]}, id="name-of-another-group"),
        pytest.param({"p": [_stat("p", "x", "p/x_1_2.parquet", inserts=-1)]}, id="negative-count"),
    ],
)
def test_what_the_checks_look_at_twice_is_left_to_them(stats: dict[str, Any] | None) -> None:
    good = _datum({"p": [_stat("p", "g", "p/g_1_2.parquet")]})
    assert extract([good], SCHEMA) is not None
    assert extract([good, _datum(stats)], SCHEMA) is None


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b"\x03" + b[1:], id="bad-union-branch"),
        pytest.param(lambda b: b.replace(b"g_1_2", b"\xff\xfe_1_2"), id="not-utf8"),
    ],
)
def test_bytes_that_do_not_decode_are_left_to_the_full_decode(damage: Callable[[bytes], bytes]) -> None:
    good = _datum({"p": [_stat("p", "g", "p/g_1_2.parquet")]})
    assert extract([damage(good)], SCHEMA) is None


def test_schemas_it_does_not_know_are_left_to_the_full_decode() -> None:
    record = _datum({"p": [_stat("p", "g", "p/g_1_2.parquet")]})
    assert extract([record], json.dumps({"type": "record", "name": "R", "fields": []})) is None
    assert extract([record], "not json") is None
    odd = copy.deepcopy(COMMIT_METADATA_SCHEMA)
    stat = odd["fields"][0]["type"][1]["values"]["items"]
    for field in stat["fields"]:
        if field["name"] == "numInserts":
            field["type"] = ["null", "string"]
    assert extract([record], json.dumps(odd)) is None


def test_an_enum_operation_reads_as_its_symbol() -> None:
    schema = copy.deepcopy(COMMIT_METADATA_SCHEMA)
    symbols = ["INSERT", "UPSERT", "BULK_INSERT"]
    schema["fields"][-1]["type"] = ["null", {"type": "enum", "name": "Op", "symbols": symbols}]
    buf = io.BytesIO()
    record = {"partitionToWriteStats": {"p": [_stat("p", "g", "p/g_1_2.parquet")]}, "operationType": "BULK_INSERT"}
    fastavro.schemaless_writer(buf, fastavro.parse_schema(copy.deepcopy(schema)), record)
    files = extract([buf.getvalue()], json.dumps(schema))
    assert files is not None and files.operations == ("BULK_INSERT",)


@pytest.mark.parametrize(
    ("table_type", "version"),
    [(COPY_ON_WRITE, 6), (MERGE_ON_READ, 6), (COPY_ON_WRITE, 9), (MERGE_ON_READ, 9)],
)
def test_every_write_of_a_long_lived_table_reads_as_the_full_decode(
    tmp_path: Path, table_type: str, version: int
) -> None:
    spec = LongLivedSpec(table_type, version, commits=70, keys=600, rows_per_commit=20, clustering_every=25)
    table = write_long_lived_table(tmp_path / "t", spec)

    def timeline() -> hudi_ray.HudiTimeline:
        return hudi_ray.HudiTableBuilder.from_base_uri(str(table.path)).build().get_timeline()

    fast = timeline()
    instants = every_write(fast, "test")
    assert instants is not None
    assert sum(i.archived for i in instants) > 30
    archived = [i for i in instants if i.archived]
    walked = fast.archive.write_files([i.timestamp for i in archived])
    writes = [i for i in archived if i.action in ("commit", "deltacommit")]
    assert sum(len(places) for places, _ in walked) == len(writes), "the compiled walk took every archived write"
    got = fast.write_files(instants)
    full = timeline()
    expected = WriteFiles.of_stats(
        [full.get_instant_metadata(i).get("operationType") for i in instants], [full.write_stats(i) for i in instants]
    )
    assert got.operations == expected.operations
    assert _rows(got) == _rows(expected)
    # A part of the sequence reads as that part of the whole.
    some = instants[5:40]
    assert _rows(fast.write_files(some)) == _rows(
        WriteFiles.of_stats([None] * len(some), [full.write_stats(i) for i in some])
    )


# -- what the full decode refuses or reads otherwise is never taken ----------------------------


def _full(record: bytes, schema: dict[str, Any] = COMMIT_METADATA_SCHEMA) -> list[tuple[str, str, str, int]] | str:
    """What the full decode and its checks make of ``record``: the rows, or the error."""
    try:
        meta = fastavro.schemaless_reader(io.BytesIO(record), fastavro.parse_schema(copy.deepcopy(schema)))
        stats = validate_commit_metadata(meta, "commit", "here")
    except Exception as exc:  # the full decode's errors, whatever they are
        return type(exc).__name__
    rows = [(s["partitionPath"], s["fileId"], s["path"].rsplit("/", 1)[-1], s.get("numInserts")) for s in stats]
    return sorted((p, f, n, -1 if i is None else i) for p, f, n, i in rows)


def _fast(record: bytes, schema: dict[str, Any] = COMMIT_METADATA_SCHEMA) -> list[tuple[str, str, str, int]] | None:
    files = extract([record], json.dumps(schema))
    if files is None:
        return None
    return sorted(zip(files.partition, files.file_id, files.name, files.inserts.tolist()))


def _agrees(record: bytes, schema: dict[str, Any] = COMMIT_METADATA_SCHEMA) -> bool:
    fast = _fast(record, schema)
    return fast is None or fast == _full(record, schema)


@pytest.mark.parametrize(
    "stats",
    [
        pytest.param({"..": [], "p": [_stat("p", "g", "p/g_1-0-1_001.parquet")]}, id="unsafe-partition-naming-no-file"),
        pytest.param({"/abs": [_stat("/abs", "g", None)]}, id="absolute-partition"),
        pytest.param({"p": [_stat("p", "abc", "p/abc_x_1-0-1_001.parquet")]}, id="base-name-of-a-longer-id"),
        pytest.param({"p": [_stat("p", "abc", "p/.abc_x_001.log.1_0-1-1")]}, id="log-name-of-a-longer-id"),
        pytest.param({"p": [_stat("p", "abc", "p/.abc_001.log.1_0_2.log.3")]}, id="log-name-read-greedily"),
    ],
)
def test_names_and_partitions_are_checked_as_the_parsers_read_them(stats: dict[str, Any]) -> None:
    record = _datum(stats)
    assert _fast(record) is None
    assert isinstance(_full(record), str) or _full(record) != []


def test_log_and_base_names_of_the_group_are_taken() -> None:
    record = _datum({"p": [_stat("p", "a_b", "p/.a_b_001.log.1_0-1-1"), _stat("p", "a_b", "p/a_b_1-0-1_002.parquet")]})
    assert _fast(record) == _full(record) != []


def test_a_partition_listed_twice_is_left_to_the_full_decode() -> None:
    # A map's encoding is that of an array of key-value records: written so, one key twice.
    pairs = copy.deepcopy(COMMIT_METADATA_SCHEMA)
    stats_map = pairs["fields"][0]["type"][1]
    pairs["fields"][0]["type"][1] = {
        "type": "array",
        "items": {
            "type": "record",
            "name": "KV",
            "fields": [{"name": "k", "type": "string"}, {"name": "v", "type": stats_map["values"]}],
        },
    }
    record = {
        "partitionToWriteStats": [
            {"k": "p", "v": [_stat("p", "g", "p/g_1-0-1_001.parquet")]},
            {"k": "p", "v": [_stat("p", "h", "p/h_1-0-1_001.parquet")]},
        ],
        "operationType": "UPSERT",
    }
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(pairs), record)
    assert _full(buf.getvalue()) == [("p", "h", "h_1-0-1_001.parquet", 3)]
    assert _fast(buf.getvalue()) is None


def test_strings_the_full_decode_cannot_read_are_left_to_it() -> None:
    buf = io.BytesIO()
    record = {
        "partitionToWriteStats": {"p": [_stat("p", "g", "p/g_1-0-1_001.parquet")]},
        "extraMetadata": {"schema": "é"},
    }
    fastavro.schemaless_writer(buf, PARSED, record)
    damaged = buf.getvalue().replace("é".encode(), b"\xff\xfe")
    assert isinstance(_full(damaged), str)
    assert _fast(damaged) is None


def test_an_enum_index_out_of_range_is_left_to_the_full_decode() -> None:
    wide = copy.deepcopy(COMMIT_METADATA_SCHEMA)
    wide["fields"][-1]["type"] = [
        "null",
        {"type": "enum", "name": "Op", "symbols": ["INSERT", "UPSERT", "BULK_INSERT"]},
    ]
    narrow = copy.deepcopy(wide)
    narrow["fields"][-1]["type"][1]["symbols"] = ["INSERT", "UPSERT"]
    buf = io.BytesIO()
    record = {
        "partitionToWriteStats": {"p": [_stat("p", "g", "p/g_1-0-1_001.parquet")]},
        "operationType": "BULK_INSERT",
    }
    fastavro.schemaless_writer(buf, fastavro.parse_schema(copy.deepcopy(wide)), record)
    assert extract([buf.getvalue()], json.dumps(narrow)) is None


def _with_stat_field(name: str, avro_type: Any) -> dict[str, Any]:
    schema = copy.deepcopy(COMMIT_METADATA_SCHEMA)
    for field in schema["fields"][0]["type"][1]["values"]["items"]["fields"]:
        if field["name"] == name:
            field["type"] = avro_type
    return schema


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(
            _with_stat_field("fileId", ["null", {"type": "fixed", "name": "F", "size": 4}]), id="fixed-file-id"
        ),
        pytest.param(
            _with_stat_field("fileId", ["null", {"type": "string", "logicalType": "uuid"}]), id="uuid-file-id"
        ),
        pytest.param(_with_stat_field("path", ["null", {"type": "array", "items": "string"}]), id="array-path"),
        pytest.param(
            {
                **COMMIT_METADATA_SCHEMA,
                "fields": [
                    {
                        **COMMIT_METADATA_SCHEMA["fields"][0],
                        "type": [
                            "null",
                            {
                                "type": "map",
                                "values": {
                                    "type": "array",
                                    "items": [
                                        "null",
                                        COMMIT_METADATA_SCHEMA["fields"][0]["type"][1]["values"]["items"],
                                    ],
                                },
                            },
                        ],
                    },
                    *COMMIT_METADATA_SCHEMA["fields"][1:],
                ],
            },
            id="nullable-stats",
        ),
        pytest.param(
            {
                **COMMIT_METADATA_SCHEMA,
                "fields": [
                    f if f["name"] != "extraMetadata" else {**f, "type": ["null", "string"]}
                    for f in COMMIT_METADATA_SCHEMA["fields"]
                ],
            },
            id="extra-metadata-not-a-map",
        ),
    ],
)
def test_schemas_whose_values_the_checks_look_at_are_left_to_them(schema: dict[str, Any]) -> None:
    from hudi_ray.core.timeline.write_files import _program

    assert _program(json.dumps(schema), ()) is None


def test_a_path_with_a_line_break_names_the_same_file() -> None:
    record = _datum({"p": [_stat("p", "g", "p/a\nb/g_1-0-1_001.parquet")]})
    assert _fast(record) == _full(record) == [("p", "g", "g_1-0-1_001.parquet", 3)]


def test_random_metadata_reads_as_the_full_decode_or_is_left_to_it() -> None:
    rng = random.Random(11)
    partitions = ["p", "q=1", "", "..", "a/b", "é", "x:y"]
    ids = ["g", "g-0", "abc", "a_b", "", None]

    def name(file_id: str) -> str:
        return rng.choice(
            [
                f"{file_id}_1-0-1_001.parquet",
                f".{file_id}_001.log.1_0-1-1",
                f"{file_id}_x_1-0-1_001.parquet",
                f".{file_id}_x_001.log.2",
                "other_1-0-1_001.parquet",
                "plain.txt",
            ]
        )

    checked = 0
    for _ in range(400):
        stats: dict[str, list[dict[str, Any]]] = {}
        for partition in rng.sample(partitions, rng.randint(0, 3)):
            group = []
            for _ in range(rng.randint(0, 3)):
                file_id = rng.choice(ids)
                path = rng.choice(
                    [None, "", f"{partition}/{name(file_id or 'z')}" if partition else name(file_id or "z")]
                )
                stated = rng.choice([partition, None, "other"])
                group.append(_stat(stated, file_id, path, rng.choice([None, 0, 2, -1])))
            stats[partition] = group
        record = _datum(rng.choice([stats, stats, None]), rng.choice(["UPSERT", "INSERT", None]))
        assert _agrees(record), (stats, _fast(record), _full(record))
        checked += _fast(record) is not None
    assert checked > 40, "the random records must exercise the compiled path too"


def test_the_quick_write_stat_check_passes_only_what_the_full_check_returns_unchanged() -> None:
    """``_plain_write_stat`` spares the full check for the usual stat: any stat it passes,
    the full check returns as it is, never refuses or rewrites."""
    from hudi_ray.core.exceptions import HudiTimelineError
    from hudi_ray.core.timeline.commit_validation import _plain_write_stat, _validate_write_stat

    rng = random.Random(5)
    names = [
        "fid-0_1-2-3_20240101.parquet",
        "fid-0_1_2_3.parquet",
        ".fid-0_2024.log.1_1-2-3",
        "a_b_1-2_20240101.parquet",
        "fid-0_tok_abc.parquet",
        "fid-0x_1_2.parquet",
        "fid-0_1-2-3_20240101.txt",
        "other_1-2_2024.parquet",
        "fid-0__.parquet",
    ]
    passed = 0
    for _ in range(20_000):
        stat: dict[str, Any] = {}
        partition = rng.choice(["p", "", "q"])
        for key, choices in (
            ("fileId", ["fid-0", "a_b", "", None, 3, "x"]),
            ("path", [None, "", 5, *(d + n for d in ("", "p/", "p/q/") for n in names)]),
            ("partitionPath", [None, partition, "zz", 1]),
            ("numWrites", [None, None, 1, 0, -1, 1.5, True, "3"]),
        ):
            value = rng.choice(choices)
            if value is not None:
                stat[key] = value
        if not _plain_write_stat(stat, partition):
            continue
        passed += 1
        try:
            assert _validate_write_stat(stat, partition, "here") is stat, stat
        except HudiTimelineError as exc:
            raise AssertionError(f"passed {stat} in {partition!r}, which the full check refuses: {exc}") from exc
    assert passed > 100
