"""Quickstart: the table API on a table you point it at.

python examples/quickstart.py /path/to/hudi/table [city=chennai]
"""

from __future__ import annotations

import sys

import pyarrow as pa

from hudi_ray import HudiReadOptions, HudiTableBuilder


def main(uri: str, *filters: str) -> None:
    table = HudiTableBuilder.from_base_uri(uri).build()
    print(f"{table.table_name}: {table.table_type}, schema {table.get_schema().names}")
    parsed = [tuple(f.split("=", 1)) for f in filters]
    opts = HudiReadOptions(filters=[(k, "=", v) for k, v in parsed])
    print(f"{len(table.get_file_slices(opts))} file slices to read")
    batches = table.read(opts)
    print(pa.Table.from_batches(batches).slice(0, 10) if batches else "no rows")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(*sys.argv[1:])
