"""The planet's ``language`` as the pages speak it: month names and dates from CLDR (Babel's locale data).

:class:`PageDates` writes the pages' times: the ``date_format`` (strftime) with its week day and month
names (``%A %a %B %b``) in the planet's language, whatever the machine's locale, and the front page's
day headings (English: "Monday 30 November 2026"; another language: CLDR's full date, "Montag, 30.
November 2026").

:func:`locale_of` is the Babel locale for a BCP 47 tag (``de-AT`` -> ``de_AT``; one Babel has no data
for falls back to its language, then to English), so a tag syndicator accepts never fails a build.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo

from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_skeleton
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

from syndicator.errors import RenderError

__all__ = ["CATALOGUES", "PageDates", "catalogue_folders", "locale_of", "month_namer", "translations"]

#: The catalogues shipped with syndicator: ``LANG/LC_MESSAGES/messages.po`` (and ``messages.pot``, the text
#: to translate, made from the templates: docs/languages.md).
CATALOGUES = Path(__file__).resolve().parent.parent / "locales"

#: The strftime codes that write names: week days and months, wide and abbreviated.
_NAMES = re.compile(r"%([AaBb%])")


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


def catalogue_folders(templates: Path | None) -> tuple[Path, ...]:
    """Where catalogues are looked for, the first that has one for the language winning: a ``locales/``
    folder beside the ``--templates`` folder's templates (a theme's own words), then the bundled ones."""
    own = (templates / "locales",) if templates is not None and (templates / "locales").is_dir() else ()
    return (*own, CATALOGUES)


def translations(tag: str, folders: Sequence[Path] = (CATALOGUES,)) -> NullTranslations:
    """The page text of the language ``tag`` (BCP 47): the catalogue ``LANG_TERRITORY`` or ``LANG`` of
    the first of ``folders`` that has one (``de-AT`` -> ``de_AT``, else ``de``), compiled from its
    ``messages.po``; English (the text as the templates write it) for a language none ships.

    Raises:
        RenderError: a catalogue that cannot be read, naming its file.
    """
    locale = locale_of(tag)
    names = [str(locale), locale.language] if locale.territory else [locale.language]
    for folder in folders:
        for name in names:
            path = folder / name / "LC_MESSAGES" / "messages.po"
            if path.is_file():
                return _compiled(path, path.stat().st_mtime_ns)
    return NullTranslations()


@lru_cache(maxsize=16)
def _compiled(path: Path, _mtime: int) -> Translations:
    """The catalogue ``path`` (a .po file) compiled in memory, once per process and version of the file."""
    try:
        with path.open("rb") as po:
            catalog = read_po(po)
    except (OSError, ValueError, SyntaxError) as error:
        raise RenderError(f"{path}: cannot read this translation catalogue: {error}") from error
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(compiled, domain="messages")


class PageDates:
    """The pages' times in the zone ``timezone`` (IANA name), written with ``date_format`` (strftime) in
    the language ``tag`` (BCP 47): ``dates(moment)`` or ``dates(moment, form)`` (str), the ``local``
    filter of the templates; :meth:`heading` for a day's heading."""

    def __init__(self, timezone: str, date_format: str, tag: str) -> None:
        self.zone, self.form, self.tag = ZoneInfo(timezone), date_format, tag
        self.locale = locale_of(tag)

    def __call__(self, moment: datetime, form: str | None = None) -> str:
        """``moment`` (aware) in the planet's zone, as ``form`` (else ``date_format``) writes it."""
        local = moment.astimezone(self.zone)
        return local.strftime(_NAMES.sub(lambda code: self._name(local, code[1]), form or self.form))

    def _name(self, moment: datetime, code: str) -> str:
        """The name strftime's ``%code`` writes, in the planet's language (a ``%`` doubled)."""
        if code == "%":
            return "%%"
        if code in "Aa":
            names = self.locale.days["format"]["wide" if code == "A" else "abbreviated"]
            return str(names[moment.weekday()]).replace("%", "%%")
        names = self.locale.months["format"]["wide" if code == "B" else "abbreviated"]
        return str(names[moment.month]).replace("%", "%%")

    def heading(self, day: str) -> str:
        """A day in ISO 8601 (``2026-11-30``) as a front-page heading in the planet's language."""
        moment = date.fromisoformat(day)
        if self.locale.language == "en":
            names = self.locale.days["format"]["wide"], self.locale.months["format"]["wide"]
            return f"{names[0][moment.weekday()]} {moment.day} {names[1][moment.month]} {moment.year}"
        return format_date(moment, "full", locale=self.locale)
