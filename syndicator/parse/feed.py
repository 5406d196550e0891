"""bytes + headers -> ParsedFeed.

RSS 0.9x/1.0/2.0 and Atom go through feedparser (driven by :mod:`feedreader`,
the only module that imports it), after :mod:`fastreader` has had its try:
a well-formed RSS 2.0 or Atom 1.0 document is read with lxml into the same
shape, and anything it is unsure of goes on to feedparser; JSON Feed 1.0/1.1 is read
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
  ahead, before 1995) becomes None with a ``date_note``; among dated items
  such an item borrows a neighbour's date (:func:`borrow_dates`), else the
  store supplies first-seen;
* identity and alias keys per :mod:`identity`; an item with no title, link,
  text, enclosure or image is dropped;
* enclosures (RSS enclosure, Atom link rel="enclosure", audio and video
  media:content, itunes:duration) and the image beside the text
  (media:content, media:thumbnail, itunes:image) are read by :mod:`media`;
  an item with nothing but an image is kept;
* titles are plain text: a title marked as text is kept literally, one
  marked or detected as HTML has its markup stripped; the richest body is
  kept (HTML content, then an HTML summary, then plain text, then
  ``itunes:summary``: :func:`_bodies`); summaries and content
  are sanitized by :mod:`sanitize`; an author is a name only, its e-mail
  address never published; an entry without an author takes its
  atom:source's, then the feed's (RFC 4287 section 4.2.1; RSS
  ``managingEditor``, channel ``dc:creator`` and ``itunes:author``);
* an entry's language is the first well-formed BCP 47 tag of: its own
  ``dc:language``, the ``xml:lang`` in scope of its body, then of its
  title (inherited from the entry and feed elements), then the feed's
  (RSS ``<language>``, channel ``dc:language``, the root's ``xml:lang``);
  JSON Feed: the item's ``language``, then the top level's
  (:func:`_xml_language`, :mod:`language`);
* Atom content published out of line (``<content src>``, RFC 4287
  section 4.1.3.2) is kept as the entry's ``content_src`` and
  ``content_type`` (:func:`_content_src`); its text is the summary;
* relative URLs are resolved against xml:base, then the entry link, then
  the feed's link, then the fetch URL; a relative xml:base is itself
  resolved against the feed's link, then the fetch URL;
* the WebSub hubs and the self URL are the feed-level ``rel="hub"`` and
  ``rel="self"`` links (Atom ``link``, RSS ``atom:link``; JSON Feed 1.1
  ``hubs`` and ``feed_url``), resolved against xml:base, then the fetch URL,
  and kept as :func:`hubs.collect` keeps them; entry-level links never count;
* the work is bounded (:mod:`limits`): a CPU budget checked between steps,
  a linear pre-scan that refuses absurd shapes before feedparser runs, no
  scan that rescans text from many start positions (:mod:`markup`), and
  capped titles, authors and dates. Whatever hostile input makes a step
  raise becomes this source's :class:`ParseError`.
"""

from __future__ import annotations

import html
import re
import xml.sax
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any
from xml.parsers.expat import ExpatError

from syndicator import dates
from syndicator.dates import DATE_MAX_CHARS
from syndicator.errors import NotAFeedError, ParseError
from syndicator.language import language_tag
from syndicator.model import Entry, ParsedFeed
from syndicator.parse import fastreader, feedreader, hints, hubs, identity, media
from syndicator.parse.discover import find_alternates, looks_like_html
from syndicator.parse.encoding import decode, prepare_xml
from syndicator.parse.identity import Candidate, Draft
from syndicator.parse.jsonfeed import read_json_feed
from syndicator.parse.limits import (
    PARSE_BUDGET,
    RAW_FIELD_FACTOR,
    TITLE_MAX_CHARS,
    Budget,
    check_structure,
    check_tags,
)
from syndicator.parse.markup import holds_element, prolog_end
from syndicator.parse.sanitize import author_name, clean_html, decode_references, html_to_text, one_line, text_to_html
from syndicator.urls import absolute, is_web

