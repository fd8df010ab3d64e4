"""How the command line shows things: sizes, aligned tables, cell values, JSON."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

# A cell of an aligned table is cut to this many characters: one long value
# (a nested column, a long string) must not push every other column off screen.
MAX_CELL = 48


def human_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def human_count(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def plain(value: Any) -> Any:
    """A value as JSON can hold it: decimals and times as strings, bytes as base64."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return value


def to_json(value: Any, *, indent: int | None = 2) -> str:
    return json.dumps(plain(value), indent=indent, ensure_ascii=False)


def cell(value: Any) -> str:
    """A value as one table or CSV cell (empty for null; nested values as JSON)."""
    if value is None:
        return ""
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(plain(value), ensure_ascii=False)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _cut(text: str, width: int) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def aligned(
    header: Sequence[str], rows: Iterable[Sequence[Any]], *, right: Iterable[int] = (), indent: str = ""
) -> str:
    """Rows under a header, each column as wide as its widest cell; columns in
    ``right`` (numbers) are right-aligned."""
    right_cols = set(right)
    text_rows = [[_cut(c if isinstance(c, str) else cell(c), MAX_CELL) for c in row] for row in rows]
    widths = [len(h) for h in header]
    for row in text_rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if i in right_cols else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return (indent + "  ".join(parts)).rstrip()

    return "\n".join([line(list(header)), *(line(r) for r in text_rows)])


def key_values(pairs: Sequence[tuple[str, str]], indent: str = "") -> str:
    """``key  value`` lines with the values in one column."""
    width = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{indent}{k.ljust(width)}  {v}" for k, v in pairs)
