"""Decode log block content into Arrow: Avro and Parquet data blocks, delete blocks."""

from __future__ import annotations

import io
import struct
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from hudi_ray.core.exceptions import HudiCorruptFileError, HudiMissingExtraError, HudiSchemaError, HudiUnsupportedError
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file.avro_decode import BlockDecoder, decoder_for
from hudi_ray.core.log_file.block import BlockType, LogBlock
from hudi_ray.core.log_file.delete_columnar import DeleteColumns, decode_delete_columns
from hudi_ray.core.schema.avro import avro_to_arrow_schema, parse_avro_schema

if TYPE_CHECKING:
    import fastavro
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
else:
    fastavro = lazy_module("fastavro")
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")
    pq = lazy_module("pyarrow.parquet")

_I32 = struct.Struct(">i")

# HoodieDeleteRecordList (block content version 3). Each ordering value is a
# one-field wrapper record, which encodes exactly like its bare value.
_WRAPPERS = [
    ("BooleanWrapper", "boolean"),
    ("IntWrapper", "int"),
    ("LongWrapper", "long"),
    ("FloatWrapper", "float"),
    ("DoubleWrapper", "double"),
    ("BytesWrapper", "bytes"),
    ("StringWrapper", "string"),
    ("DateWrapper", "int"),
    ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    ("TimestampMicrosWrapper", "long"),
]


def _delete_record_list_schema(value_field: Callable[[str], str]) -> dict[str, Any]:
    """Apache Hudi's ``HoodieDeleteRecordList``, each wrapper's one field named ``value_field(wrapper)``."""
    wrappers = [{"type": "record", "name": n, "fields": [{"name": value_field(n), "type": t}]} for n, t in _WRAPPERS]
    record = {
        "type": "record",
        "name": "HoodieDeleteRecord",
        "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "type": ["null", *wrappers], "default": None},
        ],
    }
    return fastavro.parse_schema(  # type: ignore[return-value]  # a record schema parses to a dict
        {
            "type": "record",
            "name": "HoodieDeleteRecordList",
            "namespace": "org.apache.hudi.avro.model",
            "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": record}}],
        }
    )


@cache
def _delete_schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    """Hudi's layout, and the same layout with each wrapper's field named after the
    wrapper: field names are not in the bytes, so it decodes the same data, and the
    decoded ``{"IntWrapper": 0}`` says which wrapper it was without fastavro's
    record-name tuples (which double the decode time). Parsed on first use: fastavro
    loads with the first delete block, not with planning."""
    return _delete_record_list_schema(lambda _: "value"), _delete_record_list_schema(lambda wrapper: wrapper)


