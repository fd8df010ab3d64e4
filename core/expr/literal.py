"""A value of an engine's filter (a Python, NumPy or Arrow scalar) as the text of a Hudi filter value."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")


def filter_value_text(value: object) -> str | None:
    """``value`` as the text a Hudi filter takes for it (``cast_value`` parses
    it back), or None when it has none: nulls, containers, non-finite
    decimals, bytes that are not UTF-8 and other types.

    Engines translating their predicates decide which values compare exactly
    as their own filter would; the text of each value is written here.
    """
    if isinstance(value, pa.Scalar):
        value = value.as_py()
    elif type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()  # NumPy scalars stand for their Python values
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that parses back to the same float
    if isinstance(value, decimal.Decimal):
        # Plain notation: an exponent ("1E+2") is not every parser's decimal.
        return format(value, "f") if value.is_finite() else None
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            # Hudi reads a timestamp text without an offset as UTC.
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return None
