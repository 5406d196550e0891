"""Publisher hints about a feed's schedule. Pure: values in, values out.

Two kinds of hint, read here and weighed by :mod:`schedule`:

* *cadence* hints say how often the feed changes: ``sy:updatePeriod`` /
  ``sy:updateFrequency`` (RSS 1.0 syndication module) and
  ``podcast:updateFrequency`` (Podcasting 2.0, an iCalendar RRULE, RFC 5545
  section 3.3.10; seed 001);
* *freshness* hints say how long a copy stays fresh: RSS 2.0 ``<ttl>``
  (minutes) and HTTP ``Cache-Control: max-age`` / ``Expires``
  (RFC 9111 section 5.2.2.1 and 5.3);
* RSS 2.0 ``<skipHours>`` / ``<skipDays>`` name hours (UTC) and weekdays
  not to fetch in.

:func:`from_document` scans the head of a feed document (everything before
its first item or entry, at most 256 KiB) for these elements, resolving the
namespace prefixes the document declares. feedparser keeps only the last
``<hour>`` of ``<skipHours>`` and drops attribute-only elements in unknown
namespaces, so the head is scanned directly; the scan never raises.

``dateutil.rrule`` is imported here rather than in :mod:`dates`: recurrence
rules are a scheduling matter, and dates.py stays the home of date parsing.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import Any

from dateutil.rrule import rrulestr

from .dates import http_date
from .model import FeedHints

#: The bounds podcast:updateFrequency intervals are clamped to (seed 001), seconds.
RRULE_FLOOR = 15 * 60.0
RRULE_CEILING = 7 * 86400.0
#: Occurrences are looked for this far after ``now``; fewer than two there
#: means "at most weekly", i.e. the ceiling.
RRULE_HORIZON = timedelta(days=28)
#: A COUNT rule is expanded to at most this many occurrences.
RRULE_MAX_COUNT = 1000

HEAD_LIMIT = 256 * 1024
SY_NS = "http://purl.org/rss/1.0/modules/syndication/"
PODCAST_NS = "https://podcastindex.org/namespace/1.0"
_PERIODS = {"hourly": 3600.0, "daily": 86400.0, "weekly": 7 * 86400.0,
            "monthly": 30 * 86400.0, "yearly": 365 * 86400.0}
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_FREQ_SECONDS = {"SECONDLY": 1.0, "MINUTELY": 60.0, "HOURLY": 3600.0, "DAILY": 86400.0,
                 "WEEKLY": 7 * 86400.0, "MONTHLY": 30 * 86400.0, "YEARLY": 365 * 86400.0}
_MONTH_DAYS = {2: 29, 4: 30, 6: 30, 9: 30, 11: 30}
# The head is hostile text: no pattern below may rescan it from many start
# positions. Each starts at a fixed string or at the start of a name run
# (the lookbehind), runs possessively over a name, and its other runs end
# at the next quote, "<" or ">"; unclosed elements are found with str.find.
_FIRST_ITEM = re.compile(r"<(?:[\w.-]++:)?(?:item|entry)[\s>/]")
_XMLNS = re.compile(r"""xmlns:([\w.-]++)\s*+=\s*+["']([^"']*+)["']""")
_ATTR = re.compile(r"""(?<![\w:.-])([\w:.-]++)\s*+=\s*+(?:"([^"]*+)"|'([^']*+)')""")
_ISO_UNTIL = re.compile(r"UNTIL=(\d{4})-?(\d{2})-?(\d{2})(?:T(\d{2}):?(\d{2}):?(\d{2})(?:\.\d+)?Z?)?", re.I)


@dataclass(frozen=True)
class Hint:
    """One hint as an interval.

    Attributes:
        seconds: the interval the hint implies (already within the hint's
            own clamp, not yet within the configured bounds).
        label: how the publisher said it, e.g. ``ttl 60 min``.
        kind: "cadence" (how often it changes) or "freshness" (how long a
            copy stays fresh).
    """

    seconds: float
    label: str
    kind: str


