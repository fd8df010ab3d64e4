"""The tables both Spark benchmarks read (RayDP's in ``spark_scan``, PySpark 4's
in ``spark4_scan``, which run in different environments), and what they compare."""

from __future__ import annotations

import argparse
from pathlib import Path

import cow_scan
import mor_scan

import hudi_ray

DEFAULT_DIR = Path(__file__).resolve().parent / ".data" / "spark_scan"


def prepare(kind: str, root: Path, rows: int, files: int) -> Path:
    """``cow_scan``'s table (``kind`` "cow") or ``mor_scan``'s ("mor") of ``rows`` rows under ``root``."""
    if kind == "cow":
        path = root / f"cow_{rows}"
        cow_scan.prepare(path, rows, files)
        return path
    args = argparse.Namespace(rows=rows, files=files, table_version=6, update_fraction=mor_scan.UPDATE_FRACTION)
    path, _ = mor_scan.prepare(root / f"mor_{rows}", args)
    return path


def snapshot_base_files(path: Path) -> list[str]:
    """The base files of the latest snapshot: what ``spark.read.parquet`` reads for comparison."""
    table = hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build()
    return [str(path / s.base_file_relative_path()) for s in table.get_file_slices() if s.base_file_name]


def table_rows(path: Path) -> int:
    return sum(b.num_rows for b in hudi_ray.HudiTableBuilder.from_base_uri(str(path)).build().read())
