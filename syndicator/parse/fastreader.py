"""Well-formed RSS 2.0 and Atom 1.0, read with lxml into what feedparser would give, or None.

feedparser reads a document through Python callbacks for every element and
every piece of text; on a typical feed that is 20-40 ms of CPU, most of a
cold build. :func:`read` builds the same ``feed`` and ``entries`` mappings
(the keys :mod:`parse` and :mod:`media` read, with feedparser's values)
from an lxml tree in C, walking only the elements it knows. feedparser's
own rules are used where they are more than a line (author and e-mail
splitting, the HTML guess for RSS text, URL joining, the Latin-1 and
Windows-1252 repairs: :mod:`feedreader` lends them), and its bookkeeping
(the first non-empty title wins, a guid stands in for a missing link, a
second description is content) is followed step by step.

The fast path is only taken when it is sure to agree. It returns None, and
the caller goes to feedparser, for anything else: a document lxml or expat
finds malformed, a DOCTYPE, another format (RSS 1.0 and 0.90, Atom 0.3,
JSON), an element feedparser has a handler for that is not read here
(``source``, ``media:title``, GeoRSS...), XHTML or base64 content, text
elements holding markup, and a document with no entries. The corpus test
(``tests/test_fastreader.py``) holds the two paths to the same parsed feed
on every real feed the project keeps.
"""

from __future__ import annotations

import re
from typing import Any
from xml.sax.saxutils import escape

from lxml import etree

from syndicator.errors import ParseError
from syndicator.parse import feedreader
from syndicator.parse.feedreader import HANDLED, PREFIXES, RELATIVE_URI_ELEMENTS, AuthorState, repaired
from syndicator.parse.limits import MAX_ATTRIBUTES, MAX_TAGS, Budget

