"""Which columns a file must hold; any other may be absent by schema evolution."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from hudi_ray.core.schema.avro import META_FIELDS


def _field_names(text: str | None) -> set[str] | None:
    """Top-level field names of an Avro record schema, or None when unreadable."""
    if not text:
        return None
    try:
        schema = json.loads(text)
    except ValueError:
        return None
    fields = schema.get("fields") if isinstance(schema, dict) else None
    if not isinstance(fields, list):
        return None
    return {f["name"] for f in fields if isinstance(f, dict) and isinstance(f.get("name"), str)}


def _may_be_null(avro_type: Any) -> bool:
    if isinstance(avro_type, list):
        return any(_may_be_null(branch) for branch in avro_type)
    if isinstance(avro_type, dict):
        return _may_be_null(avro_type.get("type"))
    return avro_type == "null"


class RequiredColumns:
    """Decides whether a column missing from a file is damage.

    A missing column is damage when it is a meta field of a table that
    populates meta fields, or when the table schema gives it no default, does
    not allow null, and the file was written after the last commit whose
    schema lacked it (or, when no commit on the active timeline lacks it and
    the create schema does not have it, at or after the first commit on the
    active timeline). Any other missing column comes from schema evolution
    and reads as NULL; Avro defaults are not materialised.

    ``history`` gives (instant time, Avro schema text) of the data commits,
    oldest first; it is only called when a candidate column is missing.
    """

    def __init__(
        self,
        table_schema: dict[str, Any],
        *,
        meta_fields: bool,
        history: Callable[[], Iterable[tuple[str, str | None]]],
        create_schema: str | None = None,
    ) -> None:
        self._meta = frozenset(META_FIELDS) if meta_fields else frozenset()
        self._candidates = frozenset(
            f["name"]
            for f in table_schema.get("fields") or []
            if isinstance(f, dict)
            and isinstance(f.get("name"), str)
            and f["name"] not in META_FIELDS
            and "default" not in f
            and not _may_be_null(f.get("type"))
        )
        self._history = history
        self._create_schema = create_schema
        self._bounds: dict[str, tuple[str, bool]] | None = None

    def reason(self, name: str, written_at: str | None) -> str | None:
        """Why ``name`` must be in a file written at ``written_at``; None when it need not."""
        if name in self._meta:
            return "a meta field the table populates"
        if name not in self._candidates or written_at is None:
            return None
        bound, inclusive = self._bound(name)
        if written_at > bound or (inclusive and written_at == bound):
            return "not nullable and without a default in the table schema, and the file was written after it was added"
        return None

    def _bound(self, name: str) -> tuple[str, bool]:
        if self._bounds is None:
            # No lock: a race computes the same answer twice.
            self._bounds = self._compute_bounds()
        return self._bounds[name]

    def _compute_bounds(self) -> dict[str, tuple[str, bool]]:
        last_lacking: dict[str, str] = {}
        first_schema: str | None = None
        for ts, text in self._history():
            names = _field_names(text)
            if names is None:
                continue
            first_schema = first_schema or ts
            for name in self._candidates - names:
                last_lacking[name] = ts
        created = _field_names(self._create_schema) or set()
        bounds: dict[str, tuple[str, bool]] = {}
        for name in self._candidates:
            if name in last_lacking:
                bounds[name] = (last_lacking[name], False)  # after the last commit lacking it
            elif name in created:
                bounds[name] = ("", True)  # since the table was created
            else:
                bounds[name] = (first_schema or "", True)  # added in archived history
        return bounds
