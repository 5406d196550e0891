"""The archive as pages see it: a planet's archived entries (:mod:`state.archive`) grouped by month,
by site and by category, each group with a stable file name. Pure but for :func:`archive_entries`.

- :func:`archive_entries` adds one publication to the planet's archive and reads it back as
  :class:`SelectedEntry` values (newest first), each credited to the first site naming its feed;
  a site no longer in sites.yaml keeps its rows but is not shown, and an entry the planet's filters
  now drop is left out (a filter changed after it was published takes it off the archive too);
- :func:`archive_view` groups them: ``months`` by the planet's time zone (``archive/2026-11.html``),
  ``sites`` and ``categories`` by slug (``sites/ned-batchelder/``, ``categories/python/``).

Slugs come from python-slugify (every script transliterated: "Łukasz" is ``lukasz``); a name that
makes no slug is ``site`` (``category``), and names that make the same slug take ``-2``, ``-3`` in
the order of their first publication, so a slug never moves once given while the archive holds it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from slugify import slugify

from syndicator.configtypes import Config, Site
from syndicator.feedtypes import SelectedEntry
from syndicator.site.filters import passes, planet_filters
from syndicator.state.store import Store

#: The store's key of a planet's archive (:meth:`Config.state_key`).
ARCHIVE_KEY = "archive"
#: The store's key of the keys of the archive pages last published (:class:`Archive`).
PAGES_KEY = "archive.pages"
#: Longest slug, in characters (a file name on every file system).
SLUG_CHARS = 60


@dataclass
class Group:
    """One archive page's entries: its ``slug`` (file or folder name), ``label`` (shown), and
    ``entries`` (list of (seq, SelectedEntry), newest first)."""

    slug: str
    label: str
    entries: list[tuple[int, SelectedEntry]] = field(default_factory=list)
    site: Site | None = None


@dataclass
class Archive:
    """A planet's archive as a render takes it: ``entries`` ((seq, SelectedEntry), newest first),
    ``digests`` {seq: digest of its row}, ``previous`` {page or folder: its key} of the last render
    (:mod:`archivepages` reuses the files whose key is the same), ``keys`` the same of this render
    (filled by it, kept in the store by :func:`keep_page_keys`)."""

    entries: list[tuple[int, SelectedEntry]]
    digests: dict[int, str] = field(default_factory=dict)
    previous: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)


@dataclass
class ArchiveView:
    """A planet's archive grouped for its pages: ``months`` {"2026-11": Group}, ``sites`` {feed URL:
    Group}, ``categories`` {folded label: Group}, and ``entries`` (list of (seq, SelectedEntry), newest
    first); ``month_of`` gives an entry's month, :meth:`category` a category's group, and ``digests``
    {seq: row digest} key the pages (:class:`archivepages.Reuse`)."""

    entries: list[tuple[int, SelectedEntry]]
    months: dict[str, Group]
    sites: dict[str, Group]
    categories: dict[str, Group]
    month_of: Callable[[datetime], str]
    digests: dict[int, str] = field(default_factory=dict)

    def category(self, label: str) -> Group | None:
        """The group of category ``label`` (any case), or None."""
        return self.categories.get(label.casefold())


def archive_entries(config: Config, store: Store, published: Sequence[SelectedEntry], now: datetime) -> Archive:
    """Add ``published`` (the entries the planet publishes now, newest first) to the planet's archive
    and read it back: (seq, SelectedEntry) of every archived entry still shown, newest first, their
    digests, and the keys of the pages the last render published (:class:`Archive`).

    With ``archive_days``, entries dated before that many days ago (UTC) are neither added nor kept.

    Raises:
        StoreError: the archive cannot be written.
    """
    before = now - timedelta(days=config.archive_days) if config.archive_days else None
    fresh = [(s.stored, s.date) for s in published if before is None or s.date >= before]
    key = config.state_key(ARCHIVE_KEY)
    store.archive(key, fresh, before)
    first = {site.feed: site for site in reversed(config.sites)}  # the first site of each feed wins
    judged = bool(planet_filters(config) or any(site.filters for site in config.sites))
    shown, digests = [], {}
    for item in store.archived(key, frozenset(first)):
        site = first[item.stored.source]
        if judged and not passes(config, site, item.stored, now):
            continue
        shown.append((item.seq, SelectedEntry(site=site, stored=item.stored, shown=item.date)))
        digests[item.seq] = item.digest
    shown.sort(key=lambda pair: (pair[1].date, pair[0]), reverse=True)
    previous = json.loads(store.value(config.state_key(PAGES_KEY)) or "{}")
    return Archive(shown, digests, previous if isinstance(previous, dict) else {})


def keep_page_keys(config: Config, store: Store, archive: Archive) -> None:
    """Keep the keys of the archive's pages just published (:attr:`Archive.keys`) for the next render."""
    store.keep(config.state_key(PAGES_KEY), json.dumps(archive.keys, sort_keys=True))


def archive_view(config: Config, archive: Archive) -> ArchiveView:
    """The archive's entries grouped by month, site and category."""
    entries = archive.entries
    zone = ZoneInfo(config.timezone)

    def month_of(moment: datetime) -> str:
        return moment.astimezone(zone).strftime("%Y-%m")

    months: dict[str, Group] = {}
    sites: dict[str, Group] = {}
    categories: dict[str, Group] = {}
    for seq, selected in entries:
        month = month_of(selected.date)
        months.setdefault(month, Group(month, month)).entries.append((seq, selected))
        site = selected.site
        sites.setdefault(site.feed, Group("", site.name, site=site)).entries.append((seq, selected))
        for label in selected.entry.categories:
            categories.setdefault(label.casefold(), Group("", label)).entries.append((seq, selected))
    _give_slugs(sites.values(), "site")
    _give_slugs(categories.values(), "category")
    return ArchiveView(entries, months, sites, categories, month_of, archive.digests)


def _give_slugs(groups: Iterable[Group], fallback: str) -> None:
    """Give each group a unique slug of its label, the group first published first keeping the plain one."""
    taken: set[str] = set()
    for group in sorted(groups, key=lambda g: min(seq for seq, _ in g.entries)):
        plain = slugify(group.label, max_length=SLUG_CHARS, word_boundary=True) or fallback
        slug, number = plain, 1
        while slug in taken:
            number += 1
            slug = f"{plain}-{number}"
        taken.add(slug)
        group.slug = slug
