"""The state of the fast reader's walk, kept as feedparser keeps it.

:class:`Scope` holds what feedparser's handlers carry from one element to
the next: the depth, the xml:base and xml:lang in scope (XML 1.0 section
2.12; RFC 3986 section 5.1 for the joining), the title depth, whether
content was seen, the format, and the per-key depth map that makes the
shallower of two elements win. It also has the checks that refuse a
subtree feedparser would read differently (:class:`fastnames.Unsure`) and
feedparser's ``pop`` of a text value. The handlers of each element are in
:mod:`fastelements`; the walk of the document and its entries is
:mod:`fastreader`'s.
"""

from __future__ import annotations

from typing import Any

from syndicator.errors import ParseError
from syndicator.parse import feedreader
from syndicator.parse.fastnames import HARMLESS, READ_KEYS, XML_BASE, Unsure, attributes_of, name_of
from syndicator.parse.feedreader import HANDLED, RELATIVE_URI_ELEMENTS, repaired
from syndicator.parse.limits import MAX_ATTRIBUTES, Budget


class Scope:
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
        attributes = attributes_of(element)
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

    def _check_skipped(self, element: Any, inner: frozenset[str] = HARMLESS) -> None:
        """Refuse a subtree feedparser would read into a key we use, or that sets xml:base."""
        for node in element.iter():
            if not isinstance(node.tag, str):
                raise Unsure
            name = name_of(node)
            if node.get(XML_BASE) is not None or node.get("base") is not None:
                raise Unsure
            if name in HANDLED:
                if name not in inner:
                    raise Unsure
            elif name in READ_KEYS:
                raise Unsure

    def _check_empty(self, element: Any) -> None:
        """Refuse an element read from its attributes alone when feedparser would read what it holds."""
        for child in element:
            self._check_skipped(child)

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

    def _language(self) -> str | None:
        """The xml:lang in scope as a text element's detail gives it (feedparser's ``push_content``)."""
        return self.lang.replace("_", "-") if self.lang else None
