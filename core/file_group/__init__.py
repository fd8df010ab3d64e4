"""File groups and file slices, and the file system view that builds them."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    # Name parsing lives with the base and log file formats; re-exported where slices are built.
    from hudi_ray.core.base_file import parse_base_file_name
    from hudi_ray.core.file_group.file_slice import HudiFileSlice
    from hudi_ray.core.file_group.view import FileSystemView, Visibility, snapshot_visibility, visibility_of
    from hudi_ray.core.log_file import LogFile, parse_log_file_name

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

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.base_file": ("parse_base_file_name",),
        "hudi_ray.core.file_group.file_slice": ("HudiFileSlice",),
        "hudi_ray.core.file_group.view": ("FileSystemView", "Visibility", "snapshot_visibility", "visibility_of"),
        "hudi_ray.core.log_file": ("LogFile", "parse_log_file_name"),
    },
)
