"""The record index and the secondary index on long-lived tables with archived history.

The tables come from ``hudi_testkit.longlived`` with ``metadata=True`` (table version 9):
every write and service (compaction, clustering, cleaning, rollbacks of failed writes)
keeps the metadata table's files, column stats, partition stats, record index and a
secondary index on ``label`` up to date, and both the data table's timeline and the
metadata table's are archived. The index guards read the archived commits' write stats.

What is checked against the generator's model:

* the metadata table itself: its files listing is what storage holds, its record index
  locates every live key where the model has it (and no other key), its secondary index
  pairs every live key with its label, and its column stats are those of the live files;
* snapshot reads, and ``key = k`` / ``label = v`` lookups, return exactly the model's rows,
  and every file group holding a matching row is kept;
* the record index and the secondary index keep only the file groups holding the key or
  the value: the reader does not prune with them on these tables (``xfail``, see
  ``GUARD_REFUSES``), nor when told the writers used a global index, an option it does
  not have yet (``NO_TRUST_OPTION``);
* with the data table's archive deleted, lookups still return exact rows on
  COPY_ON_WRITE; a MERGE_ON_READ table refuses the read (its latest slices hold logs of
  archived delta commits whose completion times were in the archive).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import hudi_ray
from hudi_ray.core.exceptions import HudiTimelineError
from hudi_ray.core.metadata import MetadataTable
from hudi_ray.core.metadata.secondary_index import definitions
from hudi_testkit.archive import delete_archive
from hudi_testkit.common import list_instants
from hudi_testkit.longlived import (
    COPY_ON_WRITE,
    DATA_COLUMNS,
    MERGE_ON_READ,
    RECORD_KEY,
    LongLivedSpec,
    LongLivedTable,
    write_long_lived_table,
)
from tests.support import row_set

# More commits than either timeline keeps active (30), so both archive, the table's first
# commit included; two clusterings, four rollbacks, cleaning after every step.
SPEC = {"commits": 80, "keys": 1200, "rows_per_commit": 30, "clustering_every": 25, "rollback_every": 20}
TYPES = [pytest.param(COPY_ON_WRITE, id="cow"), pytest.param(MERGE_ON_READ, id="mor")]
COMMIT_ACTIONS = {"commit", "deltacommit", "replacecommit"}
LABELS = ["alpha", "beta", "gamma", "delta", "no-such-label"]
ABSENT = ["k999999", "nope"]
GUARD_REFUSES = (
    "The record index guard needs column stats of every file an UPSERT reported inserts into "
    "(record_index.suspect_files), the archived writes' included: cleaned ones have none (Hudi "
    "deletes their column stats), and live ones hold random new keys, so their key ranges cover "
    "most keys; the guard refuses every lookup on these tables"
)
# Telling the reader that the writers used a global index (under which an UPSERT never gives
# a key a second copy) would let it trust those inserts; it has no such option yet.
GLOBAL_INDEX = {"hoodie.index.type": "RECORD_INDEX"}
NO_TRUST_OPTION = "The reader has no option yet saying the writers used a global index (hoodie.index.type)"


@pytest.fixture(scope="module")
def long_lived(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], LongLivedTable]:
    made: dict[str, LongLivedTable] = {}

    def get(table_type: str) -> LongLivedTable:
        if table_type not in made:
            path = tmp_path_factory.mktemp("index_long_lived") / "table"
            made[table_type] = write_long_lived_table(path, LongLivedSpec(table_type, 9, metadata=True, **SPEC))
        return made[table_type]

    return get


def _table(path: Path, options: dict[str, str] | None = None) -> hudi_ray.HudiTable:
    return hudi_ray.HudiTableBuilder.from_base_uri(str(path)).with_hudi_options(options or {}).build()


def _mdt(table: hudi_ray.HudiTable) -> MetadataTable:
    ctx = table._context
    mdt = MetadataTable.open(ctx.storage, ctx.config, ctx.timeline)
    assert mdt is not None
    return mdt


def _read(table: hudi_ray.HudiTable, filters: list[tuple[str, str, str]] | None = None) -> pa.Table:
    batches = table.read(hudi_ray.HudiReadOptions(filters=filters))
    return pa.Table.from_batches(batches) if batches else pa.table({c: [] for c in DATA_COLUMNS})


def _rows(table: pa.Table) -> list[str]:
    return row_set(table.select(DATA_COLUMNS)) if table.num_rows else []


def _kept(table: hudi_ray.HudiTable, filters: list[tuple[str, str, str]]) -> set[tuple[str, str]]:
    return {(s.partition_path, s.file_id) for s in table.get_file_slices(hudi_ray.HudiReadOptions(filters=filters))}


def _lookup_keys(t: LongLivedTable) -> list[str]:
    """Eight live keys spread over the key space, a key the table deleted, and absent ones."""
    live = sorted(t.locations)
    present = [live[i * (len(live) - 1) // 7] for i in range(8)]
    gone = sorted({k for ks in t.deleted.values() for k in ks} - set(live))[:1]
    return present + gone + ABSENT


def _expected(t: LongLivedTable, column: str, value: str) -> pa.Table:
    return t.expected.filter(pc.fill_null(pc.equal(t.expected[column], value), False))


def _holding(t: LongLivedTable, rows: pa.Table) -> set[tuple[str, str]]:
    """The file groups the model puts the rows' keys in."""
    return {t.locations[k] for k in rows[RECORD_KEY].to_pylist()}


