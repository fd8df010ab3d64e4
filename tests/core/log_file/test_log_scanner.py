"""The log scanner: which blocks of a file slice's logs apply (rollbacks,
corrupt and CDC blocks, visibility), for data reads and the metadata table."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from hudi_ray import HudiTableBuilder
from hudi_ray.core.log_file import BlockType, HeaderKey, LogBlock, LogScanner, read_log_blocks
from hudi_ray.core.log_file.block import MAGIC
from hudi_ray.core.metadata import MetadataTable

VISIBLE = frozenset({"001", "002", "003", "004"})


def _block(kind: BlockType, instant: str | None, *, file: str = "a.log", offset: int = 0) -> LogBlock:
    header = {} if instant is None else {HeaderKey.INSTANT_TIME: instant}
    return LogBlock(kind, header, b"", file, offset)


def _rollback(target: str, *, instant: str = "009", command: str | None = "0", file: str = "a.log") -> LogBlock:
    header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.TARGET_INSTANT_TIME: target}
    if command is not None:
        header[HeaderKey.COMMAND_BLOCK_TYPE] = command
    return LogBlock(BlockType.COMMAND, header, b"", file, 0)


def _scan(*files: list[LogBlock], visible: frozenset[str] = VISIBLE) -> list[tuple[str, str | None]]:
    """(block type, instant) of the surviving blocks, in order."""
    return [(b.block_type.name, b.instant_time) for b in LogScanner(visible.__contains__).scan(files)]


def test_rollback_drops_earlier_blocks_of_its_target() -> None:
    blocks = [
        _block(BlockType.AVRO_DATA, "001"),
        _block(BlockType.AVRO_DATA, "002"),
        _block(BlockType.DELETE, "002"),
        _block(BlockType.PARQUET_DATA, "003"),
        _rollback("002"),
    ]
    assert _scan(blocks) == [("AVRO_DATA", "001"), ("PARQUET_DATA", "003")]


def test_rollback_keeps_blocks_of_its_target_written_after_it() -> None:
    """A retried instant writes again after the rollback; only the earlier blocks go."""
    first = _block(BlockType.AVRO_DATA, "002", offset=10)
    again = _block(BlockType.AVRO_DATA, "002", offset=30)
    kept = LogScanner(VISIBLE.__contains__).scan([[first, _rollback("002"), again]])
    assert [b.offset for b in kept] == [30]


def test_rollback_of_an_instant_without_blocks() -> None:
    blocks = [_block(BlockType.AVRO_DATA, "001"), _rollback("005"), _block(BlockType.DELETE, "002")]
    assert _scan(blocks) == [("AVRO_DATA", "001"), ("DELETE", "002")]


def test_rollback_applies_whatever_its_own_instant() -> None:
    """Hudi checks the timeline for data and delete blocks only, not command blocks."""
    blocks = [_block(BlockType.AVRO_DATA, "001"), _block(BlockType.AVRO_DATA, "002"), _rollback("002", instant="999")]
    assert _scan(blocks) == [("AVRO_DATA", "001")]


def test_command_blocks_that_are_not_rollbacks_change_nothing() -> None:
    data = [_block(BlockType.AVRO_DATA, "001"), _block(BlockType.AVRO_DATA, "002")]
    assert _scan([*data, _rollback("002", command="1")]) == [("AVRO_DATA", "001"), ("AVRO_DATA", "002")]
    untargeted = LogBlock(BlockType.COMMAND, {HeaderKey.INSTANT_TIME: "009"}, b"", "a.log", 0)
    assert _scan([*data, untargeted]) == [("AVRO_DATA", "001"), ("AVRO_DATA", "002")]
    # A command block without a command type is a rollback, as the type defaults to it.
    assert _scan([*data, _rollback("001", command=None)]) == [("AVRO_DATA", "002")]


def test_blocks_of_invisible_instants_are_skipped() -> None:
    blocks = [
        _block(BlockType.AVRO_DATA, "001"),
        _block(BlockType.AVRO_DATA, "007"),  # failed, pending or after the read
        _block(BlockType.DELETE, "008"),
        _block(BlockType.HFILE_DATA, None),  # no instant time at all
        _block(BlockType.DELETE, "003"),
    ]
    assert _scan(blocks) == [("AVRO_DATA", "001"), ("DELETE", "003")]
    assert _scan(blocks, visible=frozenset({"007"})) == [("AVRO_DATA", "007")]


def test_corrupt_blocks_are_skipped() -> None:
    corrupt = LogBlock(BlockType.CORRUPT, {}, b"garbage", "a.log", 40)
    blocks = [_block(BlockType.AVRO_DATA, "001"), corrupt, _block(BlockType.AVRO_DATA, "002")]
    assert _scan(blocks) == [("AVRO_DATA", "001"), ("AVRO_DATA", "002")]
    # A rollback after a corrupt block still finds its target.
    assert _scan([*blocks, _rollback("001")]) == [("AVRO_DATA", "002")]


def test_cdc_blocks_are_skipped() -> None:
    blocks = [_block(BlockType.CDC_DATA, "001"), _block(BlockType.AVRO_DATA, "001"), _block(BlockType.CDC_DATA, "002")]
    assert _scan(blocks) == [("AVRO_DATA", "001")]


def test_multiple_log_files() -> None:
    """Order is file order then block order, and a rollback reaches into earlier files."""
    first = [_block(BlockType.AVRO_DATA, "001", file="1.log"), _block(BlockType.AVRO_DATA, "002", file="1.log")]
    second = [_block(BlockType.DELETE, "003", file="2.log"), _block(BlockType.HFILE_DATA, "002", file="2.log")]
    third = [_rollback("002", file="3.log"), _block(BlockType.AVRO_DATA, "004", file="3.log")]
    kept = LogScanner(VISIBLE.__contains__).scan([first, second, third])
    assert [(b.file, b.instant_time) for b in kept] == [("1.log", "001"), ("2.log", "003"), ("3.log", "004")]
    assert _scan([], [], visible=VISIBLE) == []


def test_files_are_read_as_the_scan_reaches_them() -> None:
    opened: list[str] = []

    def files() -> Iterator[list[LogBlock]]:
        for name in ("1.log", "2.log"):
            opened.append(name)
            yield [_block(BlockType.AVRO_DATA, "001", file=name)]

    lazy = files()
    assert opened == []
    assert [b.file for b in LogScanner(VISIBLE.__contains__).scan(lazy)] == ["1.log", "2.log"]
    assert opened == ["1.log", "2.log"]


# -- the metadata table -----------------------------------------------------------

MDT_TABLE = "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle"
# The last two MDT delta commits: one adds a log file to 2024/01/15/11, one adds
# partition 2024/01/15/16 with its only base file.
ADDS_LOG_FILE = "20260403183908664"
ADDS_PARTITION = "20260403183910147"


def _command_block(header: dict[int, str]) -> bytes:
    """Frame one version-1 command block the way Hudi's writer does."""
    head = struct.pack(">i", len(header))
    for k, v in header.items():
        head += struct.pack(">ii", k, len(v.encode())) + v.encode()
    body = struct.pack(">ii", 1, BlockType.COMMAND) + head + struct.pack(">q", 0) + struct.pack(">i", 0)
    size = len(body) + 8
    return MAGIC + struct.pack(">q", size) + body + struct.pack(">q", size + 6)


