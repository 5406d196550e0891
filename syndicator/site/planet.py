"""The planet's site from the store: select | render | swap, and what the last render published.

The site half of a build (and of each ``serve`` cycle that publishes), one
step per function, called by the drivers in this order:

- :func:`published_entries`: is the site in the output folder still what a
  render would write (:mod:`sitekey`)? Then nothing is rendered;
- :func:`select_site`: store.snapshots | filter (:mod:`filters`) | select (``items_per_feed``, the
  planet's or the site's, per feed, merge, sort, ``feed_entries`` in all), and each site's status;
- :func:`render_planet`: archive | render | swap (:mod:`archive`, :mod:`render`, :mod:`publish`),
  with the state file when ``snapshot`` is set (:mod:`statefile`);
- :func:`keep_publication`: what was published, kept in the store for the
  next build's :func:`published_entries`.

It holds no report, no log of the sites' health and no announcing to hubs:
those are the drivers' (:mod:`drivers.pipeline`). The template engine is
loaded only by :func:`render_planet`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path

from syndicator.configtypes import Config
from syndicator.feedtypes import Entry, SelectedEntry, StoredEntry
from syndicator.health import SiteStatus
from syndicator.model import SourceState
from syndicator.site.archive import archive_entries, keep_page_keys
from syndicator.site.filters import fields_needed, passes, planet_filters
from syndicator.site.selection import Condensed, condense, select_condensed, site_statuses, with_home_pages
from syndicator.site.sitekey import Publication, output_mark
from syndicator.site.theme import ARCHIVE_FOLDERS, PAGE_SUFFIXES, SEARCH_FILES, STATIC, TEMPLATES
from syndicator.state import statefile
from syndicator.state.store import Store

__all__ = [
    "PUBLISHED_KEY",
    "keep_publication",
    "local_base",
    "missing_faces",
    "planned_names",
    "filtered_snapshots",
    "published_entries",
    "render_planet",
    "select_site",
]

#: Where the store keeps what the last rendering build published (sitekey.Publication); each planet of
#: ``planets:`` keeps its own under :meth:`Config.state_key`.
PUBLISHED_KEY = "site.published"


def published_entries(config: Config, store: Store, key: str) -> int | None:
    """The number of entries in the published feed when the output folder holds what a render with
    ``key`` (:func:`sitekey.site_key`) would write, else None (render again)."""
    published = Publication.read(store.value(config.state_key(PUBLISHED_KEY)))
    if published is not None and published.current(key, config.output):
        return published.entries
    return None


def select_site(
    config: Config, store: Store, states: Mapping[str, SourceState], now: datetime
) -> tuple[list[SelectedEntry], list[SiteStatus]]:
    """The entries to publish (at most ``feed_entries``, newest first) and every site's status.

    Reads light snapshots (ids, links, dates), one source at a time, each
    reduced to what selection reads; then only the entries chosen are read
    in full. ``states`` are every stored source state, {URL: SourceState};
    ``now`` the clock of the build or cycle (UTC). A site without a ``link`` is shown with its
    feed's own home page (:func:`selection.with_home_pages`), on every page and feed.
    """
    sites = with_home_pages(config.sites, states)
    condensed = filtered_snapshots(config, store, now)
    chosen = select_condensed(sites, condensed)[: config.feed_entries]
    selected = [
        replace(entry, stored=stored)
        for entry, stored in zip(chosen, store.complete([c.stored for c in chosen]), strict=True)
    ]
    counts = {url: part.count for url, part in condensed.items()}
    # a site's last post: dated entries rank first, and an undated one of its first fetch tells no date
    firsts = {url: part.newest[0][1] for url, part in condensed.items() if part.newest}
    latest = {url: first.date for url, first in firsts.items() if first.dated}
    statuses = site_statuses(sites, states, counts, now, config.stale_after, latest, config.activity_threshold)
    return selected, statuses


def filtered_snapshots(config: Config, store: Store, now: datetime) -> dict[str, Condensed]:
    """Every listed source's snapshot (a paused site's posts stay published), one at a time, reduced to
    what selection reads, its newest taken among the entries the filters let through at ``now``
    (:func:`filters.passes`, the filters of the first site naming the feed and the planet's):
    {feed URL: Condensed}.

    Light snapshots carry only what the rules read (:func:`filters.fields_needed`); the text a keyword
    rule reads is let go once a snapshot is judged, so a build holds one snapshot's text at a time
    (on SQLite, which reads as it goes; PostgreSQL's client holds the query's whole result). A feed
    that no rule judges is not asked about.
    """
    fields = fields_needed(config)
    first = {site.feed: site for site in reversed(config.sites)}  # the first site of each feed wins
    condensed = {}
    for url, stored in store.light_snapshots(config.listed_sources, fields):
        site = first[url]
        judge = partial(passes, config, site, now=now) if planet_filters(config) or site.filters else None
        judged = condense(stored, config.items_for(url), judge)  # a site's own count
        condensed[url] = (
            replace(judged, newest=tuple((at, _light(one)) for at, one in judged.newest)) if fields else judged
        )
    return condensed


def _light(stored: StoredEntry) -> StoredEntry:
    """``stored`` without the text and fields a filter read (the entries published are read in full later)."""
    entry = stored.entry
    return replace(stored, entry=Entry(id=entry.id, link=entry.link, date=entry.date))


def render_planet(
    config: Config,
    store: Store,
    selected: list[SelectedEntry],
    statuses: list[SiteStatus],
    now: datetime,
    templates: Path | None,
) -> list[Path]:
    """render | swap the site into ``config.output``, with the state file (:mod:`statefile`) when
    ``config.snapshot`` is set; ``templates`` is a folder overriding the bundled ones, or None.

    Returns:
        the files written (their bytes changed, or they are new); empty when the output already
        held the site as rendered, and was left untouched.
    Raises:
        RenderError: the site could not be written; the output is left as it was.
    """
    from syndicator.site import render  # here: a build that renders nothing never loads jinja2

    archive = archive_entries(config, store, selected, now) if config.archive else None  # before the state file
    extra = {}
    if config.snapshot:
        path = Path(config.cache) / statefile.NAME
        extra[statefile.NAME] = statefile.write(store, path, config.link, local_base(config))
    written = render.render_site(config, selected, statuses, now, config.output, templates, extra, archive)
    if archive is not None:
        keep_page_keys(config, store, archive)
    return written


def planned_names(config: Config, templates: Path | None) -> list[str]:
    """The top-level names a render of ``config`` publishes, as far as they are known before the
    build (the older front pages, page2.html..., depend on the entries): for checking the output
    folder before anything is fetched (:func:`output.check_output`)."""
    names = [*TEMPLATES, *STATIC, "feed.json", *([statefile.NAME] if config.snapshot else [])]
    if config.archive:
        names.extend(ARCHIVE_FOLDERS)
    if config.search:
        names.extend(SEARCH_FILES)
    names.extend(["sitemap.xml", *(["robots.txt"] if config.robots != "none" else [])])
    if templates is not None:
        names.extend(page.name for page in _entries(templates) if page.name.endswith(PAGE_SUFFIXES))
    for folder in _static_paths(
        config, templates
    ):  # taken as they are: the render leaves out (and warns of) a link out of them
        names.extend(entry.name for entry in _entries(folder))
    return [name for name in names if not name.startswith(("_", "."))]


def missing_faces(config: Config, templates: Path | None) -> list[str]:
    """One warning line per site whose ``face`` is a path (not a URL) that no ``static/`` folder holds
    (the planet's, beside sites.yaml, and the ``--templates`` folder's; a folder the render refuses,
    :func:`theme.static_folders`, is said by the render itself),
    so its pages would show a broken image: e.g. the image files of a pluto planet moved in with
    ``syndicator init`` (list of str, naming sites.yaml, the site's line and the folder to put it in)."""
    folders = _static_paths(config, templates)
    lines = []
    for index, site in enumerate(config.sites):
        if site.face is None or "://" in site.face or any((folder / site.face).is_file() for folder in folders):
            continue
        lines.append(
            f"{config.path}:{site.line}: sites[{index}] {site.name!r}: its face {site.face} is not in "
            f"{config.path.parent / 'static'}; the pages show a broken image until it is there"
        )
    return lines


def _static_paths(config: Config, templates: Path | None) -> list[Path]:
    """The ``static/`` folders a render may copy, as paths, before any check of them: the planet's
    (beside sites.yaml), then the ``--templates`` folder's (:func:`theme.static_folders` checks them)."""
    return [Path(config.path).parent / "static", *([templates / "static"] if templates is not None else [])]


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    """The entries of ``folder``; none when it is missing or cannot be read (the render says why)."""
    try:
        return list(os.scandir(folder))
    except OSError:
        return []


def keep_publication(store: Store, key: str, config: Config, entries: int) -> None:
    """Keep in ``store`` what was just published into the planet's ``config.output`` (its render ``key``
    and folder mark), under the planet's own key."""
    mark = output_mark(Path(config.output))
    if mark is not None:
        store.keep(config.state_key(PUBLISHED_KEY), Publication(key, mark, entries).text())


def local_base(config: Config) -> str:
    """The ``file:`` URI of the folder of sites.yaml, where local feed files are (:mod:`statefile`)."""
    return Path(config.path).parent.resolve().as_uri()
