"""The merge-on-read fast paths end to end, on tables the testkit writes.

Winners are decided on a narrow key + ordering table, delete-block ordering
values are cast in one call, flat Avro blocks decode column by column and
nested ones fall back to fastavro. Each read here must equal the plain-Python
model of Hudi's merge rules that the writer tests keep (``Model``: event time
ordering as in Java's ``BufferedRecordMergerFactory``), and hudi-rs:

* base files whose record keys are sorted, reversed or shuffled;
* projections without the ordering field and/or the record key, where the
  ordering field still decides (updates with a lower value must lose);
* delete blocks ordered by long, double and string values, including deletes
  with a lower value than the stored record (those do not delete, as in Hudi);
* nested columns (struct, array, map) in Avro log blocks.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import hudi_ray
from hudi_ray import HudiReadOptions
from hudi_ray.core.base_file.parquet import _dictionary_columns
from hudi_ray.core.log_file import BlockType, LogBlock, read_log_blocks
from hudi_ray.core.log_file.avro_decode import decoder_for
from hudi_ray.core.log_file.content import decode_avro_block
from hudi_ray.core.schema.avro import avro_to_arrow_schema
from hudi_testkit import EVENT_TIME_ORDERING, MorTableWriter
from tests.support import assert_same_as_hudi_rs, row_set, table_pair, to_table
from tests.testkit.test_mor_writer import Model, assert_reads, expected_rows, modeled, read

EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
LONG = pa.int64()


def _rows(
    ids: Sequence[int], tag: str, orders: Sequence[Any], ts_type: pa.DataType = LONG, nested: str | None = None
) -> pa.Table:
    """Rows for ``ids``: ``tag`` marks which write a row came from, ``orders`` is the ordering field."""
    fields = [pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()), pa.field("ts", ts_type)]
    columns: dict[str, list[Any]] = {"id": list(ids), "name": [f"{tag}-{i}" for i in ids], "ts": list(orders)}
    if nested is not None:
        fields.append(pa.field("n", NESTED[nested]))
        columns["n"] = [_nested_value(nested, i, tag) for i in ids]
    return pa.table(columns, schema=pa.schema(fields))


class _Table:
    """A non-partitioned event-time MOR table and its model, written step by step."""

    def __init__(self, path: Path, first: pa.Table, version: int = 9, **options: Any) -> None:
        self.path = path
        self.writer = MorTableWriter.create(
            path,
            first,
            table_name="t",
            record_key="id",
            precombine_field="ts",
            table_version=version,
            merge_mode=EVENT_TIME_ORDERING,
            **options,
        )
        self.model = Model(EVENT_TIME_ORDERING, partitioned=False)
        self.model.upsert(first, self.writer.commits[0].instant_time)

    def upsert(self, batch: pa.Table) -> None:
        self.model.upsert(batch, self.writer.upsert(batch).instant_time)

    def delete(self, ids: Sequence[int], ordering: Sequence[Any] | None = None) -> None:
        self.writer.delete(pa.array(ids, pa.int64()), ordering=ordering)
        self.model.delete(ids, ordering)

    def by_id(self, hudi_rs: bool = True) -> dict[int, dict[str, Any]]:
        """The merged read, checked against the model (and hudi-rs), by id."""
        if hudi_rs:
            ours = assert_reads(self.path, self.model.rows())
        else:
            ours = read(hudi_ray, self.path)
            assert modeled(ours) == expected_rows(self.model.rows(), ours)
        return {r["id"]: r for r in ours.to_pylist()}


# -- 1. base files with sorted, reversed and shuffled keys ------------------------------------------


@pytest.mark.parametrize("block_format", ["avro", "parquet"])
@pytest.mark.parametrize("order", ["sorted", "reversed", "shuffled"])
def test_base_key_order_does_not_change_the_merge(tmp_path: Path, order: str, block_format: str) -> None:
    rng = random.Random(f"{order}/{block_format}")
    ids = list(range(100, 160))  # three digits: the string record keys sort as the ids do
    if order == "reversed":
        ids.reverse()
    elif order == "shuffled":
        rng.shuffle(ids)
    first = _rows(ids, "a", [rng.randint(0, 3) for _ in ids])
    t = _Table(tmp_path / "t", first, rows_per_file=15, records_per_block=7, block_format=block_format)
    for f in (tmp_path / "t").glob("*.parquet"):  # the layout under test: keys as written, per file
        keys = pq.read_table(f, columns=["_hoodie_record_key"]).column(0).to_pylist()
        assert (keys == sorted(keys), keys == sorted(keys, reverse=True)) == (order == "sorted", order == "reversed")
    touched = ids[:45]  # the last file group stays base-only, read next to merged slices
    for step in range(6):
        chosen = [i for i in touched if rng.random() < (0.2 if step == 3 else 0.5)]  # in base file order
        if step == 2:  # ordering values from 1: see test_long_delete_ordering_value_zero_is_a_value
            t.delete(chosen, [rng.randint(1, 4) for _ in chosen])
        elif step == 3:
            # Commit-time deletes in a block of their own: hudi-rs rejects blocks mixing them
            # (IntWrapper 0) with LongWrapper values ("Delete block mixes ordering types"); Hudi reads both.
            t.delete(chosen)
        else:
            t.upsert(_rows(chosen, f"u{step}", [rng.randint(0, 4) for _ in chosen]))
    rows = t.by_id()
    # The seed exercises every rule: deletes, updates that won and updates that lost to the base row.
    assert 20 < len(rows) < len(ids)
    updated = {k for k, log in t.model.logs.items() if any(e.kind == "rec" for e in log)}
    assert any(rows[k]["name"].startswith("u") for k in updated & rows.keys())
    assert any(rows[k]["name"].startswith("a-") for k in updated & rows.keys())


# -- 2. projections that leave out the ordering field or the record key ------------------------------


@pytest.fixture(scope="module", params=["avro", "parquet"])
def projected_table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("proj") / "t"
    t = _Table(path, _rows(range(20), "a", [5] * 20), rows_per_file=8, block_format=request.param)
    t.upsert(_rows(range(10), "hi", [7] * 10))
    t.upsert(_rows(range(5, 15), "lo", [3] * 10))  # lower: loses to "hi" (5..9) and to the base (10..14)
    t.delete([15, 16], [4, 6])  # 15's delete is older than its row: 15 stays
    names = {k: r["name"] for k, r in t.by_id().items()}
    assert names == {i: f"{'hi' if i < 10 else 'a'}-{i}" for i in range(20) if i != 16}
    return path


@pytest.mark.parametrize(
    ("columns", "filters"),
    [
        (["name"], None),  # neither key nor ordering field
        (["id", "name"], None),  # no ordering field
        (["ts", "name"], None),  # no record key at all
        (["_hoodie_record_key", "name"], None),  # the meta key only
        (["name", "_hoodie_commit_time"], None),
        (["name"], [("ts", ">=", "5")]),  # filtered on the merged ordering value, which is not returned
    ],
)
def test_projection_equals_the_full_merge_projected(
    projected_table: Path, columns: list[str], filters: list[tuple[str, str, str]] | None
) -> None:
    ours, theirs = table_pair(str(projected_table))
    full = to_table(ours.read())
    if filters:
        full = full.filter(pc.field("ts") >= 5)
    options = HudiReadOptions(filters=filters).with_projection(columns)
    got = to_table(ours.read(options))
    assert got.column_names == columns
    assert row_set(got) == row_set(full.select(columns))
    streamed = to_table(list(ours.read_stream(options.with_batch_size(3))))
    assert row_set(streamed) == row_set(got)
    assert assert_same_as_hudi_rs(ours, theirs, projection=columns, filters=filters) == full.num_rows


# -- 3. delete blocks ordered by long, double and string values --------------------------------------

# Eight ordering values per type, ascending in Hudi's (Java's compareTo) order;
# the strings compare by characters, not as numbers ("10" < "9").
LEVELS: dict[str, tuple[pa.DataType, list[Any]]] = {
    "long": (pa.int64(), [-(2**63), -5, -1, 1, 2**31, 2**40, 2**62, 2**63 - 1]),  # 0: see below
    "double": (pa.float64(), [float("-inf"), -1e300, -2.5, 0.25, 1.0, 1.5, 1e300, float("inf")]),
    "string": (pa.string(), ["10", "9", "A", "Z", "a", "aa", "ab", "b"]),
}


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("kind", sorted(LEVELS))
def test_delete_ordering_values_of_each_type(tmp_path: Path, kind: str, version: int) -> None:
    ts_type, level = LEVELS[kind]
    assert level == sorted(level) and len(set(level)) == len(level)
    t = _Table(tmp_path / "t", _rows(range(9), "a", [level[3]] * 9, ts_type), version=version)
    t.upsert(_rows([3, 4], "u", [level[6], level[1]], ts_type))  # 4's update is older than its base row
    # Per key: lower, equal, higher than the base; lower than 3's newer update; higher than
    # 4's update but lower than its base; the lowest value; the highest value.
    t.delete([0, 1, 2, 3, 4, 6, 7], [level[2], level[3], level[5], level[4], level[2], level[0], level[7]])
    t.delete([5])  # commit-time: a block of its own, as hudi-rs rejects blocks mixing wrapper types
    rows = t.by_id()
    # A delete wins on an equal or greater ordering value (or without one); otherwise the stored row stays.
    assert sorted(rows) == [0, 3, 4, 6, 8]
    assert {k: (r["name"], r["ts"]) for k, r in rows.items()} == {
        0: ("a-0", level[3]),
        3: ("u-3", level[6]),
        4: ("a-4", level[3]),
        6: ("a-6", level[3]),
        8: ("a-8", level[3]),
    }
    assert pa.Table.from_pylist(list(rows.values())).schema.field("ts").type == ts_type


def test_long_delete_ordering_value_zero_is_a_value(tmp_path: Path) -> None:
    """Only an Integer 0 (IntWrapper, the writers' default) marks a delete without an ordering
    value: Hudi's ``OrderingValues.isDefault`` is ``DEFAULT_VALUE.equals(v)`` (0.x:
    ``deleteOrderingVal.equals(0)``), and Integer 0 never equals Long 0. A LongWrapper(0) is an
    ordering value like any other, here lower than the stored rows': the deletes lose. hudi-rs agrees."""
    t = _Table(tmp_path / "t", _rows([1, 2, 3], "a", [3, 3, 3]))
    t.upsert(_rows([3], "u", [5]))
    t.delete([1, 3], [0, 0])
    t.upsert(_rows([3], "v", [4]))  # older than "u", which the losing delete left in place
    assert {k: r["name"] for k, r in t.by_id().items()} == {1: "a-1", 2: "a-2", 3: "u-3"}


