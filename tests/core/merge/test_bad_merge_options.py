"""Merge options naming what the data lacks: rows read as hudi-rs reads them."""

from __future__ import annotations

import hudi
import pyarrow as pa

from hudi_ray import HudiReadOptions, HudiTableBuilder

MOR = "sample_table/mor/avro/v9_txns_simple_meta"


def test_ordering_field_absent_from_data_reads_rows_like_hudi_rs(table_path) -> None:
    path = str(table_path(MOR))
    table = HudiTableBuilder.from_base_uri(path).build()
    # An instant whose slices still have log files to merge.
    merging = [
        i.timestamp
        for i in table.get_timeline().instants
        if any(s.log_file_names for s in table.get_file_slices(HudiReadOptions().with_as_of_timestamp(i.timestamp)))
    ]
    assert merging
    opts = HudiReadOptions().with_as_of_timestamp(merging[-1])
    expected = hudi.HudiTableBuilder.from_base_uri(path).with_hudi_option("hoodie.table.ordering.fields", "nope")
    want = pa.Table.from_batches(expected.build().read(hudi.HudiReadOptions().with_as_of_timestamp(merging[-1])))
    ours = HudiTableBuilder.from_base_uri(path).with_hudi_option("hoodie.table.ordering.fields", "nope").build()
    got = pa.Table.from_batches(ours.read(opts))
    key = "_hoodie_record_key"
    assert sorted(got.column(key).to_pylist()) == sorted(want.column(key).to_pylist())
    assert got.num_rows > 0
