"""feedparser, fed in pieces so the parse budget is checked while it runs.

The only module that imports feedparser (and the SGML library its tolerant
parser is built on). ``feedparser.parse`` reads a whole document in one
call that Python cannot interrupt, so a hostile document could hold the
thread far past the parse budget. :func:`read` does what ``feedparser.parse``
does for a document already in memory (feedparser 6.0: its encoding and
DOCTYPE steps, then the strict SAX parser, and on a SAX error the tolerant
SGML parser; a document expat finds malformed goes to the tolerant parser
directly, :func:`_syntax_error`), with one difference: each parser is given the document
:data:`CHUNK` characters at a time and :meth:`limits.Budget.check` runs
before every piece. The work between two checks is feedparser's work on
one piece, whatever the document's size. One more difference: an author
string is cut to :data:`limits.AUTHOR_MAX_CHARS` characters before
feedparser searches it for an e-mail address (a search quadratic in its
length). And ``itunes:summary`` is read into a field of its own,
``itunes_summary`` (:class:`_OwnSummary`), never into ``summary`` or ``content``.
And ``tags`` holds categories only, at most :data:`TAGS_KEPT` (:class:`_OwnTags`).

What feedparser raises on hostile input becomes the source's
:class:`~syndicator.errors.ParseError` (its ``bozo`` flag covers the rest).
"""

from __future__ import annotations

import contextlib
import io
import re
import xml.sax
from typing import Any
from xml.parsers import expat
from xml.parsers.expat import ExpatError

from feedparser.api import PREFERRED_XML_PARSERS, LooseFeedParser, StrictFeedParser
from feedparser.encodings import convert_to_utf8
from feedparser.exceptions import UndeclaredNamespace
from feedparser.mixin import _cp1252, _FeedParserMixin
from feedparser.sanitizer import replace_doctype
from feedparser.sgml import sgmllib
from feedparser.urls import _urljoin, make_safe_absolute_uri
from feedparser.util import FeedParserDict

from syndicator.errors import ParseError
from syndicator.parse.limits import AUTHOR_MAX_CHARS, Budget

_C1 = re.compile("[\x80-\x9f]")
#: Characters (strict parser: bytes) given to a parser between two budget checks.
CHUNK = 64 * 1024
_HEADERS = {"content-type": "application/xml; charset=utf-8"}
#: What feedparser has been seen to raise on hostile documents.
_ERRORS = (
    ValueError,
    OverflowError,
    LookupError,
    TypeError,
    AttributeError,
    AssertionError,
    ExpatError,
    UndeclaredNamespace,
)


def read(prepared: str, url: str, budget: Budget) -> Any:
    """feedparser's reading of a prepared XML document, within the budget.

    Args:
        prepared: the document as :func:`encoding.prepare_xml` left it (str).
        url: the source, named by errors.
        budget: checked before every piece of the document.
    Returns:
        a ``feedparser.FeedParserDict`` as ``feedparser.parse`` returns it
        (``feed``, ``entries``, ``version``, ``bozo``, ``bozo_exception``).
        Relative URLs are left as written; markup is not sanitized here.
    Raises:
        ParseError: kind ``too_complex`` past the budget; kind ``parse``
            when feedparser fails on the document.
    """
    result = FeedParserDict(bozo=False, entries=[], feed=FeedParserDict(), headers=dict(_HEADERS))
    if not prepared:
        return result
    try:
        data = convert_to_utf8(result["headers"], prepared.encode("utf-8"), result)
        result["version"], data, entities = replace_doctype(data)
        error = _syntax_error(data) if result["encoding"] else None
        handler = _strict(data, result, budget) if result["encoding"] and error is None else None
        if error is not None:
            result["bozo"], result["bozo_exception"] = 1, error
        if handler is None:
            handler = _loose(data, entities, budget)
    except _ERRORS as error:
        raise ParseError(url, f"not a readable feed: feedparser failed: {type(error).__name__}") from error
    result["feed"] = handler.feeddata
    result["entries"] = handler.entries
    result["version"] = result["version"] or handler.version
    result["namespaces"] = handler.namespaces_in_use
    return result