def __getattr__(name: str) -> Any:
    if name == "DELETE_RECORD_LIST_SCHEMA":
        return _delete_schemas()[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class DeleteRecords:
    """Keys deleted by one delete block, with their ordering values.

    ``commit_time_delete`` marks deletes without a real ordering value (the
    writer's default, an int 0): they win over any earlier record.
    """

    keys: list[str]
    partitions: list[str | None]
    ordering: list[Any]
    commit_time_delete: list[bool]


@lru_cache(maxsize=256)
def _writer_schema(text: str) -> tuple[Any, pa.Schema]:
    record = parse_avro_schema(text, "log block schema")
    try:
        parsed = fastavro.parse_schema(record)
    except Exception as exc:  # fastavro raises several types for bad schemas
        raise HudiSchemaError(f"Cannot resolve the Avro schema of a log block: {exc}") from exc
    return parsed, avro_to_arrow_schema(record, "log block schema")


def _avro_decoder(block: LogBlock) -> BlockDecoder:
    if block.schema is None:
        raise HudiSchemaError(f"{block.where()} has no SCHEMA header")
    _writer_schema(block.schema)  # reports unresolvable schemas with the block's location
    return decoder_for(block.schema)


def decode_avro_block(block: LogBlock, columns: Collection[str] | None = None) -> pa.Table:
    """Records of an Avro data block, in the block's writer schema: of its
    fields, those in ``columns`` (None: all), the others only stepped over."""
    decoder = _avro_decoder(block)
    content = block.content  # the decoder copies what it keeps
    try:
        version = _I32.unpack_from(content, 0)[0]
        count = _I32.unpack_from(content, 4)[0]
    except struct.error as exc:
        raise HudiCorruptFileError(f"Cannot decode {block.where()}: {exc}") from exc
    if version not in (1, 2, 3):
        raise HudiCorruptFileError(f"Unsupported Avro block content version {version} in {block.where()}")
    # Every record carries a 4-byte length prefix, which bounds what the count may claim
    # before anything is allocated for it.
    if count < 0 or count > (len(content) - 8) // 4:
        raise HudiCorruptFileError(
            f"{block.where()} declares {count} records in {len(content)} bytes of content (offset 4 of the content)"
        )
    try:
        return decoder.decode(content, count, columns)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise HudiSchemaError(f"Records of {block.where()} do not fit its schema: {exc}") from exc
    except HudiMissingExtraError:
        raise
    except Exception as exc:  # struct, EOF and fastavro decode errors
        raise HudiCorruptFileError(f"Cannot decode {block.where()}: {exc}") from exc


def _holds_strings(dtype: pa.DataType) -> bool:
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return True
    if pa.types.is_dictionary(dtype):
        return _holds_strings(dtype.value_type)
    return any(_holds_strings(dtype.field(i).type) for i in range(dtype.num_fields))


def decode_parquet_block(block: LogBlock, columns: Collection[str] | None = None) -> pa.Table:
    """Records of a Parquet data block: of its columns, those in ``columns`` (None: all)."""
    try:
        pf = pq.ParquetFile(pa.BufferReader(bytes(block.content)))
        names = None if columns is None else [n for n in pf.schema_arrow.names if n in columns]
        table = pf.read(columns=names)
        # The Parquet reader does not check that strings are UTF-8; bad ones
        # would only fail in whatever consumes the batch later. Only columns
        # holding strings need the (full, costly) check.
        for column, field in zip(table.columns, table.schema):
            if _holds_strings(field.type):
                column.validate(full=True)
        return table
    except (pa.ArrowException, OSError, UnicodeDecodeError, MemoryError) as exc:
        raise HudiCorruptFileError(f"Cannot decode the Parquet content of {block.where()}: {exc}") from exc


def _delete_payload(block: LogBlock) -> bytes | memoryview:
    """The Avro datum of a delete block's records, after the content's version and length."""
    content = block.content
    try:
        version = _I32.unpack_from(content, 0)[0]
        length = _I32.unpack_from(content, 4)[0]
    except struct.error as exc:
        raise HudiCorruptFileError(f"Cannot decode {block.where()}: {exc}") from exc
    if version == 3 and not 0 <= length <= len(content) - 8:
        raise HudiCorruptFileError(
            f"{block.where()} declares {length} bytes of delete records at content offset 4, "
            f"but holds {len(content) - 8}"
        )
    if version != 3:
        raise HudiUnsupportedError(
            f"Delete block content version {version} (Java-serialized keys) in {block.where()} is not supported"
        )
    return content[8 : 8 + length]


def decode_delete_columns_of(block: LogBlock) -> DeleteColumns:
    """``decode_delete_block`` as columns: decoded column by column where the
    ordering values are of one type it builds, else record by record."""
    payload = _delete_payload(block)
    try:
        columns = decode_delete_columns(payload)
    except (ValueError, IndexError):
        columns = None  # decoded record by record below, which reports what is wrong
    if columns is not None:
        return columns
    records = decode_delete_block(block)
    return DeleteColumns(
        pa.array(records.keys, pa.string()), records.ordering, np.array(records.commit_time_delete, dtype=bool)
    )


def decode_delete_block(block: LogBlock) -> DeleteRecords:
    payload = bytes(_delete_payload(block))
    try:
        datum: Any = fastavro.schemaless_reader(io.BytesIO(payload), _delete_schemas()[1], None)
    except Exception as exc:  # fastavro decode errors
        raise HudiCorruptFileError(f"Cannot decode {block.where()}: {exc}") from exc
    records = datum["deleteRecordList"]
    keys: list[str] = [r["recordKey"] for r in records]
    partitions: list[str | None] = [r["partitionPath"] for r in records]
    ordering: list[Any] = []
    ct: list[bool] = []
    for r in records:
        wrapped = r["orderingVal"]
        if wrapped is None:
            ordering.append(None)
            ct.append(True)
            continue
        ((wrapper, value),) = wrapped.items()
        ordering.append(value)
        # The writer's "no ordering value" default is an Integer 0; as in Apache
        # Hudi (``OrderingValues.isDefault``), a Long 0 is a real ordering value.
        ct.append(value is None or (wrapper == "IntWrapper" and value == 0))
    return DeleteRecords(keys, partitions, ordering, ct)


def data_block_columns(block: LogBlock) -> list[str]:
    """Every column of a data block's records, as its schema declares them."""
    if block.block_type is BlockType.PARQUET_DATA:
        try:
            return pq.read_schema(pa.BufferReader(bytes(block.content))).names
        except (pa.ArrowException, OSError, UnicodeDecodeError, MemoryError) as exc:
            raise HudiCorruptFileError(f"Cannot decode the Parquet content of {block.where()}: {exc}") from exc
    return _avro_decoder(block).arrow.names


DATA_DECODERS = {
    BlockType.AVRO_DATA: decode_avro_block,
    BlockType.PARQUET_DATA: decode_parquet_block,
}
