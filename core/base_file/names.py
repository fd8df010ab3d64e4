"""Base file names: ``<fileId>_<writeToken>_<instantTime>.<ext>``."""

from __future__ import annotations

from typing import NamedTuple

_BASE_EXTENSIONS = frozenset({"parquet", "orc", "hfile", "lance"})


class BaseFileName(NamedTuple):
    """A tuple: planning makes one per base file listed, and tuples of strings
    cost the garbage collector nothing once it has seen them."""

    file_id: str
    write_token: str
    instant_time: str
    extension: str


def _name_parts(name: str) -> tuple[str, str, str, str] | None:
    stem, dot, ext = name.rpartition(".")
    if not dot or ext not in _BASE_EXTENSIONS or name.startswith("."):
        return None
    parts = stem.rsplit("_", 2)
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    return parts[0], parts[1], parts[2], ext


def parse_base_file_name(name: str) -> BaseFileName | None:
    """``<fileId>_<writeToken>_<instantTime>.<ext>``; None when not a base file."""
    parts = _name_parts(name)
    return BaseFileName(*parts) if parts else None


def base_file_instant(name: str) -> str | None:
    """The instant time in a base file's name (``parse_base_file_name``'s,
    without building the record: asked once per file read)."""
    parts = _name_parts(name)
    return parts[2] if parts else None


def base_file_id(name: str) -> str | None:
    """The file id in a base file's name (``parse_base_file_name``'s, without
    building the record: asked once per write stat of every commit read)."""
    parts = _name_parts(name)
    return parts[0] if parts else None
