"""bytes + headers -> ParsedFeed. The only module that imports feedparser.

RSS 0.9x/1.0/2.0 and Atom go through feedparser; JSON Feed 1.0/1.1 is read
by :mod:`jsonfeed` into the same model. Everything feed-specific is
normalized here, once:

* bytes are decoded by :mod:`encoding` (never by a guessing package) and
  cleaned so the strict XML parser accepts what it safely can;
* a 200 whose body is an HTML page raises :class:`NotAFeedError` naming the
  feeds the page advertises; a bozo document with no entries raises
  :class:`ParseError` (seed 002). A bozo document that yielded entries is
  accepted: the bozo flag alone is no reason to reject it;
* dates follow the seed 004 order (pubDate, published, issued, then
  updated, modified, dc:date; JSON Feed date_published, date_modified) and
  are read by :mod:`dates`; an untrusted date (unreadable, more than a day
  ahead, before 1995) becomes None with a ``date_note``, and the store
  supplies first-seen instead;
* identity and alias keys per :mod:`identity`; an item with no title, link,
  text or enclosure is dropped;
* titles are plain text: a title marked as text is kept literally, one
  marked or detected as HTML has its markup stripped; summaries and content
  are sanitized by :mod:`sanitize`; an author is a name only, its e-mail
  address never published;
* relative URLs are resolved against xml:base, then the entry link, then
  the feed's link, then the fetch URL; a relative xml:base is itself
  resolved against the feed's link, then the fetch URL.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any
from urllib.parse import urljoin

import feedparser

from . import dates, hints, identity
from .discover import find_alternates, looks_like_html
from .encoding import decode, prepare_xml
from .errors import NotAFeedError, ParseError
from .identity import Candidate, Draft, absolute
from .jsonfeed import read_json_feed
from .markup import holds_element, prolog_end
from .model import Entry, ParsedFeed
from .sanitize import author_name, clean_html, html_to_text, one_line, text_to_html

_ROOT = re.compile(r"<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)")


def parse_feed(body: bytes, url: str, headers: Mapping[str, str], now: datetime) -> ParsedFeed:
    """Parse one fetched document.

    Args:
        body: the response body (bytes, already decompressed).
        url: the URL that answered; the last-resort base for relative URLs.
        headers: response headers with lower-case names (content-type is used).
        now: the build's clock (UTC), to reject dates far in the future.
    Returns:
        the ParsedFeed, entries in document order, identities unique.
    Raises:
        NotAFeedError: the body is an HTML page.
        ParseError: the body is not a feed syndicator can read.
    """
    content_type = headers.get("content-type", "")
    text = decode(body, content_type)
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith(("{", "[")) or ("json" in content_type.lower() and not head.startswith("<")):
        title, link, drafts, version = read_json_feed(text, url, now)
    else:
        title, link, drafts, version = _read_xml(text, url, now)
    return ParsedFeed(title=title, link=link, entries=_finish(drafts), format=version,
                      hints=hints.from_document(body))


def root_element(text: str) -> str:
    """Local name of the document's first element, lower case ("" if none).

    The prolog (declaration, processing instructions, comments, DOCTYPE) is
    skipped by a linear scan (:func:`markup.prolog_end`).
    """
    match = _ROOT.match(text, prolog_end(text))
    return match.group(2).lower() if match else ""


def _finish(drafts: Sequence[Draft]) -> tuple[Entry, ...]:
    """Drop empty items, give identities and alias keys, drop repeats."""
    drafts = [d for d in drafts if not _empty(d)]
    candidates = [d.candidate for d in drafts]
    ids = identity.assign(candidates)
    keys = identity.alias_keys(candidates)
    return tuple(replace(d.entry, id=key, aliases=alias)
                 for d, key, alias in zip(drafts, ids, keys, strict=True) if key is not None)


def _empty(draft: Draft) -> bool:
    """True for an item with nothing to show (no title, link, text or enclosure)."""
    entry = draft.entry
    return not (entry.title or entry.link or entry.summary or entry.content or draft.candidate.enclosures)


# --- XML feeds (feedparser) ---------------------------------------------------


def _read_xml(text: str, url: str, now: datetime) -> tuple[str, str | None, list[Draft], str]:
    if root_element(text) == "html":
        raise NotAFeedError(url, find_alternates(text, url))
    # A stream, never bytes or str: feedparser treats a str as a URL or path to open.
    # No base URL is given, so feedparser resolves against xml:base only.
    document = feedparser.parse(io.BytesIO(prepare_xml(text).encode("utf-8")),
                                response_headers={"content-type": "application/xml; charset=utf-8"},
                                sanitize_html=False, resolve_relative_uris=False)
    if not document.entries:
        if not document.get("version") and looks_like_html(text):
            raise NotAFeedError(url, find_alternates(text, url))
        if document.bozo:
            reason = one_line(str(document.get("bozo_exception", "")))[:160] or "malformed"
            raise ParseError(url, f"not a readable feed: {reason}")
        if not document.get("version"):
            raise ParseError(url, "not a feed: no RSS, Atom or JSON Feed document found")
    feed = document.feed
    version = document.get("version") or "unknown"
    feed_link = absolute(dict.get(feed, "link"), url)
    drafts = [_xml_entry(item, feed_link, url, now, version) for item in document.entries]
    if document.bozo and all(_empty(d) for d in drafts):  # e.g. a download cut off inside its first item
        reason = one_line(str(document.get("bozo_exception", "")))[:160] or "malformed"
        raise ParseError(url, f"not a readable feed: {reason}")
    return _text_field(feed, "title", version), feed_link, drafts, version


def _xml_entry(item: Any, feed_link: str | None, url: str, now: datetime, version: str) -> Draft:
    link = absolute(dict.get(item, "link"), feed_link or url)
    bases = (link, feed_link, url)
    content = ""
    if "content" in item and item["content"]:
        content = "".join(_html_value(part, bases, url) for part in item["content"])
    summary = _html_value(item["summary_detail"], bases, url) if "summary_detail" in item else ""
    date, updated, note, raw_date = _xml_dates(item, now)
    enclosures = tuple(filter(None, (absolute(e.get("href"), link or feed_link or url)
                                     for e in item.get("enclosures") or [])))
    title = _text_field(item, "title", version)
    guid = one_line(dict.get(item, "id")) or None
    entry = Entry(id="", title=title, link=link, author=_xml_author(item),
                  date=date, updated=updated, summary=summary, content=content, date_note=note)
    text = html_to_text(summary or content)
    return Draft(entry, Candidate(guid, link, title, raw_date, enclosures, text))


def _xml_author(item: Any) -> str | None:
    """The entry's author as a name only, or None.

    feedparser splits RSS ``email (Name)``, ``Name <email>`` and Atom
    name/email into ``author_detail``; its name is used when present, else
    the ``author`` text, with e-mail addresses removed either way
    (:func:`sanitize.author_name`): an address alone is no author.
    """
    detail = dict.get(item, "author_detail") or {}
    return author_name(dict.get(detail, "name")) or author_name(dict.get(item, "author"))


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
            found.append((dates.parse_date(raw), raw))
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


def _text_field(container: Any, key: str, version: str) -> str:
    """A title-like field as plain text.

    Markup is stripped from a value typed as HTML, and from an RSS value
    that holds an element with its end tag (RSS titles are HTML in
    practice); an Atom value of type text is kept literally.
    """
    detail = dict.get(container, f"{key}_detail")
    value = dict.get(container, key) or ""
    if detail and "html" in str(detail.get("type", "")):
        return html_to_text(value)
    if not version.startswith("atom") and holds_element(value):
        return html_to_text(value)
    return one_line(value)


def _html_value(detail: Mapping[str, Any], bases: tuple[str | None, ...], url: str) -> str:
    """A content or summary value as sanitized HTML.

    Relative URLs resolve against the element's xml:base when it has one,
    else the first of ``bases`` (entry link, feed link, fetch URL).
    """
    value = str(detail.get("value") or "")
    if "html" not in str(detail.get("type", "text/html")):
        return text_to_html(value)
    xml_base = detail.get("base")
    base = urljoin(bases[1] or url, xml_base) if xml_base else next(b for b in bases if b)
    return clean_html(value, base)
