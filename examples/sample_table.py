"""A small trips table written by the project's own Hudi writer, shared by the examples."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

from hudi_testkit import upsert_cow_table, write_cow_table

CITIES = ["san_francisco", "sao_paulo", "chennai"]


def trips(n: int, start: int = 0, fare_bump: str = "0") -> pa.Table:
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    ids = list(range(start, start + n))
    return pa.table(
        {
            "trip_id": pa.array(ids, pa.int64()),
            "rider": [f"rider-{i % 7}" for i in ids],
            "city": [CITIES[i % len(CITIES)] for i in ids],
            "fare": pa.array([Decimal(f"{10 + i % 40}.50") + Decimal(fare_bump) for i in ids], pa.decimal128(10, 2)),
            "ts": pa.array([base + dt.timedelta(minutes=i) for i in ids], pa.timestamp("us", tz="UTC")),
        }
    )


def write_sample_table(path: Path, rows: int = 30) -> Path:
    """Two commits: an insert of ``rows`` trips, then an update of the first five."""
    if (path / ".hoodie").exists():
        return path
    path.mkdir(parents=True, exist_ok=True)
    write_cow_table(
        str(path),
        trips(rows),
        table_name="trips",
        record_key="trip_id",
        partition_field="city",
        precombine_field="ts",
        table_version=9,
        rows_per_file=10,
        metadata_table=True,
    )
    upsert_cow_table(str(path), trips(5, fare_bump="100"))
    return path
