"""Log files: the block format of merge-on-read log files and their decoding."""

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
