"""What the benchmarks share: cases timed side by side, interleaved, and peak memory.

Not a benchmark itself; the scripts in this directory import it.
"""

from __future__ import annotations

import gc
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    label: str
    run: Callable[[], int]  # returns the rows (or slices) it produced
    expected: int | None = None  # what it must produce; None: not checked


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes, after a garbage collection."""
    gc.collect()
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def interleaved(cases: list[Case], reps: int, warm_up: bool = False) -> dict[str, list[float]]:
    """Seconds per run of each case. Each repetition runs every case once, in
    a rotated order, so a noisy stretch of the machine hits every case alike;
    a case producing other than it must ends the benchmark."""

    def run(case: Case) -> int:
        n = case.run()
        if case.expected is not None and n != case.expected:
            sys.exit(f"{case.label} gave {n:,}, expected {case.expected:,}")
        return n

    if warm_up:  # worker processes, imports, page cache
        for case in cases:
            run(case)
    times: dict[str, list[float]] = {c.label: [] for c in cases}
    for rep in range(reps):
        shift = rep % len(cases)
        for case in cases[shift:] + cases[:shift]:
            times[case.label].append(timed(lambda c=case: run(c)))
    return times


def medians(times: dict[str, list[float]]) -> dict[str, float]:
    return {label: statistics.median(ts) for label, ts in times.items()}


def peak_rss_mib() -> float:
    """This process's peak resident set size. On Linux from VmHWM, which starts
    afresh at exec; ru_maxrss would carry the parent's peak into the child."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024
