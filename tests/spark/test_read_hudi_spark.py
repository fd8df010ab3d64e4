"""``read_hudi_spark`` on a RayDP session: Spark scans the base files that need no
merge, Ray reader tasks read the rest. The tests are ``tests/spark_scan_cases.py``'s,
collected here on this environment's session (every table on the plain Spark 4 session; on RayDP
the tables whose hand-off differs, ``HANDOFF_TABLES``)."""

from __future__ import annotations

import pytest

from hudi_ray.spark import java_version
from tests.spark_scan_cases import (  # noqa: F401 - collected here
    test_dates_before_the_gregorian_switch,
    test_every_slice_through_hudi_ray,
    test_files_unlike_the_schema,
    test_filters_on_every_plain_type,
    test_filters_with_nan_and_nulls,
    test_handoff_tables_equal_the_table_api,
    test_roots_hadoop_would_misread,
)

pytest.importorskip("raydp")
pytestmark = pytest.mark.skipif(java_version() is None, reason="Spark needs Java 17")
