"""hudi_testkit: a small Hudi table writer for samples, benchmarks, examples and property tests.

It writes tables for the reader in ``hudi_ray`` to read; it is not part of the reader.
"""

from hudi_testkit.archive import (
    ArchiveLayout,
    archive_as_hudi,
    archive_instants,
    archive_layout,
    delete_archive,
)
from hudi_testkit.avro_schema import arrow_to_avro_schema, avro_compatible_schema, decimal_fixed_size
from hudi_testkit.bloom import BloomFilterSpec
from hudi_testkit.common import format_instant_time, next_instant_time, parse_instant_time
from hudi_testkit.cow import (
    DEFAULT_ROWS_PER_FILE,
    CommitResult,
    CowTableSpec,
    CowTableWriter,
    upsert_cow_table,
    write_cow_table,
)
from hudi_testkit.log_writer import AvroRecordEncoder
from hudi_testkit.metadata import COMMIT_METADATA_SCHEMA, WriteStat
from hudi_testkit.metadata_table import MetadataTableOptions, MetadataTableWriter
from hudi_testkit.mor import (
    COMMIT_TIME_ORDERING,
    DEFAULT_RECORDS_PER_BLOCK,
    EVENT_TIME_ORDERING,
    LogWriteStat,
    MorTableSpec,
    MorTableWriter,
    write_mor_table,
)

__all__ = [
    "ArchiveLayout",
    "BloomFilterSpec",
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
    "archive_as_hudi",
    "archive_instants",
    "archive_layout",
    "arrow_to_avro_schema",
    "avro_compatible_schema",
    "decimal_fixed_size",
    "delete_archive",
    "format_instant_time",
    "next_instant_time",
    "parse_instant_time",
    "upsert_cow_table",
    "write_cow_table",
    "write_mor_table",
]
