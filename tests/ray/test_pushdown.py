"""Projection and predicate pushdown of ``read_hudi``: fewer files read, same rows
as the unfiltered read filtered afterwards. The expression translation itself
is tested without Ray in test_expressions.py."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest
from ray.data.expressions import col

import hudi_ray
from hudi_ray.datasource import hudi_datasource_of, planned_read
from tests.support import TablePath, api_table, dataset_table, row_set, write_numbered_table

PARTITIONED = "sample_table/cow/v9_txns_simple_meta"

pytestmark = pytest.mark.usefixtures("ray_session")


@pytest.fixture(scope="module")
def numbered(tmp_path_factory: pytest.TempPathFactory) -> str:
    """400 rows, ids in 4 files of 100 consecutive ids each: footer stats separate them."""
    return str(write_numbered_table(tmp_path_factory.mktemp("ray-pushdown") / "numbered", rows=400, rows_per_file=100))


def _pushed(ds: object) -> list[tuple[str, str, str]]:
    return planned_read(ds).plan.options.filters


def test_partition_filter_prunes_slices_and_keeps_rows(table_path: TablePath) -> None:
    path = str(table_path(PARTITIONED))
    full = hudi_ray.read_hudi(path)
    filtered = full.filter(expr=col("region") == "us")
    assert ("region", "=", "us") in _pushed(filtered)
    assert 0 < planned_read(filtered).num_slices < planned_read(full).num_slices
    assert len(planned_read(filtered).input_files()) < len(planned_read(full).input_files())
    expected = api_table(path).filter(pc.field("region") == "us")
    assert row_set(dataset_table(filtered)) == row_set(expected)


def test_stats_filter_prunes_files_and_keeps_rows(numbered: str) -> None:
    full = hudi_ray.read_hudi(numbered)
    assert planned_read(full).num_slices == 4
    below = full.filter(expr=col("id") < 100)
    assert _pushed(below) == [("id", "<", "100")]
    assert planned_read(below).num_slices == 1
    middle = full.filter(expr=(col("id") >= 150) & (col("id") < 250) & (col("name") != "name-200"))
    assert planned_read(middle).num_slices == 2
    everything = api_table(numbered)
    for ds, mask in [
        (below, pc.field("id") < 100),
        (middle, (pc.field("id") >= 150) & (pc.field("id") < 250) & (pc.field("name") != "name-200")),
    ]:
        assert row_set(dataset_table(ds)) == row_set(everything.filter(mask))


def test_untranslatable_predicates_still_apply(numbered: str) -> None:
    everything = api_table(numbered)
    ds = hudi_ray.read_hudi(numbered)
    # A translatable conjunct prunes; the arithmetic one only masks rows.
    mixed = ds.filter(expr=(col("id") < 200) & ((col("value") + 5) % 7 == 0))
    assert _pushed(mixed) == [("id", "<", "200")]
    assert planned_read(mixed).num_slices == 2
    expected = everything.filter((pc.field("id") < 200) & (pc.equal(pc.modulo(pc.add(pc.field("value"), 5), 7), 0)))
    assert row_set(dataset_table(mixed)) == row_set(expected)
    # OR across columns and null checks are not Hudi filters: nothing pruned, rows still right.
    either = ds.filter(expr=(col("id") == 3) | (col("region") == "eu") | col("name").is_null())
    assert _pushed(either) == []
    expected = everything.filter((pc.field("id") == 3) | (pc.field("region") == "eu") | pc.field("name").is_null())
    assert row_set(dataset_table(either)) == row_set(expected)
    assert either.count() == expected.num_rows


def test_projection_pushdown_and_filter_on_unselected_column(table_path: TablePath) -> None:
    path = str(table_path(PARTITIONED))
    everything = api_table(path)
    picked = hudi_ray.read_hudi(path).select_columns(["amount", "txn_id"])
    assert planned_read(picked).plan.options.projection == ["amount", "txn_id"]
    got = dataset_table(picked)
    assert got.column_names == ["amount", "txn_id"]
    assert row_set(got) == row_set(everything.select(["amount", "txn_id"]))
    narrowed = hudi_ray.read_hudi(path, columns=["txn_id", "region", "amount"]).filter(expr=col("region") == "eu")
    narrowed = narrowed.select_columns(["txn_id"])
    got = dataset_table(narrowed)
    assert got.column_names == ["txn_id"]
    assert row_set(got) == row_set(everything.filter(pc.field("region") == "eu").select(["txn_id"]))


def test_counts_limits_and_filters_argument(numbered: str) -> None:
    everything = api_table(numbered)
    ds = hudi_ray.read_hudi(numbered)
    assert ds.count() == 400
    assert ds.filter(expr=col("region").is_in(["us"])).count() == 200
    assert len(ds.limit(7).take_all()) == 7
    by_filters = hudi_ray.read_hudi(numbered, filters=[("id", ">=", "390")], columns=["id"])
    assert sorted(r["id"] for r in by_filters.take_all()) == list(range(390, 400))
    assert row_set(dataset_table(by_filters)) == row_set(everything.filter(pc.field("id") >= 390).select(["id"]))


def test_unknown_filter_column_names_table(numbered: str) -> None:
    ds = hudi_ray.read_hudi(numbered).filter(expr=col("nope") == 1)
    with pytest.raises(hudi_ray.HudiFilterError, match="nope"):
        ds.count()


def test_numbered_table_fixture_is_not_shared(numbered: str) -> None:
    assert Path(numbered).is_dir()


def test_input_partitions_sets_the_read_parallelism(numbered: str) -> None:
    """``hoodie.read.input.partitions`` (as hudi-rs engines take it) is the number
    of blocks unless ``override_num_blocks`` says otherwise; 0 leaves it to Ray."""
    key = "hoodie.read.input.partitions"
    ds = hudi_ray.read_hudi(numbered, hudi_options={key: "3"})
    found = hudi_datasource_of(ds)
    assert found is not None and found[2] == 3
    assert row_set(dataset_table(ds)) == row_set(api_table(numbered))
    found = hudi_datasource_of(hudi_ray.read_hudi(numbered, hudi_options={key: "3"}, override_num_blocks=2))
    assert found is not None and found[2] == 2
    found = hudi_datasource_of(hudi_ray.read_hudi(numbered, hudi_options={key: "0"}))
    assert found is not None and found[2] is None


@pytest.mark.parametrize(
    "name", ["quickstart_trips_table/mor/avro/v8_trips_8i3u1d", "sample_table/cow/v9_txns_simple_meta"]
)
def test_count_projects_every_column_away_and_keeps_the_rows(name: str, table_path: TablePath, numbered: str) -> None:
    """``count()`` reads with no columns at all; the rows must still be counted,
    merged slices and small slices read together alike."""
    for path in (str(table_path(name)), numbered):
        expected = api_table(path)
        assert hudi_ray.read_hudi(path).count() == expected.num_rows
        assert hudi_ray.read_hudi(path, filters=[("_hoodie_record_key", "!=", "")]).count() == expected.num_rows


def test_secondary_index_prunes_the_planned_slices(tmp_path: Path) -> None:
    """read_hudi plans through the core's secondary-index pruner: a lookup on an indexed
    column plans only the file groups the index names, and the rows are unchanged."""
    from tests.core.table.test_secondary_index import write_indexed_table

    path = tmp_path / "indexed"
    write_indexed_table(path)
    lookup = [("merchant", "=", "plain")]
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    holding = table.get_file_slices(hudi_ray.HudiReadOptions(filters=lookup))
    assert "secondary index" in str(table.explain(hudi_ray.HudiReadOptions(filters=lookup)))
    full = hudi_ray.read_hudi(str(path))
    looked_up = full.filter(expr=col("merchant") == "plain")
    assert 0 < planned_read(looked_up).num_slices == len(holding) < planned_read(full).num_slices
    assert row_set(dataset_table(looked_up)) == row_set(api_table(str(path)).filter(pc.field("merchant") == "plain"))
