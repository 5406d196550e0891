"""What killed or failed publishes leave beside the output folder: restored, carried back, removed.

A publish (:mod:`publish`) works in ``.NAME.staging-PID-RANDOM`` and, where
the folders cannot be exchanged in one step, moves the old site aside to
``.NAME.old-PID-RANDOM``. The next publish, or the failed one itself,
cleans up what is left:

* an aside copy is put back when a kill fell between the two renames and
  the output is missing;
* the entries a staging folder carried out of the output (listed in its
  :data:`output.CARRIED` file) are moved back when a publish was killed
  before the swap;
* only this user's (or the output folder's owner's) leftovers are removed:
  a ``.NAME.staging-*`` or ``.NAME.old-*`` symlink is removed and never
  followed (nothing is read or moved through it), and a file or a folder
  of another user is left alone, with a warning.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from syndicator.site.output import CARRIED

log = logging.getLogger("syndicator")

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def recover(target: Path) -> None:
    """Undo what a killed (or failed) publish left: restore an aside copy when the output is
    missing, move the entries a staging folder carried back into the output, then remove
    staging and aside folders (including older versions' names). Only this user's real
    folders count (:func:`_ours`); anything else of those names is left alone, with a warning.

    Raises:
        OSError: a leftover cannot be moved or removed.
    """
    name = target.name
    owners = {os.geteuid()}
    with contextlib.suppress(OSError):
        owners.add(target.stat().st_uid)  # root gives staging the output's owner (publish._take_mode)
    leftovers = _ours(target.parent.glob(f".{glob.escape(name)}.old*"), owners)
    leftovers.sort(key=lambda p: p.lstat().st_mtime)
    restorable = [path for path in leftovers if not path.is_symlink()]
    if not target.exists() and not target.is_symlink() and restorable:
        os.replace(restorable[-1], target)
        leftovers.remove(restorable[-1])
    stagings = _ours(target.parent.glob(f".{glob.escape(name)}.staging*"), owners)
    for staging in stagings:
        if not staging.is_symlink():
            _carry_back(staging, target)
    for leftover in [*leftovers, *stagings]:
        remove(leftover)  # a symlink is removed, never followed


def recover_quietly(target: Path) -> None:
    """:func:`recover` after a failed publish: a failure to clean up is a warning, the publish's own
    error is the one shown; the next publish tries again."""
    try:
        recover(target)
    except OSError as e:
        log.warning(
            "%s: could not clean up after the failed publish (%s: %s); the next build tries again",
            target,
            e.filename,
            e.strerror or e,
        )


def _ours(paths: Iterable[Path], owners: set[int]) -> list[Path]:
    """The ``paths`` owned by one of ``owners`` (this user, the output's owner) that are folders, or
    symlinks (older versions moved a symlinked output aside; a link is only ever removed, never
    followed); a warning for each other one."""
    kept = []
    for path in paths:
        status = path.lstat()
        if (stat.S_ISDIR(status.st_mode) or stat.S_ISLNK(status.st_mode)) and status.st_uid in owners:
            kept.append(path)
        else:
            log.warning(
                "%s: not a folder of a syndicator build (a file, or another user's); left alone: "
                "remove it if you did not put it there",
                path,
            )
    return kept


def _carry_back(staging: Path, target: Path) -> None:
    """Move the entries listed in ``staging``'s :data:`CARRIED` file back into ``target``."""
    try:
        descriptor = os.open(staging / CARRIED, os.O_RDONLY | _NOFOLLOW)
    except (FileNotFoundError, NotADirectoryError):
        return
    with open(descriptor, encoding="utf-8") as file:
        names = file.read().splitlines()
    for name in names:
        if not name or "/" in name or name in (".", ".."):
            continue
        source, destination = staging / name, target / name
        if os.path.lexists(source) and not os.path.lexists(destination):
            target.mkdir(exist_ok=True)
            os.replace(source, destination)


def remove(path: Path) -> None:
    """Remove a folder tree of ours, or a symlink without following it; nothing if absent.

    A folder inside without its owner's write or search permission (a read-only
    old site) is given them first, when this user owns it.

    Raises:
        OSError: it cannot be removed.
    """
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        _open_up(str(path))
        for root, folders, _files in os.walk(path):
            for name in folders:
                _open_up(os.path.join(root, name))
        shutil.rmtree(path)


def _open_up(folder: str) -> None:
    """Give the folder ``folder`` (not a symlink) its owner's read, write and search bits, when this user owns it."""
    status = os.lstat(folder)
    if stat.S_ISDIR(status.st_mode) and status.st_mode & 0o700 != 0o700 and status.st_uid == os.geteuid():
        os.chmod(folder, stat.S_IMODE(status.st_mode) | 0o700)
