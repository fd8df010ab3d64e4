"""Which blocks of a file slice's log files apply to a read.

Data reads and the metadata table both scan log blocks with one rule set,
that of Apache Hudi's log record reader (``BaseHoodieLogRecordReader``):

- a rollback command block drops every earlier data and delete block of its
  target instant, in any earlier log file of the slice; blocks of that
  instant written after it stay. It applies whatever its own instant, as
  Hudi checks the timeline for data and delete blocks only;
- corrupt blocks are skipped (the reader logged them when it found them);
- CDC blocks are skipped: they hold change records, not table rows;
- a data or delete block without an instant time, or of an instant the read
  must not see (failed, pending, or after the read's time), is skipped.

What survives keeps log-file order, then block order within a file. The
scanner looks at block headers only; decoding the content is the caller's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hudi_ray.core.log_file.block import BlockType, LogBlock

log = logging.getLogger(__name__)

_SKIPPED = frozenset({BlockType.CORRUPT, BlockType.CDC_DATA})


@dataclass(frozen=True)
class LogScanner:
    """Scans the log files of one file slice.

    ``visible`` tells whether a block written by an instant time may be read,
    e.g. ``Visibility.sees``.
    """

    visible: Callable[[str], bool]

    def scan(self, files: Iterable[Iterable[LogBlock]]) -> list[LogBlock]:
        """The data and delete blocks that apply, oldest first.

        ``files`` holds the blocks of each log file, files in slice order; it
        may be lazy, so a file is read only when the scan reaches it.
        """
        # Blocks by arrival; a rollback removes its target's positions, so
        # it costs the blocks it drops, not a pass over everything kept.
        kept: dict[int, LogBlock] = {}
        by_instant: dict[str, list[int]] = {}
        seq = 0
        for blocks in files:
            for block in blocks:
                kind = block.block_type
                if kind is BlockType.COMMAND:
                    self._command(block, kept, by_instant)
                    continue
                if kind in _SKIPPED:
                    continue
                instant = block.instant_time
                if instant is None or not self.visible(instant):
                    continue  # written by a failed, pending or later instant
                kept[seq] = block
                by_instant.setdefault(instant, []).append(seq)
                seq += 1
        return list(kept.values())

    @staticmethod
    def _command(block: LogBlock, kept: dict[int, LogBlock], by_instant: dict[str, list[int]]) -> None:
        target = block.target_instant_time
        if not block.is_rollback or not target:
            return  # rollback is the only command Hudi defines; others carry nothing to apply
        dropped = by_instant.pop(target, [])
        for seq in dropped:
            del kept[seq]
        log.debug("%s rolls back %d block(s) of instant %s", block.where(), len(dropped), target)
