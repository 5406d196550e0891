"""An entry's categories (tags) as plain text, each once, in document order: the one normaliser.

Every reader gives its raw values here: the XML readers feedparser's ``tags`` (:func:`xml_categories`:
RSS 2.0 ``<category>``, Atom ``<category>``, ``dc:subject``, ``itunes:category`` and ``media:category``,
read alike by feedparser and the fast reader), the JSON Feed reader an item's ``tags``
(:func:`normalised`). The rules:

* a category is plain text: markup is stripped and character references decoded once (as titles are:
  feeds write ``C&amp;amp;C``), control characters and invisible format characters (bidi overrides,
  zero-width spaces) removed, runs of white space made one space, and the ends trimmed;
* an empty one is dropped; one longer than :data:`CATEGORY_MAX_CHARS` characters is cut there;
* each category is kept once: two that differ only in case or accents (``Café``, ``cafe``, ``CAFÉ``)
  are the same, and the first spelling is kept;
* at most :data:`MAX_CATEGORIES` are kept, and at most :data:`RAW_SEEN` raw values are looked at, each
  cut to ``CATEGORY_MAX_CHARS * RAW_FIELD_FACTOR`` characters first: a feed that gives an entry
  100,000 categories costs no more than one that gives it 256 (the XML readers keep at most
  :data:`feedreader.TAGS_KEPT` of them in the first place).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from itertools import islice
from typing import Any

from syndicator.parse.limits import RAW_FIELD_FACTOR
from syndicator.parse.sanitize import html_to_text, one_line

#: Categories kept per entry, and characters kept of one.
MAX_CATEGORIES = 32
CATEGORY_MAX_CHARS = 100
#: Raw values looked at per entry: the first ones, in document order.
RAW_SEEN = 256
#: feedparser's scheme for ``itunes:category`` (and ``itunes:keywords``, which it is not given).
ITUNES_SCHEME = "http://www.itunes.com/"
#: Markup or a character reference: the value is read as HTML.
_LOOKS_LIKE_HTML = re.compile(r"<[A-Za-z/!]|&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]+\d*);")
#: Invisible format characters (soft hyphen, zero-width ones, bidi marks and overrides, BOM).
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def normalised(values: Iterable[object]) -> tuple[str, ...]:
    """The categories of ``values`` (raw strings in document order; anything else is skipped), normalised
    as the module docstring says: at most :data:`MAX_CATEGORIES` distinct plain-text ones (tuple of str)."""
    kept: list[str] = []
    seen: set[str] = set()
    for value in islice(values, RAW_SEEN):
        text = category_text(value) if isinstance(value, str) else ""
        key = category_key(text)
        if text and key not in seen:
            seen.add(key)
            kept.append(text)
            if len(kept) == MAX_CATEGORIES:
                break
    return tuple(kept)


def category_text(value: str) -> str:
    """One raw category as plain text on one line, at most :data:`CATEGORY_MAX_CHARS` characters ("" when
    nothing is left)."""
    value = value[: CATEGORY_MAX_CHARS * RAW_FIELD_FACTOR]
    text = html_to_text(value) if _LOOKS_LIKE_HTML.search(value) else one_line(value)
    text = one_line(_INVISIBLE.sub("", text))
    return text[:CATEGORY_MAX_CHARS].rstrip()


def category_key(text: str) -> str:
    """What two spellings of one category share (str): no accents (Unicode NFKD, combining marks dropped),
    case folded. Anything that compares categories (a planet's filters) compares these keys, as
    :func:`normalised` does."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


def xml_categories(container: Any, podcast_only: bool = False) -> tuple[str, ...]:
    """The categories of an entry or feed mapping as feedparser gives it (either XML reader), normalised.

    feedparser's ``tags`` is a list of ``{"term", "scheme", "label"}``: RSS ``<category>`` text is the
    term (its ``domain`` the scheme, not shown), Atom ``<category>`` has a ``term`` and may have a
    ``label``, shown when given (RFC 4287 section 4.2.2.3: "a human-readable label for display"),
    ``dc:subject`` and ``media:category`` text is the term, and each ``itunes:category`` (nested ones
    too) is a term of scheme :data:`ITUNES_SCHEME`. With ``podcast_only``, only those last ones.
    """
    tags = dict.get(container, "tags")
    if not isinstance(tags, list):
        return ()
    return normalised(
        _shown(tag) for tag in islice(tags, RAW_SEEN) if not podcast_only or dict.get(tag, "scheme") == ITUNES_SCHEME
    )


def _shown(tag: Any) -> str:
    """What a feedparser tag shows: its label, else its term ("" for neither)."""
    if not isinstance(tag, dict):
        return ""
    label, term = dict.get(tag, "label"), dict.get(tag, "term")
    return label if isinstance(label, str) and label.strip() else term if isinstance(term, str) else ""
