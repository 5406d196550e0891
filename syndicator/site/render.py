"""Entries + site statuses -> the published folder. The only module that imports jinja2.

Templates come from ``--templates DIR`` first, then the bundled
``templates/`` folder, so a user may override any one of them. Templates
autoescape. Every file is written into a staging folder, the pages piece
by piece as templates produce them (a feed.xml of 1,000 entries is never
whole in memory); then :mod:`publish` swaps the whole folder in at once,
so a failure leaves the previous output exactly as it was. The same entries, statuses and clock
give byte-identical files.

Files: index.html, sites.html, feed.xml (Atom 1.0, RFC 4287), feed.json
(JSON Feed 1.1), opml.xml (OPML 2.0) and style.css.
"""

from __future__ import annotations

import calendar
import itertools
import json
import logging
import os
import re
import stat
import sysconfig
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote
from zoneinfo import ZoneInfo

import jinja2
import markupsafe
from markupsafe import Markup

from syndicator import __version__
from syndicator.configtypes import Config, Site
from syndicator.dates import isoformat
from syndicator.errors import RenderError
from syndicator.failures import KINDS
from syndicator.feedtypes import Entry, SelectedEntry
from syndicator.health import SiteStatus, by_health
from syndicator.language import direction
from syndicator.parse.sanitize import author_name, html_to_text, one_line, truncate_html
from syndicator.site.mediaview import PageEnclosure, page_enclosures, shown_image, with_image
from syndicator.site.publish import publish
from syndicator.site.sitekey import template_folders
from syndicator.urls import scheme, split
from syndicator.values import bound_text, strip_control

log = logging.getLogger("syndicator")
TEMPLATES = ("index.html", "sites.html", "feed.xml", "opml.xml")
STATIC = ("style.css",)
#: Longest title (and author) shown, in characters, "…" included: a feed's 2 MB title must not
#: make a 2 MB page. Longer ones are cut on a word boundary.
TITLE_CHARS = 300
AUTHOR_CHARS = 100
#: An absolute IRI (RFC 3987) as atom:id needs it (RFC 4287 section 4.2.6):
#: a scheme, then no space, control character or character IRIs exclude.
_IRI = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f-\x9f<>"{}|\\^`]+$')
#: Schemes that run or render script when followed. An entry id with one is replaced like a
#: non-URI id: some readers link an entry by its id when it has no link of its own.
_SCRIPT_SCHEMES = {"javascript", "vbscript", "data"}


@dataclass(frozen=True)
class PageEntry:
    """One entry as templates see it: every string is plain text or safe HTML."""

    atom_id: str
    title: str
    link: str | None
    author: str  # the entry's author, else the site's name
    author_known: bool  # False when ``author`` is the site's name: no author is claimed in feeds
    site: Site
    site_name: str
    site_link: str | None
    site_feed: str | None  # None for a local file: its path is not published
    published: str  # RFC 3339, UTC
    updated: str  # RFC 3339, UTC
    human_date: str
    day: str  # the day it was published in the planet's timezone, ISO 8601 (2026-11-30): the front page's groups
    day_heading: str  # that day as a heading shows it: "Monday 30 November 2026"
    summary: Markup
    content: Markup
    more: bool  # the summary was cut, or the content holds more than it shows
    enclosures: tuple[PageEnclosure, ...] = ()
    image: str | None = None  # an image beside the text, shown because the summary shows none
    image_alt: str = ""
    image_url: str | None = None  # the entry's image (JSON Feed "image"), shown or not
    language: str | None = None  # BCP 47 tag: the site's ``language``, else the entry's own; None when unknown
    direction: str = "auto"  # "rtl" or "ltr" from ``language`` (language.direction), "auto" without one
    content_src: str | None = None  # where the content is when the feed published it out of line (Atom src)
    content_type: str = ""  # its media type, or ""