_ATOM = "http://www.w3.org/2005/Atom"
_XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
_RSS_VERSIONS = {"0.91": "rss091u", "0.92": "rss092", "0.93": "rss093", "0.94": "rss094"}
#: Namespaces whose declaration changes the version feedparser reports.
_VERSION_NAMESPACES = frozenset({"http://purl.org/rss/1.0/", "http://my.netscape.com/rdf/simple/0.9/"})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: Keys parse and media read from an entry: an unknown element stored under one of them is not skipped.
_READ_KEYS = frozenset(
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
#: Elements with a handler that only fills keys nobody reads here, and holds no element that matters.
_HARMLESS = frozenset(
    {
        "category",
        "keywords",
        "tags",
        "dc_subject",
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
        "itunes_category",
        "media_credit",
        "media_rating",
        "media_category",
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
_FEED_HARMLESS = _HARMLESS | {
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
_LINK_FIX = re.compile(r"&([A-Za-z0-9_]+);")
_XHTML_TYPE = "application/xhtml+xml"
#: Elements read inside XHTML content: XHTML's, and Atom's (an unqualified element in an Atom document).
_XHTML_OR_ATOM = ("{http://www.w3.org/1999/xhtml}", f"{{{_ATOM}}}")
_XLINK = "http://www.w3.org/1999/xlink"
_QUOTE = {'"': "&quot;"}
#: Elements of XHTML content serialized between two budget checks.
_XHTML_CHECK = 4096


def _unwrapped(pieces: list[str]) -> str:
    """XHTML content's pieces joined as feedparser's ``pop`` joins them: blank pieces at either end
    dropped, and one ``div`` around everything removed (not ``<div>a</div><div>b</div>``), then stripped."""
    while len(pieces) > 1 and not pieces[-1].strip():
        del pieces[-1]
    while len(pieces) > 1 and not pieces[0].strip():
        del pieces[0]
    if pieces and (pieces[0] == "<div>" or pieces[0].startswith("<div ")) and pieces[-1] == "</div>":
        depth = 0
        for piece in pieces[:-1]:
            if piece.startswith("</"):
                depth -= 1
                if depth == 0:
                    break
            elif piece.startswith("<") and not piece.endswith("/>"):
                depth += 1
        else:
            pieces = pieces[1:-1]
    return "".join(pieces).strip()


class _Unsure(Exception):
    """The document holds something the fast path does not read as feedparser would."""


def read(prepared: str, budget: Budget) -> Any | None:
    """feedparser's reading of a well-formed RSS 2.0 or Atom 1.0 document, or None.

    Args:
        prepared: the document as :func:`encoding.prepare_xml` left it (str).
        budget: checked between entries (:class:`limits.Budget`).
    Returns:
        a ``FeedParserDict`` with ``feed``, ``entries`` (plain dicts with
        the keys feedparser gives), ``version``, and ``bozo`` False; or
        None when feedparser must read the document (see the module docstring).
    Raises:
        ParseError: kind ``too_complex`` past the budget, or for more than
            :data:`limits.MAX_TAGS` tags outside XHTML content (each entry
            costs the build far more than a tag; XHTML content costs lxml
            a few microseconds a tag).
    """
    data = prepared.encode("utf-8")
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data or not feedreader.well_formed(data):
        return None
    parser = etree.XMLParser(
        encoding="utf-8",
        resolve_entities=False,
        no_network=True,
        remove_comments=True,
        remove_pis=True,
        huge_tree=False,
    )
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError):
        return None
    others = sum(1 for _ in root.iter()) - sum(1 for _ in root.iter(f"{_XHTML_OR_ATOM[0]}*"))
    if 2 * others > MAX_TAGS:  # a start and an end tag each: only XHTML content may hold more
        raise ParseError(
            budget.url, f"too complex to parse: more than {MAX_TAGS:,} tags outside XHTML content", kind="too_complex"
        )
    try:
        return _Reader(budget).read(root)
    except _Unsure:
        return None


#: Names of tags seen, for those whose name does not depend on the prefix written (bounded).
_NAMES: dict[str, str] = {}
_NAMES_KEPT = 4096


def _name(element: Any) -> str:
    """The element's name as feedparser dispatches on it: ``title``, ``media_content``, ``x_foo``."""
    tag = element.tag
    known = _NAMES.get(tag)
    if known is not None:
        return known
    if not isinstance(tag, str):
        raise _Unsure  # an entity reference left in the tree
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


def _attributes(element: Any) -> dict[str, str]:
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
                    raise _Unsure
                found[local.lower()] = value
                key = f"{written}:{local}"
            else:
                key = f"{prefix}:{local}"
        key = key.lower()
        found[key] = value.lower() if key in ("rel", "type") else value
    return found


def _text(element: Any) -> str:
    """The text of an element that must hold no element (feedparser would read markup as XHTML)."""
    if len(element):
        raise _Unsure
    return element.text or ""


class _Reader:
    """One document's walk, keeping the state feedparser keeps (depth, xml:base, title depth, content)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.depth = 0
        self.baseuri = ""
        self.basestack: list[str] = []
        self.joined: dict[tuple[str, str], str] = {}  # (base in scope, xml:base) -> the new base
        self.title_depth = -1
        self.has_content = False
        self.atom = False
        self.guidislink = False
        self.lang: str | None = None  # the xml:lang in scope (feedparser's ``lang``)
        self.langstack: list[str | None] = []

    # -- structure ---------------------------------------------------------------

    def read(self, root: Any) -> Any:
        name = _name(root)
        declared = {uri.lower() for uri in root.nsmap.values()}
        if declared & _VERSION_NAMESPACES:
            raise _Unsure
        if name == "rss" and root.tag == "rss":
            version = root.get("version", "")
            version = _RSS_VERSIONS.get(version) or ("rss20" if version.startswith("2.") else "")
            if not version:
                raise _Unsure
            channel = self._rss(root)
        elif root.tag == f"{{{_ATOM}}}feed":
            version, self.atom = "atom10", True
            channel = None
        else:
            raise _Unsure
        feed = AuthorState()
        entries: list[dict[str, Any]] = []
        self._enter(root)
        if self.lang:
            feed.context["language"] = self.lang.replace("_", "-")
        if channel is None:
            self._feed_children(root, feed, entries)
        else:
            self._enter(channel)
            self._feed_children(channel, feed, entries)
            self._leave()
        self._leave()
        if not entries:
            raise _Unsure  # feedparser says why a document has none
        return feedreader.document(feed.context, entries, version)

    def _rss(self, root: Any) -> Any:
        """The one channel of an RSS document (anything else beside it that feedparser reads: unsure)."""
        channels = [child for child in root if _name(child) == "channel"]
        if len(channels) != 1:
            raise _Unsure
        for child in root:
            if child is not channels[0]:
                self._check_skipped(child)
        return channels[0]

    def _enter(self, element: Any) -> dict[str, str]:
        """feedparser's start of an element: depth, then xml:base and xml:lang (``base`` and ``lang``
        without a namespace too; an empty xml:lang unsets the language, XML 1.0 section 2.12).

        Raises:
            ParseError: kind ``too_complex``, for an element with more than
                :data:`limits.MAX_ATTRIBUTES` attributes (``len`` is linear,
                ``items()`` grows with the square; the pre-scan refuses them first).
        """
        if len(element.attrib) > MAX_ATTRIBUTES:
            raise ParseError(
                self.budget.url,
                f"too complex to parse: an element with more than {MAX_ATTRIBUTES:,} attributes",
                kind="too_complex",
            )
        self.depth += 1
        attributes = _attributes(element)
        base = attributes.get("xml:base", attributes.get("base")) or self.baseuri
        if base:
            known = self.joined.get((self.baseuri, base))
            if known is None:
                if self.baseuri:
                    known = feedreader.safe_absolute(self.baseuri, base) or self.baseuri
                else:
                    known = feedreader.urljoin(self.baseuri, base)
                self.joined[(self.baseuri, base)] = known
            self.baseuri = known
        self.basestack.append(self.baseuri)
        lang = attributes.get("xml:lang", attributes.get("lang"))
        self.lang = None if lang == "" else self.lang if lang is None else lang
        self.langstack.append(self.lang)
        return attributes

    def _leave(self) -> None:
        self.basestack.pop()
        if self.basestack and self.basestack[-1]:
            self.baseuri = self.basestack[-1]
        self.langstack.pop()
        if self.langstack:
            self.lang = self.langstack[-1]
        self.depth -= 1

    def _check_skipped(self, element: Any, inner: frozenset[str] = _HARMLESS) -> None:
        """Refuse a subtree feedparser would read into a key we use, or that sets xml:base."""
        for node in element.iter():
            if not isinstance(node.tag, str):
                raise _Unsure
            name = _name(node)
            if node.get(_XML_BASE) is not None or node.get("base") is not None:
                raise _Unsure
            if name in HANDLED:
                if name not in inner:
                    raise _Unsure
            elif name in _READ_KEYS:
                raise _Unsure

    # -- the feed ------------------------------------------------------------------

    def _feed_children(self, parent: Any, feed: AuthorState, entries: list[dict[str, Any]]) -> None:
        for child in parent:
            name = _name(child)
            if name in ("item", "entry"):
                self.budget.check("reading entries")
                entries.append(self._entry(child))
                continue
            attributes = self._enter(child)
            if name in ("title", "dc_title"):
                self._content(child, attributes, feed.context, "title", "text/plain", in_entry=False)
            elif name == "media_title":
                self._media_title(child, attributes, feed.context, None, in_entry=False)
            elif name == "link":
                self._link(child, attributes, feed.context, in_entry=False)
            elif name in ("id", "guid"):
                self._guid(child, attributes, feed.context, in_entry=False)
            elif name in ("author", "managingeditor", "dc_creator", "dc_author", "itunes_author"):
                self._author(child, feed)
            elif name == "itunes_owner":
                self._owner(child, feed)
            elif name in ("image", "textinput"):
                self._image(child, name)
            elif name in ("language", "dc_language"):
                feed.context["language"] = self._value(_text(child), "language")
            else:
                self._check_skipped(child, _FEED_HARMLESS)
            self._leave()

    def _image(self, element: Any, name: str) -> None:
        """An RSS image or textInput: only its title matters to us, through the title depth."""
        allowed = (
            {"title", "link", "description", "url", "href", "width", "height"}
            if name == "image"
            else {"title", "link", "description", "name"}
        )
        self.title_depth = -1
        for child in element:
            child_name = _name(child)
            if child_name not in allowed:
                raise _Unsure  # feedparser would leave the image and file what follows under the feed
            self._check_skipped(child, frozenset(allowed))
            if child_name == "title" and _text(child).strip():
                self.title_depth = self.depth + 1

    # -- entries ----------------------------------------------------------------------

    def _entry(self, element: Any) -> dict[str, Any]:
        entry = AuthorState()
        context = entry.context
        self._enter(element)
        self.guidislink = False
        self.title_depth = -1
        depths: dict[str, int] = {}
        for child in element:
            name = _name(child)
            attributes = self._enter(child)
            if name in ("title", "dc_title"):
                self._content(child, attributes, context, "title", "text/plain", depths=depths)
            elif name in ("description", "media_description"):
                self._description(child, attributes, context, depths)
            elif name == "summary":
                if "summary" in context and not self.has_content:
                    self._body(child, attributes, context, "text/plain", depths)
                else:
                    self._content(child, attributes, context, "summary", "text/plain", depths=depths)
            elif name in ("content_encoded", "fullitem"):
                self._body(child, attributes, context, "text/html", depths)
            elif name == "content":
                if "src" in attributes:
                    self._out_of_line(child, attributes, context)
                else:
                    self._body(child, attributes, context, "text/plain", depths)
            elif name in ("language", "dc_language"):
                self._store(context, "language", self._value(_text(child), "language"), depths)
            elif name == "itunes_summary":
                self._content(child, attributes, context, "itunes_summary", "text/plain", depths=depths)
            elif name == "link":
                self._link(child, attributes, context, in_entry=True)
            elif name in ("guid", "id"):
                self._guid(child, attributes, context, in_entry=True, depths=depths)
            elif name in ("pubdate", "published", "issued", "dcterms_issued"):
                self._store(context, "published", self._value(_text(child), "published"), depths)
            elif name in ("updated", "modified", "lastbuilddate", "dc_date", "dcterms_modified"):
                self._store(context, "updated", self._value(_text(child), "updated"), depths)
            elif name in ("author", "managingeditor", "dc_creator", "dc_author", "itunes_author"):
                self._author(child, entry, depths)
            elif name == "enclosure":
                self._check_empty(child)
                attributes = feedreader.enforce_href(attributes)
                attributes["rel"] = "enclosure"
                context.setdefault("links", []).append(attributes)
            elif name in ("media_content", "media_thumbnail", "media_group", "media_title"):
                self._media(child, name, attributes, context, depths)
            elif name == "source":
                self._source(child, attributes, context, depths)
            elif name in ("itunes_image", "itunes_link"):
                self._check_empty(child)
                href = attributes.get("href") or attributes.get("url")
                if href:
                    context["image"] = {"href": href}
            elif name == "itunes_duration":
                if attributes:
                    raise _Unsure
                self._store(context, name, self._value(_text(child), name), depths)
            else:
                self._check_skipped(child)
            self._leave()
        self._leave()
        self.has_content = False
        if "links" in context:
            context["enclosures"] = [
                {key: value for key, value in link.items() if key != "rel"}
                for link in context["links"]
                if link.get("rel") == "enclosure"
            ]
        return context

    def _media(
        self, element: Any, name: str, attributes: dict[str, str], context: dict[str, Any], depths: dict[str, int]
    ) -> None:
        """media:group, media:content and media:thumbnail, and the media elements inside them."""
        if name == "media_title":
            self._media_title(element, attributes, context, depths)
            return
        if name == "media_description":
            self._description(element, attributes, context, depths)
            return
        if name == "media_content":
            context.setdefault("media_content", []).append(attributes)
        elif name == "media_thumbnail":
            thumbnails = context.setdefault("media_thumbnail", [])
            thumbnails.append(attributes)
            url = self._value(_text(element), "url")
            self._store(context, "url", url, depths)
            if url.strip() and "url" not in attributes:
                attributes["url"] = url
            return
        for child in element:
            child_name = _name(child)
            child_attributes = self._enter(child)
            if child_name in ("media_content", "media_thumbnail", "media_group", "media_title", "media_description"):
                self._media(child, child_name, child_attributes, context, depths)
            else:
                self._check_skipped(child)
            self._leave()

    # -- values --------------------------------------------------------------------------

    def _value(self, text: str, element: str, content_type: str | None = None) -> str:
        """feedparser's ``pop`` of a text element: stripped, resolved when it is a URL, repaired."""
        output = text.strip()
        if output and element in RELATIVE_URI_ELEMENTS and (element != "id" or self.guidislink):
            output = feedreader.urljoin(self.baseuri or "", output)
        return repaired(output)

    def _store(self, context: dict[str, Any], key: str, value: Any, depths: dict[str, int] | None) -> None:
        """Store an entry value unless the same key came from a shallower element (feedparser's depth map)."""
        if depths is None:
            context[key] = value
            return
        old = depths.get(key)
        if old is None or self.depth <= old:
            depths[key] = self.depth
            context[key] = value

    def _check_empty(self, element: Any) -> None:
        """Refuse an element read from its attributes alone when feedparser would read what it holds."""
        for child in element:
            self._check_skipped(child)

    def _detail(
        self, element: Any, attributes: dict[str, str], element_name: str, default_type: str
    ) -> tuple[str, dict[str, Any]]:
        """(value, detail) of a content-like element, or unsure for XHTML, base64 or markup inside."""
        if "mode" in attributes:
            raise _Unsure
        content_type = feedreader.map_content_type(attributes.get("type", default_type))
        if content_type == _XHTML_TYPE and self.atom:
            output = self._xhtml(element)
            if output is None:
                raise _Unsure
            output = repaired(output)
            return output, {"type": content_type, "language": self._language(), "base": self.baseuri, "value": output}
        if content_type not in ("text/plain", "text/html"):
            raise _Unsure  # other types are base64
        output = _text(element).strip()
        if not self.atom and content_type == "text/plain" and feedreader.looks_like_html(output):
            content_type = "text/html"
        output = repaired(output)
        return output, {"type": content_type, "language": self._language(), "base": self.baseuri, "value": output}

    def _xhtml(self, element: Any) -> str | None:
        """Atom ``type="xhtml"`` content serialized as feedparser serializes it, or None when unsure.

        feedparser (``unknown_starttag``, ``handle_data``, ``pop``) writes
        each element inside as ``<name attr="value">`` and ``</name>`` (an
        empty element too: ``<br></br>``), text and attribute values
        escaped, and drops the one ``div`` that wraps it all (RFC 4287
        section 4.1.3.3). Only XHTML (or unqualified) elements with no
        handler of feedparser's, no ``xml:base`` and no foreign attribute
        are followed; the budget is checked every :data:`_XHTML_CHECK` elements.
        """
        pieces: list[str] = []
        count = 0
        for event, node in etree.iterwalk(element, events=("start", "end")):
            if node is element:
                if event == "start" and node.text:
                    pieces.append(escape(node.text))
                continue
            tag = node.tag
            local = tag[tag.index("}") + 1 :].lower() if isinstance(tag, str) and "}" in tag else tag
            if event == "end":
                pieces.append(f"</{local}>")
                if node.tail:
                    pieces.append(escape(node.tail))
                continue
            count += 1
            if not count % _XHTML_CHECK:
                self.budget.check("reading XHTML content")
            if not isinstance(tag, str) or not (tag.startswith(_XHTML_OR_ATOM) or "}" not in tag):
                return None  # an entity, or SVG, MathML and others: feedparser's rules differ
            if (
                _name(node) in HANDLED
                or local in ("svg", "math")
                or _XLINK in node.nsmap.values()
                or len(node.attrib) > MAX_ATTRIBUTES
            ):
                return None
            attributes = []
            for key, value in node.items():
                if key[0] == "{":
                    if not key.startswith("{http://www.w3.org/XML/1998/namespace}"):
                        return None
                    key = "xml:" + key[key.index("}") + 1 :]
                key = key.lower()
                if key in ("base", "xml:base"):
                    return None
                value = value.lower() if key in ("rel", "type") else value
                attributes.append(f' {key}="{escape(value, _QUOTE)}"')
            pieces.append(f"<{local}{''.join(attributes)}>")
            if node.text:
                pieces.append(escape(node.text))
        return _unwrapped(pieces)

    def _language(self) -> str | None:
        """The xml:lang in scope as a text element's detail gives it (feedparser's ``push_content``)."""
        return self.lang.replace("_", "-") if self.lang else None

    def _content(
        self,
        element: Any,
        attributes: dict[str, str],
        context: dict[str, Any],
        element_name: str,
        default_type: str,
        in_entry: bool = True,
        depths: dict[str, int] | None = None,
    ) -> None:
        """A title, description, summary or itunes:summary (feedparser's ``push_content``/``pop``)."""
        output, detail = self._detail(element, attributes, element_name, default_type)
        if element_name == "title" and -1 < self.title_depth <= self.depth:
            pass  # a title was already kept at this depth
        elif in_entry:
            key = "summary" if element_name == "description" else element_name
            self._store(context, key, output, depths)
            context[f"{key}_detail"] = detail
        else:
            key = "subtitle" if element_name == "description" else element_name
            context[key] = output
            context[f"{key}_detail"] = detail
        if element_name == "title" and output:
            self.title_depth = self.depth

    def _body(
        self,
        element: Any,
        attributes: dict[str, str],
        context: dict[str, Any],
        default_type: str,
        depths: dict[str, int],
    ) -> None:
        """Content: appended to ``content``, and the summary when there is none yet."""
        self.has_content = True
        output, detail = self._detail(element, attributes, "content", default_type)
        context.setdefault("content", []).append(detail)
        context.setdefault("summary", output)

    def _out_of_line(self, element: Any, attributes: dict[str, str], context: dict[str, Any]) -> None:
        """Atom ``<content src>`` (RFC 4287 section 4.1.3.2): empty, so its detail's value is "" and,
        for a text or HTML type, so is the summary when there is none yet (feedparser's ``_end_content``).
        One that holds something, or has a ``mode``, is left to feedparser."""
        if len(element) or (element.text or "").strip() or "mode" in attributes:
            raise _Unsure
        self.has_content = True
        content_type = feedreader.map_content_type(attributes.get("type", "text/plain"))
        context.setdefault("content", []).append(
            {
                "type": content_type,
                "language": self._language(),
                "base": self.baseuri,
                "src": attributes["src"],
                "value": "",
            }
        )
        if content_type == "text/plain" or content_type in _HTML_TYPES:
            context.setdefault("summary", "")

    def _description(
        self, element: Any, attributes: dict[str, str], context: dict[str, Any], depths: dict[str, int]
    ) -> None:
        """An entry's description (or media:description): its summary, or its content when a summary came first."""
        if "summary" in context and not self.has_content:
            self._body(element, attributes, context, "text/plain", depths)
        else:
            self._content(element, attributes, context, "description", "text/html", depths=depths)

    def _media_title(
        self,
        element: Any,
        attributes: dict[str, str],
        context: dict[str, Any],
        depths: dict[str, int] | None,
        in_entry: bool = True,
    ) -> None:
        """media:title: a title like any other, except that it leaves the title depth as it found it."""
        title_depth = self.title_depth
        self._content(element, attributes, context, "title", "text/plain", in_entry=in_entry, depths=depths)
        self.title_depth = title_depth

    def _source(
        self, element: Any, attributes: dict[str, str], context: dict[str, Any], depths: dict[str, int]
    ) -> None:
        """An RSS source (a title and a url): Atom's, which holds elements, is left to feedparser."""
        self.title_depth = -1
        source = {"href": attributes["url"]} if "url" in attributes else {}
        value = self._value(_text(element), "source")
        self._store(context, "source", value, depths)
        if value:
            source["title"] = value
        context["source"] = source

    def _link(self, element: Any, attributes: dict[str, str], context: dict[str, Any], in_entry: bool) -> None:
        """An RSS link (text) or an Atom link (attributes), as feedparser's ``_start_link``."""
        attributes.setdefault("rel", "alternate")
        attributes.setdefault("type", "application/atom+xml" if attributes["rel"] == "self" else "text/html")
        attributes = feedreader.enforce_href(attributes)
        if "href" in attributes:
            self._check_empty(element)
            attributes["href"] = feedreader.urljoin(self.baseuri or "", attributes["href"])
            context.setdefault("links", []).append(attributes)
            if (
                attributes.get("rel") == "alternate"
                and feedreader.map_content_type(attributes.get("type")) in _HTML_TYPES
            ):
                context["link"] = attributes["href"]
            return
        context.setdefault("links", []).append(attributes)
        output = self._value(_text(element), "link")
        if in_entry:
            output = _LINK_FIX.sub(r"&\g<1>", output.replace("&amp;", "&"))
        else:
            output = _LINK_FIX.sub(r"&\g<1>", output)
        context["link"] = output
        if output:
            context["links"][-1]["href"] = output

    def _guid(
        self,
        element: Any,
        attributes: dict[str, str],
        context: dict[str, Any],
        in_entry: bool,
        depths: dict[str, int] | None = None,
    ) -> None:
        """An RSS guid or Atom id; a permalink guid stands in for a missing link."""
        self.guidislink = attributes.get("ispermalink", "true") == "true"
        output = self._value(_text(element), "id")
        self._store(context, "id", output, depths if in_entry else None)
        context.setdefault("guidislink", self.guidislink and "link" not in context)
        if self.guidislink:
            context.setdefault("link", output)

    def _author(self, element: Any, state: AuthorState, depths: dict[str, int] | None = None) -> None:
        """An author element: RSS text (``Name <email>``) or Atom name, email and uri children."""
        context = state.context
        context.setdefault("authors", []).append(feedreader.FeedParserDict())
        pieces = [element.text or ""]
        for child in element:
            name = _name(child)
            self._enter(child)
            if name in ("name", "itunes_name"):
                state.save_author("name", _text(child).strip())
            elif name in ("email", "itunes_email"):
                state.save_author("email", _text(child).strip())
            elif name in ("uri", "url", "homepage"):
                href = self._value(_text(child), "href")
                self._store(context, "href", href, depths)
                state.save_author("href", href)
            else:
                self._check_skipped(child)
            self._leave()
            pieces.append(child.tail or "")
        self._store(context, "author", self._value("".join(pieces), "author"), depths)
        state.sync_author_detail()

    def _owner(self, element: Any, state: AuthorState) -> None:
        """itunes:owner: its name and email are the publisher's (and, by feedparser's quirk, an author's)."""
        for child in element:
            name = _name(child)
            self._enter(child)
            if name in ("itunes_name", "name"):
                state.save_author("name", _text(child).strip(), "publisher")
            elif name in ("itunes_email", "email"):
                state.save_author("email", _text(child).strip(), "publisher")
            else:
                self._check_skipped(child)
            self._leave()
        state.sync_author_detail("publisher")
