"""``read_hudi`` rejects malformed arguments with errors naming the argument and its value."""

from __future__ import annotations

import numpy as np
import pytest

import hudi_ray
from hudi_ray import HudiConfigError
from tests.support import TablePath

pytestmark = pytest.mark.usefixtures("ray_session")

TABLE = "sample_table/cow/v9_txns_simple_meta"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"batch_size": "x"}, r"batch_size must be an integer > 0, got 'x'"),
        ({"batch_size": 0}, r"batch_size must be an integer > 0, got 0"),
        ({"batch_size": True}, r"batch_size must be an integer > 0, got True"),
        ({"batch_size": 2.0}, r"batch_size must be an integer > 0, got 2\.0"),
        ({"prefetch_depth": "1"}, r"prefetch_depth must be an integer >= 0, got '1'"),
        ({"override_num_blocks": np.int64(-2)}, r"override_num_blocks must be an integer > 0, got (np\.int64\()?-2"),
        ({"planner": "missing"}, r"planner='missing'"),
        ({"prefetch_depth": -1}, r"prefetch_depth must be an integer >= 0, got -1"),
        ({"override_num_blocks": 0}, r"override_num_blocks must be an integer > 0, got 0"),
        ({"columns": "txn_id"}, r"columns must be a list of column names, got 'txn_id'"),
        ({"hudi_options": {"hoodie.read.input.partitions": "-3"}}, r"hoodie\.read\.input\.partitions must be >= 0"),
        ({"hudi_options": {"hoodie.read.input.partitions": "x"}}, r"'x' for config hoodie\.read\.input\.partitions"),
        ({"hudi_options": {"hoodie.metadata.enable": "maybe"}}, r"hoodie\.metadata\.enable .*'maybe'"),
        (
            {"query_type": "incremental", "start_timestamp": "20991231000000000", "end_timestamp": "20000101000000000"},
            r"hoodie\.read\.start\.timestamp='20991231000000000' is after",
        ),
    ],
)
def test_read_hudi_rejects_bad_arguments(table_path: TablePath, kwargs: dict, match: str) -> None:
    with pytest.raises(HudiConfigError, match=match):
        hudi_ray.read_hudi(str(table_path(TABLE)), **kwargs).materialize()


def test_read_hudi_takes_numpy_integers(table_path: TablePath) -> None:
    path = str(table_path(TABLE))
    expected = hudi_ray.read_hudi(path).count()
    ds = hudi_ray.read_hudi(
        path, batch_size=np.int64(2), prefetch_depth=np.int32(1), override_num_blocks=np.int64(2), prefetch=True
    )
    assert ds.count() == expected