def render_site(
    config: Config,
    entries: Sequence[SelectedEntry],
    statuses: Sequence[SiteStatus],
    now: datetime,
    output: Path,
    templates: Path | None = None,
    extra: Mapping[str, Path] | None = None,
) -> list[Path]:
    """Write the whole site to ``output``, atomically.

    Args:
        config: the planet's settings (title, link, feed_entries).
        entries: the merged stream, newest first.
        statuses: one per site, for the sites page.
        now: the build's clock (UTC); shown as the generation time.
        output: the folder to publish into (replaced as a whole); a symlink
            is followed, so it keeps pointing at the published folder.
        templates: a folder whose templates override the bundled ones.
        extra: {name in the site: file} published as they are (the state
            file, statefile.py); a page of the same name wins.
    Returns:
        the paths written, inside ``output``.
    Raises:
        RenderError: a template fails or the folder cannot be written; the
            previous output is left in place.
    """
    zone = ZoneInfo(config.timezone)

    def local(moment: datetime, form: str | None = None) -> str:
        """A time as the pages show it: in the planet's time zone, with its date_format (or ``form``)."""
        return moment.astimezone(zone).strftime(form or config.date_format)

    page_entries = [_page_entry(selected, config.summary_chars, local) for selected in entries[: config.feed_entries]]
    context = {
        "planet": config,
        "entries": page_entries,
        "sites": statuses,
        "sites_by_health": by_health(statuses),
        "totals": _totals(statuses),
        "stale_after": bound_text(config.stale_after),
        "activity_threshold": bound_text(config.activity_threshold),
        "now": now,
        "generated": isoformat(now),
        "feed_updated": max((e.updated for e in page_entries), default=isoformat(now)),
        "rfc822": format_datetime(now.astimezone(UTC), usegmt=True),
        "version": __version__,
        "failure_advice": {name: kind.advice for name, kind in KINDS.items() if kind.advice},
        "base": config.link if config.link.endswith("/") else config.link + "/",
    }
    pages = _pages(page_entries, config.page_entries)
    context.update(_page_context(pages, 0))
    folders = template_folders(templates)
    env = _environment(folders)
    env.filters["local"] = local
    env.filters["absolute"] = lambda url: url if scheme(url) else str(context["base"]) + url
    files: dict[str, str | Iterable[str] | Path] = {}
    for folder in static_folders(config, templates):
        files.update(_static_files(folder))
    files.update(extra or {})
    for name in (*TEMPLATES, *STATIC, *theme_pages(templates)):
        with _template_errors(name, folders):
            if name in STATIC or name.endswith(".css"):
                files[name] = env.loader.get_source(env, name)[0]  # type: ignore[union-attr]
            else:
                files[name] = _generated(env.get_template(name), context, name, folders)
    for index in range(1, len(pages)):
        with _template_errors("index.html", folders):
            files[pages[index][0]] = _generated(
                env.get_template("index.html"), {**context, **_page_context(pages, index)}, "index.html", folders
            )
    files["feed.json"] = _json_feed(config, str(context["base"]), page_entries)
    return publish(output, files)


def _pages(entries: Sequence[PageEntry], per_page: int) -> list[tuple[str, Sequence[PageEntry]]]:
    """(file name, its entries) of each front-page page: index.html, then page2.html, page3.html...,
    ``per_page`` entries each, until the entries feed.xml carries run out (index.html even with none)."""
    chunks = [entries[start : start + per_page] for start in range(0, len(entries), per_page)] or [entries]
    return [
        ("index.html" if number == 1 else f"page{number}.html", chunk) for number, chunk in enumerate(chunks, start=1)
    ]


def _page_context(pages: list[tuple[str, Sequence[PageEntry]]], index: int) -> dict[str, Any]:
    """What the front-page template reads of page ``index`` (0: index.html): its entries, its number,
    and the files of the newer and older pages (None at either end)."""
    return {
        "front_entries": pages[index][1],
        "page": index + 1,
        "newer": pages[index - 1][0] if index > 0 else None,
        "older": pages[index + 1][0] if index + 1 < len(pages) else None,
    }


