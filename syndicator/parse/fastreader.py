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

from typing import Any

from lxml import etree

from syndicator.errors import ParseError
from syndicator.parse import feedreader
from syndicator.parse.fastelements import Elements
from syndicator.parse.fastnames import ATOM, CATEGORIES, FEED_HARMLESS, Unsure, name_of, text_of
from syndicator.parse.fastxhtml import XHTML_OR_ATOM
from syndicator.parse.feedreader import AuthorState
from syndicator.parse.limits import MAX_TAGS, Budget

_RSS_VERSIONS = {"0.91": "rss091u", "0.92": "rss092", "0.93": "rss093", "0.94": "rss094"}
#: Namespaces whose declaration changes the version feedparser reports.
_VERSION_NAMESPACES = frozenset({"http://purl.org/rss/1.0/", "http://my.netscape.com/rdf/simple/0.9/"})


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
    others = sum(1 for _ in root.iter()) - sum(1 for _ in root.iter(f"{XHTML_OR_ATOM[0]}*"))
    if 2 * others > MAX_TAGS:  # a start and an end tag each: only XHTML content may hold more
        raise ParseError(
            budget.url, f"too complex to parse: more than {MAX_TAGS:,} tags outside XHTML content", kind="too_complex"
        )
    try:
        return _Reader(budget).read(root)
    except Unsure:
        return None


class _Reader(Elements):
    """One document's walk: the root, the channel, the feed's elements and each entry's."""

    def read(self, root: Any) -> Any:
        """The parsed document of ``root`` (an lxml element).

        Raises:
            Unsure: the document is one the fast path does not read (feedparser reads it).
        """
        name = name_of(root)
        declared = {uri.lower() for uri in root.nsmap.values()}
        if declared & _VERSION_NAMESPACES:
            raise Unsure
        if name == "rss" and root.tag == "rss":
            version = root.get("version", "")
            version = _RSS_VERSIONS.get(version) or ("rss20" if version.startswith("2.") else "")
            if not version:
                raise Unsure
            channel = self._rss(root)
        elif root.tag == f"{{{ATOM}}}feed":
            version, self.atom = "atom10", True
            channel = None
        else:
            raise Unsure
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
            raise Unsure  # feedparser says why a document has none
        return feedreader.document(feed.context, entries, version)

    def _rss(self, root: Any) -> Any:
        """The one channel of an RSS document (anything else beside it that feedparser reads: unsure)."""
        channels = [child for child in root if name_of(child) == "channel"]
        if len(channels) != 1:
            raise Unsure
        for child in root:
            if child is not channels[0]:
                self._check_skipped(child)
        return channels[0]

    def _feed_children(self, parent: Any, feed: AuthorState, entries: list[dict[str, Any]]) -> None:
        for child in parent:
            name = name_of(child)
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
                feed.context["language"] = self._value(text_of(child), "language")
            elif name in CATEGORIES:
                self._category(child, name, attributes, feed.context)
            else:
                self._check_skipped(child, FEED_HARMLESS)
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
            child_name = name_of(child)
            if child_name not in allowed:
                raise Unsure  # feedparser would leave the image and file what follows under the feed
            self._check_skipped(child, frozenset(allowed))
            if child_name == "title" and text_of(child).strip():
                self.title_depth = self.depth + 1

    def _entry(self, element: Any) -> dict[str, Any]:
        """One item or entry as feedparser's entry mapping (a plain dict), its enclosures last."""
        entry = AuthorState()
        context = entry.context
        self._enter(element)
        self.guidislink = False
        self.title_depth = -1
        depths: dict[str, int] = {}
        for child in element:
            name = name_of(child)
            attributes = self._enter(child)
            if name in ("title", "dc_title"):
                self._content(child, attributes, context, "title", "text/plain", depths=depths)
            elif name in ("description", "media_description"):
                self._description(child, attributes, context, depths)
            elif name == "summary":
                self._summary(child, attributes, context, depths)
            elif name in ("content_encoded", "fullitem"):
                self._body(child, attributes, context, "text/html", depths)
            elif name == "content":
                self._atom_content(child, attributes, context, depths)
            elif name in ("language", "dc_language"):
                self._store(context, "language", self._value(text_of(child), "language"), depths)
            elif name == "itunes_summary":
                self._content(child, attributes, context, "itunes_summary", "text/plain", depths=depths)
            elif name == "link":
                self._link(child, attributes, context, in_entry=True)
            elif name in ("guid", "id"):
                self._guid(child, attributes, context, in_entry=True, depths=depths)
            elif name in ("pubdate", "published", "issued", "dcterms_issued"):
                self._store(context, "published", self._value(text_of(child), "published"), depths)
            elif name in ("updated", "modified", "lastbuilddate", "dc_date", "dcterms_modified"):
                self._store(context, "updated", self._value(text_of(child), "updated"), depths)
            elif name in ("author", "managingeditor", "dc_creator", "dc_author", "itunes_author"):
                self._author(child, entry, depths)
            elif name == "enclosure":
                self._enclosure(child, attributes, context)
            elif name in ("media_content", "media_thumbnail", "media_group", "media_title"):
                self._media(child, name, attributes, context, depths)
            elif name == "source":
                self._source(child, attributes, context, depths)
            elif name in ("itunes_image", "itunes_link"):
                self._itunes_image(child, attributes, context)
            elif name in CATEGORIES:
                self._category(child, name, attributes, context)
            elif name == "itunes_duration":
                if attributes:
                    raise Unsure
                self._store(context, name, self._value(text_of(child), name), depths)
            else:
                self._check_skipped(child)
            self._leave()
        self._leave()
        self.has_content = False
        if "links" in context:
            context["enclosures"] = _enclosures(context["links"])
        return context


def _enclosures(links: list[dict[str, str]]) -> list[dict[str, str]]:
    """An entry's ``enclosures`` as feedparser gives them: its links of rel "enclosure", without the rel."""
    return [
        {key: value for key, value in link.items() if key != "rel"} for link in links if link.get("rel") == "enclosure"
    ]
