"""Stored snapshots -> the merged stream. Pure: values in, values out.

Rules (seed 004, and the entries issue for duplicates):

0. Only the entries the planet's filters let through are candidates (site/filters.py, applied by
   :func:`condense`), so a dropped entry leaves room for the next one.
1. Each source contributes its ``items_per_feed`` newest entries (default 5; the
   first site naming it may give its own);
   "newest" uses the entry's date, else its first-seen time. Entries held
   back from its first fetch (``new_feed_items``) are never published.
2. A source named by several sites counts once and is credited to the first
   of those sites in sites.yaml.
3. The same post reached through two sources shows once. Two entries of
   *different* sources are the same post when their canonical links are
   equal (scheme aside) or their ids are equal global URIs (fingerprints
   excepted). Entries of one source are distinct posts by their identity
   (identity.py), so the rule never merges them: a podcast whose episodes
   all link to the show's page keeps every episode. A link or id that
   several entries of one source share names no single post, so it is not
   compared with other sources either. The copy shown, and the site
   credited, is the one from the site whose home page is on the post's
   host (``www.`` aside); when no site or several do, the one from the
   site listed first in sites.yaml.
4. The merged list is sorted newest first; ties are broken by site order in
   sites.yaml, then by position in the feed, so output is deterministic.
5. An undated entry of a source's first fetch has no date of its own: its
   first-seen time says when the planet took the site in, not when it was
   posted. It ranks below every dated entry and is published with the date
   one second before the oldest dated entry selected (or its first-seen time,
   if older), never as today's news (docs/first-fetch.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from syndicator.configtypes import Site
from syndicator.feedtypes import SelectedEntry, StoredEntry, newest, rank
from syndicator.health import SiteStatus
from syndicator.model import SourceState
from syndicator.urls import canonical, hostname, plain_web, split
from syndicator.values import url_problem

_GLOBAL_ID = re.compile(r"^(?!urn:sha256:)[A-Za-z][A-Za-z0-9+.-]*:\S+$")


@dataclass(frozen=True)
class Condensed:
    """What selection needs of one feed's snapshot (:func:`condense`).

    Attributes:
        newest: (position in the snapshot, entry) of its ``items_per_feed``
            newest entries, newest first (:func:`feedtypes.newest`).
        shared: post keys held by more than one of its entries (rule 3).
        count: entries in the snapshot.
    """

    newest: tuple[tuple[int, StoredEntry], ...] = ()
    shared: frozenset[str] = frozenset()
    count: int = 0


def condense(
    stored: Sequence[StoredEntry], items_per_feed: int, published: Callable[[StoredEntry], bool] | None = None
) -> Condensed:
    """One feed's snapshot reduced to what selection reads, so that a build holds one whole snapshot at a time.

    Args:
        stored: the snapshot, in document order; ids, links and dates suffice (and what the filters read).
        items_per_feed: how many newest entries the feed contributes.
        published: the planet's filters (site/filters.py): True for an entry they let through. The newest
            are taken among those, so a dropped entry leaves room for the next; None: every entry.
    """
    kept = list(range(len(stored))) if published is None else [i for i, one in enumerate(stored) if published(one)]
    chosen = [kept[i] for i in newest([stored[i] for i in kept], items_per_feed)]
    return Condensed(
        tuple((position, stored[position]) for position in chosen), frozenset(_shared_keys(stored)), len(stored)
    )


def select_entries(
    sites: Sequence[Site], snapshots: Mapping[str, Sequence[StoredEntry]], items_per_feed: int
) -> list[SelectedEntry]:
    """Choose and merge entries for output.

    Args:
        sites: the configured sites, in file order.
        snapshots: {configured feed URL: stored entries in document order};
            only the ``items_per_feed`` newest (:func:`feedtypes.newest`) need
            their text, the others only their id, link and dates.
        items_per_feed: how many newest entries each source contributes.
    Returns:
        SelectedEntry values, newest first, each post once.
    """
    return select_condensed(sites, {feed: condense(stored, items_per_feed) for feed, stored in snapshots.items()})


def select_condensed(sites: Sequence[Site], condensed: Mapping[str, Condensed]) -> list[SelectedEntry]:
    """:func:`select_entries` from snapshots already reduced by :func:`condense` ({feed URL: Condensed})."""
    order: dict[str, int] = {}
    credited: dict[str, Site] = {}
    for index, site in enumerate(sites):
        if site.feed not in credited:
            credited[site.feed] = site
            order[site.feed] = index
    candidates: list[tuple[tuple[bool, float], int, int, SelectedEntry]] = []
    for feed, site in credited.items():
        for position, stored in condensed.get(feed, Condensed()).newest:
            candidates.append((rank(stored), order[feed], position, SelectedEntry(site, stored)))
    candidates.sort(key=lambda c: (c[0], c[1], c[2]))
    ambiguous = {feed: condensed.get(feed, Condensed()).shared for feed in credited}
    chosen = _one_per_post([c[3] for c in candidates], order, ambiguous)
    return _below_dated([c[3] for c in candidates if id(c[3]) in chosen])


def _below_dated(selected: list[SelectedEntry]) -> list[SelectedEntry]:
    """``selected`` with each undated entry of a first fetch shown one second before the oldest dated
    entry, or at its first-seen time if that is older (rule 5); as it was when none is dated."""
    floor = min((entry.date for entry in selected if entry.stored.dated), default=None)
    if floor is None:
        return selected
    below = floor - timedelta(seconds=1)
    return [entry if entry.stored.dated else replace(entry, shown=min(below, entry.date)) for entry in selected]


def _one_per_post(
    entries: list[SelectedEntry], order: Mapping[str, int], ambiguous: Mapping[str, frozenset[str]]
) -> set[int]:
    """Python ids of the entries to keep: one copy of each post that several sources carry (rule 3).

    Entries are taken in order of preference (the site owning the post's
    host, then sites.yaml order, then newest first); an entry whose post key
    another source already claimed is a copy and is dropped, and its other
    keys go to that source, so a chain of copies stays one post. An entry
    is never dropped for an entry of its own source.
    """
    claimed: dict[str, str] = {}  # post key -> the source whose copy is shown
    kept: set[int] = set()
    ranked = sorted(range(len(entries)), key=lambda i: (not _owns(entries[i]), order[entries[i].site.feed], i))
    for index in ranked:
        selected = entries[index]
        source = selected.site.feed
        keys = [key for key in _post_keys(selected) if key not in ambiguous[source]]
        owners = [claimed[key] for key in keys if key in claimed and claimed[key] != source]
        if not owners:
            kept.add(id(selected))
        for key in keys:
            claimed.setdefault(key, owners[0] if owners else source)
    return kept


def _shared_keys(stored: Sequence[StoredEntry]) -> set[str]:
    """Post keys held by more than one entry of one source: they name no single post."""
    seen: set[str] = set()
    shared: set[str] = set()
    for entry in stored:
        for key in _keys(entry.entry.link, entry.entry.id):
            (shared if key in seen else seen).add(key)
    return shared


def _post_keys(selected: SelectedEntry) -> list[str]:
    return _keys(selected.entry.link, selected.entry.id)


def _keys(link: str | None, entry_id: str) -> list[str]:
    keys = []
    if link:
        keys.append("link:" + canonical(link).split(":", 1)[-1])
    # "http://[oops/1" is no URI; one without "//" has no authority, the only part urllib refuses.
    if _GLOBAL_ID.match(entry_id) and ("//" not in entry_id or plain_web(entry_id) or split(entry_id) is not None):
        keys.append("id:" + entry_id)
    return keys


def _owns(selected: SelectedEntry) -> bool:
    """True if the post's host is the host of its site's home page (``www.`` aside)."""
    link, home = selected.entry.link, selected.site.link
    if not link or not home:
        return False
    return _host(home) == _host(link)


def _host(url: str) -> str:
    return hostname(url).removeprefix("www.")


def with_home_pages(sites: Sequence[Site], states: Mapping[str, SourceState]) -> tuple[Site, ...]:
    """The sites, each one that sites.yaml gives no ``link`` given its feed's own home page, when the
    feed names one that is an http(s) URL (:func:`values.url_problem`): RSS ``<link>``, Atom's
    ``rel="alternate"`` link, JSON Feed's ``home_page_url``, as the last good fetch stored it
    (:attr:`model.SourceState.link`). Venus lists only a name per feed, and its pages linked each
    one to its feed's ``<link>`` in the same way.

    Args:
        states: {configured feed URL: SourceState}; a site whose feed has none keeps no link.
    """
    linked = []
    for site in sites:
        state = states.get(site.feed)
        home = state.link.strip() if site.link is None and state is not None and state.link else None
        linked.append(replace(site, link=home) if home and url_problem(home) is None else site)
    return tuple(linked)


def site_statuses(
    sites: Sequence[Site],
    states: Mapping[str, SourceState],
    counts: Mapping[str, int],
    now: datetime,
    stale_after: float,
    latest: Mapping[str, datetime] | None = None,
    activity_threshold: float | None = None,
) -> list[SiteStatus]:
    """Health of every site for the sites page, in sites.yaml order.

    Args:
        states: {configured feed URL: SourceState}.
        counts: {configured feed URL: entries stored}; a missing URL counts 0.
        latest: {configured feed URL: date of its newest entry (UTC)}; a missing URL has none.
        activity_threshold: seconds without a post after which a site with
            entries is inactive; None: none is.
        now: the build's clock (UTC).
        stale_after: seconds without success before a site is stale.
    Returns:
        one SiteStatus per site; ``stale`` is True when the last success is
        older than ``stale_after``, or when attempts failed and none ever
        succeeded (never for a paused site).
    """
    limit = now - timedelta(seconds=stale_after)
    result = []
    for site in sites:
        state = states.get(site.feed)
        if state is None or not site.enabled:  # a paused site is not checked: its copy is not late
            stale = False
        elif state.last_success is None:
            stale = state.last_attempt is not None
        else:
            stale = state.last_success < limit
        last_post = (latest or {}).get(site.feed)
        inactive = (
            activity_threshold is not None
            and last_post is not None
            and last_post < now - timedelta(seconds=activity_threshold)
        )
        result.append(SiteStatus(site, state, stale, counts.get(site.feed, 0), last_post, inactive))
    return result
