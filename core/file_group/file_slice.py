"""File slices: a base file and the log files written on top of it."""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_ray.core.log_file import LogFile


def _join(partition_path: str, name: str) -> str:
    return f"{partition_path}/{name}" if partition_path else name


@dataclass
class HudiFileSlice:
    """One version of a file group: its base file and the log files on top.

    Attributes mirror hudi-rs. ``num_records`` is the base file's record count
    (log records merge into it); ``base_file_byte_size`` is the uncompressed
    size when the footer has been read, else the on-disk size.
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

    def base_file_relative_path(self) -> str:
        return _join(self.partition_path, self.base_file_name) if self.base_file_name else ""

    def log_files_relative_paths(self) -> list[str]:
        return [_join(self.partition_path, n) for n in self.log_file_names]

    def log_file_relative_path(self, log_file: LogFile | str) -> str:
        name = log_file.name if isinstance(log_file, LogFile) else log_file
        return _join(self.partition_path, name)

    def total_size_bytes(self) -> int:
        return int(self.base_file_size) + sum(int(s) for s in self.log_file_sizes)

    def has_log_files(self) -> bool:
        return bool(self.log_file_names)

    def has_log_file(self) -> bool:
        return self.has_log_files()

    def file_group_key(self) -> tuple[str, str]:
        return self.partition_path, self.file_id

    def __repr__(self) -> str:
        return (
            f"HudiFileSlice(partition_path={self.partition_path!r}, file_id={self.file_id!r}, "
            f"creation_instant_time={self.creation_instant_time!r}, base_file_name={self.base_file_name!r}, "
            f"log_file_names={self.log_file_names!r})"
        )
