"""Small tables that receive commits one at a time, for the incremental tests
(core ranges, the Ray incremental job, the Spark 4 stream), and the reads
they are checked against."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hudi_ray.core.table import HudiReadOptions, HudiTable, HudiTableBuilder
from hudi_testkit import CowTableWriter, MorTableWriter, write_cow_table, write_mor_table


def rows(ids: range | list[int], value: int) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "value": pa.array([value] * len(ids), pa.int64()),
            "region": pa.array([f"r{i % 3}" for i in ids]),
        }
    )


class CommitLog:
    """A COW or MOR table (partitioned by ``region`` or not) written commit by commit."""

    def __init__(self, path: Path, kind: str, partitioned: bool, version: int = 8) -> None:
        self.path = path
        self.kind = kind
        self.partitioned = partitioned
        self.version = version
        self.commits: list[str] = []
        self._value = 0

    def commit(self, ids: range | list[int]) -> str:
        """Upsert ``ids`` with a new value; returns the commit's instant time."""
        self._value += 1
        data = rows(ids, self._value)
        part = "region" if self.partitioned else None
        if not self.commits:
            write = write_mor_table if self.kind == "mor" else write_cow_table
            result = write(
                self.path,
                data,
                table_name="incr",
                record_key="id",
                partition_field=part,
                table_version=self.version,
                rows_per_file=40,
            )
        elif self.kind == "mor":
            result = MorTableWriter.open(self.path, rows_per_file=40).upsert(data)
        else:
            result = CowTableWriter.open(self.path, rows_per_file=40).upsert(data)
        self.commits.append(result.instant_time)
        return result.instant_time

    def table(self) -> HudiTable:
        return HudiTableBuilder.from_base_uri(str(self.path)).build()


def incremental(table: HudiTable, start: str, end: str, **hudi: str) -> pa.Table:
    """The core's incremental query over ``(start, end]``."""
    options = HudiReadOptions(
        hudi_options={
            "hoodie.read.query.type": "incremental",
            "hoodie.read.start.timestamp": start,
            "hoodie.read.end.timestamp": end,
            **hudi,
        }
    )
    return to_table(table, table.read(options))


def snapshot(table: HudiTable) -> pa.Table:
    return to_table(table, table.read())


def to_table(table: HudiTable, batches: list[pa.RecordBatch]) -> pa.Table:
    return pa.Table.from_batches(batches) if batches else table.get_read_schema().empty_table()


def keyed(data: pa.Table, columns: tuple[str, ...] = ("_hoodie_commit_time", "id", "value")) -> list[tuple]:
    """Rows as sorted tuples of ``columns``: equality row for row."""
    cols = [data.column(c).to_pylist() for c in columns]
    return sorted(zip(*cols))


def latest_per_key(data: pa.Table) -> list[tuple]:
    """(id, value) of each key's newest row by commit time."""
    newest: dict[int, tuple[str, int]] = {}
    for commit, key, value in zip(
        data.column("_hoodie_commit_time").to_pylist(), data.column("id").to_pylist(), data.column("value").to_pylist()
    ):
        if key not in newest or commit > newest[key][0]:
            newest[key] = (commit, value)
    return sorted((k, v) for k, (_, v) in newest.items())