def _cap_author(parser: Any, key: str) -> None:
    """Cut the author string feedparser is about to search for an e-mail address.

    feedparser's search (``_sync_author_detail``) takes time quadratic in
    the length of a run of name characters, and runs within one call that
    the budget cannot interrupt; :data:`limits.AUTHOR_MAX_CHARS` is all we
    publish of an author anyway.
    """
    context = parser._get_context()
    value = context.get(key)
    if isinstance(value, str) and len(value) > AUTHOR_MAX_CHARS:
        context[key] = value[:AUTHOR_MAX_CHARS]


class _OwnSummary:
    """``itunes:summary`` kept as its own field, ``itunes_summary`` (and ``itunes_summary_detail``).

    feedparser files it as the entry's ``summary``, and then files a
    ``description`` that follows as ``content`` typed text/plain unless it
    looks like HTML to feedparser: the item's HTML was published as escaped
    text, or replaced by the plain-text summary. Kept apart, the choice of
    body is :mod:`parse`'s (the richest HTML first).
    """

    def _start_itunes_summary(self, attrs_d: dict[str, str]) -> None:
        self.push_content("itunes_summary", attrs_d, "text/plain", 1)  # type: ignore[attr-defined]

    def _end_itunes_summary(self) -> None:
        self.pop_content("itunes_summary")  # type: ignore[attr-defined]


#: Raw categories (feedparser's ``tags``) kept per entry or feed: twice the most that are published
#: (:data:`categories.MAX_CATEGORIES`), so that spellings of one category do not crowd out the others.
TAGS_KEPT = 64


def add_tag(context: dict[str, Any], term: str | None, scheme: str | None, label: str | None) -> None:
    """feedparser's ``_add_tag`` on ``context`` (an entry or feed mapping), once ``tags`` holds fewer than
    :data:`TAGS_KEPT`: feedparser looks for each new tag in the whole list, which is quadratic in a feed
    that gives an entry 100,000 categories; past the cap a tag costs nothing."""
    tags = context.setdefault("tags", [])
    if (not term and not scheme and not label) or len(tags) >= TAGS_KEPT:
        return
    value = FeedParserDict(term=term, scheme=scheme, label=label)
    if value not in tags:
        tags.append(value)


class _OwnTags:
    """``tags`` as categories only, at most :data:`TAGS_KEPT` (:func:`add_tag`).

    feedparser also files keywords as tags (``itunes:keywords``, ``media:keywords``, ``<keywords>`` and a
    made-up ``<tags>``, split at commas): they are search terms a publisher gives, often dozens of them,
    not the categories an entry is filed under; their text is read and dropped here.
    """

    def _add_tag(self, term: str | None, scheme: str | None, label: str | None) -> None:
        add_tag(self._get_context(), term, scheme, label)  # type: ignore[attr-defined]

    def _start_keywords(self, attrs_d: dict[str, str]) -> None:
        self.push("keywords", 1)  # type: ignore[attr-defined]

    def _end_keywords(self) -> None:
        self.pop("keywords")  # type: ignore[attr-defined]

    def _end_itunes_keywords(self) -> None:
        self.pop("itunes_keywords")  # type: ignore[attr-defined]

    def _end_media_keywords(self) -> None:
        self.pop("media_keywords")  # type: ignore[attr-defined]

    def _end_tags(self) -> None:
        self.pop("tags")  # type: ignore[attr-defined]


class _Strict(_OwnTags, _OwnSummary, StrictFeedParser):
    def _sync_author_detail(self, key: str = "author") -> None:
        _cap_author(self, key)
        super()._sync_author_detail(key)


