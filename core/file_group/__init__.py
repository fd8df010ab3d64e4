"""File groups and file slices, and the file system view that builds them."""

from hudi_ray.core.file_group.file_slice import HudiFileSlice, LogFile, parse_base_file_name, parse_log_file_name
from hudi_ray.core.file_group.view import FileSystemView, Visibility, snapshot_visibility, visibility_of

__all__ = [
    "FileSystemView",
    "Visibility",
    "snapshot_visibility",
    "visibility_of",
    "HudiFileSlice",
    "LogFile",
    "parse_base_file_name",
    "parse_log_file_name",
]
