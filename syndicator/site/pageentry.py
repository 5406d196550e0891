"""An entry as the pages and feeds show it (:class:`PageEntry`): plain text or safe HTML, cut to size.

:func:`page_entry` makes one from a selected entry: its atom:id
(:func:`atom_id`), a title that is never empty, the author claimed or the
site's name, dates in RFC 3339 and in the planet's time zone, the summary
cut to ``summary_chars``, the content led by the entry's image, its
enclosures (:mod:`mediaview`), its language and direction, and its categories. Pure: the
same entry and clock give the same page entry.
"""

from __future__ import annotations

import calendar
import hashlib
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from markupsafe import Markup

from syndicator.configtypes import Site
from syndicator.dates import isoformat
from syndicator.feedtypes import Entry, SelectedEntry
from syndicator.language import direction
from syndicator.parse.authors import author_name
from syndicator.parse.sanitize import html_to_text, one_line, truncate_html
from syndicator.site.mediaview import PageEnclosure, page_enclosures, shown_image, with_image
from syndicator.urls import scheme, split

#: Longest title (and author) shown, in characters, "…" included: a feed's 2 MB title must not
#: make a 2 MB page. Longer ones are cut on a word boundary.
TITLE_CHARS = 300
AUTHOR_CHARS = 100
#: An absolute IRI (RFC 3987) as atom:id needs it (RFC 4287 section 4.2.6):
#: a scheme, then no space, control character or character IRIs exclude.
_IRI = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f-\x9f<>"{}|\\^`]+$')
#: Schemes that run or render script when followed. An entry id with one is replaced like a
#: non-URI id: some readers link an entry by its id when it has no link of its own.
_SCRIPT_SCHEMES = {"javascript", "vbscript", "data"}


@dataclass(frozen=True)
class PageEntry:
    """One entry as templates see it: every string is plain text or safe HTML."""

    atom_id: str
    title: str
    link: str | None
    author: str  # the entry's author, else the site's name
    author_known: bool  # False when ``author`` is the site's name: no author is claimed in feeds
    site: Site
    site_name: str
    site_link: str | None
    site_feed: str | None  # None for a local file: its path is not published
    published: str  # RFC 3339, UTC
    updated: str  # RFC 3339, UTC
    human_date: str
    day: str  # the day it was published in the planet's timezone, ISO 8601 (2026-11-30): the front page's groups
    day_heading: str  # that day as a heading shows it: "Monday 30 November 2026"
    summary: Markup
    content: Markup
    more: bool  # the summary was cut, or the content holds more than it shows
    enclosures: tuple[PageEnclosure, ...] = ()
    image: str | None = None  # an image beside the text, shown because the summary shows none
    image_alt: str = ""
    image_url: str | None = None  # the entry's image (JSON Feed "image"), shown or not
    language: str | None = None  # BCP 47 tag: the site's ``language``, else the entry's own; None when unknown
    direction: str = "auto"  # "rtl" or "ltr" from ``language`` (language.direction), "auto" without one
    content_src: str | None = None  # where the content is when the feed published it out of line (Atom src)
    content_type: str = ""  # its media type, or ""
    categories: tuple[str, ...] = ()  # the entry's categories (tags), plain text, each once (parse/categories.py)
    anchor: str = ""  # the entry's id on a page (``id="e-..."``), the same on every page and build (:func:`anchor`)


def atom_id(entry_id: str, feed: str) -> str:
    """The atom:id of an entry (str).

    The id the entry's own feed gave it when that is an absolute IRI (a
    fingerprint id, ``urn:sha256:...``, is one) that :func:`urls.split`
    can read and whose scheme runs no script; otherwise, e.g. a bare number
    as many RSS guids are, ``http://[oops/1`` (a malformed IP literal) or
    ``javascript:...``, a ``urn:uuid:`` made from the feed URL and that id
    (RFC 4122 name-based, SHA-1), the same on every build.
    """
    if _IRI.match(entry_id) and split(entry_id) is not None and scheme(entry_id) not in _SCRIPT_SCHEMES:
        return entry_id
    return uuid.uuid5(uuid.NAMESPACE_URL, f"{feed}#{entry_id}").urn