# -- 4. nested columns: the compiled Avro decoder leaves them to fastavro ------------------------------

NESTED: dict[str, pa.DataType] = {
    "struct": pa.struct([pa.field("x", pa.int32()), pa.field("tag", pa.string())]),
    "array": pa.list_(pa.int64()),
    "map": pa.map_(pa.string(), pa.float64()),
    "array_of_struct": pa.list_(pa.struct([pa.field("k", pa.string()), pa.field("v", pa.float64())])),
    # A logical type inside a record: fastavro converts it, as it does every nested value.
    "struct_timestamp": pa.struct([pa.field("at", pa.timestamp("us", tz="UTC")), pa.field("n", pa.int64())]),
}


def _nested_value(kind: str, i: int, tag: str) -> Any:
    salt = sum(map(ord, tag))
    if (i + salt) % 5 == 0:
        return None
    if kind == "struct":
        return {"x": i * salt, "tag": None if i % 3 == 0 else f"{tag}{i}"}
    if kind == "array":
        return [i, -salt, 2**40 + i][: (i + salt) % 4]
    if kind == "map":
        return [(f"{tag}{j}", i / (j + 1)) for j in range((i + salt) % 3)]
    if kind == "array_of_struct":
        return [{"k": f"{tag}{j}", "v": None if j == 1 else i + j / 4} for j in range((i + salt) % 3)]
    return {"at": EPOCH + dt.timedelta(seconds=i * salt, microseconds=i), "n": None if i % 2 else i}


