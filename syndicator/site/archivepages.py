"""The archive's files: its pages (by month, by site, by category) and each site's and category's feeds.

Files, from the site's top (:class:`archive.ArchiveView` gives the groups and slugs):

- ``archive/index.html``: every month, newest first, with its number of entries;
- ``archive/2026-11.html``: every entry of that month (in the planet's time zone), newest first;
- ``sites/SLUG/index.html`` and ``categories/SLUG/index.html``: every entry of one site or category;
- ``sites/SLUG/feed.xml`` and ``feed.json`` (and the same under ``categories/SLUG/``): that site's or
  category's feed, as RFC 5005 section 4 archived feeds: the subscription document ``feed.xml``
  holds the newest entries (1 to :data:`CHUNK`), and names with ``prev-archive`` the archive document
  before it, ``feed-N.xml``, :data:`CHUNK` entries each in the order the planet first published them,
  ``feed-1.xml`` the oldest. An archive document never changes once written (only ``feed.xml`` and a
  new ``feed-N.xml`` do), and a reader following ``prev-archive`` from ``feed.xml`` reaches every
  entry. JSON Feed 1.1 has no archived feeds: ``feed.json`` and ``feed-N.json`` are its pages, each
  naming the older one with ``next_url``.

Every page and feed is a template rendered with the site's context (:mod:`render`) and its own
``path`` and ``root`` (``../`` or ``../../``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syndicator.configtypes import Config
from syndicator.feedtypes import SelectedEntry
from syndicator.site.archive import ArchiveView, Group
from syndicator.site.jsonfeed import json_feed
from syndicator.site.pageentry import PageEntry

if TYPE_CHECKING:
    pass

#: Entries in each archive document of a site's or category's feed (RFC 5005 section 4).
CHUNK = 50

#: Renders one template to pieces of text: (template name, context) -> pieces.
Render = Callable[[str, dict[str, Any]], Iterator[str]]


class Links:
    """Where the archive shows an entry, a site and a category, as paths from the site's top; given to
    every page as ``archive`` (None when the planet keeps no archive)."""

    def __init__(self, view: ArchiveView) -> None:
        self._view = view

    def entry(self, e: PageEntry) -> str:
        """The entry's place on its month's page: ``archive/2026-11.html#e-...`` (``e.day`` is local)."""
        return f"archive/{e.day[:7]}.html#{e.anchor}"

    def site(self, feed: str) -> str | None:
        """The page of the site whose feed is ``feed``: ``sites/SLUG/index.html``, or None (nothing archived)."""
        group = self._view.sites.get(feed)
        return f"sites/{group.slug}/index.html" if group else None

    def category(self, label: str) -> str | None:
        """The page of category ``label``: ``categories/SLUG/index.html``, or None."""
        group = self._view.category(label)
        return f"categories/{group.slug}/index.html" if group else None


class Reuse:
    """The archive pages' keys: a page (a month) or a folder (a site's or category's page and feeds)
    whose key is the one the last render published is not rendered again, its files taken from the
    output as they are. A key is a digest of ``base`` (the settings, templates and slugs: anything else
    a page shows) and of the page's own entries (their numbers and row digests)."""

    def __init__(self, output: Path, base: str, previous: dict[str, str], keys: dict[str, str]) -> None:
        self.output, self.base, self.previous, self.keys = output, base, previous, keys

    def key(self, unit: str, label: str, numbers: Iterable[int], digests: dict[int, str]) -> str:
        """The key of ``unit`` (a page's path, or a folder's ending in "/") showing entries ``numbers``."""
        digest = hashlib.sha256(f"{self.base}\n{unit}\n{label}\n".encode("utf-8", "surrogatepass"))
        for number in numbers:
            digest.update(f"{number}:{digests.get(number, '')};".encode())
        self.keys[unit] = digest.hexdigest()
        return self.keys[unit]

    def kept(self, unit: str, key: str, names: Sequence[str]) -> dict[str, Path] | None:
        """{name: its published file} when ``unit`` was published with ``key`` and its files ``names``
        are all there; else None (render it)."""
        if self.previous.get(unit) != key:
            return None
        files = {name: self.output / name for name in names}
        return files if all(path.is_file() and not path.is_symlink() for path in files.values()) else None


