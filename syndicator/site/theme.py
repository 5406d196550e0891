"""The files a theme makes of the site: the bundled pages, the pages a ``--templates`` folder adds,
and the ``static/`` folders copied as they are.

Nothing of a theme's folder or the planet's is published through a symlink
leaving it (to ``/proc/self/environ``, ``/etc``, the cache): such a link is
left out, with a warning.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from syndicator.configtypes import Config

log = logging.getLogger("syndicator")
#: The pages every site has, each rendered from the template of the same name (feed.json aside: :mod:`jsonfeed`).
TEMPLATES = ("index.html", "sites.html", "feed.xml", "opml.xml")
#: The search page, its script and its index folder (search.py), published unless ``search: false``.
SEARCH_FILES = ("search.html", "search.js", "search")
#: The template each file of ``old_feeds`` is rendered from: atom.xml is feed.xml under the old name; the
#: others (rss20.xml, rss10.xml, foafroll.xml) have templates of their own name.
OLD_FEED_TEMPLATES = {"atom.xml": "feed.xml"}
#: Templates of pages published under other names (the archive's, archivepages.py) or only with a
#: setting (search): a theme's file of one of these names overrides it, and is no page of its own.
PART_TEMPLATES = ("archive_index.html", "archive_page.html", "search.html", "search.js")
#: The folders the archive's pages and feeds are published in (archivepages.py).
ARCHIVE_FOLDERS = ("archive", "sites", "categories")
#: The theme's files copied as they are.
STATIC = ("style.css",)


#: A file of the ``--templates`` folder with one of these suffixes, not a partial (``_layout.html``),
#: is a page of its own, rendered to a file of the same name (``.css``: copied as it is).
PAGE_SUFFIXES = (".html", ".htm", ".xml", ".rss", ".atom", ".opml", ".json", ".txt", ".css")


def theme_pages(templates: Path | None) -> list[str]:
    """The names of the pages a ``--templates`` folder adds to :data:`TEMPLATES` and :data:`STATIC`:
    its top-level files with a :data:`PAGE_SUFFIXES` suffix whose name does not start with ``_`` or ``.``
    (a symlink leaving the folder is left out, with a warning: :func:`_inside`)."""
    if templates is None or not templates.is_dir():
        return []
    known = {*TEMPLATES, *STATIC, *PART_TEMPLATES, "feed.json"}
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


def static_files(folder: Path) -> dict[str, Path]:
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
