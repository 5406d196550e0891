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

The RRULE of ``podcast:updateFrequency`` is read by :mod:`recurrence`, which
bounds the work whatever the rule and its dtstart say.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from syndicator.dates import http_date
from syndicator.feedtypes import FeedHints
from syndicator.parse.recurrence import RRULE_CEILING, rrule_interval

__all__ = ["Hint", "document_hints", "from_document", "http_freshness", "next_allowed", "rrule_interval"]

HEAD_LIMIT = 256 * 1024
SY_NS = "http://purl.org/rss/1.0/modules/syndication/"
PODCAST_NS = "https://podcastindex.org/namespace/1.0"
_PERIODS = {"hourly": 3600.0, "daily": 86400.0, "weekly": 7 * 86400.0, "monthly": 30 * 86400.0, "yearly": 365 * 86400.0}
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# The head is hostile text: no pattern below may rescan it from many start
# positions. Each starts at a fixed string or at the start of a name run
# (the lookbehind), runs possessively over a name, and its other runs end
# at the next quote, "<" or ">"; unclosed elements are found with str.find.
_FIRST_ITEM = re.compile(r"<(?:[\w.-]++:)?(?:item|entry)[\s>/]")
_XMLNS = re.compile(r"""xmlns:([\w.-]++)\s*+=\s*+["']([^"']*+)["']""")
_ATTR = re.compile(r"""(?<![\w:.-])([\w:.-]++)\s*+=\s*+(?:"([^"]*+)"|'([^']*+)')""")


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
        head = head[: first.start()]
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
        skip_days=tuple(
            sorted({_DAYS.index(d.lower()) for d in _children(head, "skipDays", "day") if d.lower() in _DAYS})
        ),
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
    return {
        key.lower(): html.unescape(a if a is not None and a != "" else b or "")
        for key, a, b in _ATTR.findall(head[match.end() : end])
    }


def _children(head: str, parent: str, child: str) -> list[str]:
    """Texts of ``<child>`` elements inside the first ``<parent>`` element that is closed."""
    opening = re.search(rf"<{parent}\s*+>", head)
    closing = re.compile(rf"</{parent}\s*+>").search(head, opening.end()) if opening else None
    if opening is None or closing is None:  # an opening later than the first closes no sooner
        return []
    inner = head[opening.end() : closing.start()]
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