#: A file of the ``--templates`` folder with one of these suffixes, not a partial (``_layout.html``),
#: is a page of its own, rendered to a file of the same name (``.css``: copied as it is).
PAGE_SUFFIXES = (".html", ".htm", ".xml", ".rss", ".atom", ".opml", ".json", ".txt", ".css")


def theme_pages(templates: Path | None) -> list[str]:
    """The names of the pages a ``--templates`` folder adds to :data:`TEMPLATES` and :data:`STATIC`:
    its top-level files with a :data:`PAGE_SUFFIXES` suffix whose name does not start with ``_`` or ``.``
    (a symlink leaving the folder is left out, with a warning: :func:`_inside`)."""
    if templates is None or not templates.is_dir():
        return []
    known = {*TEMPLATES, *STATIC, "feed.json"}
    return sorted(
        entry.name
        for entry in templates.iterdir()
        if entry.is_file()
        and entry.name.endswith(PAGE_SUFFIXES)
        and entry.name not in known
        and not entry.name.startswith(("_", "."))
        and _inside(entry, templates) is not None
    )


def static_folders(config: Config, templates: Path | None) -> list[Path]:
    """The ``static/`` folders copied into the site, the later winning: the theme's, then the planet's
    (beside sites.yaml), each as its real path; a missing one is skipped, and so is one that is a
    symlink leaving the theme's folder or the planet's, with a warning."""
    owners = [(templates / "static", templates)] if templates is not None else []
    owners.append((config.path.parent / "static", config.path.parent))
    folders = []
    for folder, owner in owners:
        if folder.is_dir() and (real := _inside(folder, owner)) is not None:
            folders.append(real)
    return folders


def _inside(path: Path, folder: Path) -> Path | None:
    """The real path of ``path`` when it lies inside ``folder`` (symlinks resolved in both), else None
    with a warning: a link out of a theme or a planet's folder (to ``/proc/self/environ``, ``/etc``, the
    cache) would publish what is no part of the planet."""
    real = Path(os.path.realpath(path))
    if real.is_relative_to(os.path.realpath(folder)):
        return real
    log.warning("%s: a symlink out of %s (to %s); not published", path, folder, real)
    return None


def _static_files(folder: Path) -> dict[str, Path]:
    """{path in the site: file} for every regular file under ``folder`` (a real path), hidden ones left out.

    A symlink to a file inside ``folder`` is published as a copy of that file; a symlink leaving it,
    a broken one, one to a folder, and a special file (a fifo, a device, a socket) are left out, each
    with a warning.
    """
    found: dict[str, Path] = {}
    for root, subfolders, names in os.walk(folder):
        kept = []
        for name in sorted(subfolders):
            if not name.startswith(".") and Path(root, name).is_symlink():
                log.warning("%s: a symlink to a folder; not published (copy the folder instead)", Path(root, name))
            elif not name.startswith("."):
                kept.append(name)
        subfolders[:] = kept
        for name in sorted(names):
            path = Path(root, name)
            if not name.startswith(".") and (source := _static_source(path, folder)) is not None:
                found[path.relative_to(folder).as_posix()] = source
    return found


def _static_source(path: Path, folder: Path) -> Path | None:
    """The regular file ``path`` of a static folder stands for (itself, or a link's target inside
    ``folder``), or None with a warning."""
    named, link = path, path.is_symlink()
    if link:
        real = _inside(path, folder)
        if real is None:
            return None
        path = real
    try:
        mode = path.lstat().st_mode
    except OSError as error:  # the warning names the file in static/, not a link's missing target
        reason = f"a broken symlink to {os.readlink(named)}" if link else error.strerror or str(error)
        log.warning("%s: cannot be read (%s); not published", named, reason)
        return None
    if not stat.S_ISREG(mode):
        log.warning("%s: not a regular file (a fifo, a device or a socket); not published", named)
        return None
    return path


