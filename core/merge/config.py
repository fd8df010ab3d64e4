"""Which merge semantics a table uses, from its configs (and legacy payload classes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from hudi_ray.core.config import TableConfig
from hudi_ray.core.exceptions import HudiUnsupportedError


class MergeMode(str, Enum):
    COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
    EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"


MERGE_MODE_KEY = "hoodie.record.merge.mode"
STRATEGY_KEYS = ("hoodie.record.merge.strategy.id", "hoodie.table.record.merge.strategy")
PAYLOAD_KEYS = ("hoodie.table.legacy.payload.class", "hoodie.compaction.payload.class")

_EVENT_TIME_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
_COMMIT_TIME_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
_PAYLOAD_STRATEGY = "00000000-0000-0000-0000-000000000000"

# Legacy payloads whose merging is exactly one of the two modes.
_PAYLOAD_MODES = {
    "OverwriteWithLatestAvroPayload": MergeMode.COMMIT_TIME_ORDERING,
    "DefaultHoodieRecordPayload": MergeMode.EVENT_TIME_ORDERING,
    "EventTimeAvroPayload": MergeMode.EVENT_TIME_ORDERING,
    "AWSDmsAvroPayload": MergeMode.COMMIT_TIME_ORDERING,
}


@dataclass(frozen=True)
class MergeConfig:
    mode: MergeMode
    ordering_fields: tuple[str, ...]
    record_key_fields: tuple[str, ...]
    # Rows whose ``delete_field`` equals ``delete_marker`` are deletes (AWS DMS).
    delete_field: str | None = None
    delete_marker: str | None = None
    source: dict[str, str] = field(default_factory=dict, compare=False)


def _payload_mode(payload: str, where: str) -> MergeMode:
    short = payload.rsplit(".", 1)[-1]
    mode = _PAYLOAD_MODES.get(short)
    if mode is None:
        raise HudiUnsupportedError(
            f"Payload class {payload} ({where}) merges records in a way this reader cannot reproduce; "
            "supported: " + ", ".join(sorted(_PAYLOAD_MODES))
        )
    return mode


def resolve_merge_config(config: TableConfig) -> MergeConfig:
    """Merge mode as Hudi infers it: table version 8+ trusts the merge mode and
    strategy, earlier versions the payload class first."""
    where = config.source
    configured = (config.get(MERGE_MODE_KEY) or "").strip().upper()
    strategy = next((config.get(k) for k in STRATEGY_KEYS if config.get(k)), None)
    payload = next((config.get(k) for k in PAYLOAD_KEYS if config.get(k)), None)
    ordering = tuple(config.ordering_fields)

    if configured and configured not in MergeMode.__members__:
        if configured == "CUSTOM":
            raise HudiUnsupportedError(f"{MERGE_MODE_KEY}=CUSTOM ({where}): custom record mergers are not supported")
        raise HudiUnsupportedError(f"Unknown {MERGE_MODE_KEY}={configured!r} in {where}")

    mode: MergeMode
    if payload is None and strategy is None:
        if configured:
            mode = MergeMode(configured)
        else:
            mode = MergeMode.EVENT_TIME_ORDERING if ordering else MergeMode.COMMIT_TIME_ORDERING
    elif config.table_version < 8 and payload is not None:
        mode = _payload_mode(payload, where)
    elif strategy == _EVENT_TIME_STRATEGY:
        mode = MergeMode.EVENT_TIME_ORDERING
    elif strategy == _COMMIT_TIME_STRATEGY:
        mode = MergeMode.COMMIT_TIME_ORDERING
    elif strategy in (None, _PAYLOAD_STRATEGY) and payload is not None:
        mode = _payload_mode(payload, where)
    elif strategy is None and configured:
        mode = MergeMode(configured)
    else:
        raise HudiUnsupportedError(f"Record merge strategy {strategy} ({where}) is a custom merger; not supported")

    delete_field = delete_marker = None
    if payload and payload.endswith("AWSDmsAvroPayload"):
        delete_field, delete_marker = "Op", "D"
    if mode is MergeMode.EVENT_TIME_ORDERING and not ordering:
        # Without ordering fields every record carries the default value, so
        # event time degenerates to processing order.
        mode = MergeMode.COMMIT_TIME_ORDERING
    return MergeConfig(
        mode=mode,
        ordering_fields=ordering,
        record_key_fields=tuple(config.record_key_fields),
        delete_field=delete_field,
        delete_marker=delete_marker,
        source={"payload": payload or "", "strategy": strategy or "", "mode": configured},
    )
