"""HFile: the HBase file format version 3, as Hudi's metadata table stores records in it."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.hfile.reader import HEADER_SIZE, TRAILER_SIZE, HFileReader

__all__ = ["HEADER_SIZE", "TRAILER_SIZE", "HFileReader"]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.hfile.reader": ("HEADER_SIZE", "TRAILER_SIZE", "HFileReader"),
    },
)
