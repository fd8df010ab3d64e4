"""Hudi's bloom filters of record keys (base-file footers, the metadata table's ``bloom_filters``)."""

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
