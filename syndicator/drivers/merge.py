"""Which feeds of a subscription list (or of ``syndicator add``) become new sites, by the merge
rules below; pure, so the result loads with :func:`config.load.load_config`:

* a feed must pass :func:`values.url_problem`, as a ``feed`` in sites.yaml
  must: http(s), no space or control character, no credentials; else it is
  skipped and reported (docs/configuration.md);
* a feed already in sites.yaml, or listed earlier in the same list, is
  skipped; feeds are compared by :func:`urls.canonical` (RFC 3986 section
  6.2: case of scheme and host, default port, fragment, tracking parameters);
* a name is cleaned as config reads it (control characters and the
  characters config refuses in a name, :data:`config.sites.NAME_HIDDEN`, dropped;
  white space runs made one space) and cut to :data:`config.sites.NAME_MAX_CHARS`; an
  empty one becomes the feed URL; one already taken gets `` (2)``,
  `` (3)``... (config refuses two sites with one name);
* ``link`` is written only when it is an http(s) URL, and ``face`` (Venus's
  ``face``, pluto's ``avatar``) only when sites.yaml takes it
  (:func:`config.fields.image_problem`: an http(s) URL or a relative path);
* the values an old planet passed to its templates for a feed (pluto's
  ``author``, Venus's ``facewidth``, rawdog's ``define_X``) are the site's
  ``extra``, as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from syndicator.config.fields import image_problem
from syndicator.config.sites import NAME_HIDDEN, NAME_MAX_CHARS
from syndicator.configtypes import Site
from syndicator.parse.sublists import Candidate
from syndicator.urls import canonical
from syndicator.values import strip_control, url_problem

__all__ = ["Plan", "Skip", "clean_name", "plan"]


@dataclass(frozen=True)
class Skip:
    """A candidate left out: ``reason`` is a short text; ``listed`` is True for a duplicate feed."""

    candidate: Candidate
    reason: str
    listed: bool


@dataclass(frozen=True)
class Plan:
    """What a merge adds (``added``: new Sites, in list order) and leaves out (``skipped``)."""

    added: tuple[Site, ...]
    skipped: tuple[Skip, ...]

    def lines(self, dry_run: bool = False) -> list[str]:
        """One line per added and per skipped site, then the summary line (list of str)."""
        add, skip = ("would add", "would skip") if dry_run else ("added", "skipped")
        out = [f"{add} {site.name} <{site.feed}>" for site in self.added]
        out += [f"{skip} {clean_name(s.candidate.name) or '(no name)'}: {s.reason}" for s in self.skipped]
        listed = sum(s.listed for s in self.skipped)
        counts = f"({listed} already listed, {len(self.skipped) - listed} not http(s) URLs)"
        sites = f"{len(self.added)} site{'s' * (len(self.added) != 1)}"
        if dry_run:
            return [*out, f"would add {sites}, skip {len(self.skipped)} {counts}; nothing was written"]
        return [*out, f"added {sites}, skipped {len(self.skipped)} {counts}"]


def plan(existing: Sequence[Site], candidates: Sequence[Candidate], source: str) -> Plan:
    """Which candidates become sites, by the merge rules of this module's docstring. Pure.

    Args:
        existing: the sites sites.yaml lists now.
        candidates: the feeds to add, in order.
        source: how to name the list in a reason ("FILE"), for a feed it repeats.
    Returns:
        the Plan: new Sites with cleaned, unique names, and the skipped candidates with their reasons.
    """
    feeds: dict[str, str | None] = {canonical(site.feed): site.name for site in existing}
    names = {site.name for site in existing}
    numbers: dict[str, int] = {}  # a name -> the last number tried for it, so repeats cost O(1) each
    added: list[Site] = []
    skipped: list[Skip] = []
    for candidate in candidates:
        feed = candidate.feed.strip()
        problem = url_problem(feed)
        if problem is not None:
            skipped.append(Skip(candidate, problem, listed=False))
            continue
        key = canonical(feed)
        if key in feeds:
            where = f"already listed as {feeds[key]!r}" if feeds[key] is not None else f"listed twice in {source}"
            skipped.append(Skip(candidate, f"<{feed}> {where}", listed=True))
            continue
        name = _unique(clean_name(candidate.name) or _cut(feed, NAME_MAX_CHARS), names, numbers)
        link = candidate.link.strip() if candidate.link and url_problem(candidate.link) is None else None
        face = candidate.face.strip() if candidate.face and image_problem(candidate.face) is None else None
        added.append(Site(name=name, feed=feed, link=link, face=face, extra=_extra(candidate)))
        feeds[key] = None  # None: listed earlier in this list
        names.add(name)
    return Plan(tuple(added), tuple(skipped))


def _extra(candidate: Candidate) -> dict[str, str]:
    """A candidate's template values as a site's ``extra``: one line of text each, empty ones left out."""
    values = {key: " ".join(strip_control(value).split()) for key, value in candidate.extra}
    return {key: value for key, value in values.items() if key and value}


def clean_name(name: str) -> str:
    """``name`` as config reads it, at most NAME_MAX_CHARS: no control characters, none of NAME_HIDDEN.

    The bidirectional controls and invisible characters that config refuses
    in a name (U+202E...) are dropped, not refused: a list or a feed title is
    someone else's text, and one bad name must not stop the others. White
    space runs then become one space. "" when nothing is left.
    """
    return _cut(" ".join(NAME_HIDDEN.sub("", strip_control(name)).split()), NAME_MAX_CHARS)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _unique(name: str, taken: set[str], numbers: dict[str, int]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... the first not in ``taken``, within NAME_MAX_CHARS.

    ``numbers`` remembers the last number given to each name (updated), so
    the search goes on from there: n sites of one name cost O(n), not O(n²)
    (numbers below it are taken already, as ``taken`` only grows).
    """
    number = numbers.get(name, 1)
    result = name if number == 1 else _numbered(name, number)
    while result in taken:
        number += 1
        result = _numbered(name, number)
    numbers[name] = number
    return result


def _numbered(name: str, number: int) -> str:
    suffix = f" ({number})"
    return _cut(name, NAME_MAX_CHARS - len(suffix)) + suffix
