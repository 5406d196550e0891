"""Feed discovery: the feed URLs an HTML page advertises.

A page advertises its feeds with ``<link rel="alternate" type="...">`` in
its head (the RSS autodiscovery convention, also used for Atom and JSON
Feed). Pure: bytes in, URLs out.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

FEED_TYPES = frozenset({
    "application/rss+xml",
    "application/atom+xml",
    "application/feed+json",
    "application/json",
    "application/rdf+xml",
    "application/xml",
    "text/xml",
})


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
        if "alternate" in rels and kind in FEED_TYPES and values.get("href", "").strip():
            self.links.append(values["href"].strip())


def looks_like_html(body: bytes) -> bool:
    """True if the first 1 KB of ``body`` (bytes) looks like an HTML page."""
    head = body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head or b"<head" in head


def find_alternates(body: bytes, url: str) -> list[str]:
    """Feed URLs advertised by an HTML page.

    Args:
        body: the page's bytes (decoded as UTF-8, bad bytes replaced).
        url: the page's URL, the base for relative links (after ``<base>``).
    Returns:
        absolute http(s) URLs in page order, without duplicates.
    """
    parser = _LinkParser()
    try:
        parser.feed(body.decode("utf-8", "replace"))
        parser.close()
    except AssertionError:  # html.parser gives up on some broken markup
        pass
    base = urljoin(url, parser.base) if parser.base else url
    found: list[str] = []
    for href in parser.links:
        absolute = urljoin(base, href)
        if urlsplit(absolute).scheme in ("http", "https") and absolute not in found:
            found.append(absolute)
    return found