def _index_stage(table: hudi_ray.HudiTable, filters: list[tuple[str, str, str]], stage: str) -> int | None:
    """File slices the index stage kept, or None when the index did not prune."""
    plan = table.explain(hudi_ray.HudiReadOptions(filters=filters))
    found = plan.stage(stage)
    if found is None or (stage == "secondary index" and any("kept every file" in n for n in plan.notes)):
        return None
    return found.file_slices


# -- the tables' shape ----------------------------------------------------------------------------------


@pytest.mark.parametrize("table_type", TYPES)
def test_both_timelines_archived_and_the_mdt_caught_up(long_lived, table_type: str) -> None:
    t = long_lived(table_type)
    history = t.path / ".hoodie" / "timeline" / "history"
    assert any(history.iterdir()), "the data table's archive is empty"
    assert t.commits[0] in t.archived, "the table's first commit is still active"
    active = list_instants(t.path / ".hoodie" / "timeline")
    assert t.commits[0] not in {i.timestamp for i in active}
    # The MDT archived its own timeline, its delta commit of the first write included, and
    # kept the delta commit of every data instant still active.
    mdt_timeline = t.path / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    assert any((mdt_timeline / "history").iterdir())
    assert t.commits[0] in t.metadata_archived
    mdt_done = {i.timestamp for i in list_instants(mdt_timeline) if i.is_completed}
    data_done = [i.timestamp for i in active if i.is_completed and i.action in COMMIT_ACTIONS]
    assert set(data_done) <= mdt_done
    table = _table(t.path)
    assert not _mdt(table).lags_data_table()
    assert table.explain().listing == "metadata table"
    # Rolled-back writes left no delta commit on the MDT, whose rollbacks say which one they undid.
    assert not mdt_done & set(t.rolled_back)
    rollbacks = [i for i in list_instants(mdt_timeline) if i.is_completed and i.action == "rollback"]
    assert {i.timestamp for i in rollbacks} <= {s for s, kind in t.services.items() if kind == "rollback"}


# -- the metadata table against the model ------------------------------------------------------------------


@pytest.mark.parametrize("table_type", TYPES)
def test_files_listing_is_storage(long_lived, table_type: str) -> None:
    """Cleans removed what they deleted, rollbacks what the failed writes wrote."""
    t = long_lived(table_type)
    mdt = _mdt(_table(t.path))
    partitions = mdt.partition_paths()
    assert partitions == sorted(p.name for p in t.path.iterdir() if p.name.startswith("part="))
    for partition, files in mdt.files(partitions).items():
        on_storage = {
            f.name: f.stat().st_size
            for f in (t.path / partition).iterdir()
            if f.name.endswith(".parquet") or ".log." in f.name
        }
        assert {f.name: f.size for f in files} == on_storage, partition


@pytest.mark.parametrize("table_type", TYPES)
def test_record_index_is_the_model(long_lived, table_type: str) -> None:
    t = long_lived(table_type)
    mdt = _mdt(_table(t.path))
    live = sorted(t.locations)
    located = mdt.record_locations(live)
    assert {k: (loc.partition, loc.file_id) for k, loc in located.items()} == t.locations
    gone = sorted({k for ks in t.deleted.values() for k in ks} - set(live))
    assert gone and not mdt.record_locations(gone)


@pytest.mark.parametrize("table_type", TYPES)
def test_secondary_index_is_the_model(long_lived, table_type: str) -> None:
    t = long_lived(table_type)
    table = _table(t.path)
    mdt = _mdt(table)
    (index,) = definitions(table._context.storage, table._context.config).values()
    assert index.column == "label"
    found = mdt.secondary_index_keys(index, LABELS[:-1])
    for label in LABELS[:-1]:
        assert found[label] == set(_expected(t, "label", label)[RECORD_KEY].to_pylist()), label


@pytest.mark.parametrize("table_type", TYPES)
def test_column_stats_are_those_of_the_live_files(long_lived, table_type: str) -> None:
    t = long_lived(table_type)
    table = _table(t.path)
    mdt = _mdt(table)
    schema = table._context.read_schema
    files = [(s.partition_path, s.base_file_name) for s in table.get_file_slices() if s.base_file_name]
    stats = mdt.column_stats_of_files(["key", "seq"], files, schema)
    assert set(stats) == set(files)
    for partition, name in files:
        data = pq.read_table(t.path / partition / name, columns=["key", "seq"])
        for column in ("key", "seq"):
            bounds = pc.min_max(data[column])
            got = stats[(partition, name)][column]
            assert (got.min.as_py(), got.max.as_py()) == (bounds["min"].as_py(), bounds["max"].as_py())