def page_entry(
    selected: SelectedEntry,
    summary_chars: int,
    local: Callable[..., str],
    heading: Callable[[str], str] | None = None,
) -> PageEntry:
    """The entry ``selected`` as templates see it (PageEntry), its summary cut to ``summary_chars``
    characters; ``local(moment, form=None)`` writes a time as the pages show it (str), ``heading(day)``
    a day (``2026-11-30``) as its heading (:func:`day_heading`, English, when not given). The entry of a
    site with ``summary_only`` has that summary as its content too, and no out-of-line content."""
    entry, site = selected.entry, selected.site
    date = selected.date
    day = local(date, "%Y-%m-%d")
    updated = max(entry.updated or date, selected.stored.changed or date, date)
    summary_source = entry.summary or entry.content or elsewhere(entry.content_src)
    body = entry.content or summary_source
    language = site.language or entry.language
    summary = truncate_html(summary_source, summary_chars)
    if site.summary_only:  # its summary, never its content: the pages' and every feed's
        body, summary_source = summary, entry.summary or summary
    # author_name again: snapshots stored by earlier versions may hold an e-mail address.
    author = shorten(author_name(entry.author) or "", AUTHOR_CHARS)
    alt = shorten(entry.title, TITLE_CHARS) or f"Image from {site.name}"
    return PageEntry(
        atom_id=atom_id(entry.id, site.feed),
        title=shorten(entry.title, TITLE_CHARS)
        or shorten(html_to_text(summary_source), 80)
        or _file_name(entry)
        or "(untitled)",
        link=entry.link,
        author=author or site.name,
        author_known=bool(author),
        site=site,
        site_name=site.name,
        site_link=site.link,
        site_feed=site.public_feed,
        published=isoformat(date),
        updated=isoformat(updated),
        human_date=local(date),
        day=day,
        day_heading=(heading or day_heading)(day),
        summary=Markup(summary),  # noqa: S704 - sanitized in parse
        content=Markup(with_image(body, entry.image, alt)),  # noqa: S704 - sanitized in parse
        more=summary != summary_source or _holds_more(entry.content, summary_source),
        enclosures=page_enclosures(entry.enclosures),
        image=shown_image(summary, entry.image),
        image_alt=alt,
        image_url=shown_image("", entry.image),
        language=language,
        direction=direction(language),
        content_src=None if entry.content or site.summary_only else entry.content_src,
        content_type=entry.content_type,
        categories=entry.categories,
        anchor=anchor(entry.id, f"file:{site.name}" if site.local else site.feed),
    )


def anchor(entry_id: str, feed: str) -> str:
    """The HTML id of an entry on every page that shows it: ``e-`` and 12 hex digits of the SHA-256
    of its feed and id (str), so a link to one post on the planet (``archive/2026-11.html#e-...``)
    stays the same on every build and page. A local file's ``feed`` is ``file:`` and its site's name,
    not its path: the anchors do not move with the checkout."""
    return "e-" + hashlib.sha256(f"{feed}\n{entry_id}".encode("utf-8", "surrogatepass")).hexdigest()[:12]


def elsewhere(src: str | None) -> str:
    """The text of an entry whose content is published out of line and that has no summary: a link
    to that content, the URL as its text (HTML str; "" without ``src``, an http(s) URL)."""
    if not src:
        return ""
    return str(Markup('<p><a href="{0}">{0}</a></p>').format(src))


def day_heading(day: str) -> str:
    """A day given in ISO 8601 (``2026-11-30``) as a front-page heading: ``Monday 30 November 2026``.

    Week day and month names are English, as the pages are (``lang="en"``), whatever the machine's locale.
    """
    year, month, number = (int(part) for part in day.split("-"))
    return f"{_WEEKDAYS[calendar.weekday(year, month, number)]} {number} {_MONTHS[month - 1]} {year}"


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def _holds_more(content: str, shown: str) -> bool:
    """True when ``content`` has text or images that ``shown`` (the summary's source) lacks."""
    return bool(content) and (
        html_to_text(content) != html_to_text(shown) or content.count("<img") > shown.count("<img")
    )


def shorten(text: str, limit: int) -> str:
    """Plain text cut to at most ``limit`` characters, "…" included (str).

    The cut falls on a word boundary and is marked " …", as front-page
    summaries are; a word longer than half the limit is cut inside. Text
    that fits is returned unchanged.
    """
    if len(text) <= limit:
        return text
    cut = text[: limit - 2]
    if not text[limit - 2].isspace():
        space = cut.rfind(" ")
        if space < limit // 2:
            return text[: limit - 1].rstrip() + "…"
        cut = cut[:space]
    return cut.rstrip() + " …"


def _file_name(entry: Entry) -> str:
    """The file name of an entry's first enclosure (``episode-12.mp3``), a title for an entry that has
    nothing else to show, or ""."""
    for enclosure in entry.enclosures:
        parts = split(enclosure.url)
        name = unquote(parts.path.rstrip("/").rsplit("/", 1)[-1]) if parts is not None else ""
        if name.strip():
            return shorten(one_line(name), 80)
    return ""
