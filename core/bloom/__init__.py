"""Hudi's bloom filters of record keys (base-file footers, the metadata table's ``bloom_filters``)."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.bloom.filter import (
        DYNAMIC_V0,
        FOOTER_KEY,
        LEGACY_FOOTER_KEY,
        MAX_KEY,
        MIN_KEY,
        SIMPLE,
        TYPE_CODE_KEY,
        BloomFilter,
        BloomKeys,
        decode_bloom_filter,
    )

__all__ = [
    "DYNAMIC_V0",
    "FOOTER_KEY",
    "LEGACY_FOOTER_KEY",
    "MAX_KEY",
    "MIN_KEY",
    "SIMPLE",
    "TYPE_CODE_KEY",
    "BloomFilter",
    "BloomKeys",
    "decode_bloom_filter",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.bloom.filter": (
            "DYNAMIC_V0",
            "FOOTER_KEY",
            "LEGACY_FOOTER_KEY",
            "MAX_KEY",
            "MIN_KEY",
            "SIMPLE",
            "TYPE_CODE_KEY",
            "BloomFilter",
            "BloomKeys",
            "decode_bloom_filter",
        ),
    },
)
