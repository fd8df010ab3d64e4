"""Damaged Parquet base files: a truncated file, or column names in its footer that are not
UTF-8, fail naming the file; damage confined to a column chunk's path or a string bound
only loses that bound (the file is kept, its bounds unknown, and read)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray import HudiCorruptFileError, HudiReadOptions, HudiTableBuilder
from hudi_ray.core.base_file import ParquetReader, footer_bounds
from hudi_ray.core.storage import Storage
from tests.core.damage import TABLE, V9, V9_LATEST, build
from tests.support import row_set


def test_truncated_parquet_base_file(copy_of) -> None:
    path = copy_of(TABLE)
    victim = next((path / "region=us").glob("*_20260307162456179.parquet"))
    victim.write_bytes(victim.read_bytes()[:1000])
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    with pytest.raises(HudiCorruptFileError, match=victim.name):
        table.read()
    with pytest.raises(HudiCorruptFileError, match=victim.name):
        list(table.read_stream())


def test_parquet_column_name_that_is_not_utf8(tmp_path: Path) -> None:
    buf = io.BytesIO()
    pq.write_table(pa.table({"txn_id": ["a", "b"], "n": [1, 2]}), buf)
    (tmp_path / "f.parquet").write_bytes(buf.getvalue().replace(b"txn_id", b"txn_\xff\xfe"))
    reader = ParquetReader(Storage(str(tmp_path), {}))
    with pytest.raises(HudiCorruptFileError, match=r"f\.parquet.*not UTF-8"):
        reader.read("f.parquet")


# -- text in the footer that is not UTF-8 ----------------------------------------------------------


def _footer_start(raw: bytes) -> int:
    return len(raw) - 8 - int.from_bytes(raw[-8:-4], "little")


def _victim(path: Path) -> Path:
    return next((path / "region=us").glob(f"*_{V9_LATEST}.parquet"))


def _damage_footer(parquet: Path, text: bytes, which: list[int] | None = None) -> None:
    """Set the first byte of occurrences of ``text`` in the footer (all, or the
    ``which``-th ones) to 0xff: lengths stay, the text is no longer UTF-8."""
    raw = bytearray(parquet.read_bytes())
    found = [m.start() for m in re.finditer(re.escape(text), raw[_footer_start(raw) :])]
    assert found
    for i in which if which is not None else range(len(found)):
        raw[_footer_start(raw) + found[i]] = 0xFF
    parquet.write_bytes(bytes(raw))


def _filtered(column: str, op: str, value: str) -> HudiReadOptions:
    return HudiReadOptions().with_filters([(column, op, value)])


@pytest.mark.parametrize("metadata_table", ["true", "false"])
def test_column_path_not_utf8_in_parquet_footer(copy_of, metadata_table: str) -> None:
    """Without the metadata table, footer stats prune the filtered read; the
    damaged file is kept (its bounds unknown) and its read names it."""
    path = copy_of(V9)
    victim = _victim(path)
    _damage_footer(victim, b"amount")
    with pytest.raises(HudiCorruptFileError, match=rf"{re.escape(victim.name)}.*not UTF-8"):
        build(path, metadata_table).read(_filtered("amount", ">", "10"))


def test_column_chunk_path_not_utf8_reads_like_undamaged(copy_of) -> None:
    """Only a column chunk's own path damaged, the schema intact: pyarrow reads
    columns by the schema, so the file reads as before (as hudi-rs reads it);
    the footer bounds nothing of it, and files after it keep their bounds."""
    path = copy_of(V9)
    options = _filtered("txn_id", "<", "TXN-010")
    expected = row_set(build(path, "false").read(options))
    victim = _victim(path)
    healthy = pq.read_metadata(victim)
    _damage_footer(victim, b"txn_id", which=[1])  # the first occurrence is the schema's
    damaged = pq.read_metadata(victim)
    j = damaged.schema.names.index("txn_id")  # the schema still decodes
    with pytest.raises(UnicodeDecodeError):
        _ = damaged.row_group(0).column(j).path_in_schema
    schema = pa.schema([pa.field("txn_id", pa.string())])
    bounds = footer_bounds([damaged, healthy], schema)["txn_id"]
    assert bounds.mins.to_pylist() == [None, "TXN-017"]
    assert bounds.maxs.to_pylist() == [None, "TXN-017"]
    assert row_set(build(path, "false").read(options)) == expected


def test_string_bound_not_utf8_in_parquet_footer(copy_of) -> None:
    """A damaged bound is unknown, not an error: the file is read and filtered by its data."""
    path = copy_of(V9)
    options = _filtered("merchant_name", "=", "Apple Store")
    expected = row_set(build(path, "false").read(options))
    assert expected
    victim = _victim(path)
    _damage_footer(victim, b"Apple Store")  # the column chunk's min and max
    md = pq.read_metadata(victim)
    stats = md.row_group(0).column(md.schema.names.index("merchant_name")).statistics
    with pytest.raises(UnicodeDecodeError):
        _ = stats.min
    assert row_set(build(path, "false").read(options)) == expected
