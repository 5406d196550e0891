"""Feed discovery: the feed URLs an HTML page advertises, and which one to follow.

A page advertises its feeds with ``<link rel="alternate" type="...">`` in
its head (the RSS autodiscovery convention, also used for Atom and JSON
Feed). Pure: bytes in, URLs out. :func:`choose_feed` picks the one a build
follows when a site's ``feed`` URL answers with such a page.

Only the ``<link>`` and ``<base>`` tags, found by a linear scan
(:func:`markup.tags_named`, which skips comments, scripts and styles), go
to ``html.parser``: fed a whole hostile page, it takes quadratic time on
some broken markup (many unclosed comments or tags).
"""

from __future__ import annotations

from html.parser import HTMLParser

from . import urls
from .markup import tags_named
from .urls import absolute

#: Types that name a feed (RSS, Atom, JSON Feed; RSS 1.0 is RDF).
FEED_TYPES = frozenset({
    "application/rss+xml",
    "application/atom+xml",
    "application/feed+json",
    "application/rdf+xml",
})
#: Generic types some pages use for feeds; counted only when the link's title
#: or URL speaks of a feed (WordPress, for one, advertises its JSON API and
#: oEmbed documents as "alternate" too).
GENERIC_TYPES = frozenset({"application/json", "application/xml", "text/xml"})
_FEEDISH = ("rss", "atom", "feed", "rdf")


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name.lower(): (value or "") for name, value in attrs}
        if tag == "base" and self.base is None and values.get("href"):
            self.base = values["href"].strip()
        if tag != "link":
            return
        rels = values.get("rel", "").lower().split()
        kind = values.get("type", "").lower().split(";")[0].strip()
        href = values.get("href", "").strip()
        if "alternate" not in rels or not href:
            return
        feedish = any(word in (href + " " + values.get("title", "")).lower() for word in _FEEDISH)
        if kind in FEED_TYPES or (kind in GENERIC_TYPES and feedish):
            self.links.append(href)


def looks_like_html(body: bytes | str) -> bool:
    """True if the first 1 KB of ``body`` (bytes or decoded str) looks like an HTML page."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    head = text[:1024].lstrip("\ufeff \t\r\n").lower()
    return head.startswith(("<!doctype html", "<html")) or "<html" in head or "<head" in head


def find_alternates(body: bytes | str, url: str) -> list[str]:
    """Feed URLs advertised by an HTML page: ``<link rel="alternate">`` of a feed type.

    Args:
        body: the page, decoded text or bytes (read as UTF-8, bad bytes replaced).
        url: the page's URL, the base for relative links after the page's
            ``<base href>``; a ``<base>`` that gives no http(s) URL is
            skipped (RFC 3986 section 5.1: the next base applies).
    Returns:
        absolute http(s) URLs in page order, without duplicates; a link
        that cannot be read (:func:`urls.absolute`) is left out. Never
        raises for the page's content.
    """
    parser = _LinkParser()
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        for tag in tags_named(text, ("link", "base")):  # html.parser alone is quadratic on some broken pages
            parser.feed(tag)
        parser.close()
    except AssertionError:  # html.parser gives up on some broken markup
        pass
    base = absolute(parser.base, url) or url
    found: list[str] = []
    for href in parser.links:
        link = absolute(href, base)
        if link is not None and link not in found:
            found.append(link)
    return found


def choose_feed(page: str, feeds: list[str]) -> str | None:
    """The advertised feed to follow for ``page``, or None when it advertises none.

    A feed specific to the page comes first: on the page's host, with a
    path under the page's own path (a category's, tag's or topic's feed:
    ``/topics/rust/`` gives ``/topics/rust/feed/`` or ``/topics/rust.atom``),
    before site-wide ones (``/feed/``, ``/comments/feed/``). A page at the
    site's root has no feed of its own. Among equals, the order the page
    advertises them in wins, whatever their format (RSS, Atom, JSON Feed).

    Args:
        page: the page's URL (after redirects).
        feeds: absolute feed URLs in page order (:func:`find_alternates`).
    """
    if not feeds:
        return None
    parts = urls.split(page)
    prefix = _own_path(parts.path if parts else "")
    if not prefix:
        return feeds[0]
    host = urls.hostname(page)
    for feed in feeds:
        feed_parts = urls.split(feed)
        path = feed_parts.path if feed_parts else ""
        if urls.hostname(feed) == host and (path == prefix or path.startswith((prefix + "/", prefix + "."))):
            return feed
    return feeds[0]


def _own_path(path: str) -> str:
    """A page's path without a trailing slash or file name (``/a/b/index.html`` -> ``/a/b``); "" at the root."""
    path = path.rstrip("/")
    last = path.rsplit("/", 1)[-1]
    if "." in last:  # a file name such as index.html: its folder is the page's own path
        path = path[: -len(last)].rstrip("/")
    return path
