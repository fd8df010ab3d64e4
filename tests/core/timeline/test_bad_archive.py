"""Damaged archived timelines: a ``_version_``, manifest or LSM Parquet file (layout 2,
table version 9) or an archive log file or merge plan (layout 1, table version 6) that
is missing, truncated, corrupt or crafted ends in a ``HudiCoreError`` naming the damaged
file, or turns the record index off, or is ignored where Apache Hudi ignores it: never
in a raw Python exception or in rows other than the undamaged table's.

Each table is written once per module by the test kit with part of its history archived,
and copied for each case:

* COPY_ON_WRITE v6 and v9: long-lived, archived at Hudi's defaults, with an archived
  clustering whose replaced files were cleaned since;
* MERGE_ON_READ v6 and v9: long-lived, never cleaned, archived up to the last compaction,
  so that latest slices hold log files of archived delta commits with an archived
  compaction's base file between them and the active timeline: a v9 snapshot needs those
  commits' completion times from the archive;
* a COPY_ON_WRITE v9 table with a metadata table and record index (the test kit writes
  metadata tables from version 8 on only), for key lookups.

Three reads are compared with the undamaged copy's: the latest snapshot, an incremental
read from the beginning (which needs every archived commit) and, on the indexed table, a
record key lookup. A read that needs the archive must fail naming the damaged file; the
others may fail the same way or answer with the undamaged rows (a lookup then without the
record index, which may decide only when every write of the table is known). An error that
names no damaged file, or a read that answers without the archive it needs, fails the case
even when its rows are right.
"""

from __future__ import annotations

import io
import json
import logging
import os
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray import HudiReadOptions, HudiTableBuilder
from hudi_ray.core.exceptions import (
    HudiCoreError,
    HudiCorruptFileError,
    HudiFileNotFoundError,
    HudiHistoryError,
    HudiUnsafePathError,
)
from hudi_ray.core.log_file import BlockType, HeaderKey, read_log_blocks
from hudi_testkit import CowTableSpec, CowTableWriter, MetadataTableOptions, archive_instants, archive_layout
from hudi_testkit.archive import MERGE_PLAN_SCHEMA, delete_archive
from hudi_testkit.common import list_instants
from hudi_testkit.log_writer import frame_block
from hudi_testkit.longlived import (
    COPY_ON_WRITE,
    MERGE_ON_READ,
    LongLivedSpec,
    LongLivedTable,
    write_long_lived_table,
)
from tests.core.damage import incremental
from tests.support import row_set

_SMALL = {"partitions": 2, "keys": 80, "rows_per_commit": 8, "rollback_every": 17}
SPECS = {
    # Archived at Hudi's defaults: more commits than the archiver keeps (30, counting clusterings).
    "cow6": LongLivedSpec(COPY_ON_WRITE, 6, commits=36, clustering_every=8, **_SMALL),
    "cow9": LongLivedSpec(COPY_ON_WRITE, 9, commits=36, clustering_every=8, **_SMALL),
    # Archived up to the last compaction by ``_archive_mor`` (no clustering: nothing replaced).
    "mor6": LongLivedSpec(
        MERGE_ON_READ,
        6,
        commits=24,
        compaction_every=3,
        clustering_every=1000,
        clean_retained=1000,
        archive=False,
        **_SMALL,
    ),
    "mor9": LongLivedSpec(
        MERGE_ON_READ,
        9,
        commits=24,
        compaction_every=3,
        clustering_every=1000,
        clean_retained=1000,
        archive=False,
        **_SMALL,
    ),
}
RLI = "rli9"
LAYOUT_1 = ["cow6", "mor6"]
LAYOUT_2 = ["cow9", "mor9", RLI]
LOOKUP_KEY = "k004"


def spread(tables: list[str], variants: list, ids: list[str] | None = None, per_variant: int = 1) -> list:
    """Each variant on ``per_variant`` of ``tables``, the tables in turn: every table meets
    most kinds of damage across the cases, at a fraction of the runs of all pairs."""
    ids = ids or [str(v) for v in variants]
    out, k = [], 0
    for variant, vid in zip(variants, ids):
        for _ in range(per_variant):
            table = tables[k % len(tables)]
            out.append(pytest.param(table, variant, id=f"{table}-{vid}"))
            k += 1
    return out


