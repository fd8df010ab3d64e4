"""The record keys a log file's data blocks hold: the keys a file slice's logs may add to
its base file's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hudi_ray.core.exceptions import HudiCorruptFileError, HudiUnsupportedError
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file.block import BlockType
from hudi_ray.core.log_file.content import decode_avro_block, decode_parquet_block
from hudi_ray.core.log_file.reader import read_log_blocks
from hudi_ray.core.schema.avro import RECORD_KEY

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

# Blocks holding no record a read returns: corrupt ones are skipped as Hudi skips them.
_NO_RECORDS = frozenset({BlockType.COMMAND, BlockType.DELETE, BlockType.CORRUPT, BlockType.CDC_DATA})


def data_block_keys(data: bytes, where: str, key_field: str = RECORD_KEY) -> pa.Array:
    """The keys of the records of every data block in one log file, of any instant (a
    read sees some of them, never others). A data block without the key column is
    ``HudiCorruptFileError``; one of a format read here only for the metadata table
    (HFile) is ``HudiUnsupportedError``."""
    found: list[pa.Array] = []
    for block in read_log_blocks(data, where):
        if block.block_type in _NO_RECORDS:
            continue
        if block.block_type is BlockType.AVRO_DATA:
            table = decode_avro_block(block, [key_field])
        elif block.block_type is BlockType.PARQUET_DATA:
            table = decode_parquet_block(block, [key_field])
        else:
            raise HudiUnsupportedError(f"Record keys of {block.where()} ({block.block_type.name}) are not read")
        if key_field not in table.column_names:
            raise HudiCorruptFileError(f"{block.where()} holds records without {key_field}")
        found.append(table[key_field].combine_chunks().cast(pa.large_string()))
    return pa.concat_arrays(found) if found else pa.array([], pa.large_string())
