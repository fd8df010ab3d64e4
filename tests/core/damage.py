"""Helpers of the bad-input tests that more than one concept folder uses: the shared
tables whose copies they damage, edits of commit metadata and log files, builds of a
damaged table and a bound on what a read may allocate."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import fastavro
import pytest

import hudi_ray
from hudi_ray import HudiReadOptions, HudiTable, HudiTableBuilder

TABLE = "sample_table/cow/v9_txns_simple_meta"
V6_TABLE = "sample_table/cow/v6_simplekeygen_nonhivestyle"
OVERWRITE_TABLE = "sample_table/cow/v9_txns_simple_overwrite"
MOR_TABLE = "sample_table/mor/avro/v9_txns_simple_meta"
TRIPS_MOR = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"

# JSON commits (layout 1) whose writer schema nests a record ``child_struct`` in ``structField``.
V6 = "sample_table/cow/v6_nonpartitioned"
V6_LATEST = "20240418173551906"
# Avro commits (layout 2) and Parquet base files with string and decimal columns.
V9 = "sample_table/cow/v9_txns_simple_meta"
V9_LATEST = "20260307162456179"


# -- building and reading a damaged table ------------------------------------------------------


def row_count(table: hudi_ray.HudiTable, options: HudiReadOptions | None = None) -> int:
    return sum(b.num_rows for b in table.read(options))


def builds(path: Path) -> list[hudi_ray.HudiTable]:
    """The table planned from its metadata table (when it has one) and from storage listing."""
    return [
        HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", enable).build()
        for enable in ("true", "false")
    ]


def listing(path: Path) -> hudi_ray.HudiTable:
    return HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "false").build()


def build(path: Path, metadata_table: str = "true") -> HudiTable:
    return HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", metadata_table).build()


def incremental(start: str = "0") -> HudiReadOptions:
    return HudiReadOptions().with_query_type(hudi_ray.HudiQueryType.Incremental).with_start_timestamp(start)


def fails_on_schema_and_read(path: Path, error: type[Exception], match: str) -> None:
    table = build(path)
    with pytest.raises(error, match=match):
        table.get_schema()
    with pytest.raises(error, match=match):
        table.read()


@contextmanager
def allocates_at_most(limit: int) -> Iterator[None]:
    """Fails the test when the block allocates ``limit`` bytes or more, whether or not it raises."""
    tracemalloc.start()
    try:
        yield
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < limit, f"allocated {peak} bytes"


# -- damaging a copy of a table ------------------------------------------------------------------


def rewrite_avro_commit(commit: Path, change) -> None:
    """Re-encode a layout-2 commit file after ``change`` edits its record."""
    with commit.open("rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        records = list(reader)
    change(records[0])
    with commit.open("wb") as f:
        fastavro.writer(f, schema, records)


def edit_json_commit(path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    commit = path / ".hoodie" / f"{V6_LATEST}.commit"
    meta = json.loads(commit.read_text())
    change(meta)
    commit.write_text(json.dumps(meta))
    return commit


def damage_trips_log(path: Path, old: bytes, new: bytes) -> Path:
    """Replace the one occurrence of ``old`` in a log file of the trips table's copy."""
    log_file = next((path / "city=sao_paulo").glob(".*_20251220210130911.log.*"))
    raw = log_file.read_bytes()
    assert raw.count(old) == 1
    log_file.write_bytes(raw.replace(old, new))
    return log_file
