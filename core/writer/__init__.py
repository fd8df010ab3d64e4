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
from hudi_ray.core.writer.metadata import COMMIT_METADATA_SCHEMA, WriteStat

__all__ = [
    "COMMIT_METADATA_SCHEMA",
    "DEFAULT_ROWS_PER_FILE",
    "CommitResult",
    "CowTableSpec",
    "CowTableWriter",
    "WriteStat",
    "arrow_to_avro_schema",
    "avro_compatible_schema",
    "decimal_fixed_size",
    "format_instant_time",
    "next_instant_time",
    "parse_instant_time",
    "upsert_cow_table",
    "write_cow_table",
]