class _Loose(_OwnTags, _OwnSummary, LooseFeedParser):
    def _sync_author_detail(self, key: str = "author") -> None:
        _cap_author(self, key)
        super()._sync_author_detail(key)


class _Metered(io.BytesIO):
    """A byte stream that checks the budget before every read (the SAX parser reads in pieces)."""

    def __init__(self, data: bytes, budget: Budget) -> None:
        super().__init__(data)
        self._budget = budget

    def read(self, size: int | None = -1) -> bytes:
        self._budget.check("running feedparser's XML parser")
        return super().read(CHUNK if size is None or size < 0 else min(size, CHUNK))


def _syntax_error(data: bytes) -> xml.sax.SAXParseException | None:
    """The error the strict parser would stop at, found by expat alone, or None.

    expat is set up as ``xml.sax`` sets it up for feedparser (namespaces;
    parameter entities unless standalone) but with no handlers, so it runs
    at C speed: a malformed document skips feedparser's strict pass, which
    would read it up to the error only to read it again in the tolerant
    parser. The error is the one the SAX reader would raise.
    """
    parser = expat.ParserCreate(None, " ")
    parser.namespace_prefixes = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_UNLESS_STANDALONE)
    try:
        parser.Parse(data, True)
    except ExpatError as error:
        return xml.sax.SAXParseException(expat.ErrorString(error.code), error, _Position(error.lineno, error.offset))
    return None


class _Position(xml.sax.xmlreader.Locator):
    """Where expat stopped, as the locator a SAXParseException reads."""

    def __init__(self, line: int, column: int) -> None:
        self._line, self._column = line, column

    def getLineNumber(self) -> int:  # noqa: N802 - the xml.sax Locator interface
        return self._line

    def getColumnNumber(self) -> int:  # noqa: N802
        return self._column

    def getPublicId(self) -> None:  # noqa: N802
        return None

    def getSystemId(self) -> None:  # noqa: N802
        return None


def _strict(data: bytes, result: Any, budget: Budget) -> Any | None:
    """The strict (SAX) parser's handler after reading ``data``, or None after a SAX error (bozo)."""
    handler = _Strict("", None, "utf-8")
    handler.resolve_relative_uris = handler.sanitize_html = False
    parser = xml.sax.make_parser(PREFERRED_XML_PARSERS)
    parser.setFeature(xml.sax.handler.feature_namespaces, 1)
    with contextlib.suppress(xml.sax.SAXNotSupportedException):
        parser.setFeature(xml.sax.handler.feature_external_ges, 0)  # never fetch external entities
    parser.setContentHandler(handler)
    parser.setErrorHandler(handler)
    source = xml.sax.xmlreader.InputSource()
    source.setByteStream(_Metered(data, budget))
    try:
        parser.parse(source)
    except xml.sax.SAXException as error:
        result["bozo"] = 1
        result["bozo_exception"] = handler.exc or error
        return None
    return handler


def _loose(data: bytes, entities: dict[str, str], budget: Budget) -> Any:
    """The tolerant (SGML) parser's handler after reading ``data``.

    The same steps as feedparser's ``_BaseHTMLProcessor.feed``, with the
    SGML parser (which accepts text in any pieces) fed :data:`CHUNK`
    characters at a time.
    """
    handler = _Loose("", None, "utf-8", entities)
    handler.resolve_relative_uris = handler.sanitize_html = False
    text = data.decode("utf-8", "replace")
    text = re.sub(r"<!((?!DOCTYPE|--|\[))", r"&lt;!\1", text, flags=re.IGNORECASE)
    text = re.sub(r"<([^<>\s]+?)\s*/>", handler._shorttag_replace, text)
    text = text.replace("&#39;", "'").replace("&#34;", '"')
    for start in range(0, len(text), CHUNK):
        budget.check("running feedparser's tolerant parser")
        sgmllib.SGMLParser.feed(handler, text[start : start + CHUNK])
    sgmllib.SGMLParser.close(handler)
    return handler


