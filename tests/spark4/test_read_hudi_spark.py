"""``read_hudi_spark`` on a plain PySpark 4 session, without Ray: Spark scans the base
files that need no merge, Spark's Python workers read the rest with hudi-ray. The tests
are ``tests/spark_scan_cases.py``'s, collected here on this environment's session."""

from __future__ import annotations

import subprocess
import sys

from tests.spark_scan_cases import (  # noqa: F401 - collected here
    test_dates_before_the_gregorian_switch,
    test_every_slice_through_hudi_ray,
    test_every_table_equals_the_table_api,
    test_files_unlike_the_schema,
    test_filters_on_every_plain_type,
    test_filters_with_nan_and_nulls,
    test_roots_hadoop_would_misread,
)
from tests.support import REPO


def test_imports_without_ray() -> None:
    """This environment has no Ray: the import that failed with "needs ray" works."""
    code = "import hudi_ray.spark, sys; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
