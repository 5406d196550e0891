"""Entries + site statuses -> the published folder: every page, feed and file of the site.

The pages (index.html and its older pages page2.html..., sites.html), the
Atom feed (feed.xml, RFC 4287) and opml.xml (OPML 2.0) are templates
(:mod:`templating`) given the same context: the planet's settings, the
page entries (:mod:`pageentry`), the sites' statuses and totals, the
clock. feed.json (JSON Feed 1.1) is written by :mod:`jsonfeed`; style.css,
a theme's own pages and the ``static/`` folders come from :mod:`theme`.
Every file is written into a staging folder, the pages piece by piece as
templates produce them (a feed.xml of 1,000 entries is never whole in
memory); then :mod:`publish` swaps the whole folder in at once, so a
failure leaves the previous output exactly as it was. The same entries and
statuses give byte-identical files, whatever the clock (the pages show the
newest entry's time, not the build's), and :mod:`publish` writes only the
files whose bytes changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from email.utils import format_datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syndicator import __version__
from syndicator.configtypes import Config
from syndicator.dates import isoformat
from syndicator.failures import KINDS
from syndicator.feedtypes import SelectedEntry
from syndicator.health import SiteStatus, by_health
from syndicator.language import direction
from syndicator.site.archive import Archive, ArchiveView, archive_view
from syndicator.site.archivepages import Links, Reuse, archive_files
from syndicator.site.jsonfeed import json_feed
from syndicator.site.locales import PageDates, catalogue_folders, month_namer, translations
from syndicator.site.pageentry import PageEntry, page_entry
from syndicator.site.publish import publish
from syndicator.site.search import search_documents, search_files
from syndicator.site.sitekey import site_key, template_folders
from syndicator.site.sitemap import robots_txt, sitemap_files
from syndicator.site.templating import environment, rendered, template_text
from syndicator.site.theme import OLD_FEED_TEMPLATES, STATIC, TEMPLATES, static_files, static_folders, theme_pages
from syndicator.values import bound_text

if TYPE_CHECKING:
    import jinja2

#: The old feeds (``old_feeds``) the front pages name as rel=alternate: {file: (media type, format)};
#: foafroll.xml lists people, not posts.
_OLD_FEED_TYPES = {
    "rss20.xml": ("application/rss+xml", "RSS 2.0"),
    "rss10.xml": ("application/rdf+xml", "RSS 1.0"),
    "atom.xml": ("application/atom+xml", "Atom"),
}
#: One front-page page: (its file name, its entries).
_Page = tuple[str, Sequence[PageEntry]]


def render_site(
    config: Config,
    entries: Sequence[SelectedEntry],
    statuses: Sequence[SiteStatus],
    now: datetime,
    output: Path,
    templates: Path | None = None,
    extra: Mapping[str, Path] | None = None,
    archive: Archive | None = None,
) -> list[Path]:
    """Write the whole site to ``output``, atomically.

    Args:
        config: the planet's settings (title, link, feed_entries).
        entries: the merged stream, newest first.
        statuses: one per site, for the sites page.
        now: the build's clock (UTC); the pages show the newest entry's time instead (:func:`_context`).
        output: the folder to publish into (replaced as a whole); a symlink
            is followed, so it keeps pointing at the published folder.
        templates: a folder whose templates override the bundled ones.
        extra: {name in the site: file} published as they are (the state
            file, statefile.py); a page of the same name wins.
        archive: the planet's archive (:func:`archive.archive_entries`), published as pages and feeds
            (:mod:`archivepages`; the keys of the pages are left in ``archive.keys``); None: it keeps none.
    Returns:
        the paths written, inside ``output``.
    Raises:
        RenderError: a template fails or the folder cannot be written; the
            previous output is left in place.
    """
    local = PageDates(config.timezone, config.date_format, config.language or "en")
    page_entries = [
        page_entry(selected, config.summary_chars, local, local.heading) for selected in entries[: config.feed_entries]
    ]
    context = _context(config, page_entries, statuses, now)
    pages = _pages(page_entries, config.page_entries)
    context.update(_page_context(pages, 0))
    folders = template_folders(templates)
    words = translations(config.language or "en", catalogue_folders(templates))
    env = environment(folders, local, context["base"], words)
    files: dict[str, str | Iterable[str] | Path] = {}
    view = archive_view(config, archive) if archive is not None else None
    context["archive"] = Links(view) if view is not None else None
    for folder in static_folders(config, templates):
        files.update(static_files(folder))
    files.update(extra or {})
    files.update(_theme_files(env, context, folders, templates, config.old_feeds))
    for index in range(1, len(pages)):
        files[pages[index][0]] = rendered(env, "index.html", {**context, **_page_context(pages, index)}, folders)
    files["feed.json"] = json_feed(config, context["base"], page_entries)
    reuse = None
    if archive is not None and view is not None:
        reuse = Reuse(output, _reuse_base(config, templates, now, view), archive.previous, archive.keys)
    files.update(_archive_and_search(config, env, context, folders, view, page_entries, reuse))
    files.update(_for_crawlers(config, context["base"], files))
    return publish(output, files)


def _for_crawlers(config: Config, base: str, files: Mapping[str, object]) -> dict[str, str]:
    """sitemap.xml (every page of ``files``) and robots.txt (:mod:`sitemap`); a theme's own win."""
    made: dict[str, str] = dict(sitemap_files(base, files))
    robots = robots_txt(config.robots, base)
    if robots is not None:
        made["robots.txt"] = robots
    return {name: text for name, text in made.items() if name not in files}


