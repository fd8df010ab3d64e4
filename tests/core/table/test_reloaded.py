"""``HudiTable.reloaded()``: the table as storage holds it now, reusing what the
earlier load decoded of completed commits. It reads what a freshly built table
reads at every step (a new commit, a commit taken back in flight and completed
again), decodes each completed commit once, and leaves the table it came from
as it was."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from hudi_ray.core.table import HudiTable
from hudi_ray.core.timeline import timeline as timeline_module
from hudi_testkit.history import complete_held, hold_in_flight
from tests.commits import CommitLog, incremental, keyed, snapshot


def _same(reloaded: HudiTable, fresh: HudiTable) -> None:
    assert reloaded.get_timeline().instants == fresh.get_timeline().instants
    assert reloaded.get_timeline().pending == fresh.get_timeline().pending
    assert keyed(snapshot(reloaded)) == keyed(snapshot(fresh))
    ends = sorted({i.completed_at for i in fresh.get_timeline().data_instants})
    for before, after in pairwise(ends):
        assert keyed(incremental(reloaded, before, after)) == keyed(incremental(fresh, before, after))


@pytest.mark.parametrize(("kind", "version"), [("cow", 8), ("mor", 8), ("cow", 6)])
def test_a_reloaded_table_reads_what_a_fresh_one_reads(tmp_path: Path, kind: str, version: int) -> None:
    log = CommitLog(tmp_path / "t", kind, partitioned=True, version=version)
    log.commit(range(30))
    b = log.commit(range(20, 50))
    table = log.table()
    keyed(snapshot(table))  # decodes every commit
    log.commit(range(40, 60))
    reloaded = table.reloaded()
    assert len(reloaded.get_timeline().data_instants) == 3 and len(table.get_timeline().data_instants) == 2
    _same(reloaded, log.table())

    hold_in_flight(log.path, b)  # b's completed file is gone: b must not be carried over
    held = reloaded.reloaded()
    assert b not in [i.timestamp for i in held.get_timeline().instants]
    _same(held, log.table())
    complete_held(log.path, b)
    _same(held.reloaded(), log.table())


def test_each_completed_commit_is_decoded_once_across_reloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = CommitLog(tmp_path / "t", "cow", partitioned=False)
    for start in range(0, 40, 10):
        log.commit(range(start, start + 10))
    decoded: Counter[str] = Counter()
    real = timeline_module.decode_instant_metadata

    def counting(raw: bytes, where: str) -> dict:
        decoded[where.rsplit("/", 1)[-1]] += 1
        return real(raw, where)

    monkeypatch.setattr(timeline_module, "decode_instant_metadata", counting)
    table = log.table()
    snapshot(table)
    first = dict(decoded)
    assert first and all(n == 1 for n in first.values())
    log.commit(range(100, 110))
    reloaded = table.reloaded()
    snapshot(reloaded)
    new = {name: n - first.get(name, 0) for name, n in decoded.items() if n > first.get(name, 0)}
    assert len(new) == 1 and next(iter(new)).startswith(log.commits[-1]), new