def _totals(statuses: Sequence[SiteStatus]) -> dict[str, int]:
    """The sites page's totals: sites, and how many are ok, failing, denied, gone, stale, new, inactive;
    entries held."""
    totals = {
        "sites": len(statuses),
        "ok": 0,
        "failing": 0,
        "denied": 0,
        "gone": 0,
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


def _generated(template: jinja2.Template, context: dict[str, Any], name: str, folders: Sequence[Path]) -> Iterator[str]:
    """The template's output in pieces, as publish writes them: a page is never whole in memory."""
    with _template_errors(name, folders):
        yield from template.generate(context)


@contextmanager
def _template_errors(name: str, folders: Sequence[Path]) -> Iterator[None]:
    """Turn an error of template ``name`` into a RenderError (:func:`_template_error`); a bug of ours propagates."""
    try:
        yield
    except Exception as e:
        error = _template_error(e, name, folders)
        if error is None:
            raise  # raised outside template code: a bug
        raise error from e


def _template_error(error: Exception, name: str, folders: Sequence[Path]) -> RenderError | None:
    """A one-line RenderError naming the template file and line, or None for a bug.

    A syntax error carries its file and line; for an error while rendering,
    the innermost traceback frame in a template file gives them (jinja2
    rewrites template frames to the template's file and line). Any error
    is the template's (``{{ 1 // 0 }}``, a jinja2 filter given the wrong
    value, a macro recursing without end, a template file that is not
    UTF-8) when only jinja2, markupsafe and the standard library ran below
    the template code; when other code did (one of our filters, a property
    of a page entry), it is a bug.
    """
    where: str | None = None
    if isinstance(error, jinja2.TemplateSyntaxError):
        where = f"{error.filename or error.name or name}:{error.lineno}"
        message = error.message or str(error)
    else:
        frames = traceback.extract_tb(error.__traceback__)
        in_template = [any(Path(f.filename).is_relative_to(d) for d in folders) for f in frames]
        here = [Path(f.filename) == _THIS_FILE for f in frames]
        last = max((i for i, flag in enumerate(in_template) if flag), default=None)
        if last is None:  # not raised from template code: below the last frame of this module
            last = max((i for i, flag in enumerate(here) if flag), default=-1)
        if not all(
            in_template[i] or _is_library(f.filename) or _is_loader(f) for i, f in enumerate(frames) if i > last
        ):
            return None
        templates = [f for f, flag in zip(frames, in_template, strict=True) if flag]
        if templates:
            where = f"{templates[-1].filename}:{templates[-1].lineno}"
        message = str(error) or type(error).__name__
    if isinstance(error, jinja2.TemplateNotFound):
        message = f"{error.name} not found in {', '.join(map(str, folders))}"
    message = " ".join(message.split())
    return RenderError(f"template {where or name}: {message}")


_THIS_FILE = Path(__file__)
#: Code a template calls that is not ours: jinja2 (its filters, its runtime), markupsafe and the
#: standard library. An error raised in them below template code is the template's.
_LIBRARIES = (Path(jinja2.__file__).parent, Path(markupsafe.__file__).parent, Path(sysconfig.get_paths()["stdlib"]))


def _is_loader(frame: traceback.FrameSummary) -> bool:
    """True for a frame of :class:`_FolderLoader`: jinja2's loader, which a missing template raises through."""
    return Path(frame.filename) == _THIS_FILE and frame.name == "get_source"


def _is_library(filename: str) -> bool:
    """True for a traceback frame's file in :data:`_LIBRARIES` (or frozen: ``<frozen codecs>``)."""
    return filename.startswith("<") or any(Path(filename).is_relative_to(folder) for folder in _LIBRARIES)


class _FolderLoader(jinja2.FileSystemLoader):
    """jinja2's FileSystemLoader, reading no template through a symlink out of its folders (a theme's
    ``index.html`` linked to ``/proc/self/environ`` would publish the build's environment)."""

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        real = Path(os.path.realpath(filename))
        if not any(real.is_relative_to(os.path.realpath(folder)) for folder in self.searchpath):
            raise RenderError(f"template {filename}: a symlink out of the templates folders (to {real}); not read")
        return source, filename, uptodate


def _environment(folders: Sequence[Path]) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=_FolderLoader([str(folder) for folder in folders]),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "xml"), default=True),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["xmltext"] = strip_control
    return env