Outcome = list[str] | HudiCoreError


@dataclass(frozen=True)
class Pristine:
    name: str
    path: Path
    reads: dict[str, list[str]]  # read -> row set of the undamaged table
    archived: list[tuple[str, str]]  # the archive's completed instants (time, action)
    needs: frozenset[str]  # reads that cannot be answered without the archive


# -- the tables ----------------------------------------------------------------------------------


def _archive_mor(table: LongLivedTable) -> None:
    """Archive, in three archivals, every instant up to the last compaction: file groups
    that compaction compacted keep their older slices (nothing is cleaned), whose log files'
    delta commits are archived, and the latest base file lies between those and the
    active timeline; so which slice a log file is in depends on its archived completion time."""
    last = max(t for t, kind in table.services.items() if kind == "compaction")
    timeline = archive_layout(table.path).timeline
    n = len({i.timestamp for i in list_instants(timeline) if i.is_completed and i.timestamp <= last})
    for count in (n // 3, n // 3, n - 2 * (n // 3)):
        archive_instants(table.path, count)


def _write_indexed(path: Path) -> None:
    """Five commits of a COW v9 table with a record index; the oldest three archived, in two archivals."""
    schema = pa.schema([("id", pa.string()), ("region", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])

    def rows(ids: range, value: int) -> pa.Table:
        keys = [f"k{i:03d}" for i in ids]
        regions = [f"r{i % 2}" for i in ids]
        return pa.table({"id": keys, "region": regions, "ts": [value] * len(keys), "v": [value] * len(keys)}, schema)

    spec = CowTableSpec("rli", "id", "region", "ts", table_version=9)
    writer = CowTableWriter.create(path, spec, schema, rows_per_file=4, metadata_table=MetadataTableOptions())
    writer.upsert(rows(range(16), 0))
    for i in range(1, 5):
        writer.upsert(rows(range(i, 16, 3), i))
    archive_instants(path, 2)
    archive_instants(path, 1)


def _options(name: str) -> dict[str, HudiReadOptions]:
    out = {"snapshot": HudiReadOptions(), "incremental": incremental()}
    if name == RLI:
        out["lookup"] = HudiReadOptions(filters=[("id", "=", LOOKUP_KEY)])
    return out


def _outcomes(path: Path, name: str) -> dict[str, Outcome]:
    """Each read on a table built for it alone (nothing read before is cached); a
    ``HudiCoreError`` is an outcome, any other exception fails the test."""
    out: dict[str, Outcome] = {}
    for read, options in _options(name).items():
        table = HudiTableBuilder.from_base_uri(str(path)).build()
        try:
            batches = table.read(options)
        except HudiCoreError as exc:
            out[read] = exc
        else:
            out[read] = row_set(batches) if batches else []
    return out


def _archived(path: Path) -> list[tuple[str, str]]:
    timeline = HudiTableBuilder.from_base_uri(str(path)).build().get_timeline()
    return [(i.timestamp, i.action) for i in timeline.archive.instants()]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Pristine]:
    made: dict[str, Pristine] = {}

    def get(name: str) -> Pristine:
        if name not in made:
            path = tmp_path_factory.mktemp(name) / "table"
            if name == RLI:
                _write_indexed(path)
                expected_rows = None
            else:
                written = write_long_lived_table(path, SPECS[name])
                if not SPECS[name].archive:
                    _archive_mor(written)
                expected_rows = written.expected.num_rows
            got = _outcomes(path, name)
            assert all(isinstance(v, list) for v in got.values()), got
            reads = {k: v for k, v in got.items() if isinstance(v, list)}
            if expected_rows is not None:
                assert len(reads["snapshot"]) == expected_rows
            assert reads["incremental"] == reads["snapshot"]  # from the beginning: every live row
            needs = {"incremental"} | ({"snapshot"} if name == "mor9" else set())
            made[name] = Pristine(name, path, reads, _archived(path), frozenset(needs))
            assert made[name].archived
        return made[name]

    return get


@pytest.fixture
def damaged(pristine, tmp_path: Path) -> Callable[[str], tuple[Pristine, Path]]:
    """A private copy of a table to damage, and the undamaged table's reads."""

    def make(name: str) -> tuple[Pristine, Path]:
        p = pristine(name)
        dest = tmp_path / name
        # Hard links but for the archive, which the cases damage (always in a private copy).
        shutil.copytree(p.path, dest, copy_function=os.link)
        archive = archive_layout(p.path).archive.relative_to(p.path)
        shutil.rmtree(dest / archive)
        shutil.copytree(p.path / archive, dest / archive)
        return p, dest

    return make


# -- what a damaged table may do -------------------------------------------------------------------


def _names(exc: BaseException, victim: str) -> bool:
    return f"/{victim}" in str(exc)


def fails_naming(
    p: Pristine,
    path: Path,
    victim: str,
    error: type[HudiCoreError] = HudiCoreError,
    needs: frozenset[str] | None = None,
) -> None:
    """Reads needing the archive (``needs``, else the table's) fail with ``error`` (an
    incremental read may report it as a ``HudiHistoryError``) naming ``victim``; the
    others fail so or give the undamaged rows."""
    needs = p.needs if needs is None else needs
    got = _outcomes(path, p.name)
    for read, outcome in got.items():
        if isinstance(outcome, HudiCoreError):
            assert _names(outcome, victim), f"{read}: the error does not name {victim}: {outcome!r}"
            expected_type = isinstance(outcome, error) or (
                read == "incremental" and isinstance(outcome, HudiHistoryError)
            )
            assert expected_type, f"{read}: {type(outcome).__name__} instead of {error.__name__}: {outcome}"
        else:
            assert outcome == p.reads[read], _row_difference(read, outcome, p.reads[read], victim)
            assert read not in needs, f"{read} answered, undamaged rows, though {victim}, which it needs, is damaged"
            if read == "lookup":
                # Not every write is known: the record index may not decide.
                assert not _record_index_used(path), f"the record index was used with {victim} damaged"


def _record_index_used(path: Path) -> bool:
    plan = HudiTableBuilder.from_base_uri(str(path)).build().explain(_options(RLI)["lookup"])
    return plan.stage("record index") is not None


def _row_difference(read: str, got: list[str], expected: list[str], victim: str) -> str:
    lost, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
    return (
        f"{read} with {victim} damaged: {len(got)} rows instead of {len(expected)} "
        f"({len(lost)} lost, {len(extra)} not in the undamaged read), e.g. lost {lost[:1]}, extra {extra[:1]}"
    )


def reads_unchanged(p: Pristine, path: Path, victim: str = "the archive") -> None:
    got = _outcomes(path, p.name)
    for read, outcome in got.items():
        assert not isinstance(outcome, HudiCoreError), f"{read}: {type(outcome).__name__}: {outcome}"
        assert outcome == p.reads[read], _row_difference(read, outcome, p.reads[read], victim)
    assert _archived(path) == p.archived, "archived instants differ (duplicated or lost)"


def test_tables_have_the_shape_the_cases_need(pristine, tmp_path: Path) -> None:
    """The v9 MOR snapshot needs archived completion times (it fails once the archive is
    gone), and the key lookup on the indexed table is answered by the record index."""
    mor = pristine("mor9")
    gone = tmp_path / "gone"
    shutil.copytree(mor.path, gone)
    delete_archive(gone)
    with pytest.raises(HudiCoreError, match="was archived off the active timeline"):
        HudiTableBuilder.from_base_uri(str(gone)).build().read()
    rli = pristine(RLI)
    plan = HudiTableBuilder.from_base_uri(str(rli.path)).build().explain(_options(RLI)["lookup"])
    assert _record_index_used(rli.path)
    assert plan.stage("record index").file_slices < plan.stage("file slices").file_slices, str(plan)
    assert len(rli.reads["lookup"]) == 1
    # Cases damage the first or last of several files.
    for name in LAYOUT_1:
        assert len(_log_files(archive_layout(pristine(name).path).archive)) > (name == "mor6")
    assert len(_manifest_files(archive_layout(mor.path).archive)) > 1


@pytest.mark.parametrize("name", [*SPECS, RLI])
def test_lost_archive_never_changes_rows(damaged, name: str) -> None:
    """The whole archive deleted: a read gives the undamaged rows or fails naming what is missing."""
    p, path = damaged(name)
    delete_archive(path)
    got = _outcomes(path, name)
    for read, outcome in got.items():
        if not isinstance(outcome, HudiCoreError):
            assert outcome == p.reads[read], _row_difference(read, outcome, p.reads[read], "the whole archive")


# == layout 2: the LSM history ====================================================================


def _history(path: Path) -> Path:
    return archive_layout(path).archive


def _version(folder: Path) -> int:
    return int((folder / "_version_").read_text())


def _manifest(folder: Path) -> Path:
    return folder / f"manifest_{_version(folder)}"


def _manifest_files(folder: Path) -> list[str]:
    return [f["fileName"] for f in json.loads(_manifest(folder).read_text())["files"]]


def _add_to_manifest(folder: Path, name: str) -> None:
    manifest = _manifest(folder)
    doc = json.loads(manifest.read_text())
    doc["files"].append({"fileName": name, "fileLen": 100})
    manifest.write_text(json.dumps(doc, indent=2))


@pytest.mark.parametrize("name", LAYOUT_2)
def test_version_naming_a_missing_manifest(damaged, name: str) -> None:
    p, path = damaged(name)
    folder = _history(path)
    (folder / "_version_").write_text("7")
    fails_naming(p, path, "manifest_7", HudiFileNotFoundError)


@pytest.mark.parametrize("name", LAYOUT_2)
def test_current_manifest_deleted(damaged, name: str) -> None:
    p, path = damaged(name)
    manifest = _manifest(_history(path))
    manifest.unlink()
    fails_naming(p, path, manifest.name, HudiFileNotFoundError)


_VERSION_TEXTS = {
    "missing": None,
    "empty": b"",
    "newline": b"\n",
    "word": b"abc",
    "not-utf8": b"\xff\xfe",
    "negative": b"-1",
    "trailing-junk": b"2x",
    "decimal": b"1.0",
    "superscript-two": "\u00b2".encode(),  # str.isdigit() holds, int() refuses
    "nul": b"\x00",
}


@pytest.mark.parametrize(("name", "text"), spread(LAYOUT_2, list(_VERSION_TEXTS.values()), list(_VERSION_TEXTS)))
def test_unreadable_version_falls_back_to_the_highest_manifest(damaged, name: str, text: bytes | None) -> None:
    """As Hudi: a ``_version_`` that is missing or not a number names no version; the
    greatest ``manifest_N`` present is the current one."""
    p, path = damaged(name)
    version = _history(path) / "_version_"
    if text is None:
        version.unlink()
    else:
        version.write_bytes(text)
    reads_unchanged(p, path)


_MANIFESTS = {
    "empty": b"",
    "blank": b"  \n",
    "not-json": b"{not json",
    "not-utf8": b"\xff\xfe\x00",
    "null": b"null",
    "list": b"[]",
    "no-files": b"{}",
    "files-null": b'{"files": null}',
    "files-map": b'{"files": {}}',
    "files-of-strings": b'{"files": ["20240101000000000_20240101000000001_0.parquet"]}',
    "file-without-name": b'{"files": [{"fileLen": 3}]}',
    "name-a-number": b'{"files": [{"fileName": 7, "fileLen": 3}]}',
    "not-an-lsm-file": b'{"files": [{"fileName": "notes.txt", "fileLen": 3}]}',
    "two-digit-level": b'{"files": [{"fileName": "1_2_10.parquet", "fileLen": 3}]}',
    "truncated": "truncated",
}


@pytest.mark.parametrize(
    ("name", "content"), spread(LAYOUT_2, list(_MANIFESTS.values()), list(_MANIFESTS), per_variant=2)
)
def test_damaged_manifest(damaged, name: str, content: bytes | str) -> None:
    p, path = damaged(name)
    manifest = _manifest(_history(path))
    raw = manifest.read_bytes()
    manifest.write_bytes(raw[: len(raw) // 2] if content == "truncated" else content)
    fails_naming(p, path, manifest.name, HudiCorruptFileError)


@pytest.mark.parametrize("which", ["first", "last", "unknown"])
@pytest.mark.parametrize("name", LAYOUT_2)
def test_manifest_naming_a_missing_file(damaged, name: str, which: str) -> None:
    p, path = damaged(name)
    folder = _history(path)
    files = _manifest_files(folder)
    if which == "unknown":
        victim = "19700101000000000_29991231000000000_0.parquet"  # its range holds every instant
        _add_to_manifest(folder, victim)
    else:
        victim = files[0] if which == "first" else files[-1]
        (folder / victim).unlink()
    fails_naming(p, path, victim, HudiFileNotFoundError)


_UNSAFE = [
    "../19700101000000000_29991231000000000_0.parquet",
    "sub/19700101000000000_29991231000000000_0.parquet",
    "../../../../../../etc/passwd",
    "/etc/passwd",
    "..",
    ".",
    "",
]


@pytest.mark.parametrize(("name", "bad"), spread(LAYOUT_2, _UNSAFE))
def test_manifest_naming_an_unsafe_path(damaged, name: str, bad: str) -> None:
    p, path = damaged(name)
    folder = _history(path)
    _add_to_manifest(folder, bad)
    fails_naming(p, path, _manifest(folder).name, HudiUnsafePathError)


def _rewrite_lsm(file: Path, change: Callable[[pa.Table], pa.Table]) -> None:
    pq.write_table(change(pq.read_table(file)), file, compression="gzip")


def _set_column(table: pa.Table, column: str, values: list) -> pa.Table:
    i = table.schema.get_field_index(column)
    return table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))


def _not_utf8(table: pa.Table, column: str) -> pa.Table:
    """The column's first value with an invalid UTF-8 byte in front, still typed string."""
    values = [v.encode() for v in table[column].to_pylist()]
    values[0] = b"\xff" + values[0]
    i = table.schema.get_field_index(column)
    return table.set_column(i, table.schema.field(i), pa.array(values, pa.binary()).view(pa.string()))


_LSM_DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated-half": lambda f: f.write_bytes(f.read_bytes()[: f.stat().st_size // 2]),
    "footer-cut": lambda f: f.write_bytes(f.read_bytes()[:-9]),
    "random-bytes": lambda f: f.write_bytes(random.Random(7).randbytes(f.stat().st_size)),
    "empty": lambda f: f.write_bytes(b""),
    "no-instantTime": lambda f: _rewrite_lsm(f, lambda t: t.drop_columns(["instantTime"])),
    "no-action": lambda f: _rewrite_lsm(f, lambda t: t.drop_columns(["action"])),
    "no-completionTime": lambda f: _rewrite_lsm(f, lambda t: t.drop_columns(["completionTime"])),
    "no-metadata": lambda f: _rewrite_lsm(f, lambda t: t.drop_columns(["metadata"])),
    "instantTime-int": lambda f: _rewrite_lsm(
        f, lambda t: t.set_column(0, "instantTime", pa.array(range(t.num_rows), pa.int64()))
    ),
    "null-instantTime": lambda f: _rewrite_lsm(f, lambda t: _set_column(t, "instantTime", [None] * t.num_rows)),
    "null-action": lambda f: _rewrite_lsm(f, lambda t: _set_column(t, "action", [None] * t.num_rows)),
    # Not UTF-8 (Parquet readers do not check strings; a damaged page of an uncompressed or
    # snappy file decodes to such bytes): found by the archive fuzzing.
    "action-not-utf8": lambda f: _rewrite_lsm(f, lambda t: _not_utf8(t, "action")),
    "instantTime-not-utf8": lambda f: _rewrite_lsm(f, lambda t: _not_utf8(t, "instantTime")),
    "bad-completionTime": lambda f: _rewrite_lsm(f, lambda t: _set_column(t, "completionTime", ["?"] * t.num_rows)),
    "bad-instantTime": lambda f: _rewrite_lsm(
        f, lambda t: _set_column(t, "instantTime", ["2024-03-01", *t["instantTime"].to_pylist()[1:]])
    ),
}


