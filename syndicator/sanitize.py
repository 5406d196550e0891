"""Allowlist HTML sanitizing and plain-text helpers. The only module that imports nh3.

Feed content is untrusted HTML published on our users' sites. Everything
that reaches a page goes through :func:`clean_html`: an allowlist of
ordinary text markup, no script, style, iframe, object, embed, form, meta or
base element, no event-handler or style attribute, and only http(s) and
mailto links (images: http(s) only). Outbound links get
``rel="noopener noreferrer"``. Relative URLs are resolved against the base
URL given, so the published page never points at our own host by accident.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin, urlsplit

import nh3

TAGS = {
    "a", "abbr", "acronym", "b", "blockquote", "br", "caption", "cite", "code", "col",
    "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption",
    "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
    "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strike", "strong",
    "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "time",
    "tr", "tt", "u", "ul", "var", "audio", "video", "source", "picture",
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
    "audio": {"src", "controls"},
    "video": {"src", "controls", "poster", "width", "height"},
    "source": {"src", "type"},
}
URL_SCHEMES = {"http", "https", "mailto"}
_URL_ATTRIBUTES = {"href", "src", "cite", "poster"}
_MEDIA_ATTRIBUTES = {"src", "poster"}
# XML 1.0 forbids C0 controls but tab, newline and carriage return; C1 controls
# and non-characters are dropped too so every output stays well-formed.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
_SPACE = re.compile(r"\s+")


def strip_control(text: str) -> str:
    """Remove characters XML 1.0 forbids (and C1 controls) from ``text`` (str -> str)."""
    return _CONTROL.sub("", text)


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

    def attribute_filter(element: str, attribute: str, value: str) -> str | None:
        if attribute not in _URL_ATTRIBUTES:
            return value
        url = urljoin(base, value.strip()) if base else value.strip()
        scheme = urlsplit(url).scheme.lower()
        allowed = {"http", "https"} if attribute in _MEDIA_ATTRIBUTES else URL_SCHEMES
        return url if scheme in allowed else None

    return nh3.clean(
        strip_control(fragment),
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        strip_comments=True,
        attribute_filter=attribute_filter,
    ).strip()


def html_to_text(fragment: str) -> str:
    """Turn an HTML fragment into one line of plain text.

    Tags are removed (script and style with their content), entities are
    decoded exactly once and runs of white space become one space.
    """
    if not fragment:
        return ""
    text = html.unescape(nh3.clean(strip_control(fragment), tags=set(), strip_comments=True))
    return _SPACE.sub(" ", strip_control(text)).strip()


def text_to_html(text: str) -> str:
    """Escape plain text for use as HTML, keeping paragraph breaks (str -> str)."""
    paragraphs = [p for p in re.split(r"\n\s*\n", strip_control(text).strip()) if p.strip()]
    return "".join(f"<p>{html.escape(_SPACE.sub(' ', p).strip())}</p>" for p in paragraphs)


def one_line(text: str | None) -> str:
    """Plain text squeezed to one line, control characters removed (str -> str)."""
    return _SPACE.sub(" ", strip_control(text or "")).strip()
