"""An entry's author as a name fit to publish: every e-mail address taken out of it, however it
is written (RSS 2.0's ``email (Name)``, ``Name <email>``, ``mailto:``, or spelled out to dodge
harvesters), so a published page never hands an address to spammers.
"""

from __future__ import annotations

import re

from syndicator.parse.limits import AUTHOR_MAX_CHARS, RAW_FIELD_FACTOR
from syndicator.parse.sanitize import one_line

__all__ = ["author_name"]

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