def _archive_and_search(
    config: Config,
    env: jinja2.Environment,
    context: dict[str, Any],
    folders: Sequence[Path],
    view: ArchiveView | None,
    front: Sequence[PageEntry],
    reuse: Reuse | None,
) -> dict[str, str | Iterable[str] | Path]:
    """The archive's pages and feeds (:mod:`archivepages`) when the planet keeps one, and the search page,
    its script and index (:mod:`search`) when ``search`` is on: over the archive (each entry found at
    its place there), else over the ``front`` entries (found at their own link)."""
    files: dict[str, str | Iterable[str] | Path] = {}
    local = env.filters["local"]
    selected = dict(view.entries) if view is not None else {}
    shown = _Shown(lambda seq: page_entry(selected[seq], config.summary_chars, local, local.heading))
    if view is not None and reuse is not None:
        files.update(archive_files(config, view, context, partial(_render, env, folders), shown, reuse))
    if config.search:
        if view is not None:
            links = context["archive"]
            documents = search_documents([shown[seq] for seq in sorted(selected)], links.entry)
        else:
            documents = search_documents(reversed(front), lambda e: e.link or "index.html")
        files.update(search_files(documents))
        page = {**context, "path": "search.html", "script_policy": "'self'", "form_policy": "'self'"}
        files["search.html"] = rendered(env, "search.html", page, folders)
        files["search.js"] = template_text(env, "search.js", folders)
    return files


class _Shown(dict[int, PageEntry]):
    """{seq: the archived entry as pages show it}, each made when first asked for (``make(seq)``): the
    archive's pages that are not rendered again read none of theirs."""

    def __init__(self, make: Callable[[int], PageEntry]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, seq: int) -> PageEntry:
        self[seq] = self._make(seq)
        return self[seq]


def _reuse_base(config: Config, templates: Path | None, now: datetime, view: ArchiveView | None) -> str:
    """What every archive page's key holds but its entries (:class:`archivepages.Reuse`): the settings,
    templates and version (:func:`sitekey.site_key`, without the state) and every slug (a page links
    other sites' and categories' pages)."""
    slugs = repr(sorted(g.slug for g in (*view.sites.values(), *view.categories.values()))) if view else ""
    return site_key(config, templates, 0, (), now) + slugs


def _render(env: jinja2.Environment, folders: Sequence[Path], name: str, context: dict[str, Any]) -> Iterator[str]:
    """Template ``name`` rendered with ``context`` in pieces (:func:`templating.rendered`)."""
    return rendered(env, name, context, folders)


