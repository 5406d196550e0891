"""The planet's ``language`` as the pages speak it: month names and dates from CLDR (Babel's locale data).

:func:`locale_of` is the Babel locale for a BCP 47 tag (``de-AT`` -> ``de_AT``; one Babel has no data
for falls back to its language, then to English), so a tag syndicator accepts never fails a build.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import lru_cache

from babel import Locale, UnknownLocaleError
from babel.dates import format_skeleton

__all__ = ["locale_of", "month_namer"]


@lru_cache(maxsize=64)
def locale_of(tag: str) -> Locale:
    """The Babel Locale of the BCP 47 ``tag`` (its language alone when Babel has no data for the whole
    tag, English when it has none for the language either)."""
    for candidate in (tag, tag.split("-")[0]):
        try:
            return Locale.parse(candidate, sep="-")
        except (ValueError, UnknownLocaleError):
            continue
    return Locale("en")


def month_namer(tag: str) -> Callable[[str], str]:
    """``name("2026-11")``: a month as a heading shows it in the language ``tag`` ("November 2026",
    "novembre 2026", CLDR's ``yMMMM`` skeleton, standalone form)."""
    locale = locale_of(tag)

    def name(month: str) -> str:
        year, number = (int(part) for part in month.split("-"))
        return format_skeleton("yMMMM", date(year, number, 1), locale=locale)

    return name
