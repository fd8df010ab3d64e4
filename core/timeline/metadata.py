"""Instant metadata: JSON (timeline layout 1) or an Avro container (layout 2)."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

import orjson

from hudi_ray.core.exceptions import HudiTimelineError
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.timeline.commit_avro import Unsupported, decode_commit_record

if TYPE_CHECKING:
    import fastavro
else:
    fastavro = lazy_module("fastavro")

AVRO_MAGIC = b"Obj\x01"


def decode_instant_metadata(raw: bytes, where: str) -> dict[str, Any]:
    """Commit metadata is JSON (layout 1) or an Avro container (layout 2)."""
    if not raw:
        return {}
    try:
        if raw.startswith(AVRO_MAGIC):
            expected = "an Avro record"
            try:
                value = decode_commit_record(raw)
            except Unsupported:
                records = list(fastavro.reader(io.BytesIO(raw)))
                if not records:
                    raise HudiTimelineError(f"Instant file {where} holds no Avro record") from None
                value = records[0]
        else:
            expected = "a JSON object"
            try:
                value = orjson.loads(raw)  # a commit of thousands of files: a third of json's time
            except orjson.JSONDecodeError:
                # What orjson refuses and json reads (NaN, Infinity: Jackson may write them) reads as before.
                value = json.loads(raw.decode("utf-8"))
    except HudiTimelineError:
        raise
    except Exception as exc:  # fastavro and json raise many unrelated types
        raise HudiTimelineError(f"Malformed instant metadata in {where}: {exc}") from exc
    if not isinstance(value, dict):
        raise HudiTimelineError(
            f"Malformed instant metadata in {where}: expected {expected}, got {type(value).__name__}"
        )
    return value
