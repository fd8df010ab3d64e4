"""Helpers comparing hudi-ray with hudi-rs (the ``hudi`` package) on the same table and options."""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import hudi
import pyarrow as pa

import hudi_ray


def _canon(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canon(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, Decimal):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def row_set(batches: Sequence[pa.RecordBatch] | pa.Table) -> list[str]:
    """Rows as canonical JSON strings, sorted: order-free equality."""
    table = batches if isinstance(batches, pa.Table) else pa.Table.from_batches(list(batches))
    return sorted(json.dumps(_canon(r), sort_keys=True) for r in table.to_pylist())


def to_table(batches: Sequence[pa.RecordBatch], schema: pa.Schema | None = None) -> pa.Table:
    batches = list(batches)
    if not batches:
        return pa.table({}) if schema is None else schema.empty_table()
    return pa.Table.from_batches(batches)


def rs_options(
    filters: list[tuple[str, str, str]] | None = None,
    projection: list[str] | None = None,
    hudi_options: dict[str, str] | None = None,
) -> hudi.HudiReadOptions:
    return hudi.HudiReadOptions(filters=filters, projection=projection, hudi_options=hudi_options)


def ours_options(
    filters: list[tuple[str, str, str]] | None = None,
    projection: list[str] | None = None,
    hudi_options: dict[str, str] | None = None,
) -> hudi_ray.HudiReadOptions:
    return hudi_ray.HudiReadOptions(filters=filters, projection=projection, hudi_options=hudi_options)


def snapshot_opts(as_of: str | None = None, **kw: Any) -> dict[str, Any]:
    opts = dict(kw.pop("hudi_options", None) or {})
    if as_of:
        opts["hoodie.read.as.of.timestamp"] = as_of
    return {"hudi_options": opts, **kw}


def incremental_opts(start: str, end: str, **kw: Any) -> dict[str, Any]:
    opts = dict(kw.pop("hudi_options", None) or {})
    opts.update(
        {
            "hoodie.read.query.type": "incremental",
            "hoodie.read.start.timestamp": start,
            "hoodie.read.end.timestamp": end,
        }
    )
    return {"hudi_options": opts, **kw}


def both_read(path: str, **kw: Any) -> tuple[pa.Table, pa.Table]:
    """Read with hudi-rs and hudi-ray using the same options; returns (ours, theirs)."""
    rs = hudi.HudiTableBuilder.from_base_uri(path).build()
    ours = hudi_ray.HudiTableBuilder.from_base_uri(path).build()
    theirs_b = rs.read(rs_options(**kw))
    ours_b = ours.read(ours_options(**kw))
    return to_table(ours_b), to_table(theirs_b)
