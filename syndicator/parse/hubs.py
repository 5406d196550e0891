"""The hubs and the self URL a feed advertises, for WebSub (W3C Recommendation, 2018). Pure.

* Discovery (WebSub section 4): a feed names its hubs with ``rel="hub"``
  links and its own URL, the topic, with a ``rel="self"`` link, in HTTP
  ``Link`` headers (RFC 8288) and in the document (Atom and RSS
  ``atom:link``; JSON Feed 1.1 ``hubs`` and ``feed_url``). Header links
  come first, as section 4 has a subscriber look at the headers before the
  body; the subscriber must then use the advertised self URL as the topic.
  A target is resolved against the URL that answered (RFC 8288 section 3.1;
  RFC 3986 section 5.2) and kept only as a usable http(s) URL without
  credentials (:func:`values.is_http_url`): a hub URL appears in logs and
  status pages. Relation types are compared case-insensitively (RFC 8288
  section 2.1.1); the IRI form ``http://www.iana.org/assignments/relation/hub``
  counts as ``hub`` (RFC 4287 section 4.2.7.2).
* The work is bounded whatever the input: at most :data:`MAX_HUBS` hubs
  are kept, at most :data:`MAX_CANDIDATES` hub or self links are examined
  per source (headers, document), at most :data:`MAX_LINK_CHARS`
  characters of Link headers are read, and nothing here raises on what a
  publisher or a hub sends.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from syndicator import urls
from syndicator.feedtypes import ParsedFeed
from syndicator.values import is_http_url

#: Hubs kept from one feed: more than a few is no redundancy, only more requests.
MAX_HUBS = 4
#: Hub or self links examined in one source (the Link headers, or the document) before giving up.
MAX_CANDIDATES = 64
#: Characters of Link header values read; a link cut at this limit is dropped.
MAX_LINK_CHARS = 64 * 1024
#: Link header elements (links, and the junk between them) read at most.
MAX_LINK_VALUES = 256

_IANA_RELATION = "http://www.iana.org/assignments/relation/"
# The Link header grammar (RFC 8288 section 3; token and quoted-string: RFC 9110 section 5.6). Every run is
# possessive, so a malformed header costs one pass from where the match started, never a rescan.
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]++"
_LINK_TARGET = re.compile(r"[ \t,]*+<([^<>]*+)>")  # empty list elements and white space before a link are skipped
_LINK_PARAM = re.compile(rf'[ \t]*+;[ \t]*+({_TOKEN})[ \t]*+(?:=[ \t]*+(?:"((?:[^"\\]|\\.)*+)"|({_TOKEN})))?+')
_LINK_END = re.compile(r"[ \t]*+(?:,|\Z)")
_QUOTED_PAIR = re.compile(r"\\(.)")


@dataclass(frozen=True)
class Advertised:
    """What a feed response advertises for WebSub.

    Attributes:
        hubs: hub URLs (absolute http(s)), in the order found, each once
            (compared in :func:`urls.canonical` form), at most :data:`MAX_HUBS`;
            () when the feed advertises none.
        topic: the advertised self URL (absolute http(s)), or None: the
            caller then uses the URL it fetched.
    """

    hubs: tuple[str, ...]
    topic: str | None


def collect(links: Iterable[tuple[object, object]], base: str | None) -> Advertised:
    """The hubs and the self URL among a source's links.

    Args:
        links: (rel, href) pairs in the source's order: rel a
            white-space-separated list of relation types, href a URL
            reference; either may be any value (anything but a str is no link).
        base: the URL relative references resolve against (RFC 3986 section 5.2).
    Returns:
        Advertised: the first :data:`MAX_HUBS` distinct usable hub URLs and
        the first usable self URL, from at most :data:`MAX_CANDIDATES` hub
        or self links. Never raises.
    """
    hubs: dict[str, str] = {}
    topic: str | None = None
    examined = 0
    for rel, href in links:
        kinds = _relations(rel) & {"hub", "self"}
        if not kinds:
            continue
        examined += 1
        if examined > MAX_CANDIDATES:
            break
        url = urls.absolute(href, base)
        if url is None or not is_http_url(url):
            continue
        if "self" in kinds and topic is None:
            topic = url
        if "hub" in kinds and len(hubs) < MAX_HUBS:
            hubs.setdefault(urls.canonical(url), url)
        if topic is not None and len(hubs) >= MAX_HUBS:
            break
    return Advertised(tuple(hubs.values()), topic)


def advertised(headers: Mapping[str, str], parsed: ParsedFeed | None, url: str) -> Advertised:
    """What a feed response advertises: its Link headers first, then the document's links.

    Args:
        headers: the response headers (``Fetched.headers`` or
            ``NotModified.headers``); the ``Link`` values are read, names
            in any case, several links per value (RFC 8288 section 3).
        parsed: the parsed document (its ``hubs`` and ``self_url``), or
            None (a 304, or a document not parsed).
        url: the URL that answered; relative targets resolve against it.
    Returns:
        Advertised: hubs from the headers, then from the document, each once,
        at most :data:`MAX_HUBS`; the topic is the header's self URL, else
        the document's, else None (the caller then uses the URL it fetched).
        Never raises.
    """
    header = collect(_header_links(headers, url), url)
    document = Advertised((), None)
    if isinstance(parsed, ParsedFeed):
        hubs = parsed.hubs if isinstance(parsed.hubs, tuple) else ()
        document = collect([*(("hub", hub) for hub in hubs[:MAX_CANDIDATES]), ("self", parsed.self_url)], url)
    merged: dict[str, str] = {}
    for hub in header.hubs + document.hubs:
        merged.setdefault(urls.canonical(hub), hub)
    return Advertised(tuple(merged.values())[:MAX_HUBS], header.topic or document.topic)


def _relations(rel: object) -> frozenset[str]:
    """The relation types of a ``rel`` value, in lower case, IANA IRIs as their short names."""
    if not isinstance(rel, str):
        return frozenset()
    names = rel[:1000].lower().split()
    return frozenset(name.removeprefix(_IANA_RELATION) for name in names[:16])


def _header_links(headers: Mapping[str, str], base: str) -> Iterator[tuple[str, str]]:
    """(rel, target) of each link in the ``Link`` headers, in order (RFC 8288 section 3).

    Several headers are read as one comma-separated list (RFC 9110 section
    5.3). A link whose ``anchor`` names another resource than ``base`` is
    about that resource, not this feed, and is skipped (RFC 8288 section
    3.2); only the first ``rel`` of a link counts (section 3.3). A link
    the grammar cannot read is skipped up to the next comma.
    """
    try:
        values = [
            value
            for name, value in headers.items()
            if isinstance(name, str) and name.lower() == "link" and isinstance(value, str)
        ]
    except (AttributeError, TypeError, ValueError):
        return
    text = ", ".join(values)
    cut = len(text) > MAX_LINK_CHARS
    text = text[:MAX_LINK_CHARS]
    position, end = 0, len(text)
    for _ in range(MAX_LINK_VALUES):
        if position >= end:
            return
        target = _LINK_TARGET.match(text, position)
        if target is None:
            position = _after_comma(text, position)
            continue
        position = target.end()
        params: dict[str, str] = {}
        while (param := _LINK_PARAM.match(text, position)) is not None:
            quoted, token = param.group(2), param.group(3)
            value = _QUOTED_PAIR.sub(r"\1", quoted) if quoted is not None else (token or "").strip("'")
            params.setdefault(param.group(1).lower(), value)
            position = param.end()
        closing = _LINK_END.match(text, position)
        if closing is None:
            position = _after_comma(text, position)
            continue
        position = closing.end()
        if cut and position >= end:
            return  # this link may have been cut short
        anchor = params.get("anchor")
        if anchor is not None and urls.canonical(urls.join(base, anchor) or "") != urls.canonical(base):
            continue
        yield params.get("rel", ""), target.group(1)


def _after_comma(text: str, position: int) -> int:
    """The position just after the next comma from ``position``, or the end of ``text``."""
    comma = text.find(",", position)
    return len(text) if comma < 0 else comma + 1
