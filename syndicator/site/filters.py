"""Which stored entries a planet publishes: its ``filters`` and its sites' (keep and drop rules).

A filter never changes what is stored, only what a planet publishes: selection asks
:func:`passes` of every stored entry before it takes a feed's newest, so a changed filter applies to
the stored history at the next build, without a fetch. docs/filters.md says it for users.

Precedence: the site's own rules, then the planet's; within each, a ``drop`` rule that matches drops
the entry; else, when there are ``keep`` rules, an entry matching none of them is dropped. An entry is
published when both let it through. A rule matches when every kind it names matches, and a kind given
several values matches when any one does:

- ``category``: one of the entry's categories, compared :func:`values.folded` (case and accents aside);
- ``keyword``: whole words of the entry's title, summary and content as text (markup removed,
  :func:`values.words`); a phrase matches those words in a row;
- ``author``: the entry's author, compared folded;
- ``language``: a BCP 47 prefix of the site's ``language``, else the entry's own (``en`` matches ``en``
  and ``en-GB``, not ``eng``), as the pages show it;
- ``link``: a shell-style pattern of the entry's link (``*``, ``?``, ``[...]``; :func:`fnmatch.fnmatchcase`,
  whose translation cannot backtrack without end), case sensitive;
- ``older_than`` / ``newer_than``: the entry's age (its date, else when it was first seen) at the build's clock.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from functools import cached_property, lru_cache

from syndicator.configtypes import Config, Site
from syndicator.feedtypes import StoredEntry
from syndicator.rules import RULE_KINDS, Filters, Rule
from syndicator.values import bound_text, folded, words

#: The Entry fields each kind of rule reads beyond the light snapshot's id, link and dates
#: (state.snapshots.light_snapshots loads them only when a rule needs them).
FIELDS_READ = {"category": ("categories",), "author": ("author",), "language": ("language",)}
TEXT_FIELDS = ("title", "summary", "content")
#: A tag, roughly: what :attr:`_Facts.rough_untagged` takes out.
_TAG = re.compile(r"<[^<>]*>")


@dataclass(frozen=True)
class Verdict:
    """Whether an entry is published (``keep``) and why (``reason``, one line in the user's words, naming the
    rule's place in sites.yaml: ``dropped by filters.drop[0] (line 12): category 'sponsored'``)."""

    keep: bool
    reason: str


def passes(config: Config, site: Site, stored: StoredEntry, now: datetime) -> bool:
    """True when the planet ``config`` publishes ``stored``, an entry of ``site``'s feed, at ``now`` (UTC)."""
    return verdict(config, site, stored, now).keep


def verdict(config: Config, site: Site, stored: StoredEntry, now: datetime) -> Verdict:
    """Whether the planet ``config`` publishes ``stored``, an entry of ``site``'s feed, at ``now`` (UTC), and why.

    The site's rules are asked first, then the planet's (see the module docstring). ``stored`` needs the
    fields its rules read (:func:`fields_needed`); a light entry without them matches no rule of those kinds.
    """
    facts = _Facts(site, stored, now)
    reasons = []
    for filters in (site.filters, *planet_filters(config)):
        if not filters:
            continue
        said = _judge(filters, facts)
        if not said.keep:
            return said
        reasons.append(said.reason)
    return Verdict(True, "; ".join(reasons) or "kept: no filters")


def fields_needed(config: Config) -> frozenset[str]:
    """The Entry fields the rules of ``config`` and its sites read beyond id, link and dates (``title``,
    ``summary`` and ``content`` for a keyword rule), so selection loads only those (frozenset of str)."""
    needed: set[str] = set()
    for filters in (*planet_filters(config), *(site.filters for site in config.sites)):
        for rule in (*filters.keep, *filters.drop):
            for kind, names in FIELDS_READ.items():
                if getattr(rule, kind):
                    needed.update(names)
            if rule.keyword:
                needed.update(TEXT_FIELDS)
    return frozenset(needed)


def judges_age(config: Config) -> bool:
    """True when a rule of ``config`` or of its sites names an age, so its verdicts move with the clock (bool)."""
    return any(
        rule.older_than is not None or rule.newer_than is not None
        for filters in (*planet_filters(config), *(site.filters for site in config.sites))
        for rule in (*filters.keep, *filters.drop)
    )


def planet_filters(config: Config) -> tuple[Filters, ...]:
    """The planet-level filters an entry of ``config`` must pass: its own, then those of the planet it is
    a view of (``view_of``, docs/planets.md), and so on, each once; () when none has any."""
    chain: list[Filters] = []
    planet: Config | None = config
    while planet is not None:
        if planet.filters and planet.filters not in chain:
            chain.append(planet.filters)
        planet = planet.view_of
    return tuple(chain)


def _judge(filters: Filters, facts: _Facts) -> Verdict:
    """One level's verdict: a drop rule that matches drops; else a keep rule must match, when there are any."""
    for rule in filters.drop:
        matched = _match(rule, facts)
        if matched is not None:
            return Verdict(False, f"dropped by {_place(rule)}: {matched}")
    for rule in filters.keep:
        matched = _match(rule, facts)
        if matched is not None:
            return Verdict(True, f"kept by {_place(rule)}: {matched}")
    if filters.keep:
        return Verdict(False, f"dropped: matches no rule of {_place(filters.keep[0], True)}")
    return Verdict(True, f"kept: no rule of {_place(filters.drop[0], True)} drops it")


def _place(rule: Rule, whole_list: bool = False) -> str:
    """Where a rule is written: ``filters.drop[0] (line 12)``; with ``whole_list``, its list's
    (``filters.drop (line 12)``, the line of its first rule). A rule given on the command line is its text."""
    where = rule.where.rsplit("[", 1)[0] if whole_list and rule.line else rule.where or "a rule"
    return f"{where} (line {rule.line})" if rule.line else where


def _match(rule: Rule, facts: _Facts) -> str | None:
    """What of ``rule`` matched (``category 'python', keyword 'django'``), or None when any of its kinds does not."""
    said = []
    for kind in RULE_KINDS:
        values: tuple[str, ...] = getattr(rule, kind)
        if values:
            hit = next((value for value in values if facts.has(kind, value)), None)
            if hit is None:
                return None
            said.append(f"{kind} {hit!r}")
    if rule.older_than is not None:
        if facts.age <= rule.older_than:
            return None
        said.append(f"older than {bound_text(rule.older_than)}")
    if rule.newer_than is not None:
        if facts.age >= rule.newer_than:
            return None
        said.append(f"newer than {bound_text(rule.newer_than)}")
    return ", ".join(said)


class _Facts:
    """What rules read of one entry, each part worked out once and only when a rule asks."""

    def __init__(self, site: Site, stored: StoredEntry, now: datetime) -> None:
        self.site, self.stored, self.now = site, stored, now

    def has(self, kind: str, value: str) -> bool:
        """True when the entry's ``kind`` matches the rule's ``value`` (see the module docstring)."""
        entry = self.stored.entry
        if kind == "category":
            return _folded(value) in self.categories
        if kind == "keyword":
            phrase = _words(value)
            may = all(word in self.rough or word in self.rough_untagged for word in phrase)
            return may and f" {' '.join(phrase)} " in self.text
        if kind == "author":
            return entry.author is not None and folded(entry.author) == _folded(value)
        if kind == "language":
            tag = (self.site.language or entry.language or "").lower()
            return tag == value.lower() or tag.startswith(value.lower() + "-")
        return entry.link is not None and fnmatchcase(entry.link, value)

    @cached_property
    def categories(self) -> frozenset[str]:
        return frozenset(folded(category) for category in self.stored.entry.categories)

    @cached_property
    def rough(self) -> str:
        """The entry's title, summary and content as written, references decoded, :func:`values.folded`:
        every word of its text is in this or in :attr:`rough_untagged` (a word an inline tag splits,
        ``ma<b>chine</b>``), so a keyword in neither is not looked for in the text, and most entries
        are judged without reading their markup (str)."""
        entry = self.stored.entry
        return folded(html.unescape(f"{entry.title} {entry.summary} {entry.content}"))

    @cached_property
    def rough_untagged(self) -> str:
        """:attr:`rough` with everything between ``<`` and ``>`` taken out (str)."""
        entry = self.stored.entry
        return folded(html.unescape(_TAG.sub("", f"{entry.title} {entry.summary} {entry.content}")))

    @cached_property
    def text(self) -> str:
        """The words of the entry's title, summary and content, one space apart and around, the three parts
        apart by ``|`` (no word holds one), so that a phrase never runs from one into the next (str)."""
        from syndicator.parse.sanitize import html_to_text  # noqa: PLC0415 - a build without keywords never loads nh3

        entry = self.stored.entry
        parts = [entry.title, html_to_text(entry.summary), html_to_text(entry.content)]
        return " | ".join(f" {' '.join(words(part))} " for part in parts)

    @cached_property
    def age(self) -> float:
        """Seconds from the entry's date (else its first-seen time) to the build's clock."""
        return (self.now - self.stored.date).total_seconds()


@lru_cache(maxsize=4096)
def _folded(value: str) -> str:
    return folded(value)


@lru_cache(maxsize=4096)
def _words(value: str) -> tuple[str, ...]:
    return tuple(words(value))
