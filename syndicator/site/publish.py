"""Publishing a folder of files atomically: written into staging, then swapped in whole.

A site is written to a staging folder beside the output and swapped in
whole, so a reader (a web server, a CI deploy step) sees the old site or
the new one, never a mix, and a build killed at any point leaves the old
site in place:

* the output folder is checked first (:mod:`output`): it must be ours (or
  empty, or a git checkout) and writable; what syndicator did not write in
  it is moved into staging before the swap, so it is in the new site. The
  names moved are listed first in staging's :data:`output.CARRIED` file. A
  file an earlier publish wrote and this one does not is left behind with
  the old site;
* the staging folder gets a unique name (``.NAME.staging-PID-RANDOM``), so
  two processes never write into one folder;
* on Linux the swap is one ``renameat2(RENAME_EXCHANGE)`` call (two paths
  exchanged in one atomic step; the output never goes missing); elsewhere,
  or on a file system without it, the output is renamed aside
  (``.NAME.old-PID-RANDOM``) and staging renamed in its place;
* leftovers of killed builds (an aside copy, a staging folder and what it
  carried) are restored or removed by the next publish (:mod:`leftovers`);
* the staging folder is created exclusively (``mkdir``, mode ``0700``) and
  given the output folder's mode, and its owner where the process may, before
  anything of the output is moved into it, so a ``0750`` output (or a
  ``0700`` home folder kept in git) stays as closed as it was;
* a file copied into the site (a Path, see :func:`publish`) is opened with
  ``O_NOFOLLOW`` and must be a regular file;
* once the swap is done, the site is published: an old copy that cannot be
  removed is a warning (the next publish removes it), never a failed build;
* a file whose bytes are those of the file of that name in the output is
  not written again: the output's file is linked into staging in place of
  the new copy (a hard link: same inode, same modification time), so a git
  checkout, rsync or a web server's caching sees only the files that changed.
  When no file changed and none is added or dropped, nothing is swapped: the
  output is left exactly as it was, times included. Where a hard link cannot
  be made (a file system without them), the new copy is kept.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import secrets
import shutil
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from syndicator.errors import RenderError
from syndicator.site.leftovers import recover, recover_quietly, remove
from syndicator.site.output import CARRIED, MARKER, foreign_entries, marker_text, target_of, writable

log = logging.getLogger("syndicator")

_AT_FDCWD = -100
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_RENAME_EXCHANGE = 2
_BLOCK = 1024 * 1024  # bytes compared at a time


def publish(output: Path, files: Mapping[str, str | Iterable[str] | Path]) -> list[Path]:
    """Publish ``files`` as the folder ``output``, atomically (see the module docstring).

    Args:
        output: the folder to publish (a symlink is followed).
        files: {relative file path ("feed.xml", "images/logo.png"): text, or
            pieces of text written one after another (a generator is read
            once), written as UTF-8; or a Path, a file copied byte for byte};
            :data:`MARKER` is added.
    Returns:
        the paths written, inside ``output``: the files whose bytes changed or
        that are new (empty when the output already held every file as it is).
    Raises:
        RenderError: the folder is not ours or cannot be written; the
            previous output is left in place.
        Exception: whatever producing the pieces raised; the previous output is left in place.
    """
    target = target_of(output)
    try:
        recover(target)
    except OSError as e:
        raise RenderError(
            f"{target}: cannot clean up what an earlier build left beside the output ({e.filename}): {e.strerror or e}"
        ) from e
    existing = writable(target)
    carried = foreign_entries(target, files)
    files = {**files, MARKER: marker_text(files)}
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    staging = target.with_name(f".{target.name}.staging-{token}")
    try:
        os.mkdir(staging, 0o700 if existing else 0o777)  # exclusive; a new output gets the umask's mode
        changed = _stage(staging, target, files)
        if not changed:  # the marker too: the same files, each as it is
            remove(staging)
            return []
        if existing is not None:
            _take_mode(staging, existing)
        if carried:
            (staging / CARRIED).write_text("\n".join(carried) + "\n", encoding="utf-8")
            for name in carried:
                os.replace(target / name, staging / name)
        old = _swap(staging, target, target.with_name(f".{target.name}.old-{token}"))
        with contextlib.suppress(FileNotFoundError):
            (target / CARRIED).unlink()
    except OSError as e:
        recover_quietly(target)
        raise RenderError(f"{target}: cannot publish: {e.strerror or e}") from e
    except BaseException:
        recover_quietly(target)
        raise
    try:
        remove(old)
    except OSError as e:
        log.warning(
            "%s: published, but the previous copy %s could not be removed (%s); the next build removes it",
            target,
            old,
            e.strerror or e,
        )
    return [output / name for name in changed]


def _stage(staging: Path, target: Path, files: Mapping[str, str | Iterable[str] | Path]) -> list[str]:
    """Write ``files`` into ``staging``, each one whose bytes are those of the output's linked in
    its place (:func:`_kept`); returns the names of the others: new, or changed."""
    for name, text in files.items():
        _write(staging / name, text)
    return [name for name in files if not (_inside(target, name) and _kept(target / name, staging / name))]


def _inside(target: Path, name: str) -> bool:
    """True when the file ``name`` of the output ``target`` is there through no symlink (a folder of
    the output replaced by a link elsewhere is never linked from)."""
    return os.path.realpath(target / name) == os.path.join(target, name)


def _kept(published: Path, new: Path) -> bool:
    """True when ``published`` (a file of the output) holds the bytes of ``new`` (its copy in staging):
    ``new`` is then replaced by a hard link to ``published``, which keeps its inode and times.

    A file that differs, is missing or is not a regular file, or a link that
    cannot be made (the file system has none), is False: ``new`` is published.
    """
    try:
        info = os.stat(published, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode) or info.st_size != os.stat(new).st_size or not _same_bytes(published, new):
            return False
        link = new.with_name(f".{new.name}.link")
        os.link(published, link)
        os.replace(link, new)
    except OSError:
        return False
    return True


def _same_bytes(first: Path, second: Path) -> bool:
    """True when two files of one size hold the same bytes (read a block at a time, never whole)."""
    with open(first, "rb") as one, open(second, "rb") as other:
        while block := one.read(_BLOCK):
            if block != other.read(_BLOCK):
                return False
    return True


def _write(path: Path, text: str | Iterable[str] | Path) -> None:
    """Write one file of the site: text (or pieces of it) as UTF-8, or a copy of a regular file.

    Raises:
        RenderError: the file to copy is a symlink or not a regular file.
        OSError: the file cannot be read or written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, Path):
        try:
            source = os.open(text, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise RenderError(f"{text}: a symbolic link; not published") from e
            raise
        with open(source, "rb") as reader:
            if not stat.S_ISREG(os.fstat(source).st_mode):
                raise RenderError(f"{text}: not a regular file; not published")
            with open(path, "wb") as writer:
                shutil.copyfileobj(reader, writer)
        return
    with open(path, "w", encoding="utf-8", newline="\n") as file:
        if isinstance(text, str):
            file.write(text)
        else:
            file.writelines(text)


def _take_mode(staging: Path, existing: os.stat_result) -> None:
    """Give ``staging`` the mode of the output folder it replaces, and its owner and group where this
    process may (root publishing into a user's folder)."""
    if (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(OSError):
            os.chown(staging, existing.st_uid, existing.st_gid)
    os.chmod(staging, stat.S_IMODE(existing.st_mode))


def _swap(staging: Path, target: Path, aside: Path) -> Path:
    """Put ``staging`` in ``target``'s place.

    Returns:
        the path that now holds the old folder (``staging`` or ``aside``), for the caller to remove.
    """
    if target.exists() and _exchange(staging, target):
        return staging  # now holds the old site
    if target.exists():
        os.replace(target, aside)
    try:
        os.replace(staging, target)
    except OSError:
        if aside.exists() and not target.exists():
            os.replace(aside, target)
        raise
    return aside


def _exchange(first: Path, second: Path) -> bool:
    """Exchange two paths in one atomic step (Linux ``renameat2``, RENAME_EXCHANGE).

    Returns:
        True when done; False where the call or the flag is not supported.
    Raises:
        OSError: any other failure.
    """
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(first))
