"""The compiled walk of a Parquet footer to its key-value metadata (``footer_key_values``):
equal to pyarrow's parse on every real base file and on footers larger than one tail read;
on damaged bytes it answers None or a dict, and ``key_values_many`` then lets pyarrow
report the file."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray.core.base_file import ParquetReader
from hudi_ray.core.base_file.parquet import footer_key_values
from hudi_ray.core.exceptions import HudiCorruptFileError, HudiFileNotFoundError
from hudi_ray.core.storage import Storage
from tests.support import TablePath, all_table_names

PARQUET_TABLES = [n for n in all_table_names() if "lance" not in n]


def _as_bytes(kv: dict) -> dict[bytes, bytes]:
    return {bytes(k): bytes(v) for k, v in kv.items()}


@pytest.mark.parametrize("name", PARQUET_TABLES)
def test_every_real_base_file_walks_to_pyarrows_key_values(name: str, table_path: TablePath) -> None:
    # Every Parquet file, the metadata table's too.
    files = list(table_path(name).rglob("*.parquet"))
    if "empty" not in name:
        assert files
    for path in files:
        data = path.read_bytes()
        # The whole file and a tail that just holds the footer both walk.
        length = int.from_bytes(data[-8:-4], "little")
        expected = pq.read_metadata(path).metadata or {}
        for tail in (data, data[-(length + 8) :]):
            found = footer_key_values(tail)
            assert found is not None, path
            assert _as_bytes(found) == expected, path
        assert footer_key_values(data[-(length + 7) :]) is None  # a byte short of the footer


def _parquet(metadata: dict[bytes, bytes], rows: int = 50) -> bytes:
    table = pa.table({"k": [f"k{i}" for i in range(rows)], "v": list(range(rows))})
    table = table.replace_schema_metadata(metadata)
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=10)
    return sink.getvalue()


def test_a_footer_larger_than_the_first_tail_read_is_read_whole(tmp_path: Path) -> None:
    big = {b"org.apache.hudi.bloomfilter": b"A" * 500_000, b"small": b"x", b"empty": b""}
    (tmp_path / "big.parquet").write_bytes(_parquet(big))
    (tmp_path / "plain.parquet").write_bytes(_parquet({}))
    reader = ParquetReader(Storage(str(tmp_path)))
    sizes = [(tmp_path / n).stat().st_size for n in ("big.parquet", "plain.parquet")]
    got = reader.key_values_many(["big.parquet", "plain.parquet"], sizes)
    assert _as_bytes(got[0]) == {
        **big,
        b"ARROW:schema": pq.read_metadata(tmp_path / "big.parquet").metadata[b"ARROW:schema"],
    }
    assert b"org.apache.hudi.bloomfilter" not in got[1]


def test_damaged_footers_walk_to_none_or_a_dict_never_an_error() -> None:
    data = _parquet({b"org.apache.hudi.bloomfilter": b"QUJD" * 50, b"hoodie_min_record_key": b"k0"})
    length = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - length
    rng = random.Random(7)
    answered = 0
    for _ in range(3000):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(start, len(data) - 8)] = rng.randrange(256)
        found = footer_key_values(bytes(damaged))
        assert found is None or isinstance(found, dict)
        answered += found is not None
    # Most damage lands in values or lengths that still walk; some does not.
    assert 0 < answered < 3000


def test_a_file_the_walk_cannot_read_is_reported_by_name(tmp_path: Path) -> None:
    data = bytearray(_parquet({b"org.apache.hudi.bloomfilter": b"QUJD"}))
    length = int.from_bytes(data[-8:-4], "little")
    data[len(data) - 8 - length : len(data) - 8] = b"\xff" * length  # not a footer
    (tmp_path / "bad.parquet").write_bytes(bytes(data))
    reader = ParquetReader(Storage(str(tmp_path)))
    with pytest.raises(HudiCorruptFileError, match=r"bad\.parquet"):
        reader.key_values_many(["bad.parquet"], [len(data)])
    with pytest.raises(HudiFileNotFoundError, match=r"gone\.parquet"):
        reader.key_values_many(["gone.parquet"], [1000])