# --- feedparser's rules, lent to the fast reader (:mod:`fastreader`) -----------

#: The elements feedparser has a handler for, as it names them (``title``,
#: ``media_content``, ``itunes_owner``): any other element is stored under its
#: name and otherwise ignored.
HANDLED = frozenset(name.split("_", 2)[2] for name in dir(_Strict) if name.startswith(("_start_", "_end_")))
#: feedparser's prefix for each namespace it knows, keyed by the namespace URI in lower case
#: ("" for Atom 1.0 and RSS 0.9x/2.0 extensions it reads as plain elements).
PREFIXES = {uri.lower(): prefix for uri, prefix in _FeedParserMixin.namespaces.items()}
#: Elements whose text feedparser resolves against xml:base when it stores them.
RELATIVE_URI_ELEMENTS = frozenset(_FeedParserMixin.can_be_relative_uri)
looks_like_html = _FeedParserMixin.looks_like_html
map_content_type = _FeedParserMixin.map_content_type
enforce_href = _FeedParserMixin._enforce_href
urljoin = _urljoin
safe_absolute = make_safe_absolute_uri


def repaired(text: str) -> str:
    """A stored text value as feedparser leaves it (str -> str).

    feedparser undoes UTF-8 that was read as Latin-1 (``CafÃ©`` becomes
    ``Café``) wherever the whole value allows it, and maps the C1 controls
    U+0080-U+009F to the Windows-1252 characters they stand for.
    """
    if text.isascii():
        return text  # both steps leave ASCII as it is
    with contextlib.suppress(UnicodeEncodeError, UnicodeDecodeError):
        text = text.encode("iso-8859-1").decode("utf-8")
    return text.translate(_cp1252) if _C1.search(text) else text


class AuthorState:
    """A context (feed or entry dict) with feedparser's own author bookkeeping.

    :meth:`save_author` and :meth:`sync_author_detail` are feedparser's
    ``_save_author`` and ``_sync_author_detail``, run on ``self.context``: the
    fast reader gets ``author``, ``author_detail`` and ``authors`` exactly as
    feedparser would, quirks included (an ``itunes:name`` in ``itunes:owner``
    lands in the authors list), and the author string cut as :func:`_cap_author` cuts it.
    """

    def __init__(self) -> None:
        self.context: dict[str, Any] = {}

    def _get_context(self) -> dict[str, Any]:
        return self.context

    _save_author = _FeedParserMixin._save_author

    def _sync_author_detail(self, key: str = "author") -> None:
        _cap_author(self, key)  # as in the strict and tolerant parsers: the e-mail search is quadratic
        _FeedParserMixin._sync_author_detail(self, key)

    def save_author(self, key: str, value: str, prefix: str = "author") -> None:
        """Record an author's (or with ``prefix="publisher"``, a publisher's) name, email or href."""
        self._save_author(key, value, prefix)

    def sync_author_detail(self, key: str = "author") -> None:
        """Bring ``author`` and ``author_detail`` (or ``publisher``...) in line, as feedparser does after an element."""
        self._sync_author_detail(key)


def document(feed: dict[str, Any], entries: list[dict[str, Any]], version: str) -> Any:
    """A well-formed document read elsewhere, in the shape :func:`read` returns."""
    return FeedParserDict(
        bozo=False, entries=entries, feed=feed, version=version, namespaces={}, headers=dict(_HEADERS)
    )


def well_formed(data: bytes) -> bool:
    """True when the strict parser feedparser runs first (expat) reads all of ``data`` (UTF-8 bytes).

    libxml2 and expat disagree on a few documents; one expat rejects goes to
    feedparser's tolerant parser, whose reading the fast path does not follow.
    """
    parser = expat.ParserCreate("utf-8", " ")
    parser.namespace_prefixes = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_UNLESS_STANDALONE)
    try:
        parser.Parse(data, True)
    except ExpatError:
        return False
    return True
