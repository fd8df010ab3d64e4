"""Every real table, and long-lived tables of the test kit, read the same after
archival: with any prefix of their completed instants moved off the active timeline
into the archive of their layout, as Apache Hudi's archiver moves them, and with that
archive then deleted.

The expected rows are the table's own reads before archival (which the oracle and
SQL tests check against hudi-rs and the tables' SQL); snapshot, read-optimized, time
travel to every instant and incremental reads from every position are compared.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from hudi_ray import HudiReadOptions, HudiTableBuilder
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.file_group.integrity import cleaned_files
from hudi_ray.core.timeline.timestamps import START_OF_TIME
from hudi_testkit.archive import archive_instants, delete_archive
from hudi_testkit.longlived import COPY_ON_WRITE, MERGE_ON_READ, LongLivedSpec, write_long_lived_table
from tests.support import READ_OPTIMIZED, TablePath, all_table_names, row_set

TABLES = [n for n in all_table_names() if not n.endswith("_empty")]
INCREMENTAL = "hoodie.read.query.type"


def _reads(
    path: Path, times: list[str], completions: list[str], listed: bool = False, every: int = 1
) -> dict[str, list[str] | str]:
    """Row sets by read; the error where the read fails. ``listed``: plan from storage
    listings, not the metadata table. ``every``: time travel to, and incremental reads
    from, every so many instants (and the last)."""
    times = [*times[:-1:every], times[-1]] if times else times
    completions = [*completions[:-1:every], completions[-1]] if completions else completions
    builder = HudiTableBuilder.from_base_uri(str(path))
    table = (builder.with_hudi_option("hoodie.metadata.enable", "false") if listed else builder).build()
    cases: dict[str, HudiReadOptions] = {
        "snapshot": HudiReadOptions(),
        "read_optimized": HudiReadOptions(hudi_options=READ_OPTIMIZED),
    }
    for ts in times:
        cases[f"as_of {ts}"] = HudiReadOptions().with_as_of_timestamp(ts)
    for start in [START_OF_TIME, *completions[:-1]]:
        opts = {INCREMENTAL: "incremental", "hoodie.read.start.timestamp": start}
        opts["hoodie.read.end.timestamp"] = completions[-1]
        cases[f"incremental ({start}, {completions[-1]}]"] = HudiReadOptions(hudi_options=opts)
    out: dict[str, list[str] | str] = {}
    for name, options in cases.items():
        try:
            batches = table.read(options)
            out[name] = row_set(batches) if batches else []
        except HudiCoreError as exc:
            out[name] = f"{type(exc).__name__}: {exc}"
    return out


def _completed(path: Path) -> tuple[list[str], list[str], list[str]]:
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    timeline = table.get_timeline()
    data = timeline.data_instants
    return [i.timestamp for i in data], [i.completed_at for i in data], [i.timestamp for i in timeline.instants]


def _replaced_files(path: Path, archived: list[str]) -> list[Path]:
    """Files of the groups that replace commits among ``archived`` replaced. Apache Hudi
    archives a replace commit only after a clean removed them (its archiver keeps the
    earliest instant clustering must retain), and its file system view, like this
    reader's, reads no archived replace commit."""
    timeline = HudiTableBuilder.from_base_uri(str(path)).build().get_timeline()
    found: list[Path] = []
    for instant in timeline.get_completed_replacecommits():
        if instant.timestamp not in archived:
            continue
        for partition, ids in timeline.replaced_file_ids(instant).items():
            folder = path / partition if partition else path
            found += [folder / name for name in os.listdir(folder) if any(fid in name for fid in ids)]
    return found


def _outcome(value: list[str] | str | None) -> list[str] | str | None:
    """Rows, or the type of the error (its message names the table's own path)."""
    return value.split(":", 1)[0] if isinstance(value, str) else value


