"""Footer stats for many files at once: ``footer_bounds`` holds for each
file's data, and ``may_match_each`` prunes exactly as ``may_match``."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import hudi_ray
from hudi_ray.core.base_file import footer_bounds
from hudi_ray.core.expr import ExprOperator, Filter
from hudi_ray.core.expr.stats import ColumnStats, StatsColumn, may_match, may_match_each
from tests.support import TablePath, all_table_names

PARQUET_TABLES = [n for n in all_table_names() if "lance" not in n]


def _assert_bounds_hold(files: list[Path], schema: pa.Schema) -> int:
    """Every bound ``footer_bounds`` gives holds for the file's data, null
    counts are exact;
    returns how many bounds were exactly the data's min and max."""
    mds = [pq.read_metadata(f) for f in files]
    bounds = footer_bounds(mds, schema)
    exact = 0
    for k, path in enumerate(files):
        data = pq.read_table(path)
        for name, col in bounds.items():
            assert col.mins.type == schema.field(name).type and col.maxs.type == schema.field(name).type
            lo, hi, nulls = col.mins[k].as_py(), col.maxs[k].as_py(), col.null_counts[k].as_py()
            if name not in data.column_names:
                assert lo is None and hi is None, f"{path}: absent column {name} is bounded"
                continue
            values = data[name].cast(schema.field(name).type)
            if nulls is not None:
                assert nulls == values.null_count, f"{path} column {name}"
            if lo is None or hi is None:
                continue
            actual = pc.min_max(values).as_py()
            assert lo <= actual["min"] and actual["max"] <= hi, f"{path} column {name}: {actual} outside ({lo}, {hi})"
            exact += (lo, hi) == (actual["min"], actual["max"])
    return exact


@pytest.mark.parametrize("name", PARQUET_TABLES)
def test_agrees_on_every_shared_base_file(table_path: TablePath, name: str) -> None:
    path = table_path(name)
    table = hudi_ray.HudiTable(str(path))
    files = sorted(p for p in path.rglob("*.parquet") if ".hoodie" not in p.parts)
    if not files:
        pytest.skip("no base files")
    assert _assert_bounds_hold(files, table.get_schema_with_meta_fields()) > 0


def test_agrees_over_row_groups_types_and_evolution(tmp_path: Path) -> None:
    utc = dt.timezone.utc
    rows = {
        "i": [5, 3, None, 9, None, None, 1, 7],
        "s": ["b", "a", "é", "z", None, None, "m", "c"],
        "f": [1.5, -2.0, None, 3.25, None, None, 0.0, 8.0],
        "ts": [dt.datetime(2024, 1, d, tzinfo=utc) if d else None for d in (3, 1, 0, 9, 0, 0, 2, 5)],
        "d": [Decimal("1.10"), Decimal("-3.25"), None, Decimal("9.99"), None, None, Decimal("0.00"), None],
        "day": [dt.date(2024, 2, d) for d in (3, 1, 4, 9, 2, 8, 5, 6)],
    }
    file_schema = pa.schema(
        [
            ("i", pa.int32()),  # read as int64: the table's schema evolved
            ("s", pa.string()),
            ("f", pa.float64()),
            ("ts", pa.timestamp("us", tz="UTC")),
            ("d", pa.decimal128(6, 2)),
            ("day", pa.date32()),
        ]
    )
    data = pa.table(rows, schema=file_schema)
    many, one = tmp_path / "many.parquet", tmp_path / "one.parquet"
    pq.write_table(data, many, row_group_size=2)  # row groups 3 and 4 hold nulls only in some columns
    pq.write_table(data.slice(4, 2), one)  # only nulls in most columns
    schema = file_schema.set(0, pa.field("i", pa.int64())).append(pa.field("absent", pa.string()))
    assert _assert_bounds_hold([many, one], schema) >= 7
    bounds = footer_bounds([pq.read_metadata(many)], schema)
    assert bounds["i"].mins.to_pylist() == [1] and bounds["i"].maxs.to_pylist() == [9]
    assert bounds["i"].null_counts.to_pylist() == [3] and bounds["i"].value_counts.to_pylist() == [8]
    assert bounds["s"].mins.to_pylist() == ["a"] and bounds["s"].maxs.to_pylist() == ["é"]
    assert bounds["absent"].mins.null_count == 1


def _random_column(rng: random.Random, dtype: pa.DataType, n: int) -> StatsColumn:
    def value() -> object:
        if pa.types.is_floating(dtype):
            return rng.choice([rng.uniform(-5, 5), float("nan"), float("inf"), -0.0, 1.0])
        if pa.types.is_string(dtype):
            return rng.choice(["", "a", "b", "ab", "z", "é", "10", "9"])
        return rng.randint(-5, 5)

    los, his = [], []
    for _ in range(n):
        a, b = value(), value()
        if rng.random() < 0.8 and a == a and b == b:  # mostly ordered bounds; NaN stays as drawn
            a, b = min(a, b), max(a, b)
        los.append(None if rng.random() < 0.1 else a)
        his.append(None if rng.random() < 0.1 else b)
    counts = [rng.randint(0, 4) for _ in range(n)]
    nulls = [None if rng.random() < 0.1 else rng.randint(0, c) for c in counts]
    return StatsColumn(
        pa.array(los, dtype), pa.array(his, dtype), pa.array(nulls, pa.int64()), pa.array(counts, pa.int64())
    )


@pytest.mark.parametrize("seed", range(40))
def test_vectorized_pruning_decides_as_the_scalar_rules(seed: int) -> None:
    rng = random.Random(seed)
    schema = pa.schema([("i", pa.int64()), ("f", pa.float64()), ("s", pa.string())])
    n = 30
    stats = {f.name: _random_column(rng, f.type, n) for f in schema if rng.random() < 0.9}
    pool = {
        "i": ["-6", "-1", "0", "3", "5", "6", "x"],
        "f": ["-1.5", "0", "nan", "inf", "4.9"],
        "s": ["", "a", "ab", "9", "zz"],
    }
    filters = []
    for _ in range(rng.randint(1, 3)):
        column = rng.choice(schema.names)
        op = rng.choice(list(ExprOperator))
        count = rng.randint(1, 3) if op in (ExprOperator.In, ExprOperator.NotIn) else 1
        filters.append(Filter(column, op, [rng.choice(pool[column]) for _ in range(count)]))
    got = may_match_each(filters, stats, schema)
    for k in range(n):
        one = {
            name: ColumnStats(
                col.mins[k] if col.mins[k].is_valid else None,
                col.maxs[k] if col.maxs[k].is_valid else None,
                col.null_counts[k].as_py(),
                col.value_counts[k].as_py(),
            )
            for name, col in stats.items()
        }
        assert bool(got[k]) == may_match(filters, one, schema), (filters, one)
