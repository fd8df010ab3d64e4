"""A one-line progress bar on stderr for ``hudi-ray read``: files done of the
total, rows and bytes so far."""

from __future__ import annotations

import shutil
import time
from typing import TextIO

from hudi_ray.cli.output import human_bytes, human_count


def is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class Progress:
    """Redrawn in place (``\\r``) at most every ``interval`` seconds, and only
    after ``delay`` seconds: a read that finishes sooner shows no bar at all.
    ``close`` erases it, so the answer printed next starts on a clean line."""

    def __init__(
        self,
        total_files: int,
        total_bytes: int,
        stream: TextIO,
        *,
        enabled: bool,
        delay: float = 0.5,
        interval: float = 0.1,
    ) -> None:
        self.total_files = total_files
        self.total_bytes = total_bytes
        self.files = 0
        self.rows = 0
        self.bytes = 0
        self._stream = stream
        self._enabled = enabled
        self._delay = delay
        self._interval = interval
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._drawn = False

    @property
    def drawn(self) -> bool:
        """Whether the bar was ever shown."""
        return self._drawn

    def advance(self, files: int = 0, rows: int = 0, nbytes: int = 0) -> None:
        self.files += files
        self.rows += rows
        self.bytes += nbytes
        now = time.monotonic()
        if self._enabled and now - self._start >= self._delay and now - self._last_draw >= self._interval:
            self._draw()
            self._last_draw = now

    def line(self, width: int) -> str:
        """The bar's text, fitted to ``width`` columns."""
        counts = (
            f" {self.files}/{self.total_files} files  {human_count(self.rows)} rows  "
            f"{human_bytes(self.bytes)} of {human_bytes(self.total_bytes)}"
        )
        bar_width = max(10, min(40, width - len(counts) - 3))
        done = self.files / self.total_files if self.total_files else 1.0
        filled = int(bar_width * done)
        return f"[{'#' * filled}{'.' * (bar_width - filled)}]{counts}"[: max(width - 1, 1)]

    def _draw(self) -> None:
        width = shutil.get_terminal_size((80, 24)).columns
        self._stream.write("\r" + self.line(width))
        self._stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            width = shutil.get_terminal_size((80, 24)).columns
            self._stream.write("\r" + " " * (width - 1) + "\r")
            self._stream.flush()
