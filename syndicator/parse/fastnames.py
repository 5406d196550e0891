"""What the fast reader reads, and element and attribute names as feedparser dispatches on them.

A helper of :mod:`fastreader`: the sets of element names that decide
whether the fast path is sure (:data:`READ_KEYS`, :data:`HARMLESS`,
:data:`FEED_HARMLESS`), the :class:`Unsure` it raises otherwise, and the
naming of an element (:func:`name_of`), of its attributes
(:func:`attributes_of`) and its text (:func:`text_of`) as feedparser's
handlers see them. It walks no document and keeps no state but a bounded
cache of names.
"""

from __future__ import annotations

from typing import Any

from syndicator.parse.feedreader import PREFIXES

ATOM = "http://www.w3.org/2005/Atom"
XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
#: Keys parse and media read from an entry: an unknown element stored under one of them is not skipped.
READ_KEYS = frozenset(
    {
        "title",
        "title_detail",
        "link",
        "links",
        "id",
        "guidislink",
        "published",
        "updated",
        "author",
        "author_detail",
        "authors",
        "content",
        "summary",
        "summary_detail",
        "itunes_summary",
        "itunes_summary_detail",
        "enclosures",
        "media_content",
        "media_thumbnail",
        "image",
        "itunes_duration",
        "source",
    }
)
#: The category elements, read into ``tags`` (:meth:`fastelements.Elements._category`) in an entry and in the feed.
CATEGORIES = frozenset({"category", "dc_subject", "media_category", "itunes_category"})
#: Elements with a handler that only fills keys nobody reads here, and holds no element that matters.
HARMLESS = frozenset(
    {
        "keywords",
        "tags",
        "contributor",
        "rights",
        "copyright",
        "dc_rights",
        "subtitle",
        "tagline",
        "itunes_subtitle",
        "itunes_explicit",
        "itunes_block",
        "itunes_keywords",
        "media_credit",
        "media_rating",
        "media_keywords",
        "media_license",
        "media_restriction",
        "media_player",
        "created",
        "dcterms_created",
        "expirationdate",
        "dcterms_valid",
        "generator",
        "cloud",
        "name",
        "email",
        "uri",
        "url",
        "homepage",
        "cc_license",
        "creativecommons_license",
        "dc_publisher",
        "georss_point",
        "georss_line",
        "georss_polygon",
        "georss_box",
    }
)
#: At the feed level these are harmless too (dates and descriptions of the feed are not read).
FEED_HARMLESS = HARMLESS | {
    "description",
    "summary",
    "info",
    "feedburner_browserfriendly",
    "lastbuilddate",
    "pubdate",
    "published",
    "updated",
    "modified",
    "issued",
    "dc_date",
    "dcterms_modified",
    "dcterms_issued",
    "dc_description",
    "dc_publisher",
    "webmaster",
    "itunes_summary",
    "itunes_image",
    "itunes_link",
    "newlocation",
    "media_content",
    "media_thumbnail",
    "media_group",
    "media_description",
}
#: Attribute names feedparser acts on: one of these in a foreign namespace makes the fast path unsure.
_READ_ATTRIBUTES = frozenset(
    {
        "href",
        "url",
        "uri",
        "rel",
        "type",
        "base",
        "lang",
        "length",
        "medium",
        "width",
        "height",
        "src",
        "mode",
        "ispermalink",
        "version",
        "filesize",
        "duration",
        "lastmod",
        "about",
        "term",
        "scheme",
        "label",
        "domain",
        "text",
    }
)


class Unsure(Exception):
    """The document holds something the fast path does not read as feedparser would."""


_NAMES: dict[str, str] = {}
_NAMES_KEPT = 4096


def name_of(element: Any) -> str:
    """The element's name as feedparser dispatches on it: ``title``, ``media_content``, ``x_foo``."""
    tag = element.tag
    known = _NAMES.get(tag)
    if known is not None:
        return known
    if not isinstance(tag, str):
        raise Unsure  # an entity reference left in the tree
    if tag[0] != "{":
        name = tag.lower()
    else:
        uri, local = tag[1:].split("}", 1)
        prefix = PREFIXES.get(uri.lower())
        if prefix is None:  # a namespace feedparser does not know: named by the prefix written
            written = element.prefix or ""
            return f"{written}_{local}".lower() if written else local.lower()
        name = f"{prefix}_{local}".lower() if prefix else local.lower()
    if len(_NAMES) < _NAMES_KEPT:
        _NAMES[tag] = name
    return name


def attributes_of(element: Any) -> dict[str, str]:
    """The element's attributes as feedparser normalizes them: names in lower case, rel and type too.

    An attribute in a namespace feedparser knows is named with its prefix
    (``xml:base``); one in another namespace under both its local name and
    its name as written (``count`` and ``thr:count``), unless the local name
    is one feedparser reads (then the fast path is unsure).
    """
    found: dict[str, str] = {}
    for key, value in element.items():  # items(): no attribute proxy built for each element
        if key[0] == "{":
            uri, local = key[1:].split("}", 1)
            prefix = "xml" if uri == "http://www.w3.org/XML/1998/namespace" else PREFIXES.get(uri.lower(), "")
            if not prefix:
                written = next((p for p, u in element.nsmap.items() if u == uri and p), None)
                if written is None or local.lower() in _READ_ATTRIBUTES:
                    raise Unsure
                found[local.lower()] = value
                key = f"{written}:{local}"
            else:
                key = f"{prefix}:{local}"
        key = key.lower()
        found[key] = value.lower() if key in ("rel", "type") else value
    return found


def text_of(element: Any) -> str:
    """The text of an element that must hold no element (feedparser would read markup as XHTML)."""
    if len(element):
        raise Unsure
    return element.text or ""
