"""Reading setting values: durations and URLs. Pure; used by the config and cli packages.

Each reader says what is wrong in a short text, for a one-line error that
the caller prefixes with the file, line and field (or the option).
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache
from typing import Any

from syndicator.urls import MAX_LENGTH, WEB_SCHEMES, plain_web, split

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
#: Unicode categories refused inside a URL: controls, format (invisible) characters, spaces, separators.
_BAD_URL_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
#: Printable ASCII but the space: none of it is in a bad category, so such a URL skips the per-character check.
_PRINTABLE_ASCII = re.compile(r"[!-~]*")
#: The end of the problem text for a URL with credentials.
NO_CREDENTIALS = "remove the user:password@ part"


def parse_duration(value: Any) -> float:
    """Read a duration: a number of seconds, or a number with s/m/h/d/w.

    Returns seconds (float). Raises ValueError for anything else, including
    booleans and negative numbers.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"{value!r} is negative")
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise ValueError(f"{value!r} is not a duration such as 90s, 15m, 1h or 4d")
        seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]
    if not math.isfinite(seconds):
        raise ValueError(f"{value!r} is not a finite duration")
    return seconds


def url_problem(value: Any) -> str | None:
    """What is wrong with ``value`` as a feed or link URL, or None when it is fine.

    A good URL is a str holding an absolute http(s) URL with a host and a
    valid port, after leading and trailing whitespace is stripped. Refused:
    a space, tab, line break or other control or invisible character inside
    (urlsplit would silently drop tabs and line breaks, and the rest splits
    a request line or a log line), and credentials (``user:secret@``),
    which would be published in opml.xml, sites.html and the feeds.

    Returns:
        a short problem text (str) without the credentials, or None.
    """
    if not isinstance(value, str):
        return f"{value!r} is not an http(s) URL"
    text = value.strip()
    if not _PRINTABLE_ASCII.fullmatch(text) and any(unicodedata.category(c) in _BAD_URL_CATEGORIES for c in text):
        return f"{text!r} contains a space or a control character"
    if len(text) > MAX_LENGTH:
        return f"a URL of {len(text)} characters is longer than the {MAX_LENGTH} allowed"
    if plain_web(text):
        return None
    parts = split(text)  # None for a malformed host or port, among others
    if parts is None or parts.scheme not in WEB_SCHEMES or not parts.hostname:
        return f"{text!r} is not an http(s) URL"
    if "@" in parts.netloc:
        return f"credentials in a URL would be published on the site; {NO_CREDENTIALS}"
    return None


def is_http_url(value: Any) -> bool:
    """True if ``value`` is a str holding a usable http(s) URL (see :func:`url_problem`)."""
    return url_problem(value) is None


def bound_text(seconds: float) -> str:
    """A bound in the largest unit that divides it: 604800 -> '7 days', 0.5 -> '0.5 seconds'."""
    for unit, size in (("day", 86400.0), ("hour", 3600.0), ("minute", 60.0)):
        if seconds >= size and seconds % size == 0:
            count = seconds / size
            return f"{number_text(count)} {unit}{'' if count == 1 else 's'}"
    return f"{number_text(seconds)} second{'' if seconds == 1 else 's'}"


def number_text(value: float) -> str:
    """A number for an error message, every digit kept: 104857600.0 -> '104857600', 0.5 -> '0.5'.

    (``{:g}`` would write 104857600 as '1.04858e+08'.)
    """
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# XML 1.0 forbids C0 controls but tab, newline and carriage return; C1 controls
# and non-characters are dropped too so every output stays well-formed.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def strip_control(text: str) -> str:
    """Remove characters XML 1.0 forbids (and C1 controls) from ``text`` (str -> str)."""
    return _XML_FORBIDDEN.sub("", text)


#: A word, as filters compare text (:func:`words`): a run of letters, digits and ``_``.
_WORD = re.compile(r"\w+")


def folded(text: str) -> str:
    """``text`` as filters compare it: case- and accent-insensitive (Unicode NFKD, combining marks
    removed, case folded: ``Café`` and ``CAFE`` are ``cafe``; ``ﬁ`` is ``fi``), runs of white space one
    space, stripped (str)."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = decomposed if decomposed.isascii() else decomposed.translate(_marks())
    return " ".join(bare.casefold().split())


@lru_cache(maxsize=1)
def _marks() -> dict[int, None]:
    """A str.translate table removing the combining marks (a canonical combining class above 0: accents,
    diacritics), all of them below U+1F000 in Unicode 15; made once, in about 10 ms."""
    return {code: None for code in range(0x300, 0x1F000) if unicodedata.combining(chr(code))}


def words(text: str) -> list[str]:
    """The words of plain ``text`` (:func:`folded`, then each run of letters, digits and ``_``), in order:
    ``"Machine-Learning, café!"`` -> ``["machine", "learning", "cafe"]`` (list of str)."""
    return _WORD.findall(folded(text))
