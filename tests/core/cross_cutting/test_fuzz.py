"""Mutation fuzzing of every parser over real files written by Hudi on Spark.

Each parser gets its real inputs (``hoodie.properties``, commit metadata as
JSON and Avro, metadata-table HFiles, log files with Avro, Parquet, HFile,
delete and command blocks, Avro schemas, Parquet base files, timestamps),
mutated with a fixed seed: bit flips, truncations, spliced chunks, and huge,
negative or overlong length fields written where the formats keep them. Every
mutant must either parse or raise a ``HudiCoreError``; a raw exception, a
``MemoryError`` or a case running past its time limit fails the test, listing
the parser, the corpus file and the mutation so that the case can be replayed.

Archived timeline files (layout 1's archive log files and merge plan, layout 2's
``_version_``, manifests and LSM Parquet files) are mutated in place in small test-kit
tables whose reads need them, and the tables read whole: a snapshot and an incremental
read from the beginning must raise a ``HudiCoreError`` or return the undamaged rows.

The whole module runs in well under a minute (``FUZZ_CASES`` mutants per
parser); set ``HUDI_FUZZ_CASES`` and ``HUDI_FUZZ_SEED`` to search further locally.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import signal
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import fastavro
import pyarrow.parquet as pq
import pytest

from hudi_ray import HudiQueryType, HudiReadOptions, HudiTableBuilder
from hudi_ray.core.base_file import ParquetReader, footer_bounds
from hudi_ray.core.config import load_table_config
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.hfile import HFileReader
from hudi_ray.core.log_file import BlockType, read_log_blocks
from hudi_ray.core.log_file.block import HeaderKey, LogBlock
from hudi_ray.core.log_file.content import (
    decode_avro_block,
    decode_delete_block,
    decode_parquet_block,
)
from hudi_ray.core.merge import resolve_merge_config
from hudi_ray.core.metadata.records import decode_record
from hudi_ray.core.schema.avro import avro_to_arrow_schema
from hudi_ray.core.storage import Storage
from hudi_ray.core.timeline.commit_validation import validate_commit_metadata
from hudi_ray.core.timeline.instant import HudiInstant
from hudi_ray.core.timeline.timeline import decode_instant_metadata
from hudi_ray.core.timeline.timestamps import parse_timestamp, timeline_to_datetime
from hudi_testkit import archive_instants, archive_layout
from hudi_testkit.archive import MERGE_PLAN_SCHEMA
from hudi_testkit.common import list_instants
from hudi_testkit.log_writer import frame_block
from hudi_testkit.longlived import MERGE_ON_READ, LongLivedSpec, write_long_lived_table
from tests.support import row_set

SEED = int(os.environ.get("HUDI_FUZZ_SEED", "20261123"))
FUZZ_CASES = int(os.environ.get("HUDI_FUZZ_CASES", "300"))
# Far above any honest parse of these small files; a hang or a runaway loop hits it.
CASE_TIMEOUT_S = 5.0

TABLES = (
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",  # Avro commits, Avro + delete log blocks, MDT
    "sample_table/mor/avro/v9_txns_simple_meta",  # v9: Avro commits, MDT with every index
    "sample_table/mor/parquet/v6_nonpartitioned",  # JSON commits, Parquet log blocks
)

INTERESTING_INTS = (0, -1, 1, 2**31 - 1, -(2**31), 2**31 - 2, 0x7FFF, 2**63 - 1, -(2**63), 2**32, 1 << 40)
TEXT_TOKENS = (
    b"-1",
    b"9" * 30,
    b"\\u12",
    b"\\",
    b"{",
    b"]",
    b'"',
    b"=",
    b"\n",
    b"\xff\xfe",
    b"null",
    b"1e400",
    b"[" * 50,
)
MARKERS = (b"#HUDI#", b"DATABLK*", b"IDXROOT2", b"IDXLEAF2", b"IDXINTE2", b"FILEINF2", b"TRABLK", b"PAR1", b"Obj\x01")


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so no ``except Exception`` in the parsers swallows it."""


@dataclass(frozen=True)
class Mutant:
    source: str
    mutation: str
    data: bytes


