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
  such an item borrows a neighbour's date (:func:`drafts.borrow_dates`), else the
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
  ``itunes:summary``: :func:`xmlentry._bodies`); summaries and content
  are sanitized by :mod:`sanitize`; an author is a name only, its e-mail
  address never published (:mod:`authors`); an entry without an author takes its
  atom:source's, then the feed's (RFC 4287 section 4.2.1; RSS
  ``managingEditor``, channel ``dc:creator`` and ``itunes:author``);
* an entry's language is the first well-formed BCP 47 tag of: its own
  ``dc:language``, the ``xml:lang`` in scope of its body, then of its
  title (inherited from the entry and feed elements), then the feed's
  (RSS ``<language>``, channel ``dc:language``, the root's ``xml:lang``);
  JSON Feed: the item's ``language``, then the top level's
  (:func:`xmlentry.xml_language`, :mod:`language`);
* an entry's categories are its own (RSS and Atom ``category``, ``dc:subject``,
  ``itunes:category``, ``media:category``; JSON Feed ``tags``), normalised by
  :mod:`categories`; a podcast episode without any takes its show's
  ``itunes:category`` values (Apple puts them on the channel only);
* Atom content published out of line (``<content src>``, RFC 4287
  section 4.1.3.2) is kept as the entry's ``content_src`` and
  ``content_type`` (:func:`xmlentry.content_src`); its text is the summary;
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

import re
import xml.sax
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any
from xml.parsers.expat import ExpatError

from syndicator.errors import NotAFeedError, ParseError
from syndicator.feedtypes import ParsedFeed
from syndicator.language import language_tag
from syndicator.parse import fastreader, feedreader, hints, hubs
from syndicator.parse.categories import xml_categories
from syndicator.parse.discover import find_alternates, looks_like_html
from syndicator.parse.drafts import finish, shows_nothing
from syndicator.parse.encoding import decode, prepare_xml
from syndicator.parse.identity import Draft
from syndicator.parse.jsonfeed import read_json_feed
from syndicator.parse.limits import PARSE_BUDGET, Budget, check_structure, check_tags
from syndicator.parse.markup import prolog_end
from syndicator.parse.sanitize import one_line
from syndicator.parse.xmlentry import content_src, text_field, xml_author, xml_entry, xml_language
from syndicator.urls import absolute

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
    entries = finish(drafts)
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


# --- XML feeds (fastreader, else feedparser) ------------------------------------


def _read_xml(
    text: str, url: str, now: datetime, budget: Budget
) -> tuple[str, str | None, list[Draft], str, hubs.Advertised]:
    """(title, link, drafts, version, hubs) of an XML document: :mod:`fastreader` first, and when it
    declines, feedparser (:mod:`feedreader`) after its own tag limits (:func:`limits.check_tags`)."""
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
    feed_author = xml_author(feed)
    feed_language = language_tag(dict.get(feed, "language"))
    show_categories = xml_categories(feed, podcast_only=True)
    drafts = []
    for item in document.entries:
        budget.check("reading entries")
        draft = xml_entry(item, feed_link, url, now, version, feed_author)
        drafts.append(
            replace(
                draft,
                entry=replace(
                    draft.entry,
                    language=xml_language(item) or feed_language,
                    categories=xml_categories(item) or show_categories,
                    **content_src(item, (draft.entry.link, feed_link, url)),
                ),
            )
        )
    if document.bozo and all(shows_nothing(d) for d in drafts):  # e.g. a download cut off inside its first item
        reason = one_line(str(document.get("bozo_exception", "")))[:160] or "malformed"
        raise ParseError(url, f"not a readable feed: {reason}")
    return text_field(feed, "title", version), feed_link, drafts, version, _xml_websub(feed, url)


def _xml_websub(feed: Any, url: str) -> hubs.Advertised:
    """The hubs and self URL among the feed-level links (feedparser's ``links``: dicts with
    ``rel`` and ``href``, xml:base already applied), resolved against the fetch URL."""
    links = dict.get(feed, "links")
    if not isinstance(links, list):
        return hubs.Advertised((), None)
    return hubs.collect(((link.get("rel"), link.get("href")) for link in links if isinstance(link, dict)), url)
