"""Linear scans of untrusted markup. Pure: text in, facts out; never raises.

Feed text is hostile, and a backtracking regex that can rescan the rest of
the text from each of many start positions turns a 1 MB field into minutes
of work. Every scan here is linear in the length of its input, by one of
two rules:

* a match that fails ends at the next ``<`` or ``>`` (``[^<>]*+``): the
  regions scanned from different start positions do not overlap;
* a construct that may be unclosed (comment, CDATA section, processing
  instruction, script) ends at its terminator *or at the end of the text*,
  so it always matches and the scan never restarts inside it; ``str.find``
  is used where one search decides.

Possessive quantifiers (``*+``, Python 3.11) keep a name from being split
and retried against what follows it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_SPACE = re.compile(r"\s*+")
_DOCTYPE_STOP = re.compile(r"[\[>]")
_START_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9]*+)(?!\w)[^<>]*+>")
_END_TAG = re.compile(r"</([A-Za-z][A-Za-z0-9]*+)\s*+>")
_XML_TOKEN = re.compile(
    r"<(?:!--.*?(?:-->|\Z)|!\[CDATA\[.*?(?:\]\]>|\Z)|\?.*?(?:\?>|\Z)"
    r"|(/?)[^\s/<>!?]([^<>]*+)>)",
    re.S,
)
_HTML_TOKEN = re.compile(
    r"<(?:!--.*?(?:-->|\Z)|(?:script|style)\b.*?(?:</(?:script|style)\s*+>|\Z)"
    r"|(/?)([A-Za-z][^\s/<>]*+)([^<>]*+)>)",
    re.S | re.I,
)
_RAW_TEXT = re.compile(r"<!--.*?(?:-->|\Z)|<(script|style)\b.*?(?:</\1\s*+>|\Z)", re.S | re.I)
_ANY_TAG = re.compile(r"</?[A-Za-z!?][^<>]*+>?")
_TEXT_SECTION = re.compile(r"<!\[CDATA\[.*?(?:\]\]>|\Z)|<!--.*?(?:-->|\Z)", re.S)
#: An attribute of a tag: a name after white space or a quoted value (HTML parsers take both), then
#: perhaps ``=`` and a value (quoted, perhaps unclosed, or bare).
_ATTRIBUTE = re.compile(r"""(?:[\s/]++|(?<=["']))[^\s"'<>/=]++(?:\s*+=\s*+(?:"[^"]*+"?|'[^']*+'?|[^\s<>]*+))?""")
#: HTML elements that never hold others, or that a new sibling closes
#: (HTML Living Standard, "void elements" and "optional end tags"); they
#: do not deepen the tree an HTML parser builds.
FLAT_HTML = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
        "param",
        "keygen",
        "a",
        "p",
        "li",
        "dt",
        "dd",
        "tr",
        "td",
        "th",
        "thead",
        "tbody",
        "tfoot",
        "option",
        "optgroup",
        "rb",
        "rt",
        "rp",
        "colgroup",
        "caption",
        "nobr",
        "button",
    }
)


def holds_element(text: str) -> bool:
    """True if ``text`` (str) holds an element start tag and, later, its end tag.

    The same answer as searching ``<(name)\\b[^<>]*>.*?</\\1\\s*>`` (names
    compared with their case), in one pass: the first start tag of each
    name is remembered and every end tag is looked up.
    """
    if "</" not in text:
        return False
    first_end: dict[str, int] = {}
    for match in _START_TAG.finditer(text):
        first_end.setdefault(match.group(1), match.end())
    for match in _END_TAG.finditer(text):
        start = first_end.get(match.group(1))
        if start is not None and match.start() >= start:
            return True
    return False


def prolog_end(text: str) -> int:
    """Index in ``text`` (str) after the XML prolog: white space, the XML
    declaration and processing instructions, comments and a DOCTYPE (its
    internal subset in brackets included). An unclosed construct ends the
    prolog where it starts."""
    return prolog(text)[0]


def prolog(text: str) -> tuple[int, str | None]:
    """(index after the XML prolog, the text of its first DOCTYPE or None); see :func:`prolog_end`."""
    position, doctype = 0, None
    while True:
        space = _SPACE.match(text, position)
        position = space.end() if space else position
        if text.startswith("<?", position):
            end, tail = text.find("?>", position + 2), 2
        elif text.startswith("<!--", position):
            end, tail = text.find("-->", position + 4), 3
        elif text[position : position + 9].upper() == "<!DOCTYPE":
            end, tail = _doctype_end(text, position + 9), 1
            if end >= 0 and doctype is None:
                doctype = text[position : end + 1]
        else:
            return position, doctype
        if end < 0:
            return position, doctype
        position = end + tail


def _doctype_end(text: str, position: int) -> int:
    """Index of the ``>`` that closes a DOCTYPE whose body starts at ``position``, or -1.

    A ``[`` opens the internal subset, which ends at the next ``]``.
    """
    while match := _DOCTYPE_STOP.search(text, position):
        if match.group() == ">":
            return match.start()
        close = text.find("]", match.end())
        if close < 0:
            return -1
        position = close + 1
    return -1


def xml_shape(text: str, max_tags: int, max_depth: int) -> tuple[int, int]:
    """(tags, deepest nesting) of an XML document, counted until a limit is passed.

    Start, end and empty-element tags count as tags; comments, CDATA
    sections, processing instructions and declarations are skipped. The
    count stops as soon as ``tags > max_tags`` or ``depth > max_depth``, so
    either figure past its limit means "beyond the limit". A tolerant
    count: unbalanced end tags never make the depth negative.
    """
    tags = depth = deepest = 0
    for match in _XML_TOKEN.finditer(text):
        slash = match.group(1)
        if slash is None:
            continue
        tags += 1
        if slash:
            depth = max(0, depth - 1)
        elif not match.group(2).endswith("/"):
            depth += 1
            deepest = max(deepest, depth)
        if tags > max_tags or deepest > max_depth:
            break
    return tags, deepest


def markup_opens(text: str) -> int:
    """The ``<`` of a document (str) outside CDATA sections and comments (int).

    A ``<`` in a CDATA section or a comment is text to every XML parser
    (feedparser's tolerant one too): it costs no tag's work. A section left
    unclosed runs to the end of the text, as :func:`xml_shape` counts it.
    """
    return _outside_sections(text, "<")


def markup_references(text: str) -> int:
    """The ``&`` of a document (str) outside CDATA sections and comments (int): each
    starts a reference, as :func:`encoding.prepare_xml` leaves the text."""
    return _outside_sections(text, "&")


def _outside_sections(text: str, char: str) -> int:
    found = text.count(char)
    if "<!" not in text:
        return found
    for match in _TEXT_SECTION.finditer(text):
        found -= text.count(char, match.start() + 1, match.end())
    return found


def most_attributes_over(text: str, limit: int, xml: bool = False) -> bool:
    """True if one tag of ``text`` (str) holds more than ``limit`` (int) attributes.

    A tag starts with ``<`` and a letter (or ``_`` or ``:``) and ends at its
    first ``<`` or ``>``; with ``xml`` True, CDATA sections and comments
    (text to an XML parser) are skipped, as :func:`xml_shape` skips them
    (not in HTML, where a comment may end at ``--!>`` and CDATA is a bogus
    comment). An attribute takes at least two characters (a space and a
    name), so only tags longer than ``2 * limit`` are counted, each once:
    linear. Quoted values are skipped, an unclosed one ending at the tag's
    end; namespace declarations count.
    """
    if len(text) <= 2 * limit:
        return False
    long_tag = f"<[A-Za-z_:][^<>]{{{2 * limit},}}+"  # a failed match ends at the next "<" or ">"
    scan = re.compile(_TEXT_SECTION.pattern + "|" + long_tag if xml else long_tag, re.S)
    for match in scan.finditer(text):
        if xml and match.group().startswith("<!"):
            continue
        found = _ATTRIBUTE.finditer(text, match.start() + 1, match.end())
        if sum(1 for _ in zip(range(limit + 1), found, strict=False)) > limit:
            return True
    return False


def html_deeper_than(fragment: str, limit: int) -> bool:
    """True if an HTML fragment (str) nests elements more than ``limit`` (int) deep.

    Elements in :data:`FLAT_HTML` do not count; comments and the content of
    script and style are skipped. Used before an HTML parser whose work
    grows with the depth of its tree.
    """
    if fragment.count("<") <= limit:
        return False
    depth = 0
    for match in _HTML_TOKEN.finditer(fragment):
        name = match.group(2)
        if name is None or name.lower() in FLAT_HTML:
            continue
        if match.group(1):
            depth = max(0, depth - 1)
        elif not match.group(3).endswith("/"):
            depth += 1
            if depth > limit:
                return True
    return False


def strip_tags(fragment: str) -> str:
    """An HTML fragment's text: comments, script and style dropped, tags removed,
    entities left as written (str -> str)."""
    return _ANY_TAG.sub(" ", _RAW_TEXT.sub(" ", fragment))


def tags_named(text: str, names: tuple[str, ...]) -> Iterator[str]:
    """The start tags of the given HTML element names (lower case) in ``text``, in order.

    Comments and script and style content are skipped; a tag ends at its
    first ``>`` (a tag broken by a ``<`` is not one). Yields each tag's text.
    """
    for match in _HTML_TOKEN.finditer(text):
        name = match.group(2)
        if name is not None and not match.group(1) and name.lower() in names:
            yield match.group(0)


def html_tags(text: str) -> Iterator[tuple[int, int, bool, str, str]]:
    """Every start and end tag of HTML ``text``, in order, as
    (start index, end index, is an end tag, name in lower case, the text of its attributes).

    Comments and script and style content are skipped, as by :func:`tags_named`.
    """
    for match in _HTML_TOKEN.finditer(text):
        name = match.group(2)
        if name is not None:
            yield match.start(), match.end(), bool(match.group(1)), name.lower(), match.group(3)
