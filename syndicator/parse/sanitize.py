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
from syndicator.parse.limits import HTML_MAX_DEPTH, HTML_MAX_REFERENCES, MAX_ATTRIBUTES
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
