"""File slices: a base file and the log files written on top of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file import LogFile

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

# Per column of the base file: its (min, max), each a one-element array of the
# column's type, or None when the footer does not bound the column.
ColumnStatsDict: TypeAlias = "dict[str, tuple[pa.Array | None, pa.Array | None]]"


def relative_path(partition_path: str, name: str) -> str:
    """A file's path relative to the table root, as commit write stats name it."""
    return f"{partition_path}/{name}" if partition_path else name


@dataclass(frozen=True, slots=True)
class HudiFileSlice:
    """One version of a file group: its base file and the log files on top.

    Attributes mirror hudi-rs. ``num_records`` is the base file's record count
    (log records merge into it); ``base_file_byte_size`` is the uncompressed
    size when the footer has been read, else the on-disk size. Frozen: slices
    are cached and shared between reads and threads, so a step that learns more
    (footer sizes, column stats) makes a new one with ``dataclasses.replace``.
    Slotted: planning makes one per file group, and a dict each is a third of
    the objects the collector walks after planning 20,000 file groups.
    """

    file_id: str
    partition_path: str
    creation_instant_time: str
    base_file_name: str = ""
    base_file_size: int = 0
    base_file_byte_size: int = 0
    log_file_names: list[str] = field(default_factory=list)
    log_file_sizes: list[int] = field(default_factory=list)
    num_records: int = 0
    # The completed instant that wrote the base file (None for log-only slices).
    commit_time: str | None = None
    # The base file's footer stats, set by planning when the read's data-column
    # filters look at base files alone (see ``base_file_column_stats``). They
    # describe the file, not the slice's identity: left out of equality.
    column_stats: Mapping[str, tuple[pa.Array | None, pa.Array | None]] | None = field(
        default=None, compare=False, repr=False
    )

    def base_file_relative_path(self) -> str:
        return relative_path(self.partition_path, self.base_file_name) if self.base_file_name else ""

    def log_files_relative_paths(self) -> list[str]:
        return [relative_path(self.partition_path, n) for n in self.log_file_names]

    def log_file_relative_path(self, log_file: LogFile | str) -> str:
        name = log_file.name if isinstance(log_file, LogFile) else log_file
        return relative_path(self.partition_path, name)

    def total_size_bytes(self) -> int:
        return int(self.base_file_size) + sum(int(s) for s in self.log_file_sizes)

    def has_log_files(self) -> bool:
        return bool(self.log_file_names)

    def base_file_column_stats(self) -> ColumnStatsDict | None:
        """Column statistics (min, max) from the base file's Parquet footer.

        A dict from each column of the table schema (meta fields included) to
        a ``(min, max)`` pair of one-element arrays, either None when the
        footer does not bound that column. As in hudi-rs it is filled only
        when the slices were planned with filters on data columns and base
        files alone decide what a read returns (copy-on-write tables, or
        read-optimized reads of merge-on-read ones), on snapshot reads of
        Parquet base files; otherwise None.
        """
        if self.column_stats is None:
            return None
        return dict(self.column_stats)

    def has_log_file(self) -> bool:
        return self.has_log_files()

    def __repr__(self) -> str:
        return (
            f"HudiFileSlice(partition_path={self.partition_path!r}, file_id={self.file_id!r}, "
            f"creation_instant_time={self.creation_instant_time!r}, base_file_name={self.base_file_name!r}, "
            f"log_file_names={self.log_file_names!r})"
        )
