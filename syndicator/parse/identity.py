"""Entry identity, alias keys and content hashes (seed 000, "deduplicate at more than one layer").

Identity of an entry within its source (:func:`assign`), per document:

1. the id the feed gives it (RSS ``guid``, Atom ``id``, JSON Feed ``id``);
   an item repeated word for word (same id and same fields) is one entry;
   when an id is shared by entries that differ, it is not trusted for them;
2. else its canonical link (:func:`syndicator.urls.canonical`), when no other entry of
   the document has the same one;
3. else a fingerprint (:func:`fingerprint`) of stable fields: the title, the
   date as written and the enclosure URLs; the text of the summary or
   content is added only when those fields alone repeat in the document.
   Never the fetch time. Entries still equal after that are the same post
   written twice: the first one is kept.

An identity or alias key longer than :data:`MAX_KEY_BYTES` is kept as
its fingerprint (:func:`bounded`), so that every key fits a database index.

Alias keys (:func:`alias_keys`) are other names of the same post, so that
the store recognizes it when the publisher changes identifier style. The
content hash (:func:`content_hash`) is kept apart from identity: it tells
an edit (same identity, new hash) from a new post.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from syndicator.feedtypes import Entry
from syndicator.urls import WEB_SCHEMES, canonical, scheme


@dataclass(frozen=True)
class Candidate:
    """What identity needs to know of one entry of a document.

    Attributes:
        guid: the id the feed gave, or None.
        link: the entry's absolute link, or None.
        title: plain-text title ("" when none).
        date_text: the entry's date as written ("" when none).
        enclosures: enclosure URLs, in document order.
        body: the sanitized HTML of the summary or content; its :attr:`text`
            is worked out only when identity needs it (rarely: see :func:`assign`).
            Two candidates are equal when their other fields are and their texts are.
    """

    guid: str | None
    link: str | None
    title: str = ""
    date_text: str = ""
    enclosures: tuple[str, ...] = ()
    body: str = field(default="", compare=False, repr=False)

    @property
    def text(self) -> str:
        """Plain text of :attr:`body` (str)."""
        # Imported here: the store imports this module, and a build with nothing due loads no sanitizer.
        from syndicator.parse.sanitize import html_to_text

        return html_to_text(self.body)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Candidate):
            return NotImplemented
        return self._fields() == other._fields() and self.text == other.text

    def __hash__(self) -> int:
        return hash(self._fields())

    def _fields(self) -> tuple[object, ...]:
        return (self.guid, self.link, self.title, self.date_text, self.enclosures)


@dataclass(frozen=True)
class Draft:
    """An entry before identity is given (``entry.id`` is ""), with what identity needs."""

    entry: Entry
    candidate: Candidate


def fingerprint(*fields: str | None) -> str:
    """A stable identity from stable fields: ``urn:sha256:`` and 32 hex digits.

    Fields are joined with a separator that cannot occur in text, so
    ("ab", "c") and ("a", "bc") differ.
    """
    joined = "\x1f".join(field or "" for field in fields)
    return "urn:sha256:" + hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def assign(candidates: Sequence[Candidate]) -> list[str | None]:
    """The identity of each entry of one document (see the module docstring).

    Args:
        candidates: the document's entries, in document order.
    Returns:
        one identity (str) per candidate, or None for an entry that repeats
        an earlier one and must be dropped. Identities are unique.
    """
    groups: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        if candidate.guid:
            groups.setdefault(candidate.guid, []).append(candidate)
    trusted = {guid for guid, group in groups.items() if len(group) == 1 or len(set(group)) == 1}
    fallback = [c for c in candidates if not (c.guid and c.guid in trusted)]
    links = Counter(canonical(c.link) for c in fallback if c.link)
    stable = Counter(_stable(c) for c in fallback)
    taken: set[str] = set()
    result: list[str | None] = []
    for candidate in candidates:
        if candidate.guid and candidate.guid in trusted:
            key = candidate.guid
        elif candidate.link and links[canonical(candidate.link)] == 1:
            key = canonical(candidate.link)
        elif stable[_stable(candidate)] == 1:
            key = fingerprint(*_stable(candidate))
        else:
            key = fingerprint(*_stable(candidate), candidate.link, candidate.text)
        key = bounded(key)
        result.append(None if key in taken else key)
        taken.add(key)
    return result


#: The longest identity or alias key kept as it is, in UTF-8 bytes; a longer one is stored as its
#: fingerprint (PostgreSQL's btree index takes at most 2,704 bytes a row, with the source URL in it).
MAX_KEY_BYTES = 512


def bounded(key: str) -> str:
    """``key``, or its :func:`fingerprint` when it is longer than MAX_KEY_BYTES in UTF-8: the same
    key always gives the same result, so identity holds from one fetch to the next."""
    if len(key) * 4 <= MAX_KEY_BYTES or len(key.encode("utf-8", "surrogatepass")) <= MAX_KEY_BYTES:
        return key
    return fingerprint(key)


def _stable(candidate: Candidate) -> tuple[str, ...]:
    return (candidate.title, candidate.date_text, *candidate.enclosures)


def alias_keys(candidates: Sequence[Candidate]) -> list[tuple[str, ...]]:
    """Other names of each entry of one document, strongest first.

    A key is used only when no other entry of the document has it. Kinds:
    ``uri:`` the id or link without its scheme (an http id becoming https),
    ``link:`` the canonical link without its scheme (a guid appearing where
    there was none), ``moved:`` path, query and title (the feed moving to
    another host), ``title:`` title and date as written, ``dated:`` date as
    written and enclosures (an edited title).

    Returns:
        one tuple of key strings per candidate.
    """
    keys = [_keys(candidate) for candidate in candidates]
    counts = Counter(key for entry_keys in keys for key in set(entry_keys))
    return [tuple(dict.fromkeys(bounded(k) for k in entry_keys if counts[k] == 1)) for entry_keys in keys]


def _keys(candidate: Candidate) -> list[str]:
    keys: list[str] = []
    title = _fold(candidate.title)
    for kind, url in (("uri", candidate.guid), ("link", candidate.link)):
        if url and scheme(url.strip()) in WEB_SCHEMES:
            bare = canonical(url).split(":", 1)[1]
            keys.append(f"{kind}:{bare}")
            path = bare.split("/", 3)[3] if bare.count("/") >= 3 else ""
            if path.strip("/") and title:
                keys.append(f"moved:/{path}|{title}")
    if title and candidate.date_text:
        keys.append(f"title:{title}|{candidate.date_text}")
    if candidate.date_text:
        keys.append(f"dated:{candidate.date_text}|{'|'.join(candidate.enclosures)}")
    return keys


def _fold(text: str) -> str:
    """Text for comparison: NFKC, case-folded, white space squeezed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())
