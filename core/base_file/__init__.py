"""Base files: Parquet and Lance reading with projection pushed into the reader,
routed by file extension (``base_file_reader``)."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.base_file.footer_stats import footer_bounds
    from hudi_ray.core.base_file.lance import LanceFileInfo, LanceReader
    from hudi_ray.core.base_file.names import BaseFileName, base_file_id, base_file_instant, parse_base_file_name
    from hudi_ray.core.base_file.parquet import FooterCache, ParquetReader
    from hudi_ray.core.base_file.reader import (
        LANCE,
        PARQUET,
        BaseFileReader,
        base_file_format,
        base_file_reader,
        is_parquet,
    )

__all__ = [
    "LANCE",
    "PARQUET",
    "BaseFileName",
    "BaseFileReader",
    "FooterCache",
    "LanceFileInfo",
    "LanceReader",
    "ParquetReader",
    "base_file_format",
    "base_file_id",
    "base_file_instant",
    "base_file_reader",
    "footer_bounds",
    "is_parquet",
    "parse_base_file_name",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.base_file.footer_stats": ("footer_bounds",),
        "hudi_ray.core.base_file.lance": ("LanceFileInfo", "LanceReader"),
        "hudi_ray.core.base_file.names": ("BaseFileName", "base_file_id", "base_file_instant", "parse_base_file_name"),
        "hudi_ray.core.base_file.parquet": ("FooterCache", "ParquetReader"),
        "hudi_ray.core.base_file.reader": (
            "LANCE",
            "PARQUET",
            "BaseFileReader",
            "base_file_format",
            "base_file_reader",
            "is_parquet",
        ),
    },
)
