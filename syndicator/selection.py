"""Stored snapshots -> the merged stream. Pure: values in, values out.

Rules (seed 004, and issue 4 for duplicates):

1. Each source contributes its ``items_per_feed`` newest entries (default 5);
   "newest" uses the entry's date, else its first-seen time.
2. A source named by several sites counts once and is credited to the first
   of those sites in sites.yaml.
3. The same post reached through two sources (equal canonical links, or
   equal ids that are URIs) shows once, with the newest copy's date and text; it is
   credited to the site whose home page is on the post's host, else to the
   site listed first in sites.yaml.
4. The merged list is sorted newest first; ties are broken by site order in
   sites.yaml, then by position in the feed, so output is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from .identity import canonical_url
from .model import SelectedEntry, Site, SiteStatus, SourceState, StoredEntry

#: An id with a URI scheme (tag:, urn:, http:) names one post everywhere; any other id
#: ("1", "post-42") is only unique within its own feed.
_GLOBAL_ID = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


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
    return _drop_duplicate_links(c[3] for c in candidates)


def _drop_duplicate_links(entries: Iterable[SelectedEntry]) -> list[SelectedEntry]:
    """Keep each post once: a later entry with a seen canonical link or id is dropped."""
    kept: list[SelectedEntry] = []
    by_key: dict[str, int] = {}
    for selected in entries:
        keys = [f"id:{selected.entry.id}"] if _GLOBAL_ID.match(selected.entry.id) else []
        if selected.entry.link:
            keys.append(f"link:{canonical_url(selected.entry.link)}")
        index = next((by_key[key] for key in keys if key in by_key), None)
        if index is None:
            for key in keys:
                by_key[key] = len(kept)
            kept.append(selected)
            continue
        link = selected.entry.link
        if link and _owns(selected.site, link) and not _owns(kept[index].site, link):
            kept[index] = SelectedEntry(selected.site, kept[index].stored)
    return kept


def _owns(site: Site, link: str) -> bool:
    """True if the post's host is the host of the site's home page."""
    if not site.link:
        return False
    return (urlsplit(site.link).hostname or "").lower() == (urlsplit(link).hostname or "").lower()


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