_LSM_VICTIMS = [f"{t}:{which}" for which in ("first", "last") for t in LAYOUT_2]


@pytest.mark.parametrize(("name", "damage"), spread(_LSM_VICTIMS, list(_LSM_DAMAGE), per_variant=2))
def test_damaged_lsm_file(damaged, name: str, damage: str) -> None:
    name, which = name.split(":")
    p, path = damaged(name)
    folder = _history(path)
    files = _manifest_files(folder)
    victim = files[0] if which == "first" else files[-1]
    _LSM_DAMAGE[damage](folder / victim)
    needs = p.needs
    if damage == "no-metadata":
        needs = frozenset({"incremental"})  # a snapshot reads completion times (and replace commits') only
    elif damage in ("no-completionTime", "bad-completionTime"):
        # Read as nulls, as parquet-avro reads a column the file lacks: each instant then
        # completed at its instant time, as Hudi takes a null completion time.
        needs = frozenset()
    fails_naming(p, path, victim, needs=needs)


@pytest.mark.parametrize("name", LAYOUT_2)
def test_archived_commit_metadata_that_does_not_decode(damaged, name: str, caplog) -> None:
    """Undecodable metadata of archived write commits (a replace commit's left intact): a
    snapshot needs none of it and reads as before; an incremental read fails naming the
    file; the record index, which needs every write's metadata, is not used (a warning
    names the file), and the lookup still finds its rows."""
    p, path = damaged(name)
    folder = _history(path)
    victim = _manifest_files(folder)[0]

    def garble(t: pa.Table) -> pa.Table:
        metas = t["metadata"].to_pylist()
        actions = t["action"].to_pylist()
        garbled = [m if a == "replacecommit" else b"Obj\x01" + b"\x07" * 40 for m, a in zip(metas, actions)]
        return _set_column(t, "metadata", garbled)

    _rewrite_lsm(folder / victim, garble)
    with caplog.at_level(logging.WARNING):
        got = _outcomes(path, name)
    assert got["snapshot"] == p.reads["snapshot"]
    assert isinstance(got["incremental"], HudiCoreError) and _names(got["incremental"], victim), got["incremental"]
    if name == RLI:
        assert got["lookup"] == p.reads["lookup"]
        warnings = [r.getMessage() for r in caplog.records if "record index not used" in r.getMessage().lower()]
        assert any(victim in w for w in warnings), [r.getMessage() for r in caplog.records]
        assert not _record_index_used(path)


