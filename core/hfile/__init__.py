"""HFile: the HBase file format version 3, as Hudi's metadata table stores records in it."""

from hudi_ray.core.hfile.reader import HEADER_SIZE, TRAILER_SIZE, HFileReader

__all__ = ["HEADER_SIZE", "TRAILER_SIZE", "HFileReader"]
