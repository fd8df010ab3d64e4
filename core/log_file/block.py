"""Log blocks: type codes, header keys and the decoded block record."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

MAGIC = b"#HUDI#"


class BlockType(IntEnum):
    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


ROLLBACK_COMMAND = "0"


@dataclass
class LogBlock:
    """One block of a log file; ``content`` is undecoded."""

    block_type: BlockType
    header: dict[int, str]
    content: memoryview | bytes
    file: str
    offset: int
    format_version: int = 1
    footer: dict[int, str] = field(default_factory=dict)

    @property
    def instant_time(self) -> str | None:
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        return self.header.get(HeaderKey.SCHEMA)

    @property
    def is_rollback(self) -> bool:
        return (
            self.block_type is BlockType.COMMAND
            and self.header.get(HeaderKey.COMMAND_BLOCK_TYPE, ROLLBACK_COMMAND) == ROLLBACK_COMMAND
        )

    def where(self) -> str:
        return f"{self.block_type.name} block at byte {self.offset} of {self.file}"
