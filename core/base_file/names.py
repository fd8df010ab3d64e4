"""Base file names: ``<fileId>_<writeToken>_<instantTime>.<ext>``."""

from __future__ import annotations

from dataclasses import dataclass

_BASE_EXTENSIONS = (".parquet", ".orc", ".hfile", ".lance")


@dataclass(frozen=True)
class BaseFileName:
    file_id: str
    write_token: str
    instant_time: str
    extension: str


def parse_base_file_name(name: str) -> BaseFileName | None:
    """``<fileId>_<writeToken>_<instantTime>.<ext>``; None when not a base file."""
    stem, dot, ext = name.rpartition(".")
    if not dot or f".{ext}" not in _BASE_EXTENSIONS or name.startswith("."):
        return None
    parts = stem.rsplit("_", 2)
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    return BaseFileName(parts[0], parts[1], parts[2], ext)
