"""The cyclic collector is paused while planning builds its objects, and
restored exactly as it was, whatever the nesting, threads or failures."""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hudi_ray.core.table import HudiTableBuilder
from hudi_ray.core.table import table as table_module
from hudi_ray.core.util.collector import collector_paused
from tests.support import write_numbered_table


@pytest.fixture(autouse=True)
def _collector_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_inside_and_resumed_after_nesting() -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer holder still holds it
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_resumed_after_a_failure() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("planning failed")
    assert gc.isenabled()


def test_resumes_when_the_last_thread_leaves() -> None:
    entered, release_first = threading.Event(), threading.Event()

    def first() -> None:
        with collector_paused():
            entered.set()
            release_first.wait(5)

    t = threading.Thread(target=first)
    t.start()
    assert entered.wait(5)
    with collector_paused():
        release_first.set()
        t.join(5)
        assert not t.is_alive()
        assert not gc.isenabled()  # the first thread left; this one still holds it
    assert gc.isenabled()


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs a plain fork")
def test_a_child_forked_during_a_pause_starts_with_the_collector_on() -> None:
    with collector_paused():
        pid = os.fork()
        if pid == 0:  # the child: report through the exit code only
            os._exit(0 if gc.isenabled() else 1)
        _, status = os.waitpid(pid, 0)
        assert not gc.isenabled()
    assert os.waitstatus_to_exitcode(status) == 0
    assert gc.isenabled()


def test_planning_runs_with_the_collector_paused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_numbered_table(tmp_path / "t", rows=20, rows_per_file=5, partitioned=True)
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    seen: list[bool] = []
    real = table_module.scan_for

    def watched(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(table_module, "scan_for", watched)
    assert len(table.get_file_slices()) == 4
    assert sum(b.num_rows for b in table.read()) == 20
    assert seen == [False, False]
    assert gc.isenabled()
