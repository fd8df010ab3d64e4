"""Avro commit metadata decoded by the fast path equals fastavro's decoding, on every
instant file of the real tables and of a generated table with thousands of write stats;
damaged files decode as fastavro decodes them or fail as it fails (the fast path hands
every file it cannot decode to fastavro)."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from hudi_ray import HudiTimelineError
from hudi_ray.core.timeline import decode_instant_metadata
from hudi_ray.core.timeline.commit_avro import Unsupported, decode_commit_record
from hudi_testkit import CowTableSpec, CowTableWriter, MetadataTableOptions
from tests.support import all_table_names

_MAGIC = b"Obj\x01"


def _fastavro(raw: bytes) -> Any:
    return next(iter(fastavro.reader(io.BytesIO(raw))))


def _avro_instant_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.read_bytes()[:4] == _MAGIC and ".hoodie" in p.parts)


def test_equals_fastavro_on_every_avro_instant_file_of_the_real_tables(table_path) -> None:
    fast = slow = 0
    for name in all_table_names():
        for f in _avro_instant_files(table_path(name)):
            raw = f.read_bytes()
            try:
                got = decode_commit_record(raw)
            except Unsupported:
                slow += 1
                continue
            expected = _fastavro(raw)
            assert got == expected and list(got) == list(expected), f
            fast += 1
    # Every data commit of the version 8 and 9 tables (and their metadata tables) takes the fast path.
    assert fast > 300 and slow > 50, (fast, slow)


@pytest.fixture(scope="module")
def big_commit(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A commit of 600 files in 3 partitions, written by the test kit."""
    path = tmp_path_factory.mktemp("wide") / "t"
    schema = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("p", pa.string())])
    spec = CowTableSpec("wide", "id", "p", None, table_version=9)
    writer = CowTableWriter.create(path, spec, schema, rows_per_file=2, metadata_table=MetadataTableOptions())
    rows = 1200
    ids = [f"k{i:05d}" for i in range(rows)]
    writer.upsert(pa.table({"id": ids, "p": [f"p{i % 3}" for i in range(rows)]}, schema=schema))
    commit = max((path / ".hoodie" / "timeline").glob("*_*.commit"))
    return commit.read_bytes()


def test_equals_fastavro_on_a_commit_of_many_write_stats(big_commit: bytes) -> None:
    got = decode_commit_record(big_commit)
    assert got == _fastavro(big_commit)
    assert sum(len(s) for s in got["partitionToWriteStats"].values()) == 600


def _outcome(decode: Any, raw: bytes) -> Any:
    try:
        return ("ok", decode(raw))
    except HudiTimelineError as exc:
        return ("error", str(exc))


def _fastavro_then_checked(raw: bytes) -> Any:
    """What decoding did before the fast path: fastavro's first record, or the project's error."""
    try:
        records = list(fastavro.reader(io.BytesIO(raw)))
    except Exception as exc:
        raise HudiTimelineError(f"Malformed instant metadata in x: {exc}") from exc
    if not records:
        raise HudiTimelineError("Instant file x holds no Avro record")
    return records[0]


def test_damaged_commits_decode_or_fail_as_fastavro_does(big_commit: bytes) -> None:
    """Bytes flipped, dropped or cut anywhere in a commit: the same record, or an error
    naming the file whenever fastavro fails."""
    rng = random.Random(31)
    raw = big_commit
    start = raw.index(b"partitionToWriteStats")  # in the header's schema; damage lands after it too
    outcomes = {"ok": 0, "error": 0}
    for i in range(400):
        data = bytearray(raw)
        at = rng.randrange(start, len(raw))
        kind = i % 3
        if kind == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            del data[at : at + rng.randrange(1, 4)]
        else:
            del data[at:]
        damaged = bytes(data)
        old = _outcome(_fastavro_then_checked, damaged)
        new = _outcome(lambda b: decode_instant_metadata(b, "x"), damaged)
        assert new[0] == old[0], (i, at, kind, old, new)
        if new[0] == "ok":
            assert new[1] == old[1], (i, at, kind)
        else:
            assert new == old, (i, at, kind)
        outcomes[new[0]] += 1
    assert outcomes["ok"] > 20 and outcomes["error"] > 20, outcomes
