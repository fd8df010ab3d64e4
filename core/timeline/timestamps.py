"""Parse the timestamp formats of reader spec §6 into Hudi timeline format."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from hudi_ray.core.exceptions import HudiTimestampError

# ASCII only: ``\d`` and ``int`` also accept full-width and other non-ASCII digits.
_TIMELINE = re.compile(r"^\d{14}(\d{3})?$", re.ASCII)
_EPOCH = re.compile(r"^-?\d+$", re.ASCII)
_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|z|[+-]\d{2}:\d{2})$", re.ASCII)
START_OF_TIME = "19700101000000000"
_EPOCH_START = datetime(1970, 1, 1, tzinfo=timezone.utc)


def tzinfo_for(table_timezone: str) -> timezone | None:
    """``UTC`` gives UTC; ``LOCAL`` gives None, meaning the machine's local zone."""
    return None if table_timezone.strip().upper() == "LOCAL" else timezone.utc


def format_timeline(dt: datetime, table_timezone: str) -> str:
    tz = tzinfo_for(table_timezone)
    local = dt.astimezone(tz) if tz else dt.astimezone()
    return local.strftime("%Y%m%d%H%M%S") + f"{local.microsecond // 1000:03d}"


def timeline_to_datetime(ts: str, table_timezone: str = "UTC") -> datetime:
    """Interpret a timeline timestamp in the table's timezone."""
    if not _TIMELINE.match(ts):
        raise HudiTimestampError(f"Not a Hudi timeline timestamp: {ts!r}")
    millis = int(ts[14:17]) if len(ts) == 17 else 0
    # Fixed-width fields: strptime would accept one-digit months and days.
    try:
        fields = (int(ts[0:4]), int(ts[4:6]), int(ts[6:8]), int(ts[8:10]), int(ts[10:12]), int(ts[12:14]))
        naive = datetime(*fields) + timedelta(milliseconds=millis)
    except ValueError as exc:
        raise HudiTimestampError(f"Not a valid Hudi timeline timestamp {ts!r}: {exc}") from exc
    tz = tzinfo_for(table_timezone)
    return naive.replace(tzinfo=tz) if tz else naive.astimezone()


def timeline_to_epoch_millis(ts: str, table_timezone: str = "UTC") -> int:
    dt = timeline_to_datetime(ts, table_timezone)
    return (dt - _EPOCH_START) // timedelta(milliseconds=1)


def _from_epoch(value: str) -> datetime:
    n = int(value)
    if n < 0:
        # No instant predates 1970; a negative value is a mistake, not "everything".
        raise ValueError("negative epoch values are not accepted")
    digits = len(value.lstrip("-"))
    # Magnitude picks the unit, as hudi-rs does: s, ms, us, ns.
    if digits <= 10:
        micros = n * 1_000_000
    elif digits <= 13:
        micros = n * 1_000
    elif digits <= 16:
        micros = n
    else:
        micros = n // 1_000
    return _EPOCH_START + timedelta(microseconds=micros)


def _from_rfc3339(m: re.Match[str]) -> datetime:
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7) or ""
    micros = int((frac[1:] + "000000")[:6]) if frac else 0
    off = m.group(8)
    if off in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = 1 if off[0] == "+" else -1
        tz = timezone(sign * timedelta(hours=int(off[1:3]), minutes=int(off[4:6])))
    return datetime(year, month, day, hour, minute, second, micros, tzinfo=tz)


def parse_timestamp(value: str, table_timezone: str = "UTC", *, option: str = "timestamp") -> str:
    """Normalize a caller's timestamp to ``yyyyMMddHHmmssSSS`` in the table's timezone.

    Accepts timeline format (highest precedence), epoch seconds / millis /
    micros / nanos, and RFC 3339 with an explicit offset.
    """
    s = str(value).strip()
    errors: list[str] = []
    if _TIMELINE.match(s):
        # 14 or 17 digits are a timeline timestamp or nothing: read as epoch
        # micros, an invalid date would silently become an instant of 1970.
        try:
            timeline_to_datetime(s, table_timezone)
        except HudiTimestampError as exc:
            raise HudiTimestampError(f"Cannot parse {option} {value!r}: invalid date ({exc.__cause__})") from exc
        return s if len(s) == 17 else s + "000"
    if _EPOCH.match(s):
        try:
            return format_timeline(_from_epoch(s), table_timezone)
        except (OverflowError, ValueError) as exc:
            errors.append(f"epoch value out of range ({exc})")
    m = _RFC3339.match(s)
    if m:
        try:
            return format_timeline(_from_rfc3339(m), table_timezone)
        except (OverflowError, ValueError) as exc:
            errors.append(f"invalid RFC 3339 date ({exc})")
    reason = "; ".join(errors) or (
        "expected yyyyMMddHHmmss[SSS], epoch seconds/millis/micros/nanos, "
        "or RFC 3339 with a timezone offset such as 2024-03-15T14:25:30Z"
    )
    raise HudiTimestampError(f"Cannot parse {option} {value!r}: {reason}")