_ROOT = re.compile(r"<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)")
#: What hostile input can make the parsing steps raise (UnicodeError and
#: json's JSONDecodeError are ValueErrors; LookupError is an unknown codec).
_INPUT_ERRORS = (ValueError, OverflowError, LookupError, xml.sax.SAXException, ExpatError)


def parse_feed(
    body: bytes, url: str, headers: Mapping[str, str], now: datetime, budget: float = PARSE_BUDGET
) -> ParsedFeed:
    """Parse one fetched document, within a CPU budget.

    Args:
        body: the response body (bytes, already decompressed).
        url: the URL that answered; the last-resort base for relative URLs.
        headers: response headers with lower-case names (content-type is used).
        now: the build's clock (UTC), to reject dates far in the future.
        budget: thread CPU seconds the parse may take (:data:`limits.PARSE_BUDGET`).
    Returns:
        the ParsedFeed, entries in document order, identities unique.
    Raises:
        NotAFeedError: the body is an HTML page.
        ParseError: the body is not a feed syndicator can read; kind
            ``too_complex`` when it passes the budget or a structural limit
            (:mod:`limits`) or nests beyond Python's recursion limit. Every
            exception hostile input provokes in a parsing step ends here.
    """
    try:
        return _parse(body, url, headers, now, Budget(url, budget))
    except RecursionError as error:
        raise ParseError(url, "too complex to parse: nested too deeply", kind="too_complex") from error
    except _INPUT_ERRORS as error:
        if isinstance(error, KeyError | IndexError):  # a LookupError of our own making: a bug, not the input
            raise
        raise ParseError(url, f"not a readable feed: {_describe(error)}") from error


def _parse(body: bytes, url: str, headers: Mapping[str, str], now: datetime, budget: Budget) -> ParsedFeed:
    content_type = headers.get("content-type", "")
    text = decode(body, content_type)
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith(("{", "[")) or ("json" in content_type.lower() and not head.startswith("<")):
        title, link, drafts, version, found = read_json_feed(text, url, now, budget)
    else:
        title, link, drafts, version, found = _read_xml(text, url, now, budget)
    entries = _finish(drafts)
    budget.check("giving entries their identities")
    return ParsedFeed(
        title=title,
        link=link,
        entries=entries,
        format=version,
        hints=hints.from_document(body),
        hubs=found.hubs,
        self_url=found.topic,
    )


def _describe(error: BaseException) -> str:
    """One short line naming an exception and its message (str)."""
    return f"{type(error).__name__}: {one_line(str(error))[:160]}"


def root_element(text: str) -> str:
    """Local name of the document's first element, lower case ("" if none).

    The prolog (declaration, processing instructions, comments, DOCTYPE) is
    skipped by a linear scan (:func:`markup.prolog_end`).
    """
    match = _ROOT.match(text, prolog_end(text))
    return match.group(2).lower() if match else ""


def _finish(drafts: Sequence[Draft]) -> tuple[Entry, ...]:
    """Drop empty items, date undated ones among dated ones, give identities and alias keys, drop repeats."""
    drafts = borrow_dates([d for d in drafts if not _empty(d)])
    candidates = [d.candidate for d in drafts]
    ids = identity.assign(candidates)
    keys = identity.alias_keys(candidates)
    return tuple(
        replace(d.entry, id=key, aliases=alias)
        for d, key, alias in zip(drafts, ids, keys, strict=True)
        if key is not None
    )


#: An undated item among dated ones is dated this much before the item it borrows from.
BORROWED_OFFSET = timedelta(seconds=1)


