"""The search index of a planet's archive: small script files that search.html loads as it needs them.

Browsers refuse ``fetch()`` of ``file:`` URLs, so an index read with it (Pagefind's) does not work from
a folder opened on the disk; a ``<script src>`` does. Each index file is one call of a function that
``search.js`` defines (JSONP style), and a query loads only the files of its words:

- ``search/d-N.js``: documents ``N*DOCS`` to ``(N+1)*DOCS - 1``: ``syndicatorSearch.docs(N, [[url,
  title, site, date, snippet], ...])``, ``url`` from the site's top (the entry's place in the archive);
- ``search/pairs.js``: the names of the terms files there are (``syndicatorSearch.pairs(DOCS, [...])``);
- ``search/t-HHHH-HHHH.js``: the words starting with one pair of letters (their code points in hex, so
  every script makes a safe file name): ``syndicatorSearch.terms("py", {"python": [3, 17, ...]})``, the
  numbers of the documents holding the word, ascending.

Words are the text's Unicode word characters (``\\w+``), case-folded, accents removed (NFKD, combining
marks dropped: "Café" is found as "cafe"), at least :data:`MIN_CHARS` long; each character of Han, Kana
and Hangul text is a word of its own, as those scripts write no spaces. Documents are numbered in the
order the planet first published them (the archive's own order), so a new entry changes the last
documents file and the files of its words only, and the same archive gives the same bytes.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from syndicator.parse.sanitize import html_to_text
from syndicator.site.pageentry import PageEntry

__all__ = ["DOCS", "Document", "search_documents", "search_files", "words"]

#: Documents per documents file.
DOCS = 500
#: Characters of an entry's text that are indexed (its title, site and categories are, whole).
TEXT_CHARS = 4000
#: Characters of the snippet a result shows.
SNIPPET_CHARS = 160
#: Shortest word indexed, in characters (but one character of a script written without spaces).
MIN_CHARS = 2
_WORD = re.compile(r"\w+")
#: Han, Hiragana, Katakana and Hangul: each character is a word.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


@dataclass(frozen=True)
class Document:
    """One entry as the search shows and finds it: ``url`` (its place in the site, from the top),
    ``title``, ``site`` (its site's name), ``date`` (RFC 3339, UTC) and ``text`` (plain text)."""

    url: str
    title: str
    site: str
    date: str
    text: str


def search_documents(entries: Iterable[PageEntry], place: Callable[[PageEntry], str]) -> list[Document]:
    """The documents of ``entries`` (page entries, :class:`pageentry.PageEntry`, in the order the planet
    first published them), each at ``place(entry)`` in the site."""
    documents = []
    for e in entries:
        text = html_to_text(str(e.content))[:TEXT_CHARS]
        documents.append(
            Document(place(e), e.title, e.site_name, e.published, f"{text} {' '.join(e.categories)}".strip())
        )
    return documents


def fold(text: str) -> str:
    """``text`` case-folded, its accents removed (NFKD, combining marks dropped)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> set[str]:
    """The words of ``text`` as the index keeps them (:func:`fold`, then split; see the module)."""
    found = set()
    for word in _WORD.findall(fold(text)):
        if _UNSPACED.search(word):
            found.update(_UNSPACED.findall(word))
            word = _UNSPACED.sub(" ", word)
            found.update(part for part in word.split() if len(part) >= MIN_CHARS)
        elif len(word) >= MIN_CHARS:
            found.add(word)
    return found


def shard_name(word: str) -> str:
    """The terms file of ``word``: ``search/t-`` and the code points of its first two characters."""
    return "search/t-" + "-".join(f"{ord(c):04x}" for c in word[:2]) + ".js"


def search_files(documents: Sequence[Document]) -> dict[str, str]:
    """{path in the site: script text} of the index of ``documents`` (see the module)."""
    files = {}
    postings: dict[str, dict[str, list[int]]] = {}
    for number, document in enumerate(documents):
        for word in sorted(words(f"{document.title} {document.site} {document.text}")):
            postings.setdefault(shard_name(word), {}).setdefault(word, []).append(number)
    for start in range(0, len(documents), DOCS):
        rows = [[d.url, d.title, d.site, d.date, _snippet(d.text)] for d in documents[start : start + DOCS]]
        files[f"search/d-{start // DOCS}.js"] = _call("docs", start // DOCS, rows)
    for name, terms in postings.items():
        prefix = next(iter(terms))[:2]
        files[name] = _call("terms", prefix, dict(sorted(terms.items())))
    # the pairs that have a terms file, so a query asks for no file that is not there
    files["search/pairs.js"] = _call("pairs", DOCS, sorted(name[len("search/") : -3] for name in postings))
    return files


def _snippet(text: str) -> str:
    """The start of ``text`` a result shows, cut on a word."""
    if len(text) <= SNIPPET_CHARS:
        return text
    cut = text[:SNIPPET_CHARS].rsplit(" ", 1)[0]
    return cut + " …"


def _call(function: str, key: object, value: object) -> str:
    """One index file: ``syndicatorSearch.FUNCTION(KEY, VALUE);`` in compact JSON (script-safe: ``<``
    written as ``\\u003c``, so no text of a feed can end the script)."""
    data = json.dumps([key, value], ensure_ascii=False, separators=(",", ":"))
    data = data.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"syndicatorSearch.{function}(...{data});\n"