# == layout 1: archive log files ==================================================================


def _log_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(".commits_.archive.*"), key=lambda f: int(f.name.split(".")[3].split("_")[0]))


def _first_log(path: Path) -> Path:
    return _log_files(archive_layout(path).archive)[0]


def _block_spans(raw: bytes) -> list[tuple[int, int]]:
    blocks = read_log_blocks(raw, "archive")
    assert all(b.block_type is BlockType.AVRO_DATA for b in blocks)
    starts = [b.offset for b in blocks]
    return list(zip(starts, [*starts[1:], len(raw)]))


def _rebuilt(raw: bytes, change: Callable[[int, dict[int, str], bytes], tuple[int, dict[int, str], bytes]]) -> bytes:
    """The archive file with each block's (type, header, content) passed through ``change``."""
    out = []
    for i, b in enumerate(read_log_blocks(raw, "archive")):
        block_type, header, content = change(i, dict(b.header), bytes(b.content))
        out += frame_block(BlockType(block_type), header, [content])
    return b"".join(bytes(c) for c in out)


def _truncate_in_block(raw: bytes, index: int) -> bytes:
    start, end = _block_spans(raw)[index]
    return raw[: (start + end) // 2]


def _flip(raw: bytes, pos: int, mask: int = 0x01) -> bytes:
    buf = bytearray(raw)
    buf[pos] ^= mask
    return bytes(buf)


def _records(content: bytes) -> list[bytes]:
    count = int.from_bytes(content[4:8], "big")
    pos, out = 8, []
    for _ in range(count):
        size = int.from_bytes(content[pos : pos + 4], "big")
        out.append(content[pos + 4 : pos + 4 + size])
        pos += 4 + size
    return out


def _content(records: list[bytes], count: int | None = None) -> bytes:
    parts = [(3).to_bytes(4, "big"), (len(records) if count is None else count).to_bytes(4, "big")]
    for r in records:
        parts += [len(r).to_bytes(4, "big"), r]
    return b"".join(parts)


def _replace_record(content: bytes, index: int, new: bytes) -> bytes:
    records = _records(content)
    records[index] = new
    return _content(records)


# Each turns an archive file's bytes into damaged ones.
_LOG_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "truncated-in-first-block": lambda raw: _truncate_in_block(raw, 0),
    "truncated-in-last-block": lambda raw: _truncate_in_block(raw, -1),
    "last-byte-cut": lambda raw: raw[:-1],
    "first-magic-flipped": lambda raw: _flip(raw, 0),
    "second-magic-flipped": lambda raw: _flip(raw, _block_spans(raw)[1][0] + 1),
    "block-size-flipped": lambda raw: _flip(raw, 6 + 7, 0x10),
    "log-format-version-0": lambda raw: _flip(raw, 14 + 3, 0x01),
    "trailing-length-flipped": lambda raw: _flip(raw, _block_spans(raw)[0][1] - 1, 0x04),
    "block-type-delete": lambda raw: _rebuilt(raw, lambda i, h, c: (BlockType.DELETE if i == 0 else 3, h, c)),
    "block-type-command": lambda raw: _rebuilt(raw, lambda i, h, c: (BlockType.COMMAND if i == 0 else 3, h, c)),
    "no-schema-header": lambda raw: _rebuilt(raw, lambda i, h, c: (3, {} if i == 0 else h, c)),
    "other-header-only": lambda raw: _rebuilt(
        raw, lambda i, h, c: (3, {HeaderKey.INSTANT_TIME: "20240101000000000"} if i == 0 else h, c)
    ),
    "schema-not-json": lambda raw: _rebuilt(raw, lambda i, h, c: (3, {HeaderKey.SCHEMA: "{oops"} if i == 0 else h, c)),
    "schema-of-a-string": lambda raw: _rebuilt(raw, lambda i, h, c: (3, {HeaderKey.SCHEMA: '"string"'}, c)),
    "record-garbage": lambda raw: _rebuilt(
        raw, lambda i, h, c: (3, h, _replace_record(c, 0, b"\xff" * len(_records(c)[0])) if i == 0 else c)
    ),
    "record-empty": lambda raw: _rebuilt(raw, lambda i, h, c: (3, h, _replace_record(c, 0, b"") if i == 0 else c)),
    "record-cut": lambda raw: _rebuilt(
        raw, lambda i, h, c: (3, h, _replace_record(c, -1, _records(c)[-1][:10]) if i == 0 else c)
    ),
    "record-count-too-high": lambda raw: _rebuilt(
        raw, lambda i, h, c: (3, h, _content(_records(c), len(_records(c)) + 1) if i == 0 else c)
    ),
    "record-count-negative": lambda raw: _rebuilt(
        raw, lambda i, h, c: (3, h, _content(_records(c), 2**32 - 1) if i == 0 else c)
    ),
    "content-version-0": lambda raw: _rebuilt(raw, lambda i, h, c: (3, h, b"\x00" * 4 + c[4:] if i == 0 else c)),
    "content-empty": lambda raw: _rebuilt(raw, lambda i, h, c: (3, h, b"" if i == 0 else c)),
    # A completed entry's actionState with a flipped bit (found by the archive fuzzing): a
    # state that is neither REQUESTED nor INFLIGHT nor COMPLETED names no state of an instant.
    "action-state-flipped": lambda raw: raw.replace(b"\x12COMPLETED", b"\x12COMPLETLD", 1),
}


