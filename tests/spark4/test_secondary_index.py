"""The Spark 4 source plans through the core's secondary-index pruner: a pushed lookup on an
indexed column reads only the file groups the index names."""

from __future__ import annotations

from typing import Any

import pytest

import hudi_ray
from hudi_ray.spark4 import pyspark_version
from tests.core.table.test_secondary_index import write_indexed_table


def test_pushed_lookup_reads_only_the_indexed_file_groups(spark: Any, tmp_path: Any) -> None:
    if pyspark_version() < (4, 1):
        pytest.skip("pushFilters arrived in PySpark 4.1")
    path = tmp_path / "indexed"
    write_indexed_table(path)
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    holding = table.get_file_slices(hudi_ray.HudiReadOptions(filters=[("merchant", "=", "plain")]))
    everything = spark.read.format("hudi_ray").option("partition_bytes", "1").load(str(path))
    assert everything.rdd.getNumPartitions() == len(table.get_file_slices())
    looked_up = everything.filter("merchant = 'plain'")
    assert 0 < looked_up.rdd.getNumPartitions() == len(holding) < len(table.get_file_slices())
    expected = sorted(r["id"] for r in everything.collect() if r["merchant"] == "plain")
    assert sorted(r["id"] for r in looked_up.collect()) == expected