def _fastavro_table(block: LogBlock) -> pa.Table:
    """The block's records decoded by fastavro alone, one record at a time."""
    assert block.schema is not None
    schema = json.loads(block.schema)
    parsed = fastavro.parse_schema(schema)
    content = bytes(block.content)
    _, count = struct.unpack_from(">ii", content, 0)
    pos, rows = 8, []
    for _ in range(count):
        (length,) = struct.unpack_from(">i", content, pos)
        rows.append(fastavro.schemaless_reader(io.BytesIO(content[pos + 4 : pos + 4 + length]), parsed, None))
        pos += 4 + length
    return pa.Table.from_pylist(rows, schema=avro_to_arrow_schema(schema))


@pytest.mark.parametrize("kind", list(NESTED))
def test_nested_log_records(tmp_path: Path, kind: str) -> None:
    t = _Table(tmp_path / "t", _rows(range(12), "a", [5] * 12, nested=kind), rows_per_file=5, records_per_block=3)
    t.upsert(_rows(range(8), "b", [6] * 8, nested=kind))
    t.upsert(_rows(range(4, 10), "c", [4] * 6, nested=kind))  # older: loses everywhere
    t.delete([10, 11], [6, 2])
    # hudi-rs cannot read a timestamp inside a struct here ("Timestamp(µs, "+00:00") cannot be
    # re-tagged as Timestamp(µs, "UTC")"): only the model judges that case.
    rows = t.by_id(hudi_rs=kind != "struct_timestamp")
    assert sorted(rows) == [i for i in range(12) if i != 10]
    for i, r in rows.items():
        tag = "b" if i < 8 else "a"
        assert r["name"] == f"{tag}-{i}"
        assert r["n"] == _rows([i], tag, [0], nested=kind).column("n").to_pylist()[0]

    blocks = [
        b
        for log in t.path.rglob(".*.log.*")
        for b in read_log_blocks(log.read_bytes(), str(log))
        if b.block_type is BlockType.AVRO_DATA
    ]
    assert len(blocks) >= 5  # 8 + 6 records, 3 to a block, over the file groups
    for block in blocks:
        assert block.schema is not None
        decoder = decoder_for(block.schema)
        assert decoder.fallback_columns == ("n",)  # the fallback is what is under test
        got = decode_avro_block(block)
        expected = _fastavro_table(block)
        assert got.schema.equals(expected.schema)
        assert got.equals(expected)


