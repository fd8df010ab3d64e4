"""Schema: Avro schemas (as Hudi stores them) converted to Arrow."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.schema.arrow import conform_table, encoded_target, meta_fields_schema, one_array
    from hudi_ray.core.schema.avro import (
        META_FIELDS,
        avro_schema_with_meta_fields,
        avro_to_arrow_schema,
        parse_avro_schema,
    )

__all__ = [
    "META_FIELDS",
    "avro_schema_with_meta_fields",
    "avro_to_arrow_schema",
    "conform_table",
    "encoded_target",
    "meta_fields_schema",
    "one_array",
    "parse_avro_schema",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.schema.arrow": ("conform_table", "encoded_target", "meta_fields_schema", "one_array"),
        "hudi_ray.core.schema.avro": (
            "META_FIELDS",
            "avro_schema_with_meta_fields",
            "avro_to_arrow_schema",
            "parse_avro_schema",
        ),
    },
)
