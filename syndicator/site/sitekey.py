"""Is the published site still what a render would write? Then a build that changed nothing renders nothing.

A render reads five things: the entries and site states (both in the store,
whose generation counts every save), the settings, the templates and static
files (every file under each template folder and the ``static/`` folder
beside sites.yaml, subfolders and symlinks included, by
size, modification time and change time: a write that puts the
modification time back still moves the change time),
syndicator's version, and the clock. The clock shows in two places: a
site's "stale" badge (so each site's stale flag is part of the key), and a filter's ``older_than`` or
``newer_than`` (so a planet with one renders at every build); the
pages' "Updated" time is the newest entry's (:mod:`render`). A render
whose files come out as published writes nothing (:mod:`publish`), so the
key is a shortcut, not what keeps a site's files unchanged. The published folder is
checked too: every file the last publish wrote (name, size, modification
and change time, inode) as that publish left it, so a page deleted, edited
or replaced by hand is written again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from syndicator import __version__
from syndicator.configtypes import Config
from syndicator.site.filters import judges_age
from syndicator.site.locales import CATALOGUES
from syndicator.site.output import MARKER, target_of, written_files


def bundled_templates() -> Path:
    """The folder of bundled templates: inside the installed package, or the
    top-level ``templates/`` of a source checkout (editable install)."""
    package = Path(__file__).resolve().parent.parent  # syndicator/, this module being in syndicator/site/
    inside = package / "templates"
    return inside if (inside / "index.html").exists() else package.parent / "templates"


def template_folders(templates: Path | None) -> list[Path]:
    """Template folders in lookup order: the user's (``--templates``, made absolute), then the bundled one."""
    return ([Path(os.path.abspath(templates))] if templates else []) + [bundled_templates()]


def site_key(config: Config, templates: Path | None, generation: int, stale: Iterable[bool], now: datetime) -> str:
    """A digest of everything a render reads but the entries' text (hex str).

    Args:
        config: the planet's settings (all of them, its filters and its sites' too: any change renders
            again, and a changed filter is applied to the stored entries with no fetch; those of the
            other planets of ``planets:`` are not this planet's, and are left out).
        templates: the ``--templates`` folder, or None.
        generation: :meth:`store.Store.generation` after the build's saves.
        stale: each site's stale flag, in sites.yaml order (they move with the clock).
        now: the build's clock (UTC), part of the key only when a filter names an age.
    """
    digest = hashlib.sha256()
    own = repr([site.own_settings for site in config.sites if site.own_settings])  # not in a Site's repr
    own += repr([site.filters for site in config.sites])  # nor are they (configtypes.Site)
    if judges_age(config):
        own += now.isoformat()
    for part in (
        __version__,
        repr(replace(config, planets=())),
        own,
        str(generation),
        "".join("1" if flag else "0" for flag in stale),
    ):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    for folder in (*template_folders(templates), Path(config.path).parent / "static", CATALOGUES):
        digest.update(f"{folder}\0".encode("utf-8", "surrogateescape"))
        for line in _file_lines(folder):  # a missing folder adds nothing (render says so of a template folder)
            digest.update(line)
    return digest.hexdigest()


def output_mark(output: Path) -> str | None:
    """A digest of what syndicator published in a folder as it is now (hex str), or None when
    the folder holds no :data:`MARKER` file.

    It covers each file the last publish wrote (as its :data:`MARKER` lists
    them) and the marker itself: relative path, size, modification and change
    times and inode. Every publish writes new files, so the mark changes with
    each publish, whoever made it, and with any of those files deleted,
    edited or replaced since. Other files (a ``.git`` folder, say) are not read.
    """
    folder = target_of(output)
    written = written_files(folder)
    if written is None:
        return None
    digest = hashlib.sha256()
    for name in (MARKER, *written):
        path = os.path.join(folder, name)
        try:
            info = os.stat(path)
        except OSError:
            line = f"{name}\0missing\0"
        else:
            line = f"{name}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\0{info.st_ino}\0"
        digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _file_lines(folder: Path) -> Iterator[bytes]:
    """One line (bytes) per file under ``folder``: recursively, following symlinks, each folder once."""
    seen: set[tuple[int, int]] = set()
    for root, folders, files in os.walk(folder, followlinks=True):
        try:
            info = os.stat(root)
        except OSError:
            folders[:] = []
            continue
        if (info.st_dev, info.st_ino) in seen:  # a symlink back up the tree: walked already
            folders[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        folders.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                info = os.stat(path)
            except OSError:
                continue  # a dangling symlink
            line = f"{os.path.relpath(path, folder)}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\0"
            yield line.encode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Publication:
    """What the last build that rendered published: kept in the store between builds.

    Attributes:
        key: its :func:`site_key`.
        mark: the :func:`output_mark` of the folder it wrote.
        entries: the entries in its feed.xml.
    """

    key: str
    mark: str
    entries: int

    def text(self) -> str:
        """The publication as JSON text, for the store."""
        return json.dumps({"key": self.key, "mark": self.mark, "entries": self.entries})

    @classmethod
    def read(cls, text: str | None) -> Publication | None:
        """A publication from :meth:`text`; None for None or text that is not one."""
        try:
            data = json.loads(text or "null")
            return cls(str(data["key"]), str(data["mark"]), int(data["entries"]))
        except (ValueError, TypeError, KeyError):
            return None

    def current(self, key: str, output: Path) -> bool:
        """True when a render with ``key`` into ``output`` would write what is there now."""
        return self.key == key and self.mark == output_mark(output)
