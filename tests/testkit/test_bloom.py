"""The test kit's bloom filters are Hudi's: byte for byte on Hudi's own golden filters, and
every key a written base file holds tests present in the reader's decoding of its footer."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray.core.bloom import DYNAMIC_V0, FOOTER_KEY, SIMPLE, TYPE_CODE_KEY, decode_bloom_filter
from hudi_testkit import BloomFilterSpec, CowTableSpec, CowTableWriter
from hudi_testkit.bloom import bloom_filter_text
from tests.core.bloom.test_filter import DYNAMIC_GOLDEN, SIMPLE_GOLDEN


def test_hudis_golden_filters_are_written_byte_for_byte() -> None:
    keys = [f"key-{i:03d}" for i in range(100)]
    assert bloom_filter_text(keys[:50], BloomFilterSpec(SIMPLE, 50, 0.001, 50)) == SIMPLE_GOLDEN
    # Three rows of 20 filled in turn, then the rest round the rows (the first twice).
    assert bloom_filter_text(keys, BloomFilterSpec(DYNAMIC_V0, 20, 0.001, 60)) == DYNAMIC_GOLDEN


def test_hudis_default_sizing() -> None:
    spec = BloomFilterSpec()
    assert (spec.filter_type, spec.bits, spec.hashes) == (DYNAMIC_V0, 2_587_966, 30)


@pytest.mark.parametrize("kind", [SIMPLE, DYNAMIC_V0])
def test_written_base_files_carry_filters_of_their_keys(tmp_path: Path, kind: str) -> None:
    # Keys of every length mod 4 and with multi-byte UTF-8 tails (Hadoop's Murmur sign-extends them).
    keys = [f"k{i}" + "é" * (i % 3) + "x" * (i % 5) for i in range(300)]
    schema = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("p", pa.string())])
    spec = CowTableSpec("t", "id", "p", None, table_version=6)
    writer = CowTableWriter.create(
        tmp_path / "t", spec, schema, rows_per_file=50, bloom_filter=BloomFilterSpec(kind, 100, 1e-6, 400)
    )
    writer.insert(pa.table({"id": keys, "p": ["a", "b", "c"] * 100}, schema=schema))
    files = sorted((tmp_path / "t").rglob("*.parquet"))
    assert len(files) == 6
    others = pa.array([f"absent-{i}" for i in range(2000)])
    for path in files:
        meta = pq.read_metadata(path).metadata
        assert (TYPE_CODE_KEY.encode() in meta) == (kind == DYNAMIC_V0)
        code = meta.get(TYPE_CODE_KEY.encode())
        bloom = decode_bloom_filter(meta[FOOTER_KEY.encode()], code.decode() if code else None, str(path))
        held = pq.read_table(path, columns=["_hoodie_record_key"]).column(0)
        assert bloom.might_contain(held.combine_chunks()).all()
        assert not bloom.might_contain(others).any()  # fpp 1e-6 per key: none of these
