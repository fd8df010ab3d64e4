"""Base files: Parquet reading with projection pushed into the reader."""

from hudi_ray.core.base_file.parquet import ParquetReader

__all__ = ["ParquetReader"]
