"""Record-key lookups pruned by the bloom filters in base files' footers, where no record
index decides: on every real table a lookup returns exactly the rows the unfiltered read
holds for the key, and on tables of Parquet or Lance base files it keeps exactly the file groups
holding the key (a slice with log files is kept when a data block of its logs holds the key)."""

from __future__ import annotations

import logging
import random
import shutil
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import hudi_ray
from hudi_ray.core.base_file import ParquetReader
from hudi_ray.core.bloom import FOOTER_KEY
from hudi_ray.core.log_file.keys import data_block_keys
from hudi_testkit import BloomFilterSpec, CowTableSpec, CowTableWriter, MetadataTableOptions
from hudi_testkit.bloom import bloom_filter_text
from tests.support import TablePath, all_table_names, assert_same_as_hudi_rs, row_set

TABLES = [n for n in all_table_names() if not n.endswith(("_empty", "_no_metafields"))]


def _key_field(table: hudi_ray.HudiTable, data: pa.Table) -> str:
    fields = (table.hudi_options().get("hoodie.table.recordkey.fields") or "").split(",")
    if len(fields) == 1 and fields[0] in data.column_names:
        return fields[0]
    return "_hoodie_record_key"


def _lookups(data: pa.Table, field: str) -> list[object]:
    values = sorted(set(data[field].to_pylist()), key=str)
    random.Random(5).shuffle(values)
    absent: list[object] = ["no-such-key"] if pa.types.is_string(data[field].type) else [10**9 + 7]
    return values[:5] + absent


@pytest.mark.parametrize("name", TABLES)
def test_key_lookups_are_exact_and_keep_the_groups_holding_the_key(name: str, table_path: TablePath) -> None:
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    data = pa.Table.from_batches(table.read())
    field = _key_field(table, data)
    slices = table.get_file_slices()
    # A slice with logs is dropped only when its base file's filter and its logs' keys both
    # leave the key out.
    prunable = all(s.base_file_name and s.base_file_name.endswith((".parquet", ".lance")) for s in slices)
    for value in _lookups(data, field):
        options = hudi_ray.HudiReadOptions(filters=[(field, "=", str(value))])
        expected = data.filter(pc.equal(data[field], pa.scalar(value, data[field].type)))
        got = table.read(options)
        assert (row_set(got) if got else []) == (row_set(expected) if expected.num_rows else []), f"{field} = {value}"
        plan = table.explain(options)
        kept = {(s.partition_path, s.file_id) for s in table.get_file_slices(options)}
        holding = {
            (p, n.split("_")[0])
            for p, n in zip(expected["_hoodie_partition_path"].to_pylist(), expected["_hoodie_file_name"].to_pylist())
        }
        assert holding <= kept, f"{field} = {value}"
        if plan.stage("record index") is None:
            assert plan.stage("bloom filters") is not None, f"{field} = {value}: {plan}"
        if prunable:
            assert kept == holding, f"{field} = {value}: kept {len(kept)} of {len(slices)}, {len(holding)} hold it"


def test_a_damaged_filter_costs_its_pruning_not_rows(table_path: TablePath, tmp_path: Path, caplog) -> None:
    name = "sample_table/cow/v6_simplekeygen_nonhivestyle"
    work = tmp_path / "t"
    shutil.copytree(table_path(name), work)
    victim = sorted(p for p in work.rglob("*.parquet") if ".hoodie" not in p.parts)[0]
    original = pq.read_table(victim)
    metadata = dict(original.schema.metadata or {})
    metadata[FOOTER_KEY.encode()] = b"!!! not a filter !!!"
    pq.write_table(original.replace_schema_metadata(metadata), victim)
    keys = sorted(original["_hoodie_record_key"].to_pylist())
    # A key inside the file's key range (its footer stats keep it), held by no file.
    absent = keys[0] + "~"
    assert absent not in keys
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(work)).build()
    options = hudi_ray.HudiReadOptions(filters=[("_hoodie_record_key", "=", absent)])
    with caplog.at_level(logging.WARNING):
        assert sum(b.num_rows for b in table.read(options)) == 0
        kept = table.get_file_slices(options)
    assert victim.name in {s.base_file_name for s in kept}
    assert any("bloom filter" in r.message and victim.name in r.message for r in caplog.records)


# Composite keys hold commas, which an IN filter's value string cannot carry.
@pytest.mark.parametrize("name", [n for n in TABLES if "complex" not in n])
def test_key_in_lookups_keep_the_groups_holding_any_key(name: str, table_path: TablePath) -> None:
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    data = pa.Table.from_batches(table.read())
    field = _key_field(table, data)
    values = _lookups(data, field)
    # Values go as one comma-separated string, as the reader spec takes them (none holds a comma).
    assert not any("," in str(v) for v in values)
    options = hudi_ray.HudiReadOptions(filters=[(field, "IN", ",".join(str(v) for v in values))])
    mask = pc.is_in(data[field], pa.array(values[:-1], data[field].type))
    expected = data.filter(mask)
    got = table.read(options)
    assert (row_set(got) if got else []) == (row_set(expected) if expected.num_rows else [])
    names = zip(expected["_hoodie_partition_path"].to_pylist(), expected["_hoodie_file_name"].to_pylist())
    holding = {(p, n.split("_")[0]) for p, n in names}
    kept = {(s.partition_path, s.file_id) for s in table.get_file_slices(options)}
    assert holding <= kept
    plan = table.explain(options)
    if plan.stage("record index") is None:
        assert plan.stage("bloom filters") is not None, str(plan)
    assert kept == holding, f"kept {len(kept)}, {len(holding)} hold one of the keys"


