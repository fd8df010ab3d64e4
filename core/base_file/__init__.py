"""Base files: Parquet reading with projection pushed into the reader."""

from hudi_ray.core.base_file.footer_stats import footer_column_stats
from hudi_ray.core.base_file.names import BaseFileName, parse_base_file_name
from hudi_ray.core.base_file.parquet import FooterCache, ParquetReader

__all__ = ["BaseFileName", "parse_base_file_name", "FooterCache", "ParquetReader", "footer_column_stats"]
