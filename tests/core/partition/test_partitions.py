"""Partition paths to typed values, and tables whose writer dropped partition columns."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray import HudiReadOptions, HudiSchemaError, HudiTableBuilder
from hudi_ray.core.config import TableConfig
from hudi_ray.core.partition import Partitioner
from tests.support import row_set, to_table


def _partitioner(props: dict[str, str], schema: pa.Schema) -> Partitioner:
    return Partitioner(TableConfig.from_mapping(props, "test"), schema)


SCHEMA = pa.schema([("id", pa.int64()), ("city", pa.string()), ("day", pa.date32()), ("n", pa.int32())])


def test_hive_style_multi_field_typed_values() -> None:
    p = _partitioner(
        {"hoodie.table.partition.fields": "city,day", "hoodie.datasource.write.hive_style_partitioning": "true"},
        SCHEMA,
    )
    values, unparsed = p.values_table(["city=sf/day=2024-01-02", "city=la/day=2024-02-03"])
    assert values.to_pylist()[0]["city"] == "sf"
    assert str(values.to_pylist()[1]["day"]) == "2024-02-03"
    assert values.schema.field("day").type == pa.date32()
    assert unparsed.to_pylist() == [False, False]


def test_plain_paths_and_url_encoding() -> None:
    p = _partitioner(
        {"hoodie.table.partition.fields": "city", "hoodie.datasource.write.partitionpath.urlencode": "true"},
        SCHEMA,
    )
    assert p.raw_values("San%20Jose%2FCA") == ["San Jose/CA"]
    q = _partitioner({"hoodie.table.partition.fields": "city"}, SCHEMA)
    assert q.raw_values("100%") == ["100%"]


def test_default_partition_is_null_and_bad_values_are_never_pruned() -> None:
    p = _partitioner({"hoodie.table.partition.fields": "n"}, SCHEMA)
    values, unparsed = p.values_table(["__HIVE_DEFAULT_PARTITION__", "7", "not-a-number"])
    assert values.column("n").to_pylist() == [None, 7, None]
    assert unparsed.to_pylist() == [False, False, True]


def test_custom_keygen_field_types_and_depth_errors() -> None:
    p = _partitioner({"hoodie.table.partition.fields": "city:SIMPLE,day:TIMESTAMP"}, SCHEMA)
    assert p.fields == ["city", "day"]
    with pytest.raises(HudiSchemaError, match="levels"):
        p.raw_values("only-one-level")
    # Listing partitions needs their layout only; their types are worked out on first use.
    missing = _partitioner({"hoodie.table.partition.fields": "missing_field"}, SCHEMA)
    assert missing.depth() == 1
    with pytest.raises(HudiSchemaError, match="missing_field"):
        missing.schema  # noqa: B018
    with pytest.raises(HudiSchemaError, match="missing_field"):
        missing.values_table(["x"])


def test_timestamp_keygen_partitions_by_path() -> None:
    p = _partitioner(
        {
            "hoodie.table.partition.fields": "ts",
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        },
        SCHEMA,
    )
    assert p.schema.names == ["_hoodie_partition_path"]
    assert p.raw_values("2023/04/03/12") == ["2023/04/03/12"]
    assert p.depth() is None


def test_nonpartitioned() -> None:
    p = _partitioner({"hoodie.table.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}, SCHEMA)
    assert not p.is_partitioned
    assert p.schema.names == []


def test_dropped_partition_columns_are_restored_from_paths(table_path, tmp_path: Path) -> None:
    """A writer with drop.partition.columns=true leaves ``region`` out of the
    Parquet files; reads still return it, typed, from the partition path."""
    src = table_path("sample_table/cow/v9_txns_simple_nometa")
    dest = tmp_path / "dropped"
    shutil.copytree(src, dest)
    for f in dest.rglob("*.parquet"):
        data = pq.read_table(f)
        pq.write_table(data.drop_columns(["region"]), f)
    props = dest / ".hoodie" / "hoodie.properties"
    text = props.read_text().replace(
        "hoodie.datasource.write.drop.partition.columns=false", "hoodie.datasource.write.drop.partition.columns=true"
    )
    props.write_text(text)
    original = HudiTableBuilder.from_base_uri(str(src)).build()
    dropped = HudiTableBuilder.from_base_uri(str(dest)).build()
    a = to_table(dropped.read())
    b = to_table(original.read())
    assert a.schema.equals(b.schema)
    assert row_set(a.drop_columns(["_hoodie_file_name"])) == row_set(b.drop_columns(["_hoodie_file_name"]))
    eu = HudiReadOptions(filters=[("region", "=", "eu")], projection=["txn_id", "region"])
    got = to_table(dropped.read(eu))
    assert set(got.column("region").to_pylist()) == {"eu"}
    assert got.num_rows == to_table(original.read(eu)).num_rows == 3
    streamed = to_table(list(dropped.read_stream(eu)))
    assert row_set(streamed) == row_set(got)