def _mdt(path: Path) -> MetadataTable:
    ctx = HudiTableBuilder.from_base_uri(str(path)).build()._context
    mdt = MetadataTable.open(ctx.storage, ctx.config, ctx.timeline)
    assert mdt is not None
    return mdt


def _listing(mdt: MetadataTable) -> dict[str, list[str]]:
    return {p: [f.name for f in files] for p, files in mdt.files(mdt.partition_paths()).items()}


def _newest_files_log(path: Path) -> Path:
    return sorted((path / ".hoodie" / "metadata" / "files").glob(".files-*.log.*"))[-1]


def _append_rollbacks(path: Path, *targets: str) -> Path:
    """Rollback command blocks for ``targets`` at the end of the newest files-partition log."""
    last = _newest_files_log(path)
    blocks = b"".join(
        _command_block(
            {
                HeaderKey.INSTANT_TIME: "20260403183999999",
                HeaderKey.TARGET_INSTANT_TIME: t,
                HeaderKey.COMMAND_BLOCK_TYPE: "0",
            }
        )
        for t in targets
    )
    last.write_bytes(last.read_bytes() + blocks)
    return last


def test_metadata_table_reads_its_logs_through_the_scanner(copy_of) -> None:
    path = copy_of(MDT_TABLE)
    assert ADDS_PARTITION in _newest_files_log(path).name
    mdt = _mdt(path)
    (slice_,) = mdt._file_slices("files")
    kept = mdt._log_blocks(slice_)
    assert [b.block_type for b in kept] == [BlockType.DELETE] + [BlockType.HFILE_DATA] * 5
    assert [b.instant_time for b in kept[-2:]] == [ADDS_LOG_FILE, ADDS_PARTITION]
    # The same scan with a rollback of the newest delta commit drops its block.
    _append_rollbacks(path, ADDS_PARTITION)
    again = _mdt(path)
    assert [b.instant_time for b in again._log_blocks(slice_)] == [b.instant_time for b in kept[:-1]]


def test_metadata_table_honours_rollback_blocks(copy_of) -> None:
    path = copy_of(MDT_TABLE)
    before = _listing(_mdt(path))
    assert before["2024/01/15/11"] == [
        ".373e523a-ee25-479b-abf5-ba6d17274543-0_20260403183908664.log.1_0-93-281",
        "373e523a-ee25-479b-abf5-ba6d17274543-0_1-26-63_20260403183858818.parquet",
    ]
    assert before["2024/01/15/16"] == ["021ab7f4-8527-4547-8737-05772e72367d-0_0-107-319_20260403183910147.parquet"]

    # One rollback in the delta commit's own log file, one reaching back into an earlier file.
    last = _append_rollbacks(path, ADDS_PARTITION, ADDS_LOG_FILE)
    assert [b.block_type for b in read_log_blocks(last.read_bytes(), str(last))] == [
        BlockType.HFILE_DATA,
        BlockType.COMMAND,
        BlockType.COMMAND,
    ]
    after = _listing(_mdt(path))
    assert sorted(after) == ["2024/01/15/10", "2024/01/15/11", "2024/01/16/09", "2024/01/17/14", "2024/01/18/16"]
    assert after["2024/01/15/11"] == ["373e523a-ee25-479b-abf5-ba6d17274543-0_1-26-63_20260403183858818.parquet"]
    unchanged = {p: f for p, f in before.items() if p not in ("2024/01/15/11", "2024/01/15/16")}
    assert {p: f for p, f in after.items() if p != "2024/01/15/11"} == unchanged
