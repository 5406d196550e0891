"""Language tags of entries (BCP 47) and the writing direction they imply. Pure.

A feed says what language an entry is in (Atom ``xml:lang``, RSS
``<language>``, ``dc:language``, JSON Feed ``language``), and a site may say
it in sites.yaml; the pages, feed.xml and feed.json publish it. Rules:

* :func:`language_tag` keeps a tag only when it is well formed by RFC 5646
  section 2.1 (the ``langtag`` production: language, extlang, script,
  region, variants, extensions, private use) after trimming white space and
  writing ``_`` as ``-`` (``en_US``, as feedparser does). Private-use-only
  tags (``x-...``), grandfathered ones (``i-klingon``) and the tags that
  name no language (``und``, ``mul``, ``zxx``, ``mis``) are dropped: they say
  nothing a page can use. A tag is at most :data:`MAX_CHARS` characters
  (RFC 5646 section 4.4.1), and a longer value is dropped, not cut. Case is
  canonical (section 2.1.1: ``ar-Arab-EG``). Anything else is no language.
* :func:`direction` is ``rtl`` or ``ltr`` from the tag, ``auto`` without
  one: a script subtag decides when there is one (``az-Arab`` is right to
  left, ``ar-Latn`` left to right), else the primary language does
  (:data:`RTL_LANGUAGES`). The first letter of the text never does: an
  Arabic title that starts with "Android" is still laid out right to left.

The tables are from the Unicode CLDR: the scripts whose character order is
right to left, and the languages whose likely script (CLDR likely subtags,
as the ``langcodes`` package 3.5 ships them) is one of those, less
historical languages CLDR pairs with an odd script (``grc``: Cypriot).
``langcodes`` itself is not used at run time: it caches every distinct tag
it parses for the life of the process, and the tags come from feeds.
"""

from __future__ import annotations

import re

#: Longest tag kept, in characters (RFC 5646 section 4.4.1: 35 covers every tag without extensions).
MAX_CHARS = 35
#: Longest raw value looked at; a longer one is no tag (bounded work on hostile input).
_RAW_MAX_CHARS = 256
#: RFC 5646 section 2.1 ``langtag``, case-insensitive (section 2.1.1); one group per subtag kind.
_LANGTAG = re.compile(
    r"(?P<language>[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4}|[a-z]{5,8})"
    r"(?:-(?P<script>[a-z]{4}))?"
    r"(?:-(?P<region>[a-z]{2}|[0-9]{3}))?"
    r"(?P<variants>(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*)"
    r"(?P<extensions>(?:-[0-9a-wyz](?:-[a-z0-9]{2,8})+)*)"
    r"(?P<private>-x(?:-[a-z0-9]{1,8})+)?",
    re.ASCII | re.IGNORECASE,
)
#: Primary subtags that name no language (RFC 5646 section 4.1, ISO 639-2 special codes).
_NO_LANGUAGE = frozenset({"und", "mul", "zxx", "mis"})
#: ISO 15924 scripts written right to left (CLDR characterOrder right-to-left).
RTL_SCRIPTS = frozenset(
    {
        "Adlm",
        "Arab",
        "Aran",
        "Armi",
        "Avst",
        "Chrs",
        "Cprt",
        "Elym",
        "Hatr",
        "Hebr",
        "Hung",
        "Khar",
        "Lydi",
        "Mand",
        "Mani",
        "Mend",
        "Narb",
        "Nbat",
        "Nkoo",
        "Orkh",
        "Ougr",
        "Palm",
        "Phli",
        "Phlp",
        "Phlv",
        "Phnx",
        "Prti",
        "Rohg",
        "Samr",
        "Sarb",
        "Sogd",
        "Sogo",
        "Syrc",
        "Syre",
        "Syrj",
        "Syrn",
        "Thaa",
        "Yezi",
    }
)
#: Primary language subtags whose likely script (CLDR likely subtags) is right to left, with the
#: deprecated ``iw`` and ``ji`` and a few the likely subtags file lists only with a region.
RTL_LANGUAGES = frozenset(
    {
        "aeb",
        "apc",
        "apd",
        "ar",
        "arc",
        "arq",
        "ars",
        "ary",
        "arz",
        "avl",
        "azb",
        "bal",
        "bej",
        "bft",
        "bgn",
        "bqi",
        "brh",
        "cja",
        "ckb",
        "dcc",
        "dgl",
        "dv",
        "fa",
        "fia",
        "fub",
        "gbz",
        "gjk",
        "gju",
        "glk",
        "gwc",
        "gwt",
        "haz",
        "he",
        "hnd",
        "hno",
        "iw",
        "ji",
        "kby",
        "khw",
        "ks",
        "kvx",
        "kxp",
        "kzh",
        "lad",
        "lah",
        "lki",
        "lrc",
        "luz",
        "mde",
        "mfa",
        "mki",
        "mvy",
        "myz",
        "mzn",
        "nqo",
        "ota",
        "pbt",
        "pbu",
        "pes",
        "pnb",
        "prd",
        "prs",
        "ps",
        "rhg",
        "rmt",
        "scl",
        "sd",
        "sdh",
        "shu",
        "skr",
        "smp",
        "swb",
        "syr",
        "trw",
        "ug",
        "ur",
        "uzs",
        "wni",
        "yi",
        "zdj",
    }
)


def language_tag(value: object) -> str | None:
    """``value`` as a well-formed BCP 47 tag in canonical case (str), or None (see the module docstring).

    >>> language_tag(" AR_eg "), language_tag("en-us"), language_tag("<script>"), language_tag("x-foo")
    ('ar-EG', 'en-US', None, None)
    """
    if not isinstance(value, str) or len(value) > _RAW_MAX_CHARS:
        return None
    text = value.strip().replace("_", "-")
    match = _LANGTAG.fullmatch(text)
    if match is None or len(text) > MAX_CHARS:
        return None
    language = match["language"].lower()
    if language in _NO_LANGUAGE:
        return None
    parts = [language]
    if match["script"]:
        parts.append(match["script"].title())
    if match["region"]:
        parts.append(match["region"].upper())
    rest = "".join(match.group(name) or "" for name in ("variants", "extensions", "private")).lower()
    if _repeats(rest):
        return None
    return "-".join(parts) + rest


def _repeats(rest: str) -> bool:
    """True when the variants and extensions of a tag (``-valencia-u-ca-buddhist``) repeat a variant
    or an extension's singleton (RFC 5646 sections 2.2.5 and 2.2.9); private use is not looked at."""
    variants: list[str] = []
    singletons: list[str] = []
    for subtag in rest.split("-x-", 1)[0].split("-")[1:]:
        if len(subtag) == 1:
            singletons.append(subtag)
        elif not singletons:
            variants.append(subtag)
    return len(set(variants)) != len(variants) or len(set(singletons)) != len(singletons)


def direction(tag: str | None) -> str:
    """The writing direction of a tag :func:`language_tag` kept: ``rtl`` or ``ltr``; ``auto`` for None.

    >>> direction("ar"), direction("az-Arab"), direction("ar-Latn"), direction("en"), direction(None)
    ('rtl', 'rtl', 'ltr', 'ltr', 'auto')
    """
    if not tag:
        return "auto"
    subtags = tag.split("-")
    for subtag in subtags[1:]:
        if len(subtag) == 1:
            break  # extensions and private use follow: no script among them
        if len(subtag) == 4 and subtag.isalpha():  # a script (a variant of four starts with a digit)
            return "rtl" if subtag.title() in RTL_SCRIPTS else "ltr"
    return "rtl" if subtags[0].lower() in RTL_LANGUAGES else "ltr"