# -- corpus ---------------------------------------------------------------------------------------


@dataclass
class Corpus:
    properties: list[tuple[str, bytes]]
    commit_json: list[tuple[str, bytes]]
    commit_avro: list[tuple[str, bytes]]
    hfile: list[tuple[str, bytes]]
    log: list[tuple[str, bytes]]
    schema: list[tuple[str, bytes]]
    parquet: list[tuple[str, bytes]]
    timestamp: list[tuple[str, bytes]]


def _pick(paths: list[Path], limit: int) -> list[Path]:
    """A deterministic spread of sizes: the smallest, the largest and some between."""
    paths = sorted(paths, key=lambda p: (p.stat().st_size, str(p)))
    if len(paths) <= limit:
        return paths
    step = (len(paths) - 1) / (limit - 1)
    return [paths[round(i * step)] for i in range(limit)]


def _command_block_log() -> bytes:
    header = {
        HeaderKey.INSTANT_TIME: "20240101000000000",
        HeaderKey.TARGET_INSTANT_TIME: "20231231000000000",
        HeaderKey.COMMAND_BLOCK_TYPE: "0",
    }
    return b"".join(bytes(c) for c in frame_block(BlockType.COMMAND, header, []))


@pytest.fixture(scope="module")
def corpus(table_path) -> Corpus:
    roots = [table_path(name) for name in TABLES]
    files = [p for root in roots for p in root.rglob("*") if p.is_file() and not p.name.endswith(".crc")]

    def named(paths: list[Path]) -> list[tuple[str, bytes]]:
        return [(str(p.relative_to(p.parents[len(p.parents) - 1])), p.read_bytes()) for p in paths]

    props = [p for p in files if p.name == "hoodie.properties"]
    instants = [p for p in files if p.suffix in (".commit", ".deltacommit", ".replacecommit") and p.stat().st_size]
    json_commits = [p for p in instants if not p.read_bytes().startswith(b"Obj\x01")]
    avro_commits = [p for p in instants if p.read_bytes().startswith(b"Obj\x01")]
    hfiles = [p for p in files if p.name.endswith(".hfile")]
    logs = [p for p in files if ".log." in p.name and p.stat().st_size > 100]
    data_logs = [p for p in logs if "/.hoodie/" not in str(p)]
    mdt_logs = [p for p in logs if "/.hoodie/" in str(p)]
    parquet = [p for p in files if p.suffix == ".parquet"]

    schemas: list[tuple[str, bytes]] = []
    data_commits = [p for p in avro_commits + json_commits if "/.hoodie/metadata/" not in str(p)]
    for name, raw in named(_pick(data_commits, 4)):
        schema = (decode_instant_metadata(raw, name).get("extraMetadata") or {}).get("schema")
        if schema:
            schemas.append((f"{name}#schema", schema.encode()))
    for name, raw in named(props):
        for line in raw.decode().splitlines():
            if line.startswith("hoodie.table.create.schema="):
                text = line.split("=", 1)[1].replace("\\:", ":").replace("\\=", "=")
                schemas.append((f"{name}#create.schema", text.encode()))

    timestamps = [
        "20240101123045123",
        "20240101123045",
        "1704112245",
        "1704112245123",
        "1704112245123456",
        "2024-01-01T12:30:45.123+02:00",
        "2024-01-01T12:30:45Z",
        "20240229000000000",
    ]
    corpus = Corpus(
        properties=named(props),
        commit_json=named(_pick(json_commits, 3)),
        commit_avro=named(_pick(avro_commits, 4)),
        hfile=named(_pick(hfiles, 4)),
        log=[*named(_pick(data_logs, 4) + _pick(mdt_logs, 3)), ("synthetic/command-block.log", _command_block_log())],
        schema=schemas,
        parquet=named(_pick(parquet, 3)),
        timestamp=[(f"timestamp[{i}]", t.encode()) for i, t in enumerate(timestamps)],
    )
    for field, items in vars(corpus).items():
        assert items, f"the fuzz corpus has no {field} inputs"
    return corpus


# -- mutations ------------------------------------------------------------------------------------