def _context(
    config: Config, entries: Sequence[PageEntry], statuses: Sequence[SiteStatus], now: datetime
) -> dict[str, Any]:
    """What every template reads: the planet, its entries and sites, the clock; not the page's own
    part (:func:`_page_context`).

    The time the pages show as "Updated" (``updated``, and as text ``generated``, ``feed_updated``,
    ``rfc822``) is the newest entry's updated time, not the clock: a build that changed no entry
    shows the same time, so it writes the same bytes (publish.py then writes nothing). ``now`` is
    the build's clock, for templates that want it (a page showing it is written on every build).
    """
    updated = max((e.updated for e in entries), default=isoformat(now))
    moment = datetime.fromisoformat(updated).astimezone(UTC)
    return {
        "planet": config,
        "entries": entries,
        "sites": statuses,
        "sites_by_health": by_health(statuses),
        "totals": _totals(statuses),
        "stale_after": bound_text(config.stale_after),
        "activity_threshold": bound_text(config.activity_threshold),
        "now": now,
        # feed.xml's own name and hubs: atom.xml (old_feeds) is the same feed under another name, told to no hub.
        "feed_file": "feed.xml",
        "feed_hubs": config.hubs,
        # A feed's own title, id and home page; RFC 5005 links ((rel, href)) and fh:archive: an archive's
        # feeds (archivepages.py) set their own.
        "feed_title": config.title,
        "feed_id": config.link if config.link.endswith("/") else config.link + "/",
        "feed_home": config.link,
        "feed_paging": [],
        "feed_archive": False,
        "generated": updated,
        "updated": moment,
        "feed_updated": updated,
        "rfc822": format_datetime(moment, usegmt=True),
        "version": __version__,
        "failure_advice": {name: kind.advice for name, kind in KINDS.items() if kind.advice},
        "base": config.link if config.link.endswith("/") else config.link + "/",
        "page_language": config.language or "en",
        "page_direction": direction(config.language or "en"),
        "month_name": month_namer(config.language or "en"),
        # The page's place in the site: ``path`` its file ("archive/2026-11.html"), ``root`` the way back to
        # the site's top from it ("", "../", "../../"), put before every link to another file of the site.
        "path": "index.html",
        "root": "",
        # The page's Content-Security-Policy for scripts and forms: none but on the search page.
        "script_policy": "'none'",
        "form_policy": "'none'",
        # The feeds of the page (rel=alternate): {"type", "title", "href"}, ``href`` from the site's top.
        "page_feeds": _front_feeds(config),
    }


def _front_feeds(config: Config) -> list[dict[str, str]]:
    """The feeds the front pages name as rel=alternate: feed.xml, feed.json and the old feeds of posts."""
    return [
        {"type": "application/atom+xml", "title": f"{config.title} (Atom)", "href": "feed.xml"},
        {"type": "application/feed+json", "title": f"{config.title} (JSON Feed)", "href": "feed.json"},
        *(
            {
                "type": _OLD_FEED_TYPES[name][0],
                "title": f"{config.title} ({_OLD_FEED_TYPES[name][1]})",
                "href": name,
            }
            for name in config.old_feeds
            if name in _OLD_FEED_TYPES
        ),
    ]


def _theme_files(
    env: jinja2.Environment,
    context: dict[str, Any],
    folders: Sequence[Path],
    templates: Path | None,
    old_feeds: Sequence[str],
) -> dict[str, str | Iterator[str]]:
    """{name: text or pieces} of each page the templates make (:data:`theme.TEMPLATES`, the ``old_feeds``
    files, a theme's own pages, which win over an old feed of the same name) rendered with ``context``,
    and each style sheet as it is (:data:`theme.STATIC`)."""
    files: dict[str, str | Iterator[str]] = {}
    for name in (*TEMPLATES, *STATIC, *old_feeds):
        if name in STATIC:
            files[name] = template_text(env, name, folders)
        else:
            template = OLD_FEED_TEMPLATES.get(name, name)
            own = {"feed_file": name, "feed_hubs": ()} if template != name else {}
            files[name] = rendered(env, template, {**context, "path": name, **own}, folders)
    for name in theme_pages(templates):
        if name.endswith(".css"):
            files[name] = template_text(env, name, folders)
        else:
            files[name] = rendered(env, name, {**context, "path": name}, folders)
    return files


def _pages(entries: Sequence[PageEntry], per_page: int) -> list[_Page]:
    """(file name, its entries) of each front-page page: index.html, then page2.html, page3.html...,
    ``per_page`` entries each, until the entries feed.xml carries run out (index.html even with none)."""
    chunks = [entries[start : start + per_page] for start in range(0, len(entries), per_page)] or [entries]
    return [
        ("index.html" if number == 1 else f"page{number}.html", chunk) for number, chunk in enumerate(chunks, start=1)
    ]


def _page_context(pages: list[_Page], index: int) -> dict[str, Any]:
    """What the front-page template reads of page ``index`` (0: index.html): its entries, its number,
    and the files of the newer and older pages (None at either end)."""
    return {
        "front_entries": pages[index][1],
        "path": pages[index][0],
        "page": index + 1,
        "newer": pages[index - 1][0] if index > 0 else None,
        "older": pages[index + 1][0] if index + 1 < len(pages) else None,
    }


def _totals(statuses: Sequence[SiteStatus]) -> dict[str, int]:
    """The sites page's totals: sites, and how many are ok, failing, denied, gone, paused, stale, new,
    inactive; entries held."""
    totals = {
        "sites": len(statuses),
        "ok": 0,
        "failing": 0,
        "denied": 0,
        "gone": 0,
        "paused": 0,
        "new": 0,
        "stale": 0,
        "inactive": 0,
        "entries": sum(status.entries for status in statuses),
    }
    for status in statuses:
        totals[status.health] += 1
        totals["stale"] += status.stale
        totals["inactive"] += status.inactive
    return totals
