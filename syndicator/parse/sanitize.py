"""Allowlist HTML sanitizing and plain-text helpers. The only module that imports nh3.

Feed content is untrusted HTML published on our users' sites. Everything
that reaches a page goes through :func:`clean_html`: an allowlist of
ordinary text markup (:data:`TAGS`, :data:`ATTRIBUTES`); no script, style,
iframe, object, embed, form, meta, base, audio or video element; no
event-handler or style attribute; only http(s) and mailto links (mailto in
``href`` only), and http(s) only for images, the one kind of third-party
request a page makes, and citations.
Outbound links get ``rel="noopener noreferrer"``. Relative URLs are resolved
against the base URL given, so the published page never points at our own
host by accident. :func:`truncate_html` shortens sanitized HTML on a word
boundary and closes the elements it leaves open.

Before the sanitizer, :func:`images.reveal_images` unwraps ``<noscript>``
(whose content the sanitizer's parser would turn into visible markup) and
gives lazy-loaded images their real source; iframe, noembed and noframes
are dropped with their content, which no browser shows.

The sanitizer's HTML parser (html5ever, in nh3) does work that grows with
the depth of the tree for every tag (its scope checks walk the stack of
open elements) and with the length of a text for every character
reference in it, and with the square of the attributes of one tag (its
duplicate check), so a fragment nested more than
:data:`limits.HTML_MAX_DEPTH` deep, holding more than
:data:`limits.HTML_MAX_REFERENCES` ampersands, or a tag with more than
:data:`limits.MAX_ATTRIBUTES` attributes (50,000 took 0.65 s, 300,000
about 20 s), is published as its plain text, escaped, instead: linear, and
still safe.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from html.parser import HTMLParser

import nh3

from syndicator.parse.images import reveal_images
from syndicator.parse.limits import (
    AUTHOR_MAX_CHARS,
    HTML_MAX_DEPTH,
    HTML_MAX_REFERENCES,
    MAX_ATTRIBUTES,
    RAW_FIELD_FACTOR,
)
from syndicator.parse.markup import html_deeper_than, most_attributes_over, strip_tags
from syndicator.urls import join, scheme
from syndicator.values import strip_control

TAGS = {
    "a",
    "abbr",
    "acronym",
    "b",
    "blockquote",
    "br",
    "caption",
    "cite",
    "code",
    "col",
    "colgroup",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
}
ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "img": {"src", "alt", "title", "width", "height"},
    "blockquote": {"cite"},
    "q": {"cite"},
    "del": {"cite", "datetime"},
    "ins": {"cite", "datetime"},
    "time": {"datetime"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "ol": {"start", "reversed"},
}
URL_SCHEMES = {"http", "https", "mailto"}
_URL_ATTRIBUTES = {"href", "src", "cite"}
#: Elements dropped with their content. The parser holds the content of iframe, noembed and noframes
#: as raw text, which would come out as visible markup; a browser never shows it (noscript: see images.py).
CLEAN_CONTENT_TAGS = {"script", "style", "iframe", "noembed", "noframes"}
#: The one attribute a mailto: URL makes sense in: a link. An image or a citation is fetched or shown, not mailed.
_LINK_ATTRIBUTES = {"href"}
#: An SVG or MathML start tag; see :func:`html_to_text`.
_FOREIGN = re.compile(r"<(?:svg|math)\b", re.I)
#: Elements without an end tag (HTML Living Standard, "void elements").
_VOID = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
#: Ordinary white space, the only characters collapsed in plain text: space, tab, the line
#: breaks (NEL and the Unicode line and paragraph separators included) and form feeds. A
#: no-break, thin or ideographic space, or a zero-width character, is kept as written.
_SPACE = re.compile("[ \t\n\r\f\v\x85\u2028\u2029]+")
_SPACE_CHARS = " \t\n\r\f\v\x85\u2028\u2029"
#: A complete HTML character reference (named, decimal or hexadecimal, with its ";").
_REFERENCE = re.compile(r"&(?:#[0-9]++|#[xX][0-9a-fA-F]++|[A-Za-z][A-Za-z0-9]*+);")
#: What separates the words of an author string: white space, brackets, quotes and list
#: punctuation. A word with an ``@`` after its first character is an address (see :func:`_remove_addresses`).
_WORD_BREAKS = re.compile(r"""([\s()<>\[\]{},;"]+)""")
#: Brackets an address was removed from: "()", "<>", "[]".
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|<\s*>|\[\s*\]")
#: Signs of an address written to dodge harvesters (``jane AT example DOT org``,
#: ``jane [at] example.org``): a spelled-out at or dot, and a word that is a domain name.
_SPELLED = re.compile(r"(?<!\S)(?:(?i:[\[({]\s*(?:at|dot)\s*[\])}])|AT|DOT|D0T)(?!\S)")
_DOMAIN = re.compile(r"\w\.[A-Za-z]{2,}(?![\w.])")
#: A name in round brackets, as RSS writes ``email (Name)``.
_BRACKETED = re.compile(r"\(([^()]*)\)")


def clean_html(fragment: str, base: str | None = None) -> str:
    """Sanitize an untrusted HTML fragment with the allowlist above.

    Args:
        fragment: HTML from a feed (str).
        base: absolute URL that relative URLs are resolved against, or None.
    Returns:
        safe HTML (str); unknown elements are unwrapped, their text kept;
        script, style and similar elements are dropped with their content.
    """
    if not fragment:
        return ""
    if _too_costly(fragment):
        return text_to_html(_flat_text(fragment))

    def attribute_filter(element: str, attribute: str, value: str) -> str | None:
        if attribute not in _URL_ATTRIBUTES:
            return value
        url = join(base, value.strip())  # None when unusable, e.g. a malformed IPv6 host
        allowed = URL_SCHEMES if attribute in _LINK_ATTRIBUTES else {"http", "https"}
        return url if url is not None and scheme(url) in allowed else None

    # Controls go before (raw) and after (written as character references).
    return strip_control(
        nh3.clean(
            reveal_images(strip_control(fragment)),
            tags=TAGS,
            clean_content_tags=CLEAN_CONTENT_TAGS,
            attributes=ATTRIBUTES,
            url_schemes=URL_SCHEMES,
            link_rel="noopener noreferrer",
            strip_comments=True,
            attribute_filter=attribute_filter,
        )
    ).strip()


def truncate_html(fragment: str, limit: int) -> str:
    """Shorten sanitized HTML to about ``limit`` characters of text.

    The cut falls on a word boundary, "…" marks it, and every element left
    open is closed, so the markup stays balanced. A fragment whose text
    fits is returned unchanged.

    Args:
        fragment: HTML that went through :func:`clean_html` (str).
        limit: the most characters of text to keep (int, white space runs
            count as one).
    Returns:
        sanitized HTML (str).
    """
    if len(html_to_text(fragment)) <= limit:
        return fragment
    cutter = _Truncator(limit)
    cutter.feed(fragment)
    cutter.close()
    return clean_html("".join(cutter.out))


class _Truncator(HTMLParser):
    """Copies HTML until ``limit`` characters of text, then closes open elements."""

    def __init__(self, limit: int) -> None:
        super().__init__(convert_charrefs=True)
        self.limit = limit
        self.count = 0
        self.out: list[str] = []
        self.open: list[str] = []
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self.done:
            self.out.append(self.get_starttag_text() or "")
            if tag not in _VOID:
                self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self.done:
            self.out.append(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        if not self.done and tag in self.open:
            while self.open:
                name = self.open.pop()
                self.out.append(f"</{name}>")
                if name == tag:
                    break

    def handle_data(self, data: str) -> None:
        if self.done:
            return
        text = _SPACE.sub(" ", data)
        room = self.limit - self.count
        if len(text) <= room:
            self.out.append(html.escape(text, quote=False))
            self.count += len(text)
            return
        cut = text[:room]
        if not text[room].isspace():
            cut = cut.rsplit(" ", 1)[0] if " " in cut else ""
        self.out.append(html.escape(cut.rstrip(), quote=False) + " …" if cut.strip() else "…")
        self.done = True
        self.out.extend(f"</{name}>" for name in reversed(self.open))
        self.open.clear()


def html_to_text(fragment: str) -> str:
    """Turn an HTML fragment into one line of plain text.

    Tags are removed (script and style with their content), entities are
    decoded exactly once and runs of ordinary white space become one space
    (:func:`one_line`). Text
    inside SVG and MathML is kept, as a browser shows it. The last few
    answers for fragments under 64 KiB are remembered: parsing asks for the
    text of one body two or three times (which body is richer, the entry's identity).
    """
    return _remembered_text(fragment) if len(fragment) <= 65536 else _text(fragment)


@lru_cache(maxsize=64)
def _remembered_text(fragment: str) -> str:
    return _text(fragment)


def _text(fragment: str) -> str:
    if not fragment:
        return ""
    if _too_costly(fragment):
        return _flat_text(fragment)
    fragment = reveal_images(strip_control(fragment))
    if _FOREIGN.search(fragment):
        # ammonia drops an SVG or MathML element with all its text when the <svg> or <math>
        # around it is unwrapped (its guard against namespace confusion), so a title such as
        # <svg><text>Hello</text></svg> would vanish. Keeping those two in a first pass
        # unwraps their descendants into plain text inside them; the pass below unwraps them.
        fragment = nh3.clean(
            fragment, tags={"svg", "math"}, clean_content_tags=CLEAN_CONTENT_TAGS, attributes={}, strip_comments=True
        )
    text = html.unescape(nh3.clean(fragment, tags=set(), clean_content_tags=CLEAN_CONTENT_TAGS, strip_comments=True))
    return _SPACE.sub(" ", strip_control(text)).strip(_SPACE_CHARS)


def _too_costly(fragment: str) -> bool:
    """True for HTML the sanitizer's parser would take super-linear time on (see the module docstring)."""
    return (
        fragment.count("&") > HTML_MAX_REFERENCES
        or html_deeper_than(fragment, HTML_MAX_DEPTH)
        or most_attributes_over(fragment, MAX_ATTRIBUTES)
    )


def _flat_text(fragment: str) -> str:
    """The text of HTML nested too deeply for the sanitizer (see the module docstring), one line."""
    return one_line(html.unescape(strip_tags(fragment)))


def text_to_html(text: str) -> str:
    """Escape plain text for use as HTML, keeping its line breaks (str -> str).

    A blank line separates paragraphs (``<p>``); a single line break inside
    one becomes ``<br>`` (a track list stays a list); other runs of white
    space become one space.
    """
    text = strip_control(text).replace("\r\n", "\n").replace("\r", "\n")
    paragraphs = [p for p in re.split(r"\n[ \t]*+(?:\n[ \t]*+)++", text) if p.strip()]
    return "".join(
        "<p>" + "<br>\n".join(html.escape(one_line(line)) for line in p.split("\n") if line.strip()) + "</p>"
        for p in paragraphs
    )


def author_name(text: str | None) -> str | None:
    """An author as a name fit to publish: e-mail addresses removed (str or None).

    RSS 2.0 asks for ``email (Name)`` in ``<author>``; publishing that would
    hand the address to spammers, so every address (:func:`_remove_addresses`:
    any word with an ``@`` after its first character, malformed ones
    included, and any ``mailto:`` word) is removed with the brackets it
    leaves empty or unclosed: ``jane@example.org (Jane Doe)``, ``Jane Doe
    <jane@example.org>`` and ``Jane Doe (mailto:jane@example.org)`` give
    ``Jane Doe``; a name in quotes or brackets loses them. An address
    written to dodge harvesters (a spelled-out ``AT``, ``DOT``, ``[at]`` or
    ``(dot)``, and a second such word or a domain name, as in ``jane D0T doe
    AT@ example.com``) leaves only a name in round brackets.
    None when nothing but addresses, brackets and punctuation is left (no
    author is known).
    Entities are not decoded here: render calls this again on stored names.
    """
    raw = (text or "")[: AUTHOR_MAX_CHARS * RAW_FIELD_FACTOR]
    if _disguised(raw):  # an address in disguise: only a bracketed name is a name
        raw = next((inner for inner in _BRACKETED.findall(raw) if not _disguised(inner)), "")
    name = one_line(_EMPTY_BRACKETS.sub(" ", _remove_addresses(raw)))
    name = name.strip(" ,;:/|-").rstrip("(<[{ ").lstrip(")>]} ")
    while len(name) > 1 and _wraps(name):
        name = name[1:-1].strip()
    return name[:AUTHOR_MAX_CHARS].rstrip() or None


def _disguised(text: str) -> bool:
    """True when ``text`` holds an address written to dodge harvesters: a spelled-out
    at or dot, and a second such sign or a domain name."""
    spelled = len(_SPELLED.findall(text))
    return spelled > 0 and spelled + len(_DOMAIN.findall(text)) >= 2


def _wraps(name: str) -> bool:
    """True when ``name`` starts with a bracket or quote that its last character closes:
    ``(Jane (@jane))`` and ``"Jane"``, not ``(a) and (b)``."""
    last = {"(": ")", "<": ">", "[": "]", '"': '"'}.get(name[0])
    if last is None or name[-1] != last:
        return False
    if last == '"':
        return '"' not in name[1:-1]
    depth = 0
    for index, char in enumerate(name):
        depth += (char == name[0]) - (char == last)
        if depth == 0:
            return index == len(name) - 1
    return False


def _remove_addresses(text: str) -> str:
    """``text`` with every word that is an e-mail address, or a ``mailto:`` URL, replaced by a space.

    Words are split at :data:`_WORD_BREAKS` in one linear pass; a word
    holding an ``@`` after its first character counts as an address, valid
    or not (``news@.example.org``), so a malformed address is never
    published; a handle such as ``@jane`` is kept.
    """
    pieces = _WORD_BREAKS.split(text)
    for index in range(0, len(pieces), 2):  # words at even indexes, breaks between them
        word = pieces[index]
        if "@" in word[1:] or "mailto:" in word.lower():
            pieces[index] = " "
    return "".join(pieces)


def one_line(text: str | None) -> str:
    """Plain text squeezed to one line, control characters removed (str -> str).

    Only runs of ordinary white space (:data:`_SPACE`) become one space;
    every other character is kept.
    """
    return _SPACE.sub(" ", strip_control(text or "")).strip(_SPACE_CHARS)


def decode_references(text: str) -> str:
    """Plain text that carries HTML character references, each decoded once (str -> str).

    Many feeds write their text fields as HTML (``It was a long
    day&hellip;``). Only complete references, ending in ``;``, are decoded
    (``AT&T`` and ``&copy`` are left alone), in one pass: ``&amp;lt;``
    gives ``&lt;``, never ``<``.
    """
    return _REFERENCE.sub(lambda match: html.unescape(match.group()), text) if "&" in text else text
