"""Reading feed dates into UTC, with dateutil (:mod:`parse.recurrence` reads RRULEs with it too).

:func:`parse_date` reads, in this order:

1. ISO 8601 / W3C-DTF / RFC 3339 (Atom, RSS 1.0 ``dc:date``, JSON Feed):
   ``2024-03-12``, ``2024-03-12T10:00Z``, ``2024-03-12T10:00:00.5+01:00``,
   ``20240312T100000Z``;
2. RFC 822 / RFC 2822 and their usual variants (RSS ``pubDate``): named
   time zones (``EST``, ``CEST``, ``JST``, see :data:`ZONES`), day names
   that disagree with the date (the day name is ignored), two-digit years
   (as Python's email package and POSIX ``%y`` read them: 00-68 are 20xx,
   69-99 are 19xx; RFC 2822 section 4.3 would put 50-68 in the 1900s, long
   before any feed), and day and
   month names in French, German, Spanish, Italian, Portuguese, Dutch,
   Swedish, Danish, Norwegian, Polish, Turkish and Russian;
3. anything else python-dateutil can read once names are translated,
   provided the text names the year, month and day (``12``, ``Mar 12`` or
   ``10:00`` are unreadable, never completed from the clock).

A year written with leading zeros outside ISO 8601 (``Mon, 01 Jan 0001``,
Go's zero time, which some generators print for an undated page) is
unreadable: both the email package and dateutil would widen it to 2001.

A date without a time zone is read as UTC; one without a time of day is
read as midnight. The result never depends on the clock. :func:`trusted` then decides
whether a date may be used for sorting (DESIGN.md: an untrusted date falls
back to the time the entry was first seen).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime, parsedate_tz
from functools import cache
from typing import Any

#: A date written in more characters than this is unreadable.
DATE_MAX_CHARS = 256

#: A date more than this far in the future is not trusted (seconds).
FUTURE_SLACK = 86400.0
#: Dates before this are not trusted: no feed predates the web's feeds.
EARLIEST = datetime(1995, 1, 1, tzinfo=UTC)

#: Named time zones seen in feeds -> offset east of UTC in minutes. Where a
#: name is ambiguous the reading most common in feeds wins (IST: India).
ZONES = {
    "ut": 0,
    "utc": 0,
    "gmt": 0,
    "z": 0,
    "wet": 0,
    "west": 60,
    "bst": 60,
    "cet": 60,
    "cest": 120,
    "met": 60,
    "mest": 120,
    "mez": 60,
    "mesz": 120,
    "eet": 120,
    "eest": 180,
    "msk": 180,
    "ist": 330,
    "sgt": 480,
    "hkt": 480,
    "awst": 480,
    "jst": 540,
    "kst": 540,
    "acst": 570,
    "aest": 600,
    "aedt": 660,
    "nzst": 720,
    "nzdt": 780,
    "est": -300,
    "edt": -240,
    "cst": -360,
    "cdt": -300,
    "mst": -420,
    "mdt": -360,
    "pst": -480,
    "pdt": -420,
    "akst": -540,
    "akdt": -480,
    "hst": -600,
    "ast": -240,
    "adt": -180,
    "nst": -210,
    "ndt": -150,
    "brt": -180,
    "art": -180,
}
_MONTH_NAMES = {
    1: "jan january janv janvier januar janner enero ene gennaio gen janeiro januari "
    "stycznia styczen sty ocak января янв январь",
    2: "feb february fevr fev fevrier februar febrero febbraio fevereiro februari lutego luty lut "
    "subat февраля фев февраль",
    3: "mar march mars marz mrz maerz marzo marco maart marts marca marzec mart марта мар март",
    4: "apr april avr avril abril abr aprile kwietnia kwiecien kwi nisan апреля апр апрель",
    5: "may mai mayo maggio mag maio mei maj maja mayis мая май",
    6: "jun june juin juni junio giugno giu junho czerwca czerwiec cze haziran июня июн июнь",
    7: "jul july juil juillet juli julio luglio lug julho lipca lipiec lip temmuz июля июл июль",
    8: "aug august aout agosto ago augustus augusti sierpnia sierpien sie agustos августа авг август",
    9: "sep sept september septembre septiembre setiembre settembre set setembro "
    "wrzesnia wrzesien wrz eylul сентября сен сентябрь",
    10: "oct october octobre okt oktober octubre ottobre ott outubro out pazdziernika pazdziernik "
    "paz ekim октября окт октябрь",
    11: "nov november novembre noviembre novembro listopada listopad lis kasim ноября ноя ноябрь",
    12: "dec december decembre dez dezember diciembre dic dicembre dezembro desember grudnia "
    "grudzien gru aralik декабря дек декабрь",
}
MONTHS = {name: number for number, names in _MONTH_NAMES.items() for name in names.split()}
_ENGLISH = ("", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_ISO = re.compile(
    r"^(\d{4})(?:-?(\d{2})(?:-?(\d{2})(?:[Tt ]+(\d{2}):?(\d{2})(?::?(\d{2})([.,]\d+)?)?)?)?)?"
    r"\s*(?:([Zz]|UTC|GMT)|([+-])(\d{2}):?(\d{2})?)?$"
)
_WORD = re.compile(r"[^\W\d_]+\.?", re.UNICODE)
#: RFC 822 as most feeds write it (RFC 2822 section 3.3): English names, a four-digit year, a
#: numeric zone or GMT/UTC/UT/Z. Read directly, it gives what the general path gives.
_PLAIN_RFC822 = re.compile(
    r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), )?([0-9]{1,2}) "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([1-9][0-9]{3}) "
    r"([0-9]{2}):([0-9]{2})(?::([0-9]{2}))? (?:([+-])([0-9]{2})([0-9]{2})|GMT|UTC|UT|Z)"
)
_MONTH_NUMBERS = {name: number for number, name in enumerate(_ENGLISH) if name}


def parse_date(text: str | None) -> datetime | None:
    """Parse a feed date (see the module docstring) into an aware UTC datetime.

    Returns None when ``text`` is empty or cannot be read, and for a text
    longer than :data:`DATE_MAX_CHARS` characters once white space
    runs are squeezed (no date is written that long; dateutil's work grows
    with the text); never raises.
    """
    if not text or not text.strip():
        return None
    text = " ".join(text.split())
    if len(text) > DATE_MAX_CHARS:
        return None
    try:
        if (found := _iso(text) or _plain_rfc822(text)) or _ZERO_PADDED_YEAR.search(text):
            return found  # the plain RFC 822 form never has a zero-padded year
        return _rfc822(_translate(text)) or _dateutil(_translate(text))
    except (ValueError, OverflowError):
        return None


def _iso(text: str) -> datetime | None:
    match = _ISO.match(text)
    if not match:
        return None
    year, month, day, hour, minute, second, fraction, utc, sign, off_h, off_m = match.groups()
    if fraction is not None and second is None:
        return None
    if month and not day and text[4] != "-":  # ISO 8601 has no compact year-month (YYYYMM)
        return None
    micro = int(round(float("0." + fraction[1:]) * 1_000_000)) if fraction else 0
    value = datetime(
        int(year),
        int(month or 1),
        int(day or 1),
        int(hour or 0),
        int(minute or 0),
        int(second or 0),
        min(micro, 999_999),
        tzinfo=UTC,
    )
    if sign:
        offset = timedelta(hours=int(off_h), minutes=int(off_m or 0))
        value = value.replace(tzinfo=timezone(offset if sign == "+" else -offset))
    return value.astimezone(UTC)


def _plain_rfc822(text: str) -> datetime | None:
    """``text`` read when it matches :data:`_PLAIN_RFC822` (raising ValueError for an impossible date), else None."""
    match = _PLAIN_RFC822.fullmatch(text)
    if not match:
        return None
    day, month, year, hour, minute, second, sign, off_h, off_m = match.groups()
    offset = 0
    if sign:
        offset = (int(off_h) * 3600 + int(off_m) * 60) * (-1 if sign == "-" else 1)
    value = datetime(
        int(year),
        _MONTH_NUMBERS[month],
        int(day),
        int(hour),
        int(minute),
        min(int(second or 0), 59),
        tzinfo=timezone(timedelta(seconds=offset)),
    )
    return value.astimezone(UTC)


def _translate(text: str) -> str:
    """English month names and numeric zones for the names in ``text``; other words dropped.

    When several words name a month (a day name such as Italian "mar" for
    Tuesday), the last one is the month.
    """
    words = list(_WORD.finditer(text))
    months = [m for m in words if _fold(m.group(0)) in MONTHS]
    month = months[-1] if months else None
    parts: list[str] = []
    position = 0
    for match in words:
        parts.append(text[position : match.start()])
        position = match.end()
        word = _fold(match.group(0))
        if match is month:
            parts.append(_ENGLISH[MONTHS[word]])
        elif word in ZONES:
            minutes = ZONES[word]
            parts.append(f" {'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}")
        elif word in ("am", "pm", "t"):
            parts.append(word)
    parts.append(text[position:])
    return " ".join("".join(parts).replace(",", " ").split())


def _fold(word: str) -> str:
    """Lower case, without accents or a trailing dot: 'Févr.' -> 'fevr'."""
    decomposed = unicodedata.normalize("NFKD", word.rstrip(".").lower())
    return "".join(char for char in decomposed if not unicodedata.combining(char)).replace("ı", "i")


#: A year written with leading zeros (``0001``, as Go's zero time prints) after a month name, or a
#: month name and a day: the email package and dateutil would widen it like a two-digit year (2001).
#: No feed's real date is that old: unreadable.
_ZERO_PADDED_YEAR = re.compile(r"[^\W\d_]+\.?,?\s+(?:[0-9]{1,2},?\s+)?0[0-9]{2,3}(?![\d:])")


def _rfc822(text: str) -> datetime | None:
    parts = parsedate_tz(text)
    if parts is None or parts[0] < 1 or not 1 <= parts[1] <= 12:
        return None
    year = parts[0]  # two-digit years already widened by the email package
    offset = timedelta(seconds=parts[9] or 0)
    value = datetime(year, parts[1], parts[2], parts[3], parts[4], min(parts[5], 59), tzinfo=timezone(offset))
    return value.astimezone(UTC)


@cache
def _parser() -> Any:
    """dateutil's parser with a two-digit year rule that ignores the clock (loaded on first use).

    dateutil widens ``24`` to the year within 50 years of today; we use the
    email package's fixed rule instead (00-68 are 20xx, 69-99 are 19xx, as
    POSIX ``%y``), so a date reads the same in every year. Imported here:
    most feeds' dates are ISO 8601 or RFC 822 and never need dateutil.
    """
    from dateutil import parser

    class ParserInfo(parser.parserinfo):
        def convertyear(self, year: int, century_specified: bool = False) -> int:
            if year < 100 and not century_specified:
                return year + (2000 if year < 69 else 1900)
            return int(year)

    return parser.parser(ParserInfo())


#: Two fill-ins for what a text leaves out; they differ in year, month and day.
_DEFAULTS = (datetime(2001, 1, 1), datetime(2002, 2, 2))


def _dateutil(text: str) -> datetime | None:
    """dateutil's reading of ``text``, or None unless it names a full calendar date.

    dateutil fills missing fields from a default date, so ``12`` would become
    the 12th of some month. Parsing with two defaults that differ in year,
    month and day and requiring the same date from both rejects any text
    that leaves the year, month or day out; a missing time of day is midnight.
    """
    try:
        first, second = (_parser().parse(text, default=default, fuzzy=False) for default in _DEFAULTS)
    except (ValueError, OverflowError, TypeError):  # dateutil's ParserError is a ValueError
        return None
    if first != second:
        return None
    if first.tzinfo is None:
        return first.replace(tzinfo=UTC)
    return first.astimezone(UTC)


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
        return None, f"date {isoformat(value)} is more than a day in the future"
    if value < EARLIEST:
        return None, f"date {isoformat(value)} is before 1995"
    return value, None


def isoformat(value: datetime) -> str:
    """RFC 3339 text of a UTC datetime, whole seconds, ``Z`` suffix (str)."""
    return value.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def http_date(value: str | None) -> datetime | None:
    """An HTTP-date header value (RFC 9110 section 5.6.7) as an aware UTC datetime.

    Accepts the IMF-fixdate and the obsolete RFC 850 and asctime forms; a
    date without a zone is read as UTC. Returns None when absent, unreadable
    or beyond the datetime range in UTC (year 9999 at a negative offset).
    """
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value.strip())
        return when.astimezone(UTC) if when.tzinfo is not None else when.replace(tzinfo=UTC)
    except (TypeError, ValueError, IndexError, OverflowError):  # OverflowError: 9999-12-31 west of UTC
        return None