def test_a_key_only_a_log_holds_keeps_its_slice(table_path: TablePath, tmp_path: Path) -> None:
    """A slice whose base file's filter excludes the key is kept when a data block of its
    logs holds the key (some writers put new keys in logs and count them as updates), and
    dropped when none does. The base file's filter is rewritten to leave the log's keys out."""
    work = tmp_path / "t"
    shutil.copytree(table_path("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle"), work)
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(work)).build()
    (slice_,) = [s for s in table.get_file_slices() if s.log_file_names]
    logged = data_block_keys((work / slice_.log_files_relative_paths()[0]).read_bytes(), "log").to_pylist()
    base = work / slice_.base_file_relative_path()
    original = pq.read_table(base)
    others = [k for k in original["_hoodie_record_key"].to_pylist() if k not in logged]
    assert logged and others
    metadata = dict(original.schema.metadata or {})
    metadata[FOOTER_KEY.encode()] = bloom_filter_text(others, BloomFilterSpec(num_entries=100)).encode()
    pq.write_table(original.replace_schema_metadata(metadata), base)
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(work)).build()
    data = pa.Table.from_batches(table.read())
    for key in [*logged, "1000000007"]:
        options = hudi_ray.HudiReadOptions(filters=[("id", "=", key)])
        expected = data.filter(pc.equal(pc.cast(data["id"], pa.string()), key))
        got = table.read(options)
        assert (row_set(got) if got else []) == (row_set(expected) if expected.num_rows else []), key
        kept = {s.file_id for s in table.get_file_slices(options)}
        assert (slice_.file_id in kept) == (key in logged), key


def test_bloom_filters_come_from_footers_on_disk_and_the_metadata_table_on_object_stores(
    tmp_path: Path, monkeypatch, storage_options: dict[str, str], s3_endpoint: str
) -> None:
    """Lookups keep exactly the holding groups wherever the filters come from. On a local
    disk they come from the footers, also when the metadata table has a ``bloom_filters``
    partition (plain text, not deflated); on an object store from that partition (one
    file, not a request per base file), and from footers without it."""
    import s3fs

    schema = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("r", pa.string())])
    rows = pa.table({"id": [f"k{i:03d}" for i in range(200)], "r": ["a", "b"] * 100}, schema=schema)
    footers_read: list[str] = []
    original = ParquetReader.key_values_many

    def counting(self, rels, sizes):  # type: ignore[no-untyped-def]
        footers_read.extend(rels)
        return original(self, rels, sizes)

    monkeypatch.setattr(ParquetReader, "key_values_many", counting)
    s3 = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": s3_endpoint})
    s3.mkdir("bloom-sources")
    for partition in (True, False):
        path = tmp_path / f"t{partition}"
        options = MetadataTableOptions(record_index=False, bloom_filters=partition)
        spec = BloomFilterSpec(num_entries=100, max_entries=1000)
        writer = CowTableWriter.create(
            path, CowTableSpec("t", "id", "r", None, table_version=9), schema, rows_per_file=20,
            metadata_table=options, bloom_filter=spec,
        )  # fmt: skip
        writer.insert(rows.slice(0, 100))
        writer.insert(rows.slice(100, 100))
        s3.put(str(path), f"bloom-sources/t{partition}", recursive=True)
        local = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
        footers_read.clear()
        data = pa.Table.from_batches(local.read())
        # Footers with bloom filters and the bloom_filters partition read the same in hudi-rs.
        theirs = hudi.HudiTableBuilder.from_base_uri(str(path)).build()
        assert assert_same_as_hudi_rs(local, theirs) == 200
        assert assert_same_as_hudi_rs(local, theirs, filters=[("id", "=", "k150")]) == 1
        remote = (
            hudi_ray.HudiTableBuilder.from_base_uri(f"s3://bloom-sources/t{partition}")
            .with_storage_options(storage_options)
            .build()
        )
        for table, footers_expected in ((local, True), (remote, not partition)):
            for key in ("k007", "k150", "k199", "no-such-key"):
                options_ = hudi_ray.HudiReadOptions(filters=[("id", "=", key)])
                expected = data.filter(pc.equal(data["id"], key))
                got = table.read(options_)
                assert (row_set(got) if got else []) == (row_set(expected) if expected.num_rows else [])
                kept = {s.file_id for s in table.get_file_slices(options_)}
                assert kept == {n.split("_")[0] for n in expected["_hoodie_file_name"].to_pylist()}, key
            assert bool(footers_read) == footers_expected, (partition, table.base_url, footers_read[:3])
            footers_read.clear()