def from_document(body: bytes) -> FeedHints:
    """Scan a feed document's head for scheduling hints.

    Args:
        body: the document (bytes, decompressed); XML in any ASCII-compatible
            encoding. Anything else (JSON Feed, UTF-16) yields no hints.
    Returns:
        FeedHints; fields the document does not carry are None or empty.
    """
    head = body[:HEAD_LIMIT].decode("latin-1")
    first = _FIRST_ITEM.search(head)
    if first:
        head = head[:first.start()]
    prefixes = {uri: prefix for prefix, uri in _XMLNS.findall(head)}
    sy = re.escape(prefixes.get(SY_NS, "sy"))
    podcast = re.escape(prefixes.get(PODCAST_NS, "podcast"))
    ttl = _number(_element(head, "ttl"))
    period = _element(head, f"{sy}:updatePeriod")
    frequency = _number(_element(head, f"{sy}:updateFrequency"))
    update_period = None
    if period is not None or frequency is not None:
        seconds = _PERIODS.get((period or "daily").strip().lower())
        if seconds is not None and (frequency is None or frequency >= 1):
            update_period = seconds / (frequency or 1)
    attrs = _attributes(head, f"{podcast}:updateFrequency")
    return FeedHints(
        ttl=ttl * 60 if ttl is not None else None,
        update_period=update_period,
        rrule=(attrs.get("rrule") or "").strip()[:300] or None,
        dtstart=(attrs.get("dtstart") or "").strip()[:64] or None,
        complete=(attrs.get("complete") or "").strip().lower() == "true",
        skip_hours=tuple(sorted({int(h) for h in _children(head, "skipHours", "hour") if h.isdigit() and int(h) < 24})),
        skip_days=tuple(sorted({_DAYS.index(d.lower()) for d in _children(head, "skipDays", "day")
                                if d.lower() in _DAYS})),
    )


def _element(head: str, name: str) -> str | None:
    match = re.search(rf"<{name}\s*+>([^<]*+)</{name}\s*+>", head)
    return html.unescape(match.group(1)).strip() if match else None


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def _attributes(head: str, name: str) -> dict[str, str]:
    """The attributes of the first ``<name ...>`` tag of the head (as ``<name\\b[^>]*>`` finds)."""
    match = re.search(rf"<{name}\b", head)
    end = head.find(">", match.end()) if match else -1
    if match is None or end < 0:  # no later start tag can have a ">" after it either
        return {}
    return {key.lower(): html.unescape(a if a is not None and a != "" else b or "")
            for key, a, b in _ATTR.findall(head[match.end():end])}


def _children(head: str, parent: str, child: str) -> list[str]:
    """Texts of ``<child>`` elements inside the first ``<parent>`` element that is closed."""
    opening = re.search(rf"<{parent}\s*+>", head)
    closing = re.compile(rf"</{parent}\s*+>").search(head, opening.end()) if opening else None
    if opening is None or closing is None:  # an opening later than the first closes no sooner
        return []
    inner = head[opening.end():closing.start()]
    return [text.strip() for text in re.findall(rf"<{child}\s*+>([^<]*+)</{child}\s*+>", inner)][:48]


def http_freshness(headers: Mapping[str, str]) -> Hint | None:
    """The freshness lifetime an HTTP response declares (RFC 9111 section 4.2.1).

    Args:
        headers: response headers with lower-case names; ``cache-control``,
            ``expires`` and ``date`` are read.
    Returns:
        a freshness Hint (seconds >= 0), or None when the response declares
        none, says ``no-store``/``no-cache``, or the header is unreadable.
    """
    directives = [part.strip().lower() for part in headers.get("cache-control", "").split(",")]
    if "no-store" in directives or "no-cache" in directives:
        return None
    for directive in directives:
        name, _, value = directive.partition("=")
        if name.strip() == "max-age" and value.strip().strip('"').isdigit():
            seconds = float(value.strip().strip('"'))
            return Hint(seconds, f"Cache-Control max-age {seconds:.0f} s", "freshness")
    expires, date = http_date(headers.get("expires")), http_date(headers.get("date"))
    if expires is None or date is None:
        return None
    seconds = max(0.0, (expires - date).total_seconds())
    return Hint(seconds, f"Expires {seconds:.0f} s after Date", "freshness")


def document_hints(hints: FeedHints | None, now: datetime) -> list[Hint]:
    """The feed document's hints as intervals (ttl, sy, podcast:updateFrequency).

    Args:
        hints: the stored hints of the last parsed document, or None.
        now: the build's clock (UTC), to read an RRULE against.
    Returns:
        a list of Hint, possibly empty.
    """
    if hints is None:
        return []
    found: list[Hint] = []
    if hints.ttl is not None:
        found.append(Hint(hints.ttl, f"ttl {hints.ttl / 60:.0f} min", "freshness"))
    if hints.update_period is not None:
        found.append(Hint(hints.update_period, f"sy:updatePeriod every {_short(hints.update_period)}", "cadence"))
    if hints.complete:
        found.append(Hint(RRULE_CEILING, "podcast:updateFrequency complete: no further releases", "cadence"))
    elif hints.rrule:
        seconds, note = rrule_interval(hints.rrule, hints.dtstart, now)
        if seconds is not None:
            found.append(Hint(seconds, f"podcast:updateFrequency {hints.rrule}{note}", "cadence"))
    return found