def _targets(data: bytes) -> list[int]:
    """Offsets of length and count fields: right after each format marker, word by word."""
    out: list[int] = []
    for marker in MARKERS:
        start = data.find(marker)
        while start >= 0 and len(out) < 4096:
            end = start + len(marker)
            out.extend(end + k for k in range(0, 40, 2) if end + k < len(data))
            start = data.find(marker, end)
    if len(data) >= 4096 + 16:
        # The HFile trailer's protobuf starts 8 bytes into its last 4096.
        out.extend(range(len(data) - 4096 + 8, len(data) - 4096 + 40))
    return out


def _mutate(rng: random.Random, data: bytes, text: bool) -> tuple[str, bytes]:
    buf = bytearray(data)
    if not buf:
        return "empty->byte", bytes([rng.randrange(256)])
    kind = rng.choice(["flip", "truncate", "int", "varint", "splice", "delete"] + (["text"] * 3 if text else []))
    targets = _targets(data)

    def where() -> int:
        if targets and rng.random() < 0.6:
            return rng.choice(targets)
        return rng.randrange(len(buf))

    if kind == "flip":
        flips = [(rng.randrange(len(buf)), rng.randrange(8)) for _ in range(rng.randint(1, 8))]
        for pos, bit in flips:
            buf[pos] ^= 1 << bit
        return f"flip{flips}", bytes(buf)
    if kind == "truncate":
        cut = rng.randrange(len(buf))
        return f"truncate@{cut}", bytes(buf[:cut])
    if kind == "int":
        pos = where()
        value = rng.choice(INTERESTING_INTS)
        width = rng.choice([2, 4, 8])
        packed = (value & ((1 << (8 * width)) - 1)).to_bytes(width, rng.choice(["big", "little"]))
        buf[pos : pos + width] = packed
        return f"int{width}={value}@{pos}", bytes(buf)
    if kind == "varint":
        pos = where()
        run = bytes([0xFF] * rng.randint(5, 12)) + bytes([rng.randrange(128)])
        buf[pos : pos + len(run)] = run
        return f"varint@{pos}", bytes(buf)
    if kind == "splice":
        a = rng.randrange(len(buf))
        b = min(len(buf), a + rng.randint(1, 512))
        at = rng.randrange(len(buf))
        return f"splice[{a}:{b}]@{at}", bytes(buf[:at] + buf[a:b] + buf[at:])
    if kind == "delete":
        a = rng.randrange(len(buf))
        b = min(len(buf), a + rng.randint(1, 64))
        return f"delete[{a}:{b}]", bytes(buf[:a] + buf[b:])
    # Text formats: characters that change the meaning of JSON, properties and numbers.
    pos = rng.randrange(len(buf))
    token = rng.choice(TEXT_TOKENS)
    return f"text{token!r}@{pos}", bytes(buf[:pos] + token + buf[pos + rng.randint(0, 3) :])


def mutants(name: str, items: list[tuple[str, bytes]], count: int, text: bool = False) -> Iterator[Mutant]:
    rng = random.Random(SEED ^ zlib.crc32(name.encode()))
    for i in range(count):
        source, data = items[i % len(items)]
        desc, mutated = _mutate(rng, data, text)
        if rng.random() < 0.25:
            # A second mutation: damage that a single corrupt field check would catch alone.
            more, mutated = _mutate(rng, mutated, text)
            desc = f"{desc}+{more}"
        yield Mutant(source, desc, mutated)


# -- the harness ----------------------------------------------------------------------------------


def _alarm(signum: int, frame: object) -> None:
    raise CaseTimeout


