"""Writer: a small Hudi table writer for samples, benchmarks and property tests."""

from hudi_ray.core.writer.avro_schema import arrow_to_avro_schema, avro_compatible_schema, decimal_fixed_size
from hudi_ray.core.writer.cow import (
    DEFAULT_ROWS_PER_FILE,
    CommitResult,
    CowTableSpec,
    CowTableWriter,
    format_instant_time,
    next_instant_time,
    parse_instant_time,
    upsert_cow_table,
    write_cow_table,
)
from hudi_ray.core.writer.log_writer import AvroRecordEncoder
from hudi_ray.core.writer.metadata import COMMIT_METADATA_SCHEMA, WriteStat
from hudi_ray.core.writer.metadata_table import MetadataTableOptions, MetadataTableWriter
from hudi_ray.core.writer.mor import (
    COMMIT_TIME_ORDERING,
    DEFAULT_RECORDS_PER_BLOCK,
    EVENT_TIME_ORDERING,
    LogWriteStat,
    MorTableSpec,
    MorTableWriter,
    write_mor_table,
)

__all__ = [
    "COMMIT_METADATA_SCHEMA",
    "COMMIT_TIME_ORDERING",
    "DEFAULT_RECORDS_PER_BLOCK",
    "DEFAULT_ROWS_PER_FILE",
    "EVENT_TIME_ORDERING",
    "AvroRecordEncoder",
    "CommitResult",
    "CowTableSpec",
    "CowTableWriter",
    "LogWriteStat",
    "MetadataTableOptions",
    "MetadataTableWriter",
    "MorTableSpec",
    "MorTableWriter",
    "WriteStat",
    "arrow_to_avro_schema",
    "avro_compatible_schema",
    "decimal_fixed_size",
    "format_instant_time",
    "next_instant_time",
    "parse_instant_time",
    "upsert_cow_table",
    "write_cow_table",
    "write_mor_table",
]
