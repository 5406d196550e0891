"""podcast:updateFrequency: an iCalendar RRULE read as a release interval, with bounded work.

Pure: values in, values out. The reading (seed 001; docs/reference/schedule.md,
"Publisher hints"): the mean gap between the rule's occurrences in the 28 days after
``now`` (or the wait until the first, if longer), clamped to [15 min, 7 d];
a rule finer than daily is read as its nominal step; an UNTIL already past
or a used-up COUNT means no further releases (7 d); a rule with no
occurrence at all gives no hint.

``dateutil.rrule`` walks a rule period by period from its dtstart, every
time of day of every day, and walks a rule that no calendar satisfies to
the year 9999: a dense rule from 1900 took minutes, an impossible DAILY
rule 7 s. The work here is bounded whatever dtstart says:

1. A rule without COUNT has its dtstart moved to the start of the period
   (FREQ x INTERVAL) that holds ``now``, by whole periods, at midnight; the
   BYxxx values dateutil derives from dtstart (a WEEKLY rule's weekday, a
   MONTHLY rule's day, a YEARLY rule's month and day, the time of day) are
   passed explicitly, so no occurrence after ``now`` changes.
2. The question is translated by a multiple of :data:`CYCLE_YEARS`: the
   Gregorian calendar repeats exactly every 400 years (146,097 days,
   20,871 weeks), so occurrences translate exactly. It lands 401 to 800
   years before dateutil's last year, where a rule with nothing left ends:
   every walk covers at most 800 years (and one period). A COUNT rule,
   counted from its dtstart, is translated from there and read for at
   most :data:`RRULE_MAX_COUNT` occurrences.
3. A rule's times of day (BYHOUR x BYMINUTE x BYSECOND, e.g. every minute)
   are combined with its days here, so dateutil walks days, not minutes,
   and a DAILY or WEEKLY rule that filters days is walked a year at a time
   (:func:`_days`). A rule with BYSETPOS (which picks among the times and
   days of a period) is walked as written, once its days are known to
   exist: the slowest case left, a DAILY rule whose BYSETPOS never picks,
   walks its 800 years in about a second.
4. At most :data:`RRULE_MAX_OCCURRENCES` occurrences after ``now`` are
   collected: that many within 28 days already put the mean gap below the
   15-minute floor.

``dateutil.rrule`` is used here and nowhere else: recurrence rules are a
scheduling matter, and dates.py stays the home of date parsing. dateutil
exposes no accessors for a rule's parts; the ``_`` attributes read here
(``_dtstart``, ``_until``, ``_byhour`` ...) have been stable since 2.7.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import MAXYEAR, UTC, date, datetime, time, timedelta
from itertools import islice
from typing import Any

from dateutil.rrule import DAILY, MONTHLY, WEEKLY, YEARLY, rrule, rrulestr

#: The bounds podcast:updateFrequency intervals are clamped to (seed 001), seconds.
RRULE_FLOOR = 15 * 60.0
RRULE_CEILING = 7 * 86400.0
#: Occurrences are looked for this far after ``now``; fewer than two there
#: means "at most weekly", i.e. the ceiling.
RRULE_HORIZON = timedelta(days=28)
#: A COUNT rule is expanded to at most this many occurrences.
RRULE_MAX_COUNT = 1000
#: Occurrences collected within the horizon; this many put the mean gap below the floor.
RRULE_MAX_OCCURRENCES = int(RRULE_HORIZON.total_seconds() // RRULE_FLOOR) + 2
#: The Gregorian calendar repeats exactly every this many years.
CYCLE_YEARS = 400

_FREQ_SECONDS = {
    "SECONDLY": 1.0,
    "MINUTELY": 60.0,
    "HOURLY": 3600.0,
    "DAILY": 86400.0,
    "WEEKLY": 7 * 86400.0,
    "MONTHLY": 30 * 86400.0,
    "YEARLY": 365 * 86400.0,
}
_MONTH_DAYS = {2: 29, 4: 30, 6: 30, 9: 30, 11: 30}
_ISO_UNTIL = re.compile(r"UNTIL=(\d{4})-?(\d{2})-?(\d{2})(?:T(\d{2}):?(\d{2}):?(\d{2})(?:\.\d+)?Z?)?", re.I)
#: What dateutil raises on a rule it cannot read or expand.
_RULE_ERRORS = (ValueError, TypeError, OverflowError, KeyError, IndexError)


@dataclass(frozen=True)
class _Found:
    """What a bounded walk of a rule found, in the walk's (translated) frame.

    Attributes:
        upcoming: occurrences in (now, now + horizon], at most RRULE_MAX_OCCURRENCES.
        later: some occurrence follows ``now``.
        ever: the rule has some occurrence at all (a COUNT rule's walk from dtstart).
        now: ``now`` in the walk's frame.
    """

    upcoming: list[datetime]
    later: bool
    ever: bool
    now: datetime


def rrule_interval(rule: str, dtstart: str | None, now: datetime) -> tuple[float | None, str]:
    """The release interval a podcast:updateFrequency RRULE implies (seed 001).

    See the module docstring for the reading and its bounds. UNTIL may be
    written in ISO form with hyphens (as the namespace's own examples do);
    a missing dtstart means midnight UTC of ``now``'s day.

    Args:
        rule: the rrule attribute, e.g. ``FREQ=WEEKLY;BYDAY=MO,WE``.
        dtstart: the dtstart attribute (ISO 8601) or None.
        now: the build's clock (UTC).
    Returns:
        (seconds, note): seconds is None when the rule cannot be read or has
        no occurrence at all; note is "" or a short explanation starting
        with ": ". Never raises.
    """
    text = _ISO_UNTIL.sub(_basic_until, rule.strip().upper())
    parts = dict(part.partition("=")[::2] for part in text.split(";") if "=" in part)
    nominal = _nominal(parts)
    try:
        recurrence = _read(text, parts, dtstart, now)
        if nominal is None or recurrence is None:
            return None, ""
        if recurrence._until is not None and recurrence._until < now:
            return RRULE_CEILING, ": UNTIL has passed, no further releases"
        if nominal < 86400:  # sub-daily: the nominal step
            return min(RRULE_CEILING, max(RRULE_FLOOR, nominal)), ""
        if _impossible(parts):
            return None, ""
        return _interval(recurrence, now)
    except _RULE_ERRORS:
        return None, ""


def upcoming(rule: str, dtstart: str | None, now: datetime) -> list[datetime]:
    """The occurrences of a daily or coarser rule that :func:`rrule_interval` reads.

    Args:
        rule, dtstart, now: as for :func:`rrule_interval`.
    Returns:
        the occurrences in (now, now + 28 d], in order, at most
        :data:`RRULE_MAX_OCCURRENCES` (UTC datetimes); [] for a rule that
        cannot be read, is finer than daily, or has none there. Never raises.
    """
    text = _ISO_UNTIL.sub(_basic_until, rule.strip().upper())
    parts = dict(part.partition("=")[::2] for part in text.split(";") if "=" in part)
    try:
        recurrence = _read(text, parts, dtstart, now)
        if recurrence is None or recurrence._freq not in (DAILY, WEEKLY, MONTHLY, YEARLY):
            return []
        found = _counted(recurrence, now) if recurrence._count is not None else _upcoming(recurrence, now)
    except _RULE_ERRORS:
        return []
    offset = found.now - now  # a whole number of 400-year cycles: a fixed number of days
    return [when - offset for when in found.upcoming]


def _read(text: str, parts: dict[str, str], dtstart: str | None, now: datetime) -> Any | None:
    """The rule as a dateutil ``rrule`` (its parts read from private attributes), or None.

    Raises:
        ValueError, TypeError, OverflowError, KeyError, IndexError: dateutil cannot read it.
    """
    if "COUNT" in parts and "UNTIL" in parts:  # RFC 5545: never both
        return None
    parsed = rrulestr(text, dtstart=_iso(dtstart) or now.replace(hour=0, minute=0, second=0, microsecond=0))
    return parsed if isinstance(parsed, rrule) else None  # with EXDATE or RDATE lines: a set, not one rule


def _nominal(parts: dict[str, str]) -> float | None:
    """FREQ x INTERVAL in seconds, or None when either is unreadable."""
    step = _FREQ_SECONDS.get(parts.get("FREQ", ""))
    interval = parts.get("INTERVAL", "1")
    if step is None or not _digits(interval) or int(interval) < 1:
        return None
    return step * int(interval)


def _interval(recurrence: Any, now: datetime) -> tuple[float | None, str]:
    """(seconds, note) of a daily or coarser rule, from a bounded walk."""
    if recurrence._count is not None:
        found = _counted(recurrence, now)
        if not found.ever:
            return None, ""
        if not found.later:
            return RRULE_CEILING, ": COUNT is used up, no further releases"
    else:
        found = _upcoming(recurrence, now)
        if not found.later:
            if recurrence._until is None or not _upcoming(recurrence.replace(until=None), now).later:
                return None, ""
            return RRULE_CEILING, ": no further releases before UNTIL"
    upcoming = found.upcoming
    if len(upcoming) < 2:
        return RRULE_CEILING, ""
    gap = (upcoming[-1] - upcoming[0]).total_seconds() / (len(upcoming) - 1)
    wait = (upcoming[0] - found.now).total_seconds()
    return min(RRULE_CEILING, max(RRULE_FLOOR, gap, wait)), ""


def _counted(recurrence: Any, now: datetime) -> _Found:
    """A COUNT rule's first occurrences (at most RRULE_MAX_COUNT), read from its dtstart in the late frame."""
    years = _cycles(recurrence._dtstart.year)
    late = _translate(recurrence.replace(count=None), years)
    every = list(islice(_each(late), min(recurrence._count, RRULE_MAX_COUNT)))
    late_now = _shift(now, years)
    if late_now is None:  # now lies past the walk: nothing examined follows it
        return _Found([], False, bool(every), now)
    upcoming, later = _collect(every, late_now)
    return _Found(upcoming, later, bool(every), late_now)


def _upcoming(recurrence: Any, now: datetime) -> _Found:
    """The occurrences after ``now`` of a rule without COUNT: rebased, translated, bounded."""
    rebased = _rebase(recurrence, now)
    years = _cycles(max(now, rebased._dtstart).year)
    late, late_now = _translate(rebased, years), _shift(now, years)
    if late_now is None:  # only for a ``now`` near the calendar's ends
        raise ValueError("now lies outside the calendar's translatable range")
    if late._bysetpos and not _collect(_each(late.replace(bysetpos=None), after=late_now), late_now)[1]:
        return _Found([], False, False, late_now)  # BYSETPOS picks among days there are none of: no walk
    upcoming, later = _collect(_each(late, after=late_now), late_now)
    return _Found(upcoming, later, later, late_now)


def _collect(occurrences: Iterable[datetime], now: datetime) -> tuple[list[datetime], bool]:
    """(occurrences in (now, now + horizon], at most RRULE_MAX_OCCURRENCES; whether any follows now)."""
    horizon = now + RRULE_HORIZON
    found: list[datetime] = []
    for when in occurrences:
        if when <= now:
            continue
        if when > horizon or len(found) >= RRULE_MAX_OCCURRENCES:
            return found, True
        found.append(when)
    return found, bool(found)


def _each(rule: Any, after: datetime | None = None) -> Iterator[datetime]:
    """A rule's occurrences in order (its COUNT ignored): dateutil walks its days (:func:`_days`)
    and its times of day are added here; a BYSETPOS rule is walked as written.

    Whole days no later than ``after`` are skipped without looking at their times.
    """
    if rule._bysetpos:
        yield from rule
        return
    start, until = rule._dtstart, rule._until
    times = sorted(
        {timedelta(hours=h, minutes=m, seconds=s) for h in rule._byhour for m in rule._byminute for s in rule._bysecond}
    )
    for day in _days(rule, start.replace(hour=0, minute=0, second=0)) if times else ():
        if after is not None and day + times[-1] <= after:
            continue
        for offset in times:
            when = day + offset
            if until is not None and when > until:
                return
            if when >= start:
                yield when


def _days(rule: Any, midnight: datetime) -> Any:
    """The rule's days (at midnight), from ``midnight``.

    A DAILY or WEEKLY rule of INTERVAL 1 that filters days (by weekday, day
    of month or year, week number or Easter) picks the same days as a
    YEARLY rule with those filters, which dateutil walks a year rather than
    a day or a week at a time: 20 times faster through a year with none.
    """
    fixed = {**_explicit(rule), "byhour": 0, "byminute": 0, "bysecond": 0}
    days = rule.replace(dtstart=midnight, **fixed)
    filters = (rule._byweekday, rule._bymonthday, rule._bynmonthday, rule._byyearday, rule._byweekno, rule._byeaster)
    if rule._freq in (DAILY, WEEKLY) and rule._interval == 1 and not rule._bynweekday and any(filters):
        return days.replace(freq=YEARLY, **fixed)
    return days


def _rebase(recurrence: Any, now: datetime) -> Any:
    """The rule with dtstart moved forward by whole periods to the period holding ``now``.

    Returns the rule unchanged when ``now`` is in its first period (or before).
    """
    start = _period_start(recurrence, now)
    return recurrence if start is None else recurrence.replace(dtstart=start, **_explicit(recurrence))


def _explicit(recurrence: Any) -> dict[str, Any]:
    """The BYxxx values dateutil derived from the rule's dtstart, as keyword arguments
    that keep them when dtstart (or FREQ) changes."""
    fixed: dict[str, Any] = {
        "byhour": recurrence._byhour,
        "byminute": recurrence._byminute,
        "bysecond": recurrence._bysecond,
    }
    derived = {"bymonth": recurrence._bymonth, "bymonthday": recurrence._bymonthday, "byweekday": recurrence._byweekday}
    # dateutil records a value it derived from dtstart as None in _original_rule.
    fixed.update({name: value for name, value in derived.items() if recurrence._original_rule.get(name, ()) is None})
    return fixed


def _period_start(recurrence: Any, now: datetime) -> datetime | None:
    """Midnight starting the rule's period that holds ``now``, or None if that is its first period."""
    start, step, freq = recurrence._dtstart, recurrence._interval, recurrence._freq
    if start >= now:
        return None
    if freq in (DAILY, WEEKLY):
        days = 7 * step if freq == WEEKLY else step
        first = start.date() - timedelta(days=(start.weekday() - recurrence._wkst) % 7 if freq == WEEKLY else 0)
        periods = (now.date() - first).days // days
        day = first + timedelta(days=periods * days)
    elif freq == MONTHLY:
        periods = ((now.year - start.year) * 12 + now.month - start.month) // step
        months = start.month - 1 + periods * step
        day = date(start.year + months // 12, months % 12 + 1, 1)
    elif freq == YEARLY:
        periods = (now.year - start.year) // step
        day = date(start.year + periods * step, 1, 1)
    else:
        return None
    return datetime.combine(day, time(0), tzinfo=start.tzinfo) if periods >= 1 else None


def _cycles(year: int) -> int:
    """Years, a multiple of CYCLE_YEARS, that move ``year`` to 401-800 years before the calendar's last."""
    return CYCLE_YEARS * ((MAXYEAR - CYCLE_YEARS - 1 - year) // CYCLE_YEARS)


def _translate(recurrence: Any, years: int) -> Any:
    """The rule with dtstart (and UNTIL) moved by ``years``, a multiple of CYCLE_YEARS.

    An UNTIL moved past the calendar's end is dropped: the walk ends before it.
    """
    start, until = _shift(recurrence._dtstart, years), recurrence._until
    if start is None:
        raise ValueError("dtstart lies outside the calendar's translatable range")
    return recurrence.replace(dtstart=start, until=_shift(until, years) if until is not None else None)


def _shift(value: datetime, years: int) -> datetime | None:
    """``value`` moved by ``years`` (a multiple of 400 keeps 29 February valid), None past the calendar."""
    year = value.year + years
    return value.replace(year=year) if 1 <= year <= MAXYEAR - 1 else None


def _impossible(parts: dict[str, str]) -> bool:
    """True for BYMONTH/BYMONTHDAY pairs no calendar has (Feb 30, Apr 31): a quick answer without a walk."""
    days = [int(d) for d in parts.get("BYMONTHDAY", "").split(",") if _digits(d.lstrip("+"))]
    months = [int(m) for m in parts.get("BYMONTH", "").split(",") if _digits(m)]
    if not days or not months or len(days) != len(parts["BYMONTHDAY"].split(",")):
        return False
    longest = max(_MONTH_DAYS.get(month, 31) for month in months)
    return min(days) > longest


def _digits(text: str) -> bool:
    """True for a non-empty run of ASCII digits (str.isdigit alone accepts "²")."""
    return text.isascii() and text.isdigit()


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