def run_all(name: str, parse: Callable[[bytes], object], cases: Iterator[Mutant]) -> dict[str, int]:
    failures: list[str] = []
    outcomes = {"parsed": 0, "rejected": 0}
    previous = signal.signal(signal.SIGALRM, _alarm)
    logging.disable(logging.WARNING)  # corrupt log blocks are skipped with a warning each
    try:
        for case in cases:
            signal.setitimer(signal.ITIMER_REAL, CASE_TIMEOUT_S)
            try:
                parse(case.data)
                outcomes["parsed"] += 1
            except HudiCoreError:
                outcomes["rejected"] += 1
            except CaseTimeout:
                failures.append(f"{case.source} {case.mutation}: no result after {CASE_TIMEOUT_S}s")
            except Exception as exc:  # the point of the test: anything else is a finding
                failures.append(f"{case.source} {case.mutation}: {type(exc).__module__}.{type(exc).__name__}: {exc}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
        logging.disable(logging.NOTSET)
    assert not failures, f"{name}: {len(failures)} mutants escaped as raw exceptions:\n" + "\n".join(failures[:30])
    print(f"{name}: {outcomes}")
    return outcomes


# -- parsers --------------------------------------------------------------------------------------


def test_fuzz_properties(corpus: Corpus, tmp_path: Path) -> None:
    (tmp_path / ".hoodie").mkdir()
    storage = Storage(str(tmp_path), {})

    def parse(data: bytes) -> None:
        (tmp_path / ".hoodie" / "hoodie.properties").write_bytes(data)
        config = load_table_config(storage, {})
        _ = (config.table_type, config.timeline_path, config.partition_fields, config.ordering_fields)
        _ = (config.is_hive_style, config.populates_meta_fields, config.metadata_table_enabled)
        _ = (config.key_generator, config.is_nonpartitioned, config.base_file_format)
        resolve_merge_config(config)

    run_all("hoodie.properties", parse, mutants("properties", corpus.properties, FUZZ_CASES, text=True))


def _commit_parser(action: str) -> Callable[[bytes], None]:
    def parse(data: bytes) -> None:
        meta = decode_instant_metadata(data, "fuzz.commit")
        validate_commit_metadata(meta, action, "fuzz.commit")

    return parse


def test_fuzz_commit_metadata_json(corpus: Corpus) -> None:
    run_all("JSON commit", _commit_parser("commit"), mutants("json", corpus.commit_json, FUZZ_CASES, text=True))


def test_fuzz_commit_metadata_avro(corpus: Corpus) -> None:
    run_all("Avro commit", _commit_parser("deltacommit"), mutants("avro", corpus.commit_avro, FUZZ_CASES))


def _read_hfile(reader: HFileReader) -> None:
    schema = reader.avro_schema
    first = None
    for i, (row, value) in enumerate(reader.scan()):
        first = first or row
        if schema and i < 8:
            decode_record(value, schema, reader.where)
    if first is not None:
        reader.get(first)
        list(reader.scan_prefix(first[:3]))


def test_fuzz_hfile(corpus: Corpus) -> None:
    run_all(
        "HFile",
        lambda data: _read_hfile(HFileReader.from_bytes(data, "fuzz.hfile")),
        mutants("hfile", corpus.hfile, FUZZ_CASES),
    )


def _read_log(data: bytes) -> None:
    for block in read_log_blocks(data, "fuzz.log"):
        if block.block_type is BlockType.AVRO_DATA:
            decode_avro_block(block)
        elif block.block_type is BlockType.PARQUET_DATA:
            decode_parquet_block(block)
        elif block.block_type is BlockType.DELETE:
            decode_delete_block(block)
        elif block.block_type is BlockType.HFILE_DATA:
            _read_hfile(HFileReader.from_bytes(bytes(block.content), block.where()))
        elif block.block_type is BlockType.COMMAND:
            _ = (block.is_rollback, block.target_instant_time)


def test_fuzz_log_files(corpus: Corpus) -> None:
    run_all("log file", _read_log, mutants("log", corpus.log, FUZZ_CASES * 2))


_DECODERS: dict[BlockType, Callable[[LogBlock], object]] = {
    BlockType.AVRO_DATA: decode_avro_block,
    BlockType.PARQUET_DATA: decode_parquet_block,
    BlockType.DELETE: decode_delete_block,
    BlockType.HFILE_DATA: lambda b: _read_hfile(HFileReader.from_bytes(bytes(b.content), b.where())),
}


def test_fuzz_log_block_contents(corpus: Corpus) -> None:
    """Block contents mutated inside sound framing, so every mutant reaches its decoder."""
    blocks = [b for _, raw in corpus.log for b in read_log_blocks(raw, "seed.log") if b.block_type in _DECODERS]
    kinds = {b.block_type for b in blocks}
    assert kinds == set(_DECODERS), kinds
    for kind in sorted(kinds):
        of_kind = [b for b in blocks if b.block_type is kind]
        items = [(f"{b.where()} ({i})", bytes(b.content)) for i, b in enumerate(of_kind)]

        def parse(data: bytes, kind: BlockType = kind, template: LogBlock = of_kind[0]) -> object:
            return _DECODERS[kind](LogBlock(kind, template.header, data, "fuzz.log", 0))

        run_all(f"{kind.name} block", parse, mutants(f"block-{kind.name}", items, FUZZ_CASES // 2))


def test_fuzz_avro_schemas(corpus: Corpus) -> None:
    def parse(data: bytes) -> None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return  # schemas reach the parser as text, decoded by their container's reader
        avro_to_arrow_schema(text, "fuzz schema")
        # The log-block path also resolves the schema with fastavro and plans a decoder for it.
        decode_avro_block(LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: text}, struct.pack(">ii", 2, 0), "f", 0))

    run_all("Avro schema", parse, mutants("schema", corpus.schema, FUZZ_CASES, text=True))


def test_fuzz_parquet_base_files(corpus: Corpus, tmp_path: Path) -> None:
    storage = Storage(str(tmp_path), {})
    counter = iter(range(1 << 30))

    def parse(data: bytes) -> None:
        rel = f"f{next(counter)}.parquet"  # a fresh name: nothing cached from the previous mutant
        (tmp_path / rel).write_bytes(data)
        reader = ParquetReader(storage)
        md = reader.metadata(rel)
        schema = reader.schema(rel)
        footer_bounds([md], schema)
        reader.read(rel)
        (tmp_path / rel).unlink()

    run_all("Parquet", parse, mutants("parquet", corpus.parquet, FUZZ_CASES // 2))


def test_fuzz_timestamps(corpus: Corpus) -> None:
    def parse(data: bytes) -> None:
        text = data.decode("utf-8", errors="replace")
        for tz in ("UTC", "local"):
            parse_timestamp(text, tz, option="fuzz timestamp")
        if HudiInstant.parse(f"{text}.commit") is not None and text.isdigit():
            timeline_to_datetime(text)

    run_all("timestamp", parse, mutants("timestamp", corpus.timestamp, FUZZ_CASES * 2, text=True))


# -- the archived timeline --------------------------------------------------------------------------

# Mutants per kind of archive file: each costs two reads of a small table.
ARCHIVE_FUZZ_CASES = max(1, FUZZ_CASES // 12)
ARCHIVE_READS = {
    "snapshot": HudiReadOptions(),
    "incremental": HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp("0"),
}


class RowsDiffer(Exception):
    """A damaged archive read without an error, to rows other than the undamaged table's."""


@dataclass(frozen=True)
class ArchiveTarget:
    """What a mutant of ``seed`` damages: ``file``, which becomes ``place(mutant)``."""

    source: str
    seed: bytes
    file: Path
    place: Callable[[bytes], bytes]


@dataclass(frozen=True)
class ArchivedTable:
    path: Path
    expected: dict[str, list[str]]  # read -> row set of the undamaged table
    targets: dict[str, list[ArchiveTarget]]  # kind of archive input -> its targets


def _archive_reads(path: Path) -> dict[str, list[str]]:
    """Every read on a table built for it (no archive content cached from another)."""
    out = {}
    for read, options in ARCHIVE_READS.items():
        batches = HudiTableBuilder.from_base_uri(str(path)).build().read(options)
        out[read] = row_set(batches) if batches else []
    return out


def _archived_table(path: Path, version: int) -> None:
    """A small MERGE_ON_READ table, never cleaned, archived in three archivals up to its
    last compaction: a v9 snapshot needs archived completion times (log files of archived
    delta commits with the base file of an archived compaction between them and the
    active timeline), an incremental read from the beginning every archived commit.
    Layout 2 merges its LSM files two at a time: a level-1 file and older manifests."""
    spec = LongLivedSpec(
        MERGE_ON_READ,
        version,
        commits=12,
        partitions=1,
        keys=24,
        rows_per_commit=4,
        compaction_every=2,
        clustering_every=1000,
        rollback_every=7,
        clean_retained=1000,
        archive=False,
    )
    table = write_long_lived_table(path, spec)
    last = max(t for t, kind in table.services.items() if kind == "compaction")
    timeline = archive_layout(path).timeline
    n = len({i.timestamp for i in list_instants(timeline) if i.is_completed and i.timestamp <= last})
    for count in (n // 3, n // 3, n - 2 * (n // 3)):
        archive_instants(path, count, compaction_batch=2)


def _start_merge(folder: Path, candidates: list[Path]) -> None:
    """A merge of ``candidates`` into the next archive file stopped before deleting any:
    the merged file is complete, and ignored while its plan lists only present files."""
    merged = folder / f".commits_.archive.{len(list(folder.glob('.commits_.archive.*'))) + 1}_1-0-1"
    merged.write_bytes(b"".join(c.read_bytes() for c in candidates))
    record = {"version": 1, "candidate": [str(c) for c in candidates], "mergedArchiveFileName": str(merged)}
    with (folder / "mergeArchivePlan").open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(MERGE_PLAN_SCHEMA), [record])


def _whole(base: Path, files: list[Path]) -> list[ArchiveTarget]:
    return [ArchiveTarget(str(f.relative_to(base)), f.read_bytes(), f, lambda data: data) for f in files]


def _block_contents(base: Path, file: Path) -> list[ArchiveTarget]:
    """Each block's content, mutated inside sound framing so that every mutant reaches the
    archive's record decoding (mutants of whole files mostly break the framing or the
    block's schema, which is most of its bytes)."""
    raw = file.read_bytes()
    blocks = read_log_blocks(raw, str(file))

    def place(index: int) -> Callable[[bytes], bytes]:
        def reframed(content: bytes) -> bytes:
            chunks = []
            for i, b in enumerate(blocks):
                chunks += frame_block(b.block_type, b.header, [content if i == index else bytes(b.content)])
            return b"".join(bytes(c) for c in chunks)

        return reframed

    source = str(file.relative_to(base))
    return [ArchiveTarget(f"{source}#block{i}", bytes(b.content), file, place(i)) for i, b in enumerate(blocks)]


def _current_lsm(folder: Path) -> tuple[Path, list[Path]]:
    """The current manifest and the files it lists (older ones stay on disk, unread)."""
    manifest = folder / f"manifest_{int((folder / '_version_').read_text())}"
    return manifest, [folder / f["fileName"] for f in json.loads(manifest.read_text())["files"]]


@pytest.fixture(scope="module")
def archived_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ArchivedTable]:
    out = {}
    for version in (6, 9):
        path = tmp_path_factory.mktemp(f"archived{version}") / "table"
        _archived_table(path, version)
        folder = archive_layout(path).archive
        if version == 6:
            logs = sorted(folder.glob(".commits_.archive.*"))
            _start_merge(folder, logs[:2])
            targets = {
                "archive log file": _whole(path, logs),
                "archive log block": _block_contents(path, logs[0]) + _block_contents(path, logs[-1]),
                "merge plan": _whole(path, [folder / "mergeArchivePlan"]),
            }
            out["v6"] = ArchivedTable(path, _archive_reads(path), targets)
            continue
        manifest, listed = _current_lsm(folder)
        assert any(f.name.endswith("_1.parquet") for f in listed), listed  # a merged, level-1 file
        targets = {
            "_version_": _whole(path, [folder / "_version_"]),
            "manifest": _whole(path, [manifest]),
            "LSM file": _whole(path, listed),
        }
        out["v9"] = ArchivedTable(path, _archive_reads(path), targets)
        # The same LSM files uncompressed (Hudi writes gzip): mutants then change values
        # (instant and completion times, actions, metadata) instead of breaking a page.
        plain = path.parent / "plain"
        shutil.copytree(path, plain)
        listed = _current_lsm(archive_layout(plain).archive)[1]
        for f in listed:
            pq.write_table(pq.read_table(f), f, compression="none", store_schema=False)
        out["v9-plain"] = ArchivedTable(plain, _archive_reads(plain), {"LSM file": _whole(plain, listed)})
        assert out["v9-plain"].expected == out["v9"].expected
    return out


def _read_damaged(table: ArchivedTable, target: ArchiveTarget) -> Callable[[bytes], None]:
    original = target.file.read_bytes()

    def parse(data: bytes) -> None:
        target.file.write_bytes(target.place(data))
        try:
            for read, rows in table.expected.items():
                batches = HudiTableBuilder.from_base_uri(str(table.path)).build().read(ARCHIVE_READS[read])
                got = row_set(batches) if batches else []
                if got != rows:
                    lost, extra = len(set(rows) - set(got)), len(set(got) - set(rows))
                    raise RowsDiffer(f"{read}: {len(got)} rows instead of {len(rows)} ({lost} lost, {extra} new)")
        finally:
            target.file.write_bytes(original)

    return parse


@pytest.mark.parametrize(
    ("table", "kind", "text"),
    [
        ("v6", "archive log file", False),
        ("v6", "archive log block", False),
        ("v6", "merge plan", False),
        ("v9", "_version_", True),
        ("v9", "manifest", True),
        ("v9", "LSM file", False),
        ("v9-plain", "LSM file", False),
    ],
)
def test_fuzz_archived_timeline(archived_tables, table: str, kind: str, text: bool) -> None:
    """Mutants of one kind of archive input, spread over its targets, each written into the
    table and read back: a ``HudiCoreError`` or the undamaged rows."""
    archived = archived_tables[table]
    targets = {t.source: t for t in archived.targets[kind]}
    items = [(t.source, t.seed) for t in targets.values()]
    cases = list(mutants(f"archive-{table}-{kind}", items, ARCHIVE_FUZZ_CASES, text=text))
    failures: list[str] = []
    for source, target in targets.items():
        try:
            run_all(
                f"{table} {kind} {source}", _read_damaged(archived, target), (c for c in cases if c.source == source)
            )
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)


def test_archived_tables_need_their_archive(archived_tables, tmp_path: Path) -> None:
    """The fuzzed files matter: without its archive, a table's reads fail (v9's snapshot
    too), so a mutant read without an error was read from the mutated archive."""
    for name, table in archived_tables.items():
        copy = tmp_path / name
        shutil.copytree(table.path, copy)
        shutil.rmtree(archive_layout(copy).archive)
        for read, options in ARCHIVE_READS.items():
            if read == "snapshot" and name == "v6":
                continue  # completion times are instant times: a v6 snapshot reads no archive
            with pytest.raises(HudiCoreError):
                HudiTableBuilder.from_base_uri(str(copy)).build().read(options)


def test_mutations_are_deterministic(corpus: Corpus) -> None:
    first = [(m.mutation, m.data) for m in mutants("hfile", corpus.hfile, 20)]
    again = [(m.mutation, m.data) for m in mutants("hfile", corpus.hfile, 20)]
    assert first == again
    assert len({d for _, d in first}) > 15


def test_harness_reports_raw_exceptions_and_hangs() -> None:
    def bad(data: bytes) -> None:
        if data == b"hang":
            while True:
                pass
        raise struct.error("raw")

    cases = iter([Mutant("s", "m", b"x"), Mutant("s", "m", b"hang")])
    global CASE_TIMEOUT_S
    saved, CASE_TIMEOUT_S = CASE_TIMEOUT_S, 0.2
    try:
        with pytest.raises(AssertionError, match=r"(?s)struct\.error: raw.*no result after"):
            run_all("probe", bad, cases)
    finally:
        CASE_TIMEOUT_S = saved


def test_corpus_parses_unmutated(corpus: Corpus) -> None:
    """The seeds themselves parse: a fuzz run over inputs that never parse tests nothing."""
    for _, raw in corpus.hfile:
        _read_hfile(HFileReader.from_bytes(raw, "seed.hfile"))
    for _, raw in corpus.log:
        _read_log(raw)
    for name, raw in corpus.commit_avro + corpus.commit_json:
        assert decode_instant_metadata(raw, name)
    for _, raw in corpus.schema:
        assert len(avro_to_arrow_schema(json.loads(raw), "seed schema")) > 0
