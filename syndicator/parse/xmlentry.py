"""One entry of an XML feed (feedparser's shape, from either reader) as a Draft.

:func:`xml_entry` turns an entry mapping as feedparser gives it (or
:mod:`fastreader` gives it, in the same shape) into a :class:`Draft`: its
link, the richest body sanitized (:func:`_bodies`), its dates (seed 004
order, read by :mod:`dates`), plain-text title (:func:`text_field`),
author as a name only (:func:`xml_author`), enclosures and image
(:mod:`media`); :func:`xml_language` and :func:`content_src` give its
language and out-of-line content. Choosing the reader, and the feed-level
fields, are :mod:`feed`'s.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from syndicator import dates
from syndicator.dates import DATE_MAX_CHARS
from syndicator.feedtypes import Entry
from syndicator.language import language_tag
from syndicator.parse import media
from syndicator.parse.authors import author_name
from syndicator.parse.identity import Candidate, Draft
from syndicator.parse.limits import RAW_FIELD_FACTOR, TITLE_MAX_CHARS
from syndicator.parse.markup import holds_element
from syndicator.parse.sanitize import clean_html, decode_references, html_to_text, one_line, text_to_html
from syndicator.urls import absolute, is_web


def xml_entry(
    item: Any, feed_link: str | None, url: str, now: datetime, version: str, feed_author: str | None
) -> Draft:
    """One feedparser entry as a Draft, with its enclosures and image (:mod:`media`).

    Relative URLs resolve against the entry's link, else the feed's link,
    else the fetch URL. An entry with nothing to show but its image is
    identified by it too (``Candidate.enclosures``); every other entry keeps
    the identity it always had.
    """
    link = _entry_link(item, feed_link or url)
    bases = (link, feed_link, url)
    summary, content = _bodies(item, bases, url)
    date, updated, note, raw_date = _xml_dates(item, now)
    base = link or feed_link or url
    enclosures = tuple(filter(None, (absolute(e.get("href"), base) for e in item.get("enclosures") or [])))
    title = text_field(item, "title", version)
    guid = one_line(dict.get(item, "id")) or None
    author = xml_author(item) or xml_author(dict.get(item, "source") or {}) or feed_author
    image = media.xml_image(item, base)
    entry = Entry(
        id="",
        title=title,
        link=link,
        author=author,
        date=date,
        updated=updated,
        summary=summary,
        content=content,
        date_note=note,
        enclosures=media.xml_enclosures(item, base),
        image=image,
    )
    if image and not (title or link or summary or content or enclosures):
        enclosures = (image,)
    return Draft(entry, Candidate(guid, link, title, raw_date, enclosures, summary or content))


def xml_language(item: Any) -> str | None:
    """The language an entry states (:func:`language.language_tag`), or None for the feed's.

    In order: the item's own ``dc:language`` or ``language`` element, then the
    ``xml:lang`` in scope of its body (its first content, else its summary),
    then of its title; feedparser gives the ``xml:lang`` in scope of each text
    element as its detail's ``language``, inherited from the entry and the
    feed element (XML 1.0 section 2.12). A value that is no well-formed tag is
    passed over. The feed's own language (RSS ``<language>``, channel
    ``dc:language``, the root's ``xml:lang``) is the caller's fallback.
    """
    contents = dict.get(item, "content") or [{}]
    details = (
        contents[0] if isinstance(contents, list) and contents else {},
        dict.get(item, "summary_detail"),
        dict.get(item, "title_detail"),
    )
    values = [dict.get(item, "language"), *(dict.get(d, "language") for d in details if isinstance(d, dict))]
    return next(filter(None, map(language_tag, values)), None)


def content_src(item: Any, bases: tuple[str | None, ...]) -> dict[str, Any]:
    """``content_src`` and ``content_type`` of an entry whose Atom content is out of line, else {}.

    RFC 4287 section 4.1.3.2: ``src`` is an IRI reference to the content,
    and the element is then empty. It is resolved like any URL of the entry
    (the element's xml:base, then the entry link, the feed link, the fetch
    URL) and kept when it is http(s). The type is the ``type`` given, else
    the one the file name implies: feedparser writes ``text/plain`` for a
    content element without a type, so that one is taken as none given.
    """
    contents = dict.get(item, "content")
    for detail in contents if isinstance(contents, list) else ():
        src = dict.get(detail, "src") if isinstance(detail, dict) else None
        if not isinstance(src, str) or not src.strip():
            continue
        xml_base = detail.get("base")
        base = (absolute(xml_base, bases[1] or bases[2]) if xml_base else None) or next(b for b in bases if b)
        url = absolute(src, base)
        if url is None:
            return {}
        given = detail.get("type")
        return {"content_src": url, "content_type": media.media_type(None if given == "text/plain" else given, url)}
    return {}


def _bodies(item: Any, bases: tuple[str | None, ...], url: str) -> tuple[str, str]:
    """(summary, content) of an item as sanitized HTML, the richest body kept.

    HTML comes first: content typed HTML or XHTML (RSS ``content:encoded``,
    Atom ``content``), then an HTML summary (RSS ``description``, Atom
    ``summary``). Plain text counts only when no HTML body exists, and
    ``itunes:summary`` (plain text in practice, a copy of the description)
    only when nothing else does. A plain-text summary beside HTML content is
    kept as the summary: it is the publisher's abstract. HTML content with
    less text than the HTML summary, and no more images, is a stub (an RSS
    ``content:encoded`` holding only a "listen" link): the summary is the body.
    """
    parts = list(item["content"]) if "content" in item and item["content"] else []
    summary_parts = [item["summary_detail"]] if "summary_detail" in item and item["summary_detail"] else []

    def joined(details: list[Any], html: bool) -> str:
        return "".join(_html_value(d, bases, url) for d in details if _is_html(d) == html)

    content, summary = joined(parts, True), joined(summary_parts, True)
    if content and summary and _richer(summary, content):
        return summary, ""  # content that is a stub of the summary (a heading, a "listen" link)
    if content:
        return summary or joined(summary_parts, False), content
    if summary:
        return summary, ""
    content, summary = joined(parts, False), joined(summary_parts, False)
    if not (content or summary) and dict.get(item, "itunes_summary_detail"):
        summary = _html_value(item["itunes_summary_detail"], bases, url)
    return summary, content


def _richer(first: str, second: str) -> bool:
    """True when sanitized HTML ``first`` holds more text than ``second`` and no fewer images."""
    if first.count("<img") < second.count("<img"):
        return False
    shorter = len(html_to_text(second))
    return len(first) > shorter and len(html_to_text(first)) > shorter  # text is never longer than its HTML


def _is_html(detail: Mapping[str, Any]) -> bool:
    """True for a value typed HTML or XHTML (feedparser's ``type``; HTML when absent)."""
    return "html" in str(detail.get("type", "text/html"))


def _entry_link(item: Any, base: str) -> str | None:
    """The entry's link (absolute http(s)) or None.

    feedparser gives an RSS ``<guid>`` as the link when the item has no
    ``<link>`` and the guid is not marked ``isPermaLink="false"`` (RSS 2.0
    says a guid is a permalink by default). Publishers leave that default
    on guids such as ``12345`` or ``post-17``; resolved against the feed's
    link they would make up a URL that does not exist. A guid taken as the
    link is used only when it is already an absolute http(s) URL.
    """
    link = dict.get(item, "link")
    if item.get("guidislink") and link == dict.get(item, "id") and not is_web(one_line(str(link or ""))):
        return None
    return absolute(link, base)


def xml_author(container: Any) -> str | None:
    """The author of an entry, its atom:source or a feed, as a name only, or None.

    feedparser gathers RSS ``author`` and ``managingEditor``, ``dc:creator``,
    ``itunes:author`` and Atom ``author`` into ``author`` (the last one
    given; ``Name (email)`` for an Atom name and email) and its split of
    the first one into ``author_detail``. The split's name comes first (the
    first author element, usually the writer's own before ``itunes:author``
    names the show), then the text; each has every e-mail address removed by
    :func:`authors.author_name` (feedparser's split can leave ``Name
    (mailto:``). An address alone is no author.
    Character references feedparser leaves in the text (``Jos&eacute;``,
    written ``Jos&amp;eacute;``) are decoded once.
    """
    detail = dict.get(container, "author_detail") or {}
    return author_name(decode_references(str(dict.get(detail, "name") or ""))) or author_name(
        decode_references(str(dict.get(container, "author") or ""))
    )


def _xml_dates(item: Any, now: datetime) -> tuple[datetime | None, datetime | None, str | None, str]:
    """(date, updated, note, raw) from feedparser's published and updated fields.

    feedparser files pubDate, published and issued under ``published`` and
    updated, modified, dc:date under ``updated``; ``dict.get`` is used because
    its mapping silently answers ``updated`` with ``published``. Only our
    own reader is used: feedparser's ``*_parsed`` fills a missing year, month
    or day from the clock (``10:00`` becomes today), so a date it alone can
    read is unreadable.
    """
    found: list[tuple[datetime | None, str]] = []
    for key in ("published", "updated"):
        raw = one_line(dict.get(item, key))
        if raw:
            found.append((dates.parse_date(raw), raw[:DATE_MAX_CHARS]))  # a longer date is unreadable
    notes: list[str] = []
    chosen: list[datetime | None] = []
    for value, raw in found:
        if value is None:
            notes.append(f"unreadable date {raw!r}")
        trusted, why = dates.trusted(value, now)
        if why:
            notes.append(why)
        chosen.append(trusted)
    date = next((value for value in chosen if value is not None), None)
    updated = chosen[-1] if len(found) == 2 and chosen[-1] is not None else None
    raw_date = found[0][1] if found else ""
    return date, updated, (None if date else "; ".join(notes) or None), raw_date


def text_field(container: Any, key: str, version: str) -> str:
    """A title-like field as plain text.

    Markup is stripped from a value typed as HTML, and from an RSS value
    that holds an element with its end tag (RSS titles are HTML in
    practice); an Atom value of type text is kept literally. At most
    :data:`limits.TITLE_MAX_CHARS` characters are kept.
    """
    detail = dict.get(container, f"{key}_detail")
    value = str(dict.get(container, key) or "")[: TITLE_MAX_CHARS * RAW_FIELD_FACTOR]
    if detail and "html" in str(detail.get("type", "")) or not version.startswith("atom") and holds_element(value):
        text = html_to_text(value)
    else:
        text = one_line(value)
    return text[:TITLE_MAX_CHARS].rstrip()


def _html_value(detail: Mapping[str, Any], bases: tuple[str | None, ...], url: str) -> str:
    """A content or summary value as sanitized HTML.

    A value typed HTML that holds no markup but has line breaks was written
    as plain text (RSS descriptions typed HTML by the spec): its references
    are decoded once, as HTML would, and its line breaks kept (:func:`text_to_html`).

    Relative URLs resolve against the element's xml:base when it has one
    (itself resolved against the feed link, else the fetch URL) and it gives
    an http(s) URL, else the first of ``bases`` (entry link, feed link,
    fetch URL): RFC 3986 section 5.1 takes the next base when one is unusable.
    """
    value = str(detail.get("value") or "")
    if not _is_html(detail) or ("<" not in value and "\n" in value.strip()):
        # Plain text, or "HTML" with no markup but line breaks: the publisher wrote text.
        return text_to_html(value if not _is_html(detail) else html.unescape(value))
    xml_base = detail.get("base")
    base = (absolute(xml_base, bases[1] or url) if xml_base else None) or next(b for b in bases if b)
    return clean_html(value, base)