def _differences(expected: dict[str, list[str] | str], got: dict[str, list[str] | str]) -> list[str]:
    return [name for name in expected if _outcome(got.get(name)) != _outcome(expected[name])]


@pytest.mark.parametrize("name", TABLES)
def test_reads_unchanged_by_archival(name: str, table_path: TablePath, tmp_path: Path) -> None:
    _check_every_prefix(table_path(name), tmp_path)


# Long-lived tables written with nothing archived, then archived a prefix at a time:
# copy-on-write in the first archive layout (version 6), merge-on-read in the second
# (version 9), so each layout and each table type is archived instant by instant.
GENERATED = {
    f"{'mor' if kind == MERGE_ON_READ else 'cow'}-v{version}": LongLivedSpec(
        kind,
        version,
        commits=28,
        keys=400,
        rows_per_commit=20,
        compaction_every=4,
        clustering_every=12,
        clean_retained=6,
        rollback_every=11,
        archive=False,
    )
    for kind, version in ((COPY_ON_WRITE, 6), (MERGE_ON_READ, 9))
}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_reads_unchanged_by_archival(name: str, tmp_path: Path) -> None:
    source = tmp_path / "source"
    write_long_lived_table(source, GENERATED[name])
    _check_every_prefix(source, tmp_path, every=5, deleted_every=4)


def _check_every_prefix(source: Path, tmp_path: Path, every: int = 1, deleted_every: int = 1) -> None:
    work = tmp_path / "t"
    shutil.copytree(source, work)
    times, completions, completed = _completed(work)
    # Time travel only to instants still answerable: a clean removed what older ones read
    # (before archival the clean says so and the read gives what is left; once the clean
    # is archived, it fails naming the file).
    timeline = HudiTableBuilder.from_base_uri(str(work)).build().get_timeline()
    retained = cleaned_files(timeline).earliest_retained
    times = [t for t in times if t >= retained]
    expected = _reads(work, times, completions, every=every)
    # Some reads must succeed: a baseline of errors would prove nothing.
    assert isinstance(expected["snapshot"], list)
    failures: list[str] = []
    cleaned: set[Path] = set()
    # Hudi's archiver keeps the newest commits: the newest data instant stays.
    for count in range(1, completed.index(times[-1]) + 1):
        replaced = {p.relative_to(source) for p in _replaced_files(source, completed[:count])}
        if replaced - cleaned:
            # Before archiving a replace commit, Hudi's cleaner removed the groups it
            # replaced: the expected reads are those of the table so cleaned, planned
            # from storage (the metadata table would still list what this removal took).
            cleaned |= replaced
            before = tmp_path / f"cleaned{count}"
            shutil.copytree(source, before)
            for rel in cleaned:
                (before / rel).unlink()
                (work / rel).unlink(missing_ok=True)
            expected = _reads(before, times, completions, listed=True, every=every)
            shutil.rmtree(before)
        archive_instants(work, 1)
        got = _reads(work, times, completions, listed=bool(cleaned), every=every)
        failures += [f"{count} archived: {d}" for d in _differences(expected, got)]
        if count % deleted_every:
            continue
        gone = tmp_path / f"gone{count}"
        shutil.copytree(work, gone)
        delete_archive(gone)
        got = _reads(gone, times, completions, listed=bool(cleaned), every=every)
        # With the archive lost, a read gives the rows it gave before or fails naming
        # what is missing, never other rows: an incremental read or time travel into the
        # lost history, and a read of a log file whose slice depends on its archived delta commit's
        # completion time (a base file between that commit and the active timeline).
        failures += [
            f"{count} archived, archive deleted: {d}: {str(got[d])[:300]}"
            for d in _differences(expected, got)
            if not (d.startswith(("incremental", "as_of")) and str(got[d]).startswith("HudiHistoryError"))
            and not (str(got[d]).startswith("HudiTimelineError") and "was archived off the active" in str(got[d]))
        ]
        shutil.rmtree(gone)
    assert not failures, failures
