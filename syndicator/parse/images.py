"""Images in untrusted HTML as a page without script shows them: lazy-loading undone, noscript unwrapped.

A helper of :mod:`sanitize`, run on a fragment before the sanitizer. Pure:
str in, str out; never raises; one linear pass over the tags
(:func:`markup.html_tags`) and one to write the result.

Rules, and why:

* **noscript is unwrapped.** The sanitizer's HTML parser (html5ever, in
  nh3) parses with scripting on, where ``<noscript>`` holds raw text
  (HTML Living Standard, "parsing main inbody", the noscript start tag
  when the scripting flag is enabled): its markup would come out as
  visible words such as ``<img src=...>``. Our pages run no script, so
  what a browser without script shows is what they should show: the
  noscript start and end tags are removed and their content is kept as
  markup. A ``<noscript`` the tag scan cannot read (a tag broken by a
  ``<``) is renamed to an unknown element, which the sanitizer unwraps.
* **Lazy-loaded images get their real source.** When ``src`` is a
  placeholder (missing, empty, a ``data:`` or ``about:`` URI, ``#``, or a
  file named like ``blank.gif``, ``spacer.png``, ``lazy-placeholder.svg``),
  the first of ``data-src``, ``data-lazy-src``, ``data-original``, then
  the largest candidate of ``data-srcset``, ``data-lazy-srcset`` or
  ``srcset`` (HTML Living Standard, "srcset attributes") becomes ``src``.
  An image with no source at all and no alt text shows nothing and is
  removed.
* **Each image once.** An image inside noscript whose source is also
  shown outside it (the usual lazy image + noscript fallback pair), or
  earlier in another noscript, is removed; one that is the only copy of
  its image is kept.

Only ``img`` and ``noscript`` tags are rewritten; everything else is
copied as written, and the result still goes through the sanitizer.
"""

from __future__ import annotations

import html
import re

from syndicator.parse.markup import html_tags

#: Attributes that hold the real source of a lazy-loaded image, in order of preference.
LAZY_SOURCES = ("data-src", "data-lazy-src", "data-original")
#: Attributes that hold a lazy-loaded (or responsive) image's candidates, in order of preference.
LAZY_SRCSETS = ("data-srcset", "data-lazy-srcset", "srcset")
#: Words in the file name of an image that only holds a place for the real one.
_PLACEHOLDER_WORDS = (
    "blank",
    "spacer",
    "pixel",
    "1x1",
    "transparent",
    "placeholder",
    "lazy",
    "empty",
    "loading",
    "loader",
    "grey",
    "gray",
    "dummy",
)
_PLACEHOLDER_TYPES = (".gif", ".png", ".svg", ".webp")
#: Schemes of a ``src`` that is no image we could publish (the sanitizer keeps http(s) only).
_NO_IMAGE = ("data:", "about:", "javascript:")
#: One attribute of a tag: a name, then maybe "=" and a value, quoted (perhaps never closed) or not.
_ATTRIBUTE = re.compile(r"""([^\s"'/=]++)(?:\s*+=\s*+("[^"]*+"?|'[^']*+'?|[^\s"']*+))?""")
_NOSCRIPT = re.compile(r"<(/?)noscript(?![A-Za-z0-9_-])", re.I)
_TRIGGERS = ("<img", "noscript")


