"""RFC 3339 timestamps at nanosecond precision, as the traceability extension's JSON writes them."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from coordbench.errors import StepFormatError

__all__ = ["format_timestamp", "parse_timestamp"]

_RFC3339 = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt ](?P<time>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d{1,9}))?"
    r"(?P<tz>[Zz]|[+-]\d{2}:\d{2})?"
)

_last_second: tuple[int, str] = (-1, "")


def format_timestamp(ns: int) -> str:
    """Format nanoseconds since the epoch as RFC 3339 UTC with nine fractional digits.

    Example:
        >>> format_timestamp(1_700_000_000_123_456_789)
        '2023-11-14T22:13:20.123456789Z'
    """
    global _last_second
    seconds, frac = divmod(ns, 1_000_000_000)
    cached_second, prefix = _last_second  # one read: another thread may replace the pair, never half of it
    if cached_second != seconds:  # instrumented agents stamp many messages per second: format the date once
        prefix = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _last_second = (seconds, prefix)
    return f"{prefix}.{frac:09d}Z"


def parse_timestamp(value: str) -> int:
    """Parse an RFC 3339 timestamp (``Z`` or offset, up to nanoseconds) into epoch nanoseconds.

    A timestamp without a zone is read as UTC.

    Raises:
        StepFormatError: If the string is not an RFC 3339 timestamp.
    """
    match = _RFC3339.fullmatch(value.strip())
    if match is None:
        raise StepFormatError(f"not an RFC 3339 timestamp: {value!r}")
    tz = match["tz"] or "Z"
    try:
        base = datetime.fromisoformat(f"{match['date']}T{match['time']}{'+00:00' if tz in 'Zz' else tz}")
    except ValueError as exc:
        raise StepFormatError(f"not an RFC 3339 timestamp: {value!r}") from exc
    frac = (match["frac"] or "").ljust(9, "0")
    return int(base.timestamp()) * 1_000_000_000 + int(frac or 0)
