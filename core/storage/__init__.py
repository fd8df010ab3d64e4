"""Storage: one small interface over fsspec for listing and reading table files."""

from hudi_ray.core.storage.storage import FileInfo, Storage, normalize_base_uri

__all__ = ["FileInfo", "Storage", "normalize_base_uri"]
