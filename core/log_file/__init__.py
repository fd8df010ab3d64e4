"""Log files: the block format of merge-on-read log files and their decoding."""

from hudi_ray.core.log_file.block import BlockType, HeaderKey, LogBlock
from hudi_ray.core.log_file.reader import read_log_blocks

__all__ = ["BlockType", "HeaderKey", "LogBlock", "read_log_blocks"]