@pytest.mark.parametrize(("name", "damage"), spread(LAYOUT_1, list(_LOG_DAMAGE)))
def test_damaged_archive_log_file(damaged, name: str, damage: str) -> None:
    p, path = damaged(name)
    victim = _first_log(path)
    raw = victim.read_bytes()
    assert len(_block_spans(raw)) > 1
    victim.write_bytes(_LOG_DAMAGE[damage](raw))
    fails_naming(p, path, victim.name)


# -- a merge of archive files left unfinished ------------------------------------------------------


def _merge_plan(candidates: list[Path], merged: Path) -> bytes:
    buf = io.BytesIO()
    record = {"version": 1, "candidate": [str(c) for c in candidates], "mergedArchiveFileName": str(merged)}
    fastavro.writer(buf, fastavro.parse_schema(MERGE_PLAN_SCHEMA), [record])
    return buf.getvalue()


def _start_merge(path: Path) -> tuple[list[Path], Path]:
    """Every archive file as the candidates of a merge into the next version, whose
    complete content (every block of the candidates) is written; and its plan."""
    folder = archive_layout(path).archive
    candidates = _log_files(folder)
    version = int(candidates[-1].name.split(".")[3].split("_")[0]) + 1
    merged = folder / f".commits_.archive.{version}_1-0-1"
    merged.write_bytes(b"".join(c.read_bytes() for c in candidates))
    (folder / "mergeArchivePlan").write_bytes(_merge_plan(candidates, merged))
    return candidates, merged


