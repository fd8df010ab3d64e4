"""Log files: the block format of merge-on-read log files and their decoding."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.log_file.block import MAGIC, BlockType, HeaderKey, LogBlock
    from hudi_ray.core.log_file.names import LogFile, parse_log_file_name
    from hudi_ray.core.log_file.reader import read_log_blocks
    from hudi_ray.core.log_file.scanner import LogScanner

__all__ = [
    "MAGIC",
    "LogFile",
    "parse_log_file_name",
    "BlockType",
    "HeaderKey",
    "LogBlock",
    "LogScanner",
    "read_log_blocks",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.log_file.block": ("MAGIC", "BlockType", "HeaderKey", "LogBlock"),
        "hudi_ray.core.log_file.names": ("LogFile", "parse_log_file_name"),
        "hudi_ray.core.log_file.reader": ("read_log_blocks",),
        "hudi_ray.core.log_file.scanner": ("LogScanner",),
    },
)
