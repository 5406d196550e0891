"""Feed discovery: the feed URLs an HTML page advertises, and which one to follow.

A page advertises its feeds with ``<link rel="alternate" type="...">`` in
its head (the RSS autodiscovery convention, also used for Atom and JSON
Feed). Pure: bytes in, URLs out. :func:`rank` orders them, best first: the
order ``syndicator discover`` prints, and the order a build (and ``add``)
tries them in when a site's ``feed`` URL answers with such a page, up to
:data:`MAX_FOLLOWED` of them (observe.py).

Only the ``<link>`` and ``<base>`` tags, found by a linear scan
(:func:`markup.tags_named`, which skips comments, scripts and styles), go
to ``html.parser``: fed a whole hostile page, it takes quadratic time on
some broken markup (many unclosed comments or tags).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from html.parser import HTMLParser

from syndicator import urls
from syndicator.parse.markup import tags_named
from syndicator.urls import absolute

#: Types that name a feed (RSS, Atom, JSON Feed; RSS 1.0 is RDF).
FEED_TYPES = frozenset(
    {
        "application/rss+xml",
        "application/atom+xml",
        "application/feed+json",
        "application/rdf+xml",
    }
)
#: Generic types some pages use for feeds; counted only when the link's title
#: or URL speaks of a feed (WordPress, for one, advertises its JSON API and
#: oEmbed documents as "alternate" too).
GENERIC_TYPES = frozenset({"application/json", "application/xml", "text/xml"})
_FEEDISH = ("rss", "atom", "feed", "rdf")
#: How many advertised feeds a build tries, best first, within the fetch's deadline, before it gives up:
#: some of a page's feeds may answer with HTML again (liferea#903: the third of three worked).
MAX_FOLLOWED = 4


@dataclass(frozen=True)
class Advertised:
    """One feed a page advertises: its URL (absolute), its ``title`` ("" if none), its media ``type`` (lower case)."""

    url: str
    title: str = ""
    type: str = ""


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.links: list[Advertised] = []  # hrefs as written, not yet absolute

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
            self.links.append(Advertised(href, " ".join(values.get("title", "").split()), kind))


def looks_like_html(body: bytes | str) -> bool:
    """True if the first 1 KB of ``body`` (bytes or decoded str) looks like an HTML page."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    head = text[:1024].lstrip("\ufeff \t\r\n").lower()
    return head.startswith(("<!doctype html", "<html")) or "<html" in head or "<head" in head


def find_alternates(body: bytes | str, url: str) -> list[str]:
    """Feed URLs advertised by an HTML page, best first (:func:`rank` of :func:`advertised`). Never raises."""
    return rank(url, advertised(body, url))


def advertised(body: bytes | str, url: str) -> list[Advertised]:
    """The feeds an HTML page advertises: ``<link rel="alternate">`` of a feed type, in page order.

    Args:
        body: the page, decoded text or bytes (read as UTF-8, bad bytes replaced).
        url: the page's URL, the base for relative links after the page's
            ``<base href>``; a ``<base>`` that gives no http(s) URL is
            skipped (RFC 3986 section 5.1: the next base applies).
    Returns:
        Advertised feeds with absolute http(s) URLs, in page order, repeats
        included; a link that cannot be read (:func:`urls.absolute`) is
        left out. Never raises for the page's content.
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
    found: list[Advertised] = []
    for link in parser.links:
        href = absolute(link.url, base)
        if href is not None:
            found.append(replace(link, url=href))
    return found


def rank(page: str, links: list[Advertised]) -> list[str]:
    """The advertised feeds of ``page``, best first: the order ``discover`` prints and a build tries.

    Rules, in order (the first that tells two feeds apart wins):

    1. the page's own feed: on the page's host, with a path under the
       page's own path (``/topics/rust/`` gives ``/topics/rust/feed/`` or
       ``/topics/rust.atom``); a page at the site's root has none;
    2. the site's feeds, before category, tag and label feeds (a path
       segment such as ``category``, ``tag`` or Blogger's ``-``; a
       ``cat`` or ``tag`` query), before comment feeds (a title or URL
       that speaks of comments: WordPress advertises ``/comments/feed/``
       and, on a post's page, the post's comments feed under the post's
       path, titled "... Comments Feed"; wp-calypso#752, simplepie#215).
       A comment feed is never the page's own;
    3. a feed type (RSS, Atom, JSON Feed, RDF) before a generic one
       (``application/xml`` and the like);
    4. the order the page advertises them in (``rel="alternate"`` order).

    Args:
        page: the page's URL (after redirects).
        links: the page's advertised feeds, in page order (:func:`advertised`).
    Returns:
        absolute feed URLs, without duplicates (the first advertisement of a URL counts).
    """
    parts = urls.split(page)
    prefix = _own_path(parts.path if parts else "")
    host = urls.hostname(page)

    def key(item: tuple[int, Advertised]) -> tuple[int, bool, int]:
        index, link = item
        kind = _kind(link)
        if kind != COMMENTS and prefix and urls.hostname(link.url) == host:
            feed_parts = urls.split(link.url)
            path = feed_parts.path if feed_parts else ""
            if path == prefix or path.startswith((prefix + "/", prefix + ".")):
                kind = OWN
        return kind, link.type not in FEED_TYPES, index

    unique: dict[str, Advertised] = {}
    for link in links:
        unique.setdefault(link.url, link)
    return [link.url for _, link in sorted(enumerate(unique.values()), key=key)]


#: The classes of :func:`rank`, best first.
OWN, SITE, TOPIC, COMMENTS = range(4)
#: Words that name comments in a feed's title or URL (English, French, Italian: "comment";
#: Spanish, Portuguese: "coment"; Polish, Czech: "koment"; German: "kommentar"; Dutch: "reacties").
_COMMENT_WORDS = ("comment", "coment", "koment", "kommentar", "reacties")
#: Path segments of category, tag and label feeds (WordPress, Blogger's ``/-/Label``, Hugo, Jekyll).
_TOPIC_SEGMENTS = frozenset({"category", "categories", "tag", "tags", "label", "labels", "topic", "topics", "-"})
_TOPIC_QUERY = re.compile(r"(?:^|&)(?:cat|category|tag)=", re.IGNORECASE)


def _kind(link: Advertised) -> int:
    """SITE, TOPIC or COMMENTS for one advertised feed (by its title and URL)."""
    parts = urls.split(link.url)
    path, query = (parts.path, parts.query) if parts else ("", "")
    if any(word in f"{link.title} {path} {query}".lower() for word in _COMMENT_WORDS):
        return COMMENTS
    if _TOPIC_SEGMENTS & {segment.lower() for segment in path.split("/")} or _TOPIC_QUERY.search(query):
        return TOPIC
    return SITE


def _own_path(path: str) -> str:
    """A page's path without a trailing slash or file name (``/a/b/index.html`` -> ``/a/b``); "" at the root."""
    path = path.rstrip("/")
    last = path.rsplit("/", 1)[-1]
    if "." in last:  # a file name such as index.html: its folder is the page's own path
        path = path[: -len(last)].rstrip("/")
    return path