def atom_id(entry_id: str, feed: str) -> str:
    """The atom:id of an entry (str).

    The id the entry's own feed gave it when that is an absolute IRI (a
    fingerprint id, ``urn:sha256:...``, is one) that :func:`urls.split`
    can read and whose scheme runs no script; otherwise, e.g. a bare number
    as many RSS guids are, ``http://[oops/1`` (a malformed IP literal) or
    ``javascript:...``, a ``urn:uuid:`` made from the feed URL and that id
    (RFC 4122 name-based, SHA-1), the same on every build.
    """
    if _IRI.match(entry_id) and split(entry_id) is not None and scheme(entry_id) not in _SCRIPT_SCHEMES:
        return entry_id
    return uuid.uuid5(uuid.NAMESPACE_URL, f"{feed}#{entry_id}").urn


def _page_entry(selected: SelectedEntry, summary_chars: int, local: Callable[..., str]) -> PageEntry:
    entry, site = selected.entry, selected.site
    date = selected.date
    day = local(date, "%Y-%m-%d")
    updated = max(entry.updated or date, selected.stored.changed or date, date)
    summary_source = entry.summary or entry.content or elsewhere(entry.content_src)
    body = entry.content or summary_source
    language = site.language or entry.language
    summary = truncate_html(summary_source, summary_chars)
    # author_name again: snapshots stored by earlier versions may hold an e-mail address.
    author = shorten(author_name(entry.author) or "", AUTHOR_CHARS)
    alt = shorten(entry.title, TITLE_CHARS) or f"Image from {site.name}"
    return PageEntry(
        atom_id=atom_id(entry.id, site.feed),
        title=shorten(entry.title, TITLE_CHARS)
        or shorten(html_to_text(summary_source), 80)
        or _file_name(entry)
        or "(untitled)",
        link=entry.link,
        author=author or site.name,
        author_known=bool(author),
        site=site,
        site_name=site.name,
        site_link=site.link,
        site_feed=site.public_feed,
        published=isoformat(date),
        updated=isoformat(updated),
        human_date=local(date),
        day=day,
        day_heading=day_heading(day),
        summary=Markup(summary),  # noqa: S704 - sanitized in parse
        content=Markup(with_image(body, entry.image, alt)),  # noqa: S704 - sanitized in parse
        more=summary != summary_source or _holds_more(entry.content, summary_source),
        enclosures=page_enclosures(entry.enclosures),
        image=shown_image(summary, entry.image),
        image_alt=alt,
        image_url=shown_image("", entry.image),
        language=language,
        direction=direction(language),
        content_src=None if entry.content else entry.content_src,
        content_type=entry.content_type,
    )


def elsewhere(src: str | None) -> str:
    """The text of an entry whose content is published out of line and that has no summary: a link
    to that content, the URL as its text (HTML str; "" without ``src``, an http(s) URL)."""
    if not src:
        return ""
    return str(Markup('<p><a href="{0}">{0}</a></p>').format(src))