# -- 5. base files whose text columns are read as dictionaries ---------------------------------------


def test_dictionary_text_columns_of_a_large_base_file(tmp_path: Path) -> None:
    """A base file large enough that its small-dictionary text columns (commit
    time, file name, and here the ordering field) are read as dictionaries: the
    merge keeps the carried ones encoded until the replaced rows are dropped,
    and compares the ordering field's values, not its dictionary codes."""
    n = 132_000  # with the meta fields, 8 columns: past the threaded-decode size of 2**20 values
    rng = random.Random("dictionary")
    t = _Table(tmp_path / "t", _rows(range(n), "a", [rng.choice("bd") for _ in range(n)], pa.string()))
    (base,) = (tmp_path / "t").glob("*.parquet")
    assert {"ts", "_hoodie_commit_time", "_hoodie_file_name"} <= set(_dictionary_columns(pq.ParquetFile(base)))
    updated = rng.sample(range(n), n // 5)
    # "c" beats a base row's "b" and loses to its "d".
    t.upsert(_rows(updated, "u", ["c"] * len(updated), pa.string()))
    t.delete(rng.sample(range(n), n // 100), ["z"] * (n // 100))
    rows = t.by_id()
    won = [k for k in updated if k in rows and rows[k]["name"].startswith("u")]
    lost = [k for k in updated if k in rows and rows[k]["name"].startswith("a")]
    assert won and lost and len(rows) < n
    assert all(rows[k]["ts"] == "c" for k in won) and all(rows[k]["ts"] == "d" for k in lost)


# -- 6. base files the log replaces whole -----------------------------------------------------------


def test_base_columns_are_read_only_for_rows_that_stay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge decides on the base file's keys and ordering values. With
    fewer log records than base rows some row stays, and the file is read
    whole at once; else its other columns are read only when some of its rows
    stay. Three file groups: every row replaced or deleted, some rows
    replaced, every update losing."""
    ids = list(range(100, 130))
    t = _Table(tmp_path / "t", _rows(ids, "a", [5] * len(ids)), rows_per_file=10)
    groups = [ids[:10], ids[10:20], ids[20:]]
    t.upsert(_rows(groups[0][:7] + groups[1][:4] + groups[2], "u", [6] * 11 + [4] * 10))
    t.delete(groups[0][7:], [9] * 3)

    reads: list[tuple[str, tuple[str, ...]]] = []
    parquet_read = hudi_ray.core.base_file.parquet.ParquetReader.read

    def spy(self: Any, rel: str, columns: Sequence[str] | None = None, **kw: Any) -> pa.Table:
        data = parquet_read(self, rel, columns, **kw)
        reads.append((rel, tuple(data.column_names)))
        return data

    monkeypatch.setattr(hudi_ray.core.base_file.parquet.ParquetReader, "read", spy)
    rows = t.by_id()
    assert {k for k, r in rows.items() if r["name"].startswith("u")} == set(groups[0][:7] + groups[1][:4])
    assert {k for k, r in rows.items() if r["name"].startswith("a")} == set(groups[1][4:] + groups[2])
    assert len(rows) == 27

    def file_of(group: list[int]) -> str:
        (name,) = {rows[k]["_hoodie_file_name"] for k in group if rows[k]["name"].startswith("a")}
        return name

    kept = [file_of(groups[1]), file_of(groups[2])]
    second, third = ([cols for rel, cols in reads if rel.endswith(name)] for name in kept)
    everything = tuple(rows[100])
    decided_on = ("_hoodie_record_key", "id", "ts")  # the record key, its field and the ordering field
    # Group 2: 4 log records for 10 rows, so rows stay: one read of every column.
    assert second == [everything]
    # Group 3: as many log records as rows (all losing): the other columns are read after the decision.
    assert third[0] == decided_on and len(third) == 2 and set(third[0]) | set(third[1]) == set(everything)
    # Group 1 keeps none: only its keys and ordering values were read.
    replaced = [cols for rel, cols in reads if not any(rel.endswith(name) for name in kept)]
    assert replaced == [decided_on]
