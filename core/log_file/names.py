"""Log file names: ``.<fileId>_<baseInstant>.log.<version>_<writeToken>``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LOG_NAME = re.compile(r"^\.(?P<file_id>.+)_(?P<instant>\d+)\.log\.(?P<version>\d+)(?:_(?P<token>.+?))?(?P<cdc>-cdc)?$")


@dataclass(frozen=True, order=True)
class LogFile:
    """A log file: ``.<fileId>_<baseInstant>.log.<version>_<writeToken>``."""

    base_instant: str
    version: int
    write_token: str
    file_id: str = field(compare=False)
    name: str = field(compare=False)
    size: int = field(compare=False, default=0)
    is_cdc: bool = field(compare=False, default=False)


def parse_log_file_name(name: str, size: int = 0) -> LogFile | None:
    m = _LOG_NAME.match(name)
    if not m:
        return None
    return LogFile(
        base_instant=m["instant"],
        version=int(m["version"]),
        write_token=m["token"] or "",
        file_id=m["file_id"],
        name=name,
        size=size,
        is_cdc=bool(m["cdc"]),
    )
