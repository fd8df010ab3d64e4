"""Storage: one small interface over fsspec for listing and reading table files."""

from hudi_ray.core.storage.paths import move_credentials, redact_text, split_credentials
from hudi_ray.core.storage.storage import FileInfo, Storage, normalize_base_uri

__all__ = ["FileInfo", "Storage", "move_credentials", "normalize_base_uri", "redact_text", "split_credentials"]
