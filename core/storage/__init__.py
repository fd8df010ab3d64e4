"""Storage: one small interface over fsspec for listing and reading table files,
and a wrapper serving bytes fetched ahead from memory."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.storage.files import UNKNOWN_SIZE, FileInfo, StorageLike
    from hudi_ray.core.storage.paths import move_credentials, redact_text, split_credentials
    from hudi_ray.core.storage.prefetch import (
        PREFETCH_TUNABLES,
        FetchedFiles,
        FetchedParquet,
        PrefetchingStorage,
        PrefetchTunables,
        coalesce_ranges,
        fetch_parquet,
        parquet_chunk_ranges,
    )
    from hudi_ray.core.storage.storage import Storage
    from hudi_ray.core.storage.uris import normalize_base_uri

__all__ = [
    "PREFETCH_TUNABLES",
    "PrefetchTunables",
    "FetchedFiles",
    "FetchedParquet",
    "FileInfo",
    "PrefetchingStorage",
    "Storage",
    "StorageLike",
    "UNKNOWN_SIZE",
    "coalesce_ranges",
    "fetch_parquet",
    "move_credentials",
    "normalize_base_uri",
    "parquet_chunk_ranges",
    "redact_text",
    "split_credentials",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.storage.files": ("UNKNOWN_SIZE", "FileInfo", "StorageLike"),
        "hudi_ray.core.storage.paths": ("move_credentials", "redact_text", "split_credentials"),
        "hudi_ray.core.storage.prefetch": (
            "PREFETCH_TUNABLES",
            "FetchedFiles",
            "FetchedParquet",
            "PrefetchingStorage",
            "PrefetchTunables",
            "coalesce_ranges",
            "fetch_parquet",
            "parquet_chunk_ranges",
        ),
        "hudi_ray.core.storage.storage": ("Storage",),
        "hudi_ray.core.storage.uris": ("normalize_base_uri",),
    },
)