def borrow_dates(drafts: Sequence[Draft]) -> list[Draft]:
    """Date the undated items of a document whose other items are dated.

    An item without a usable date among dated ones is usually navigation
    ("More news...") or an item the publisher forgot to date; dated by when
    it was first seen it would top the planet. It takes the date of the
    nearest dated item after it in document order, else (nothing dated
    after it) the oldest date of the document, less one second
    (:data:`BORROWED_OFFSET`), so it ranks just below the item it borrows
    from and never above a dated item of its feed. A document with no dated
    item is left alone: its items are dated by first-seen.

    Args:
        drafts: the document's drafts in document order.
    Returns:
        the drafts, in the same order; each borrowed date is noted in
        ``date_note``.
    """
    dated = [d.entry.date for d in drafts if d.entry.date is not None]
    if not dated or len(dated) == len(drafts):
        return list(drafts)
    oldest = min(dated)
    following: datetime | None = None
    result: list[Draft] = []
    for draft in reversed(drafts):
        entry = draft.entry
        if entry.date is not None:
            following = entry.date
            result.append(draft)
            continue
        why = f"undated: dated just before the {'next dated' if following else 'oldest'} item"
        note = "; ".join(filter(None, (entry.date_note, why)))
        borrowed = (following or oldest) - BORROWED_OFFSET
        result.append(replace(draft, entry=replace(entry, date=borrowed, date_note=note)))
    return result[::-1]


def _empty(draft: Draft) -> bool:
    """True for an item with nothing to show (no title, link, text, enclosure, image or content elsewhere)."""
    entry = draft.entry
    return not (
        entry.title
        or entry.link
        or entry.summary
        or entry.content
        or draft.candidate.enclosures
        or entry.image
        or entry.content_src
    )


# --- XML feeds (feedparser) ---------------------------------------------------


def _read_xml(
    text: str, url: str, now: datetime, budget: Budget
) -> tuple[str, str | None, list[Draft], str, hubs.Advertised]:
    if root_element(text) == "html":
        raise NotAFeedError(url, find_alternates(text, url))
    tags = check_structure(text, url)
    prepared = prepare_xml(text)
    budget.check("preparing the document")
    document = fastreader.read(prepared, budget)
    if document is None:  # feedparser's work per tag is many times lxml's: its own limits first
        check_tags(text, url, tags)
        document = feedreader.read(prepared, url, budget)
    budget.check("running feedparser")
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
    feed_author = _xml_author(feed)
    feed_language = language_tag(dict.get(feed, "language"))
    drafts = []
    for item in document.entries:
        budget.check("reading entries")
        draft = _xml_entry(item, feed_link, url, now, version, feed_author)
        drafts.append(
            replace(
                draft,
                entry=replace(
                    draft.entry,
                    language=_xml_language(item) or feed_language,
                    **_content_src(item, (draft.entry.link, feed_link, url)),
                ),
            )
        )
    if document.bozo and all(_empty(d) for d in drafts):  # e.g. a download cut off inside its first item
        reason = one_line(str(document.get("bozo_exception", "")))[:160] or "malformed"
        raise ParseError(url, f"not a readable feed: {reason}")
    return _text_field(feed, "title", version), feed_link, drafts, version, _xml_websub(feed, url)


def _xml_websub(feed: Any, url: str) -> hubs.Advertised:
    """The hubs and self URL among the feed-level links (feedparser's ``links``: dicts with
    ``rel`` and ``href``, xml:base already applied), resolved against the fetch URL."""
    links = dict.get(feed, "links")
    if not isinstance(links, list):
        return hubs.Advertised((), None)
    return hubs.collect(((link.get("rel"), link.get("href")) for link in links if isinstance(link, dict)), url)


def _xml_entry(
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
    title = _text_field(item, "title", version)
    guid = one_line(dict.get(item, "id")) or None
    author = _xml_author(item) or _xml_author(dict.get(item, "source") or {}) or feed_author
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


def _xml_language(item: Any) -> str | None:
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


def _content_src(item: Any, bases: tuple[str | None, ...]) -> dict[str, Any]:
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


def _xml_author(container: Any) -> str | None:
    """The author of an entry, its atom:source or a feed, as a name only, or None.

    feedparser gathers RSS ``author`` and ``managingEditor``, ``dc:creator``,
    ``itunes:author`` and Atom ``author`` into ``author`` (the last one
    given; ``Name (email)`` for an Atom name and email) and its split of
    the first one into ``author_detail``. The split's name comes first (the
    first author element, usually the writer's own before ``itunes:author``
    names the show), then the text; each has every e-mail address removed by
    :func:`sanitize.author_name` (feedparser's split can leave ``Name
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


def _text_field(container: Any, key: str, version: str) -> str:
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
