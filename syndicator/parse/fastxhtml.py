"""Atom XHTML content, serialized from an lxml element as feedparser serializes it, or None.

A helper of :mod:`fastreader`: :func:`xhtml` walks one ``type="xhtml"``
content element (RFC 4287 section 4.1.3.3) and writes what feedparser's
``unknown_starttag``, ``handle_data`` and ``pop`` would; None when the
content holds something whose rules differ (SVG, MathML, an element
feedparser has a handler for, xml:base, a foreign attribute). Other
content types are not read here.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from lxml import etree

from syndicator.parse.fastnames import ATOM, name_of
from syndicator.parse.feedreader import HANDLED
from syndicator.parse.limits import MAX_ATTRIBUTES, Budget

#: Elements read inside XHTML content: XHTML's, and Atom's (an unqualified element in an Atom document).
XHTML_OR_ATOM = ("{http://www.w3.org/1999/xhtml}", f"{{{ATOM}}}")
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


def xhtml(element: Any, budget: Budget) -> str | None:
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
            budget.check("reading XHTML content")
        if not isinstance(tag, str) or not (tag.startswith(XHTML_OR_ATOM) or "}" not in tag):
            return None  # an entity, or SVG, MathML and others: feedparser's rules differ
        if (
            name_of(node) in HANDLED
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
