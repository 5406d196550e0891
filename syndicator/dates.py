"""Reading feed dates into UTC. The only module that imports dateutil.

feedparser already reads RFC 822 and ISO 8601/W3C-DTF dates; this module is
the fallback for what it misses and the place that decides whether a date
can be trusted (see :func:`trusted`).
"""

from __future__ import annotations

import calendar
import time
from datetime import UTC, datetime, timedelta

from dateutil import parser as dateutil_parser

#: A date more than this far in the future is not trusted (seconds).
FUTURE_SLACK = 86400.0
#: Dates before this are not trusted: no feed predates the web's feeds.
EARLIEST = datetime(1995, 1, 1, tzinfo=UTC)


def from_struct(value: time.struct_time | None) -> datetime | None:
    """Convert feedparser's UTC struct_time to an aware UTC datetime, or None."""
    if value is None:
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(value), tz=UTC)
    except (OverflowError, ValueError, OSError):
        return None


def parse_date(text: str | None) -> datetime | None:
    """Parse a date string in any common form into an aware UTC datetime.

    A date without a time zone is read as UTC. Returns None when ``text`` is
    empty or cannot be read.
    """
    if not text or not text.strip():
        return None
    try:
        value = dateutil_parser.parse(text.strip(), fuzzy=False)
    except (ValueError, OverflowError, TypeError):
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):
        return None


def trusted(value: datetime | None, now: datetime) -> tuple[datetime | None, str | None]:
    """Decide whether a date can be used for sorting.

    Args:
        value: the parsed date (aware) or None.
        now: the build's clock (UTC).
    Returns:
        (date, None) when usable, else (None, reason) where reason says why
        (more than a day in the future, or before 1995).
    """
    if value is None:
        return None, None
    if value > now + timedelta(seconds=FUTURE_SLACK):
        return None, f"date {value.isoformat()} is in the future"
    if value < EARLIEST:
        return None, f"date {value.isoformat()} is before 1995"
    return value, None


def isoformat(value: datetime) -> str:
    """RFC 3339 text of a UTC datetime, whole seconds, ``Z`` suffix (str)."""
    return value.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