def reveal_images(fragment: str) -> str:
    """``fragment`` (untrusted HTML, str) with noscript unwrapped and lazy images given their source (str).

    See the module docstring for the rules. The result is still untrusted:
    sanitize it.
    """
    lower = fragment.lower()
    if not any(trigger in lower for trigger in _TRIGGERS):
        return fragment
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), in order
    fallbacks: list[tuple[int, str]] = []  # images inside noscript: (index in edits, source key)
    shown: set[str] = set()  # source keys of images outside noscript
    inside = False
    for start, end, closing, name, attributes in html_tags(fragment):
        if name == "noscript":
            inside = not closing
            edits.append((start, end, ""))
        elif name == "img" and not closing:
            replacement, source = _image(fragment[start:end], attributes)
            if source and inside:
                fallbacks.append((len(edits), _key(source)))
            elif source:
                shown.add(_key(source))
            if replacement is not None or (source and inside):
                edits.append((start, end, fragment[start:end] if replacement is None else replacement))
    for index, key in fallbacks:
        if key in shown:
            start, end, _ = edits[index]
            edits[index] = (start, end, "")
        shown.add(key)
    return _NOSCRIPT.sub(r"<\1x-noscript", _apply(fragment, edits))


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, replacement) applied; edits are in order and do not overlap."""
    pieces, kept = [], 0
    for start, end, replacement in edits:
        pieces += [text[kept:start], replacement]
        kept = end
    pieces.append(text[kept:])
    return "".join(pieces)


def _image(tag: str, attribute_text: str) -> tuple[str | None, str | None]:
    """(the ``<img>`` tag rewritten, or "" to remove it, or None to keep it as written; the source it shows or None)."""
    attributes = _attributes(attribute_text)
    if attributes is None:  # a quoted value broken by "<" or ">": not ours to rewrite
        return None, None
    src = attributes.get("src", "")
    if _real(src):
        return None, src
    source = next((v for k in LAZY_SOURCES if _real(v := attributes.get(k, ""))), None)
    source = source or next((u for k in LAZY_SRCSETS if (u := largest_candidate(attributes.get(k, "")))), None)
    if source is None:
        plain = not src or src.lower().startswith(_NO_IMAGE)
        return ("" if plain and not attributes.get("alt", "").strip() else None), None
    dropped = {"src", *LAZY_SOURCES, *LAZY_SRCSETS}
    kept = "".join(f' {k}="{html.escape(v)}"' for k, v in attributes.items() if k not in dropped)
    return f'<img src="{html.escape(source)}"{kept}>', source


def _attributes(text: str) -> dict[str, str] | None:
    """The attributes of a tag (names in lower case, values decoded, the first of a repeated name),
    or None when a quoted value is never closed."""
    found: dict[str, str] = {}
    for match in _ATTRIBUTE.finditer(text):
        raw = match.group(2) or ""
        if raw and raw[0] in "\"'":
            if len(raw) < 2 or raw[-1] != raw[0]:
                return None
            raw = raw[1:-1]
        found.setdefault(match.group(1).lower(), html.unescape(raw).strip())
    return found


def _real(src: str) -> bool:
    """True when an image source (decoded) names an image, not a placeholder (see the module docstring)."""
    if not src or src == "#" or src.lower().startswith(_NO_IMAGE):
        return False
    name = src.split("?", 1)[0].split("#", 1)[0].rsplit("/", 1)[-1].lower()
    return not (name.endswith(_PLACEHOLDER_TYPES) and any(word in name for word in _PLACEHOLDER_WORDS))


def largest_candidate(srcset: str) -> str | None:
    """The URL of the widest (or densest) candidate of a ``srcset`` value (str), or None.

    A candidate is a URL (a run of non-space characters; trailing commas end
    it) and an optional descriptor up to the next comma: ``640w`` or ``2x``
    (HTML Living Standard, "parse a srcset attribute"); no descriptor counts
    as ``1x``. Widths rank above densities; ties keep the first. Placeholders
    are skipped.
    """
    best, rank = None, (-1, -1.0)
    position, length = 0, len(srcset)
    while position < length:
        while position < length and (srcset[position].isspace() or srcset[position] == ","):
            position += 1
        end = position
        while end < length and not srcset[end].isspace():
            end += 1
        url = srcset[position:end]
        descriptor = ""
        if url.endswith(","):
            url = url.rstrip(",")
            position = end
        else:
            comma = srcset.find(",", end)
            position = length if comma < 0 else comma + 1
            descriptor = srcset[end:position].strip(" \t\n\r\f,").lower()
        candidate_rank = _rank(descriptor)
        if url and _real(url) and candidate_rank > rank:
            best, rank = url, candidate_rank
    return best


def _rank(descriptor: str) -> tuple[int, float]:
    """(1 for a width, 0 for a density; its number) of a srcset descriptor; "" counts as 1x."""
    kind = 1 if descriptor.endswith("w") else 0
    try:
        return kind, float(descriptor[:-1]) if descriptor[-1:] in ("w", "x") else 1.0
    except ValueError:
        return 0, 1.0


def _key(source: str) -> str:
    """What two sources of one image share: the URL without its scheme."""
    return source.split("://", 1)[-1]
