"""Stored snapshots -> the merged stream. Pure: values in, values out.

Rules (seed 004, and the entries issue for duplicates):

1. Each source contributes its ``items_per_feed`` newest entries (default 5);
   "newest" uses the entry's date, else its first-seen time.
2. A source named by several sites counts once and is credited to the first
   of those sites in sites.yaml.
3. The same post reached through two sources shows once. Two entries are
   the same post when their canonical links are equal (scheme aside) or
   their ids are equal global URIs (fingerprints excepted). The copy shown,
   and the site credited, is the one from the site whose home page is on
   the post's host (``www.`` aside); when no site or several do, the one
   from the site listed first in sites.yaml.
4. The merged list is sorted newest first; ties are broken by site order in
   sites.yaml, then by position in the feed, so output is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from .identity import canonical_url
from .model import SelectedEntry, Site, SiteStatus, SourceState, StoredEntry

_GLOBAL_ID = re.compile(r"^(?!urn:sha256:)[A-Za-z][A-Za-z0-9+.-]*:\S+$")


def select_entries(sites: Sequence[Site], snapshots: Mapping[str, Sequence[StoredEntry]],
                   items_per_feed: int) -> list[SelectedEntry]:
    """Choose and merge entries for output.

    Args:
        sites: the configured sites, in file order.
        snapshots: {configured feed URL: stored entries in document order}.
        items_per_feed: how many newest entries each source contributes.
    Returns:
        SelectedEntry values, newest first, each post once.
    """
    order: dict[str, int] = {}
    credited: dict[str, Site] = {}
    for index, site in enumerate(sites):
        if site.feed not in credited:
            credited[site.feed] = site
            order[site.feed] = index
    candidates: list[tuple[datetime, int, int, SelectedEntry]] = []
    for feed, site in credited.items():
        stored = list(snapshots.get(feed, ()))
        ranked = sorted(range(len(stored)), key=lambda i: (-stored[i].date.timestamp(), i))
        for position in ranked[:items_per_feed]:
            candidates.append((stored[position].date, order[feed], position,
                               SelectedEntry(site, stored[position])))
    candidates.sort(key=lambda c: (-c[0].timestamp(), c[1], c[2]))
    chosen = _one_per_post([c[3] for c in candidates], order)
    return [c[3] for c in candidates if id(c[3]) in chosen]


def _one_per_post(entries: list[SelectedEntry], order: Mapping[str, int]) -> set[int]:
    """Python ids of the entries to keep: one per group of copies of the same post (rule 3)."""
    parent = list(range(len(entries)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[str, int] = {}
    for index, selected in enumerate(entries):
        for key in _post_keys(selected):
            if key in first_with:
                parent[root(index)] = root(first_with[key])
            else:
                first_with[key] = index
    groups: dict[int, list[int]] = {}
    for index in range(len(entries)):
        groups.setdefault(root(index), []).append(index)
    kept = set()
    for members in groups.values():
        best = min(members, key=lambda i: (not _owns(entries[i]), order[entries[i].site.feed], i))
        kept.add(id(entries[best]))
    return kept


def _post_keys(selected: SelectedEntry) -> list[str]:
    keys = []
    if selected.entry.link:
        keys.append("link:" + canonical_url(selected.entry.link).split(":", 1)[-1])
    if _GLOBAL_ID.match(selected.entry.id):
        keys.append("id:" + selected.entry.id)
    return keys


def _owns(selected: SelectedEntry) -> bool:
    """True if the post's host is the host of its site's home page (``www.`` aside)."""
    link, home = selected.entry.link, selected.site.link
    if not link or not home:
        return False
    return _host(home) == _host(link)


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host.removeprefix("www.")


def site_statuses(sites: Sequence[Site], states: Mapping[str, SourceState],
                  snapshots: Mapping[str, Sequence[StoredEntry]], now: datetime,
                  stale_after: float) -> list[SiteStatus]:
    """Health of every site for the sites page, in sites.yaml order.

    Args:
        states: {configured feed URL: SourceState}.
        now: the build's clock (UTC).
        stale_after: seconds without success before a site is stale.
    Returns:
        one SiteStatus per site; ``stale`` is True when the last success is
        older than ``stale_after``, or when attempts failed and none ever
        succeeded.
    """
    limit = now - timedelta(seconds=stale_after)
    result = []
    for site in sites:
        state = states.get(site.feed)
        if state is None:
            stale = False
        elif state.last_success is None:
            stale = state.last_attempt is not None
        else:
            stale = state.last_success < limit
        result.append(SiteStatus(site, state, stale, len(snapshots.get(site.feed, ()))))
    return result
