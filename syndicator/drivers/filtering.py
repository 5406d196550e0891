"""``syndicator filter test``: a dry run of the planet's filters over the stored entries.

Reads the state without its lock (a build may run) and changes nothing: it never fetches and never
writes. For every stored entry of the sites shown it gives the verdict (:func:`site.filters.verdict`) and
whether the next build publishes it, worked out by the very selection a build makes
(:func:`site.planet.select_site`), so the dry run and the build agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from syndicator.configtypes import Config, Site
from syndicator.errors import ConfigError
from syndicator.feedtypes import Entry, SelectedEntry, StoredEntry, rank
from syndicator.rules import Filters, Rule
from syndicator.site import planet
from syndicator.site.filters import Verdict, fields_needed, verdict
from syndicator.state.store import Store


@dataclass(frozen=True)
class Tried:
    """One stored entry under the filters: its site, the entry (its title, link and dates alone), the
    verdict, and whether the next build publishes it (``published``: kept, among its site's newest,
    within ``feed_entries``, and not another site's copy of a post); ``copy_of``: the name of the site
    whose published entry has the same link, when this one is not published (or None)."""

    site: Site
    stored: StoredEntry
    verdict: Verdict
    published: bool
    copy_of: str | None = None


def with_rules(config: Config, site_name: str | None, keep: Sequence[Rule], drop: Sequence[Rule]) -> Config:
    """``config`` with the rules ``keep`` and ``drop`` added to the filters of the site named ``site_name``,
    or to the planet's when None (Config).

    Raises:
        ConfigError: no site of sites.yaml has that name.
    """
    if site_name is None:
        return replace(config, filters=_added(config.filters, keep, drop))
    if site_name not in {site.name for site in config.sites}:
        raise ConfigError(f"{config.path}: no site is named {site_name!r}")
    sites = tuple(
        replace(site, filters=_added(site.filters, keep, drop)) if site.name == site_name else site
        for site in config.sites
    )
    return replace(config, sites=sites)


def _added(filters: Filters, keep: Sequence[Rule], drop: Sequence[Rule]) -> Filters:
    return Filters((*filters.keep, *keep), (*filters.drop, *drop))


def try_filters(config: Config, now: datetime, site_name: str | None = None) -> list[Tried]:
    """Every stored entry of the planet's sites (of the site named ``site_name`` alone, when given) under
    ``config``'s filters at ``now`` (UTC): site by site in sites.yaml order, newest first. An entry of a
    feed several sites name is judged by the first of them, as a build credits it.

    Raises:
        StoreError: the state database is unusable or of another version.
    """
    store = Store.open_readonly(config.cache, config.state)
    if store is None:
        return []
    try:
        selected, _ = planet.select_site(config, store, store.states(), now)
        published = {(chosen.stored.source, chosen.entry.id) for chosen in selected}
        carried = {chosen.entry.link: chosen for chosen in selected if chosen.entry.link}
        first = {site.feed: site for site in reversed(config.sites)}
        shown = {site.feed for site in config.sites if site_name in (None, site.name)}
        tried: dict[str, list[Tried]] = {}
        for url, stored in store.light_snapshots(shown, fields_needed(config) | {"title"}):
            site = first[url]
            tried[url] = [
                Tried(
                    site,
                    _light(one),
                    verdict(config, site, one, now),
                    (url, one.entry.id) in published,
                    _copy_of(carried, url, one),
                )
                for one in sorted(stored, key=rank)
            ]
    finally:
        store.close()
    return [one for url in dict.fromkeys(site.feed for site in config.sites) for one in tried.get(url, [])]


def _copy_of(carried: dict[str, SelectedEntry], url: str, stored: StoredEntry) -> str | None:
    """The name of the site that publishes the post ``stored`` (of the feed ``url``) is a copy of: an
    entry of another feed with the same link (:mod:`site.selection` rule 3); None when there is none."""
    chosen = carried.get(stored.entry.link or "")
    return chosen.site.name if chosen is not None and chosen.stored.source != url else None


def _light(stored: StoredEntry) -> StoredEntry:
    """``stored`` with its title, link and dates alone: what the dry run prints."""
    entry = stored.entry
    return replace(stored, entry=Entry(id=entry.id, title=entry.title, link=entry.link, date=entry.date))


def tried_line(tried: Tried) -> str:
    """One entry as the dry run prints it: ``KEEP  2026-11-01  Alice  Post title  (why)`` (str)."""
    word = "KEEP" if tried.verdict.keep else "DROP"
    why = tried.verdict.reason
    if tried.verdict.keep and not tried.published:
        held = tried.stored.held
        why += "; not published: " + (
            "held back from the site's first fetch (new_feed_items)"
            if held
            else f"a copy of a post {tried.copy_of} carries"
            if tried.copy_of is not None
            else "older than the newest the planet shows"
        )
    title = " ".join(tried.stored.entry.title.split()) or tried.stored.entry.link or tried.stored.entry.id
    return f"{word}  {tried.stored.date:%Y-%m-%d}  {tried.site.name}  {title}  ({why})"


def totals_line(tried: Sequence[Tried]) -> str:
    """The dry run's last line: entries judged, kept, dropped, and published by the next build (str)."""
    kept = sum(one.verdict.keep for one in tried)
    published = sum(one.published for one in tried)
    return (
        f"{len(tried)} stored entries: {kept} kept, {len(tried) - kept} dropped; "
        f"the next build publishes {published} of them"
    )