# -- reads ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("table_type", TYPES)
def test_snapshot_is_the_model(long_lived, table_type: str) -> None:
    t = long_lived(table_type)
    assert _rows(_read(_table(t.path))) == _rows(t.expected)
    theirs = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(str(t.path)).build().read())
    assert _rows(theirs) == _rows(t.expected)


@pytest.mark.parametrize("table_type", TYPES)
def test_key_lookups_are_exact(long_lived, table_type: str) -> None:
    t = long_lived(table_type)
    table = _table(t.path)
    for k in _lookup_keys(t):
        filters = [(RECORD_KEY, "=", k)]
        expected = _expected(t, RECORD_KEY, k)
        assert _rows(_read(table, filters)) == _rows(expected), k
        assert _holding(t, expected) <= _kept(table, filters), k


@pytest.mark.parametrize("table_type", TYPES)
def test_label_lookups_are_exact(long_lived, table_type: str) -> None:
    t = long_lived(table_type)
    table = _table(t.path)
    for label in LABELS:
        filters = [("label", "=", label)]
        expected = _expected(t, "label", label)
        assert _rows(_read(table, filters)) == _rows(expected), label
        assert _holding(t, expected) <= _kept(table, filters), label


TRUST = [
    pytest.param(None, id="as-is", marks=pytest.mark.xfail(reason=GUARD_REFUSES, strict=True)),
    pytest.param(GLOBAL_INDEX, id="global-index", marks=pytest.mark.xfail(reason=NO_TRUST_OPTION, strict=True)),
]


@pytest.mark.filterwarnings("ignore:Unknown Hudi option")
@pytest.mark.parametrize("options", TRUST)
@pytest.mark.parametrize("table_type", TYPES)
def test_record_index_keeps_only_the_groups_holding_the_key(long_lived, table_type: str, options) -> None:
    t = long_lived(table_type)
    table = _table(t.path, options)
    for k in _lookup_keys(t):
        holding = _holding(t, _expected(t, RECORD_KEY, k))
        assert _index_stage(table, [(RECORD_KEY, "=", k)], "record index") == len(holding), k


@pytest.mark.filterwarnings("ignore:Unknown Hudi option")
@pytest.mark.parametrize("options", TRUST)
@pytest.mark.parametrize("table_type", TYPES)
def test_secondary_index_keeps_only_the_groups_holding_the_value(long_lived, table_type: str, options) -> None:
    t = long_lived(table_type)
    table = _table(t.path, options)
    for label in LABELS:
        holding = _holding(t, _expected(t, "label", label))
        assert _index_stage(table, [("label", "=", label)], "secondary index") == len(holding), label


# -- without the archive ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def without_archive(long_lived, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    made: dict[str, Path] = {}

    def get(table_type: str) -> Path:
        if table_type not in made:
            copy = tmp_path_factory.mktemp("index_long_lived_no_archive") / "table"
            shutil.copytree(long_lived(table_type).path, copy)
            delete_archive(copy)
            assert not any((copy / ".hoodie" / "timeline" / "history").iterdir())
            made[table_type] = copy
        return made[table_type]

    return get


def test_lookups_without_the_archive_are_exact(long_lived, without_archive) -> None:
    """The guard then knows only the active writes and must not prune on the strength of
    them (the index may not name a copy an archived insert made). It prunes nothing here,
    and the rows are exact; but only because the active inserts' key ranges cover the
    keys: ``every_write`` takes a missing archive for no archived history."""
    t = long_lived(COPY_ON_WRITE)
    table = _table(without_archive(COPY_ON_WRITE))
    assert _rows(_read(table)) == _rows(t.expected)
    for k in _lookup_keys(t):
        filters = [(RECORD_KEY, "=", k)]
        expected = _expected(t, RECORD_KEY, k)
        assert _rows(_read(table, filters)) == _rows(expected), k
        assert _holding(t, expected) <= _kept(table, filters), k
        assert _index_stage(table, filters, "record index") is None, k
    for label in LABELS:
        filters = [("label", "=", label)]
        expected = _expected(t, "label", label)
        assert _rows(_read(table, filters)) == _rows(expected), label
        assert _holding(t, expected) <= _kept(table, filters), label
        assert _index_stage(table, filters, "secondary index") is None, label


def test_mor_without_the_archive_is_refused(without_archive) -> None:
    """Latest slices hold logs of archived delta commits: without the archive their
    completion times are unknown, and the read says so rather than guess."""
    table = _table(without_archive(MERGE_ON_READ))
    with pytest.raises(HudiTimelineError, match="archived"):
        _read(table, [(RECORD_KEY, "=", "k000001")])