def archive_files(
    config: Config,
    view: ArchiveView,
    context: dict[str, Any],
    render: Render,
    shown: Mapping[int, PageEntry],
    reuse: Reuse,
) -> dict[str, Iterable[str] | Path]:
    """{path in the site: pieces, or a published file kept as it is} of every archive page and feed of
    ``view``; ``context`` is the site's, ``render(template, context)`` renders a template, ``shown``
    gives each entry as pages show it, by its number (read only for the pages rendered)."""
    files: dict[str, Iterable[str] | Path] = {}
    months = [(group, len(group.entries)) for group in view.months.values()]
    files["archive/index.html"] = render(
        "archive_index.html",
        {
            **context,
            **_newest(shown[seq] for seq, _ in view.entries[:1]),
            "path": "archive/index.html",
            "root": "../",
            "months": months,
        },
    )
    for month, group in view.months.items():
        path = f"archive/{month}.html"
        numbers = [seq for seq, _ in group.entries]
        key = reuse.key(path, month, numbers, view.digests)
        if (kept := reuse.kept(path, key, [path])) is not None:
            files.update(kept)
            continue
        listed = [shown[seq] for seq in numbers]
        page = {**context, **_newest(listed), "path": path, "root": "../", "group": group, "group_kind": "month"}
        files[path] = render("archive_page.html", {**page, "listed": listed})
    for kind, groups in (("site", view.sites), ("category", view.categories)):
        for group in groups.values():
            folder = f"{'sites' if kind == 'site' else 'categories'}/{group.slug}/"
            numbers = [seq for seq, _ in group.entries]
            key = reuse.key(folder, f"{kind}:{group.label}", numbers, view.digests)
            names = [folder + "index.html", *_feed_names(folder, len(numbers))]
            if (kept := reuse.kept(folder, key, names)) is not None:
                files.update(kept)
            else:
                files.update(_group_files(config, folder, kind, group, shown, context, render))
    return files


def _newest(entries: Iterable[PageEntry]) -> dict[str, Any]:
    """The footer's "Newest post" of a page: its own newest entry's, so a page changes only with its entries."""
    newest = max((e.updated for e in entries), default=None)
    return {"generated": newest, "updated": datetime.fromisoformat(newest)} if newest else {}


def _feed_names(folder: str, count: int) -> list[str]:
    """The files of the feeds of a site or category of ``count`` entries (:func:`_chunks`)."""
    chunks = max(count - 1, 0) // CHUNK
    return [
        f"{folder}{name}.{kind}"
        for name in [*(f"feed-{n}" for n in range(1, chunks + 1)), "feed"]
        for kind in ("xml", "json")
    ]


def _group_files(
    config: Config,
    folder: str,
    kind: str,
    group: Group,
    shown: Mapping[int, PageEntry],
    context: dict[str, Any],
    render: Render,
) -> dict[str, Iterable[str]]:
    """The page and the feeds of one site or category, in ``folder`` (``sites/SLUG/``)."""
    title = f"{group.label} · {config.title}"
    feeds = [
        {"type": "application/atom+xml", "title": f"{title} (Atom)", "href": folder + "feed.xml"},
        {"type": "application/feed+json", "title": f"{title} (JSON Feed)", "href": folder + "feed.json"},
    ]
    listed = [shown[seq] for seq, _ in group.entries]
    page = {**context, **_newest(listed), "path": folder + "index.html", "root": "../../", "page_feeds": feeds}
    files: dict[str, Iterable[str]] = {
        folder + "index.html": render(
            "archive_page.html", {**page, "group": group, "group_kind": kind, "listed": listed}
        )
    }
    chunks = _chunks(sorted(group.entries, key=lambda pair: pair[0]))
    base = context["base"]
    for number, chunk in enumerate(chunks, start=1):
        last = number == len(chunks)
        name = "feed" if last else f"feed-{number}"
        older = f"{base}{folder}feed-{number - 1}" if number > 1 else None
        entries = sorted((shown[seq] for seq, _ in chunk), key=lambda e: e.published, reverse=True)
        feed = {
            **context,
            "entries": entries,
            "feed_file": f"{folder}{name}.xml",
            "feed_hubs": (),
            "feed_title": title,
            "feed_id": f"{base}{folder}",
            "feed_home": f"{base}{folder}index.html",
            "feed_archive": not last,
            "feed_paging": [
                *([("prev-archive", older + ".xml")] if older else []),
                *([] if last else [("current", f"{base}{folder}feed.xml")]),
            ],
        }
        if entries:
            feed["feed_updated"] = max(e.updated for e in entries)
        files[f"{folder}{name}.xml"] = render("feed.xml", feed)
        files[f"{folder}{name}.json"] = json_feed(
            config,
            base,
            entries,
            path=f"{folder}{name}.json",
            title=title,
            home=f"{base}{folder}index.html",
            next_url=older + ".json" if older else None,
        )
    return files


def _chunks(entries: Sequence[tuple[int, SelectedEntry]]) -> list[Sequence[tuple[int, SelectedEntry]]]:
    """``entries`` (oldest published first) cut into archive documents of :data:`CHUNK` from the oldest,
    the last holding the 1 to :data:`CHUNK` newest (the subscription document); one empty chunk for none."""
    full = max(len(entries) - 1, 0) // CHUNK
    return [entries[i * CHUNK : (i + 1) * CHUNK] for i in range(full)] + [entries[full * CHUNK :]]