@pytest.mark.parametrize("merged_file", ["complete", "truncated", "garbage", "empty"])
@pytest.mark.parametrize("name", LAYOUT_1)
def test_merge_with_every_candidate_present_ignores_the_merged_file(damaged, name: str, merged_file: str) -> None:
    """The merge stopped before deleting any candidate: the merged file may be partial; it is ignored."""
    p, path = damaged(name)
    _, merged = _start_merge(path)
    raw = merged.read_bytes()
    merged.write_bytes(
        {"complete": raw, "truncated": raw[: len(raw) // 3], "garbage": b"#HUDI#" + b"\x07" * 100, "empty": b""}[
            merged_file
        ]
    )
    reads_unchanged(p, path)


@pytest.mark.parametrize(("name", "leftover"), [("mor6", "intact"), ("mor6", "truncated"), ("cow6", "none")])
def test_merge_with_a_candidate_gone_ignores_the_leftovers(damaged, name: str, leftover: str) -> None:
    """The merge was deleting its candidates: the merged file is complete; candidates still
    there are leftovers (their instants are in the merged file) and are ignored."""
    p, path = damaged(name)
    candidates, _ = _start_merge(path)
    candidates[0].unlink()
    for c in candidates[1:]:
        if leftover == "truncated":
            c.write_bytes(c.read_bytes()[:100])
    reads_unchanged(p, path)


@pytest.mark.parametrize(("name", "plan"), spread(LAYOUT_1, ["garbage", "truncated", "two-records", "empty"]))
def test_damaged_merge_plan(damaged, name: str, plan: str) -> None:
    p, path = damaged(name)
    candidates, merged = _start_merge(path)
    victim = archive_layout(path).archive / "mergeArchivePlan"
    raw = victim.read_bytes()
    if plan == "garbage":
        victim.write_bytes(b"not an avro container")
    elif plan == "truncated":
        victim.write_bytes(raw[: len(raw) - 20])
    elif plan == "empty":
        victim.write_bytes(b"")
    else:
        record = {"version": 1, "candidate": [str(c) for c in candidates], "mergedArchiveFileName": str(merged)}
        buf = io.BytesIO()
        fastavro.writer(buf, fastavro.parse_schema(MERGE_PLAN_SCHEMA), [record, record])
        victim.write_bytes(buf.getvalue())
    fails_naming(p, path, victim.name, HudiCorruptFileError)