def rrule_interval(rule: str, dtstart: str | None, now: datetime) -> tuple[float | None, str]:
    """The release interval a podcast:updateFrequency RRULE implies (seed 001).

    The mean gap between the rule's occurrences in the 28 days after ``now``
    (or the time to the first one, if longer), clamped to [15 min, 7 d]. A
    rule whose UNTIL or COUNT is used up means no further releases: 7 d.
    UNTIL may be written in ISO form with hyphens (as the namespace's own
    examples do); a missing dtstart means midnight UTC of ``now``'s day.

    Args:
        rule: the rrule attribute, e.g. ``FREQ=WEEKLY;BYDAY=MO,WE``.
        dtstart: the dtstart attribute (ISO 8601) or None.
        now: the build's clock (UTC).
    Returns:
        (seconds, note): seconds is None when the rule cannot be read; note
        is "" or a short explanation starting with ": ".
    """
    text = _ISO_UNTIL.sub(_basic_until, rule.strip().upper())
    start = _iso(dtstart) or now.replace(hour=0, minute=0, second=0, microsecond=0)
    parts = dict(part.partition("=")[::2] for part in text.split(";") if "=" in part)
    nominal = _FREQ_SECONDS.get(parts.get("FREQ", ""))
    interval = parts.get("INTERVAL", "1")
    if nominal is None or not interval.isdigit() or int(interval) < 1:
        return None, ""
    nominal *= int(interval)
    try:
        recurrence = rrulestr(text, dtstart=start)
    except (ValueError, TypeError, OverflowError):
        return None, ""
    until = getattr(recurrence, "_until", None)  # dateutil exposes no public accessor
    if until is not None and until < now:
        return RRULE_CEILING, ": UNTIL has passed, no further releases"
    if nominal < 86400:  # sub-daily: the nominal step, so work stays bounded
        return min(RRULE_CEILING, max(RRULE_FLOOR, nominal)), ""
    if _impossible(parts):
        return None, ""
    upcoming = _upcoming(recurrence, parts, until, now)
    if upcoming is None:
        return RRULE_CEILING, ": COUNT is used up, no further releases"
    if len(upcoming) < 2:
        return RRULE_CEILING, ""
    gap = (upcoming[-1] - upcoming[0]).total_seconds() / (len(upcoming) - 1)
    wait = (upcoming[0] - now).total_seconds()
    return min(RRULE_CEILING, max(RRULE_FLOOR, gap, wait)), ""


def _upcoming(recurrence: Any, parts: dict[str, str], until: datetime | None, now: datetime) -> list[datetime] | None:
    """Occurrences in (now, now + horizon], or None when a COUNT is used up.

    A COUNT rule yields at most COUNT (capped) occurrences; any other rule is
    cut at the horizon.
    """
    horizon = now + RRULE_HORIZON
    if "COUNT" in parts:
        every = list(islice(recurrence, RRULE_MAX_COUNT))
        if not any(when > now for when in every):
            return None
        return [when for when in every if now < when <= horizon]
    bounded = recurrence.replace(until=min(until, horizon) if until else horizon)
    return [when for when in bounded if when > now]


def _impossible(parts: dict[str, str]) -> bool:
    """True for BYMONTH/BYMONTHDAY pairs no calendar has (Feb 30, Apr 31).

    dateutil searches such a rule up to the year 9999 before giving up.
    """
    days = [int(d) for d in parts.get("BYMONTHDAY", "").split(",") if d.lstrip("+").isdigit()]
    months = [int(m) for m in parts.get("BYMONTH", "").split(",") if m.isdigit()]
    if not days or not months or len(days) != len(parts["BYMONTHDAY"].split(",")):
        return False
    longest = max(_MONTH_DAYS.get(month, 31) for month in months)
    return min(days) > longest


def _basic_until(match: re.Match[str]) -> str:
    year, month, day, hour, minute, second = match.groups()
    if hour is None:
        return f"UNTIL={year}{month}{day}T235959Z"
    return f"UNTIL={year}{month}{day}T{hour}{minute}{second}Z"


def _iso(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("z", "Z"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _short(seconds: float) -> str:
    if seconds % 86400 == 0:
        return f"{seconds / 86400:g} d"
    if seconds % 3600 == 0:
        return f"{seconds / 3600:g} h"
    return f"{seconds / 60:g} min"


def next_allowed(due: datetime, hints: FeedHints | None, limit: datetime) -> datetime:
    """Move ``due`` out of the feed's skipHours/skipDays, never past ``limit``.

    Args:
        due: the planned attempt time (UTC).
        hints: the feed's hints or None.
        limit: the latest time the attempt may be moved to (UTC).
    Returns:
        ``due`` if it is allowed, else the start of the first allowed hour
        after it plus ``due``'s minutes and seconds past its hour (so the
        time stays off round clock times), or ``due`` unchanged when no
        allowed hour comes before ``limit``.
    """
    if hints is None or not (hints.skip_hours or hints.skip_days):
        return due
    candidate = due
    while candidate <= limit:
        if candidate.hour not in hints.skip_hours and candidate.weekday() not in hints.skip_days:
            return candidate
        candidate += timedelta(hours=1)
    return due