def day_heading(day: str) -> str:
    """A day given in ISO 8601 (``2026-11-30``) as a front-page heading: ``Monday 30 November 2026``.

    Week day and month names are English, as the pages are (``lang="en"``), whatever the machine's locale.
    """
    year, month, number = (int(part) for part in day.split("-"))
    return f"{_WEEKDAYS[calendar.weekday(year, month, number)]} {number} {_MONTHS[month - 1]} {year}"


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def _holds_more(content: str, shown: str) -> bool:
    """True when ``content`` has text or images that ``shown`` (the summary's source) lacks."""
    return bool(content) and (
        html_to_text(content) != html_to_text(shown) or content.count("<img") > shown.count("<img")
    )


def shorten(text: str, limit: int) -> str:
    """Plain text cut to at most ``limit`` characters, "…" included (str).

    The cut falls on a word boundary and is marked " …", as front-page
    summaries are; a word longer than half the limit is cut inside. Text
    that fits is returned unchanged.
    """
    if len(text) <= limit:
        return text
    cut = text[: limit - 2]
    if not text[limit - 2].isspace():
        space = cut.rfind(" ")
        if space < limit // 2:
            return text[: limit - 1].rstrip() + "…"
        cut = cut[:space]
    return cut.rstrip() + " …"


def _attachments(e: PageEntry) -> dict[str, Any]:
    """JSON Feed 1.1 ``attachments`` of an entry ({} when it has none); ``mime_type`` is required there."""
    attachments = []
    for m in e.enclosures:
        attachment: dict[str, Any] = {"url": m.url, "mime_type": m.mime_type or "application/octet-stream"}
        if m.length:
            attachment["size_in_bytes"] = m.length
        if m.duration:
            attachment["duration_in_seconds"] = m.duration
        attachments.append(attachment)
    return {"attachments": attachments} if attachments else {}


def _json_feed(config: Config, base: str, entries: Sequence[PageEntry]) -> Iterable[str]:
    """The merged stream as JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/); with ``config.hubs``,
    its ``hubs`` name them (type ``WebSub``) beside its absolute ``feed_url``, the topic they are told of."""
    items: list[dict[str, Any]] = []
    for e in entries:
        item: dict[str, Any] = {"id": e.atom_id, "title": e.title}
        if e.link:
            item["url"] = e.link
        item.update(
            {
                "content_html": str(e.summary if config.feed_content == "summary" else e.content),
                "date_published": e.published,
                "date_modified": e.updated,
                **({"authors": [{"name": e.author}]} if e.author_known else {}),
                **_attachments(e),
                **({"image": e.image_url} if e.image_url else {}),
                **({"language": e.language} if e.language else {}),
                "_source": {"title": e.site_name, "feed_url": e.site_feed, "home_page_url": e.site_link},
            }
        )
        items.append(item)
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": config.title,
        **({"description": config.description} if config.description else {}),
        **({"authors": [{"name": config.owner}]} if config.owner else {}),
        "home_page_url": config.link,
        "feed_url": base + "feed.json",
        # JSON Feed 1.1 "hubs": the WebSub hubs announce.py notifies of a change to this file.
        **({"hubs": [{"type": "WebSub", "url": hub} for hub in config.hubs]} if config.hubs else {}),
        **_feed_language(entries),
        "items": items,
    }
    return itertools.chain(json.JSONEncoder(ensure_ascii=False, indent=1).iterencode(document), ("\n",))


def _feed_language(entries: Sequence[PageEntry]) -> dict[str, str]:
    """JSON Feed 1.1 top-level ``language`` ("the primary language for the feed") when every item
    states the same one, else {}: each item states its own in its ``language``."""
    languages = {e.language for e in entries}
    only = next(iter(languages)) if len(languages) == 1 else None
    return {"language": only} if only else {}


def _file_name(entry: Entry) -> str:
    """The file name of an entry's first enclosure (``episode-12.mp3``), a title for an entry that has
    nothing else to show, or ""."""
    for enclosure in entry.enclosures:
        parts = split(enclosure.url)
        name = unquote(parts.path.rstrip("/").rsplit("/", 1)[-1]) if parts is not None else ""
        if name.strip():
            return shorten(one_line(name), 80)
    return ""
