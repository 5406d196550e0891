"""Subscription lists -> new sites in sites.yaml: ``syndicator import`` and ``syndicator add``.

read_list(FILE) | plan(existing sites) | write(sites.yaml), or fetch_site(URL) | plan | write.

The lists are read by :mod:`sublists`.

Merge rules (:func:`plan`), so the result loads with :func:`config.load_config`:

* a feed must pass :func:`values.url_problem`, as a ``feed`` in sites.yaml
  must: http(s), no space or control character, no credentials; else it is
  skipped and reported (README, "Configuration");
* a feed already in sites.yaml, or listed earlier in the same list, is
  skipped; feeds are compared by :func:`urls.canonical` (RFC 3986 section
  6.2: case of scheme and host, default port, fragment, tracking parameters);
* a name is cleaned as config reads it (control characters and the
  characters config refuses in a name, :data:`config.NAME_HIDDEN`, dropped;
  white space runs made one space) and cut to :data:`config.NAME_MAX_CHARS`; an
  empty one becomes the feed URL; one already taken gets `` (2)``,
  `` (3)``... (config refuses two sites with one name);
* ``link`` is written only when it is an http(s) URL.

Writing (:func:`write`) keeps every byte of sites.yaml: ruamel.yaml reads the
file round trip to find the end of the ``sites`` list and its indentation,
and renders the new entries (quoted where YAML 1.1, which PyYAML reads, would
not read them back as the same text); they are inserted as text after the
last site, since dumping the whole document would re-space aligned values
and rewrite ``~``. The result goes to a temporary file beside sites.yaml, is
checked with load_config (the old sites' names, then exactly the new sites),
and replaces the file with os.replace; on any error sites.yaml is untouched.

ruamel.yaml is imported here only,
inside the functions that use them, so ``syndicator build`` never loads them.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from io import StringIO
from pathlib import Path
from typing import Any

from syndicator.config import NAME_HIDDEN, NAME_MAX_CHARS, load_config, read_text
from syndicator.configtypes import Site
from syndicator.errors import ConfigError, FeedError
from syndicator.parse.sublists import Candidate, read_list
from syndicator.urls import canonical
from syndicator.values import strip_control, url_problem

#: A line that ends the YAML document: the ``sites`` list cannot go on past it.
_DOCUMENT_END = re.compile(r"(---|\.\.\.)(\s|$)")
#: A ``sites`` key with no sites yet: empty, ``[]``, ``~`` or ``null``; group 2 keeps a comment.
_EMPTY_SITES = re.compile(r"(\s*sites\s*:)[ \t]*(?:\[[ \t]*\]|~|null|Null|NULL)?([ \t]+#[^\r\n]*)?[ \t]*(?:\r?\n)?")


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
        out += [f"{skip} {_clean(s.candidate.name) or '(no name)'}: {s.reason}" for s in self.skipped]
        listed = sum(s.listed for s in self.skipped)
        counts = f"({listed} already listed, {len(self.skipped) - listed} not http(s) URLs)"
        sites = f"{len(self.added)} site{'s' * (len(self.added) != 1)}"
        if dry_run:
            return [*out, f"would add {sites}, skip {len(self.skipped)} {counts}; nothing was written"]
        return [*out, f"added {sites}, skipped {len(self.skipped)} {counts}"]


# --- merging -----------------------------------------------------------------------------------


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
        name = _unique(_clean(candidate.name) or _cut(feed, NAME_MAX_CHARS), names, numbers)
        link = candidate.link.strip() if candidate.link and url_problem(candidate.link) is None else None
        added.append(Site(name=name, feed=feed, link=link))
        feeds[key] = None  # None: listed earlier in this list
        names.add(name)
    return Plan(tuple(added), tuple(skipped))


def _clean(name: str) -> str:
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


# --- writing sites.yaml ------------------------------------------------------------------------


@dataclass(frozen=True)
class Planet:
    """A sites.yaml to add sites to, as :func:`open_planet` found it.

    Attributes:
        path: the file.
        sites: the sites it lists now, as load_config reads them (none yet: empty).
        user_agent: its User-Agent (load_config's), or None while it lists no site.
        head, tail: its text before and after the place new entries go; ``head``
            ends with a ``sites:`` line (added or cleared when the file had no site).
        dash, indent: the columns of a new entry's ``-`` and of its keys.
        newline: the file's line break ("\\n" or "\\r\\n").
    """

    path: Path
    sites: tuple[Site, ...]
    user_agent: str | None
    head: str
    tail: str
    dash: int
    indent: int
    newline: str


def open_planet(path: Path) -> Planet:
    """Read sites.yaml and find where new sites go: after its last site, or under a ``sites:`` key.

    A file that lists sites must load with load_config as it is; one that
    lists none yet (``sites`` missing, empty, ``[]``, ``~`` or ``null``) is
    checked when the new sites are written.

    Raises:
        ConfigError: the file is missing or unreadable, invalid (load_config's
            message), or its ``sites`` list is not written one ``- name:`` block per site.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import YAMLError

    if not path.exists():
        raise ConfigError(
            f'{path}: no such file; create it first with the planet\'s title and link (README.md, "Configuration")'
        )
    text = read_text(path)
    try:
        doc = YAML().load(text)
    except YAMLError as error:
        load_config(path)  # names the line, when PyYAML too finds the file invalid
        raise ConfigError(f"{path}: invalid YAML: {' '.join(str(error).split())}") from error
    if not isinstance(doc, CommentedMap):
        load_config(path)
        raise ConfigError(f"{path}: must be a mapping with title, link and sites")
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if "\r\n" in text else "\n"
    sites = doc.get("sites")
    if isinstance(sites, CommentedSeq) and sites and not sites.fa.flow_style():
        config = load_config(path)
        head, tail, dash, indent = _after_last_site(doc, sites, lines, newline)
        return Planet(path, config.sites, config.user_agent, head, tail, dash, indent, newline)
    if sites is not None and not (isinstance(sites, list) and not sites):
        load_config(path)  # names what is wrong with the sites
        raise ConfigError(f"{path}: sites: write one '- name:' block per site (not a [...] list) to add to it")
    if "sites" not in doc:
        head = text + ("" if not text or text.endswith("\n") else newline) + "sites:" + newline
        return Planet(path, (), None, head, "", 2, 4, newline)
    line, column = doc.lc.key("sites")
    match = _EMPTY_SITES.fullmatch(lines[line])
    if match is None:
        raise ConfigError(f"{path}:{line + 1}: sites: write 'sites:' alone on its line to add to it")
    head = "".join(lines[:line]) + match[1] + (match[2] or "") + newline
    return Planet(path, (), None, head, "".join(lines[line + 1 :]), column + 2, column + 4, newline)


def _after_last_site(doc: Any, sites: Any, lines: list[str], newline: str) -> tuple[str, str, int, int]:
    """(head, tail, dash, indent): the text up to the last site's last line, the rest, and the last site's columns.

    The list ends before the next top-level key or the document's end;
    blank and comment lines just before that stay after the new sites.
    """
    line, indent = sites.lc.item(len(sites) - 1)
    keys = list(doc)
    later = keys[keys.index("sites") + 1 :]
    end = doc.lc.key(later[0])[0] if later else len(lines)
    end = next((i for i in range(line + 1, end) if _DOCUMENT_END.match(lines[i])), end)
    while end > line + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    dash = lines[line].rfind("-", 0, indent)
    if dash < 0 or lines[line][dash + 1 : indent].strip():
        dash = max(0, indent - 2)
    head = "".join(lines[:end])
    return head if head.endswith("\n") else head + newline, "".join(lines[end:]), dash, indent


def entries_text(sites: Sequence[Site], dash: int, indent: int, newline: str = "\n") -> str:
    """YAML block-list entries for ``sites`` (``name``, ``feed``, ``link`` if any), ``-`` at column ``dash``
    and keys at column ``indent``; a value is quoted where YAML 1.1 would read it as anything but that text.

    A value that any YAML reader reads back as itself unquoted (:func:`_plain`) is written as it is;
    a site with any other value is rendered by ruamel.yaml, whose emitter costs about 1 ms a
    site (a list of 100,000 feeds took minutes).
    """
    step = max(2, indent - dash)
    out: list[str] = []
    for site in sites:
        values = [("name", site.name), ("feed", site.feed), *([("link", site.link)] if site.link else [])]
        if all(_plain(value) for _, value in values):
            keys = [
                f"{' ' * dash}{'-' if n == 0 else ' '}{' ' * (step - 1)}{key}: {value}{newline}"
                for n, (key, value) in enumerate(values)
            ]
            out.append("".join(keys))
        else:
            out.append(_dumped(dict(values), dash, step, newline))
    return "".join(out)


def _dumped(values: dict[str, str], dash: int, step: int, newline: str) -> str:
    """One entry rendered by ruamel.yaml (quoting as YAML 1.1 needs)."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.version = (1, 1)  # quote as PyYAML reads: 'yes', 'on', '1:20'
    yaml.width = 1 << 30  # never fold a long value
    yaml.indent(mapping=2, sequence=step, offset=0)
    out = StringIO()
    yaml.dump([values], out)
    lines = out.getvalue().splitlines()
    return "".join(" " * dash + line + newline for line in lines[lines.index("---") + 1 :])


#: Characters a plain value may hold after its first (a letter): word characters (Unicode letters and
#: digits), and punctuation that is an indicator only at a value's start or before a space.
_PLAIN_CHARS = re.compile(r"[\w .,/~+()?=&%;!$*:#@'\"-]*")
#: Words YAML 1.1 reads as booleans or null (PyYAML's resolver), compared in lower case.
_YAML11_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


def _plain(value: str) -> bool:
    """True when YAML (1.1 and 1.2) reads ``value`` written unquoted in block context back as that very text:
    it starts with an ASCII letter (no indicator, number, date or sexagesimal), holds only :data:`_PLAIN_CHARS`,
    has no ``": "`` or ``" #"`` and does not end with a space or colon, and is not a YAML 1.1 boolean or null."""
    return (
        value[:1].isascii()
        and value[:1].isalpha()
        and _PLAIN_CHARS.fullmatch(value, 1) is not None
        and ": " not in value
        and " #" not in value
        and value[-1] not in " :"
        and value.lower() not in _YAML11_WORDS
    )


def write(planet: Planet, sites: Sequence[Site]) -> None:
    """Add ``sites`` after the planet's last site, keeping every other byte, atomically.

    The new text goes to a temporary file beside sites.yaml (a symlink's
    target), with the file's permissions, and must load with load_config,
    listing the old sites and then exactly ``sites``; then it replaces the
    file (os.replace). On any error the file is as it was.

    Raises:
        ConfigError: the result would not be valid (load_config's message,
            naming sites.yaml), or the folder cannot be written.
    """
    text = planet.head + entries_text(sites, planet.dash, planet.indent, planet.newline) + planet.tail
    target = Path(os.path.realpath(planet.path))
    try:
        handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise ConfigError(f"{planet.path}: cannot write: {error.strerror or error}") from error
    temporary = Path(name)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(text.encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))
        _check(temporary, planet, sites)
        os.replace(temporary, target)
    except OSError as error:
        raise ConfigError(f"{planet.path}: cannot write: {error.strerror or error}") from error
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _check(temporary: Path, planet: Planet, sites: Sequence[Site]) -> None:
    try:
        config = load_config(temporary)
    except ConfigError as error:
        message = str(error).replace(str(temporary), str(planet.path))
        raise ConfigError(f"{message} (with the new sites; {planet.path} was not changed)") from None
    old = len(planet.sites)
    if [s.name for s in config.sites[:old]] != [s.name for s in planet.sites] or config.sites[old:] != tuple(sites):
        raise AssertionError(f"the new {planet.path} does not read back as written")  # a bug of ours


# --- the two commands --------------------------------------------------------------------------


def import_list(config_path: Path, source: Path, dry_run: bool = False) -> Plan:
    """``syndicator import``: add the feeds of ``source`` to ``config_path`` (unless ``dry_run``).

    Returns:
        the Plan (what was, or would be, added and skipped).
    Raises:
        ConfigError: from :func:`read_list`, :func:`open_planet` or :func:`write`; nothing is written.
    """
    candidates = read_list(source)
    planet = open_planet(config_path)
    result = plan(planet.sites, candidates, str(source))
    if result.added and not dry_run:
        write(planet, result.added)
    return result


def add_site(config_path: Path, url: str, name: str | None, now: datetime, timeout: float = 15.0) -> Site:
    """``syndicator add``: find the feed of ``url`` and add it to ``config_path`` as one site.

    Args:
        url: an http(s) URL, of a feed or of a page advertising feeds.
        name: the site's name, else the feed's title.
        now: the clock (UTC), for parsing.
        timeout: seconds, as for a build's fetches (the whole fetch: twice this).
    Returns:
        the Site added (its name made unique, as :func:`plan` does).
    Raises:
        ConfigError: sites.yaml is missing or invalid, the feed is already
            listed, or no name was given and the feed has no title.
        FeedError: the URL could not be fetched, or gives no feed.
    """
    planet = open_planet(config_path)
    if name is not None and not _clean(name):
        raise ConfigError("--name must be non-empty text")
    listed = {canonical(site.feed): site.name for site in planet.sites}
    if canonical(url) in listed:
        raise ConfigError(f"<{url}> is already listed in {config_path} as {listed[canonical(url)]!r}")
    found = fetch_site(url, now, timeout, planet.user_agent)
    if name is None and not _clean(found.name):
        raise ConfigError(f"<{found.feed}> gives no title: name the site with --name")
    result = plan(planet.sites, [Candidate(found.feed, name or found.name, found.link)], url)
    if result.skipped:
        raise ConfigError(f"{result.skipped[0].reason} in {config_path}; nothing was added")
    write(planet, result.added)
    return result.added[0]


def fetch_site(url: str, now: datetime, timeout: float = 15.0, user_agent: str | None = None) -> Candidate:
    """The feed of ``url``, fetched and parsed once as a build does (observe: fetch | parse | follow).

    A page that advertises feeds is followed to the one a build would
    follow (the first that reads, best first by :func:`discover.rank`); the
    page is then the site's home page when the feed names none.

    Returns:
        a Candidate: the feed URL (``url`` itself when it is a feed), the
        feed's title, and its home page (http(s)) or None.
    Raises:
        FeedError: the fetch or the parse failed (the message starts with the URL).
    """
    from syndicator.fetch.http import Fetcher
    from syndicator.poll.observe import job_for, observe

    with Fetcher.for_config(None, user_agent=user_agent, timeout=timeout, retries=0) as fetcher:
        seen = observe(job_for(url, None), fetcher, now, time.monotonic())
    failure = seen.failure
    if failure is not None:
        raise FeedError(failure.url, f"{failure.url}: {failure.message}", failure.kind) from failure
    if seen.parsed is None:
        raise FeedError(url, f"{url}: no feed was read")
    home = seen.parsed.link if seen.parsed.link and url_problem(seen.parsed.link) is None else None
    return Candidate(seen.followed or url, seen.parsed.title, home or (url if seen.followed else None))
