"""Publishing a folder of files atomically, and the lock that keeps two builds apart.

A site is written to a staging folder beside the output and swapped in
whole, so a reader (a web server, a CI deploy step) sees the old site or
the new one, never a mix, and a build killed at any point leaves the old
site in place:

* the staging folder gets a unique name (``.NAME.staging-PID-RANDOM``), so
  two processes never write into one folder;
* on Linux the swap is one ``renameat2(RENAME_EXCHANGE)`` call (two paths
  exchanged in one atomic step; the output never goes missing); elsewhere,
  or on a file system without it, the output is renamed aside
  (``.NAME.old-PID-RANDOM``) and staging renamed in its place, and the next
  publish restores the aside copy if a kill fell between the two renames;
* what syndicator did not write is never deleted: the :data:`MARKER` file
  lists every file a publish wrote, and anything else in the output (a
  ``.git`` folder, ``CNAME``, ``.nojekyll``, a page added by hand) is moved
  into staging before the swap, so it is in the new site. The names moved
  are listed first in staging's :data:`CARRIED` file; a publish killed
  before the swap has them moved back by the next one. A file an earlier
  publish wrote and this one does not is left behind with the old site;
* leftovers of killed builds are removed by the next publish, but only
  this user's (or the output folder's owner's): a ``.NAME.staging-*`` or ``.NAME.old-*`` symlink is removed
  and never followed (nothing is read or moved through it), and a file or a
  folder of another user is left alone, with a warning;
* the staging folder is created exclusively (``mkdir``, mode ``0700``) and
  given the output folder's mode, and its owner where the process may, before
  anything of the output is moved into it, so a ``0750`` output (or a
  ``0700`` home folder kept in git) stays as closed as it was;
* an output folder without its owner's write permission (``chmod 555``) is
  refused before anything is written, even for root: read-only is taken as
  "do not publish here";
* a file copied into the site (a Path, see :func:`publish`) is opened with
  ``O_NOFOLLOW`` and must be a regular file;
* once the swap is done, the site is published: an old copy that cannot be
  removed is a warning (the next publish removes it), never a failed build;
* a folder without the :data:`MARKER` file is never published into unless it
  is empty or a git checkout (it holds ``.git``, as a GitHub Pages branch
  does) in which no file has the name of one to be written, so a mistyped
  ``--output`` cannot overwrite an unrelated folder;
* when the output is a symlink, the folder it points to is published into
  and the link is left as it is.

:func:`output_lock` is held by a build from start to end: a second build on
the same output (even with another cache) stops before writing anything.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import logging
import os
import secrets
import shutil
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from filelock import FileLock, Timeout

from syndicator.errors import OutputLockedError, RenderError

log = logging.getLogger("syndicator")

#: A file in every published folder: a header line, then each file the publish wrote, one per line.
MARKER = ".syndicator-output"
_MARKER_HEADER = "written by syndicator: the files listed below are replaced on each build, nothing else is touched"
#: In a staging folder: the names of the output's entries moved into it (see the module docstring).
CARRIED = ".syndicator-carried"
_AT_FDCWD = -100
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_RENAME_EXCHANGE = 2


def target_of(output: Path) -> Path:
    """The folder a publish writes: ``output`` with symlinks resolved (Path).

    Raises:
        RenderError: ``output`` is the file system root.
    """
    target = Path(os.path.realpath(output))
    if not target.name:
        raise RenderError(f"{target}: cannot publish into the file system root; choose an --output folder")
    return target


@contextlib.contextmanager
def output_lock(output: Path) -> Iterator[None]:
    """Hold the lock of an output folder: ``.NAME.lock`` beside it (created if missing).

    Raises:
        OutputLockedError: another build holds it (exit code 4).
        RenderError: the folder beside the output cannot be written.
    """
    target = target_of(output)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RenderError(f"{target.parent}: cannot create the output's folder: {e.strerror or e}") from e
    lock = FileLock(str(target.with_name(f".{target.name}.lock")), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise OutputLockedError(
            f"{target}: another syndicator build or serve is publishing into this "
            "folder; wait for the build to finish, or stop the serve"
        ) from None
    except OSError as e:
        raise RenderError(f"{target.parent}: cannot lock the output folder there: {e.strerror or e}") from e
    try:
        yield
    finally:
        lock.release()


def publish(output: Path, files: Mapping[str, str | Iterable[str] | Path]) -> list[Path]:
    """Publish ``files`` as the folder ``output``, atomically (see the module docstring).

    Args:
        output: the folder to publish (a symlink is followed).
        files: {relative file path ("feed.xml", "images/logo.png"): text, or
            pieces of text written one after another (a generator is read
            once), written as UTF-8; or a Path, a file copied byte for byte};
            :data:`MARKER` is added.
    Returns:
        the paths written, inside ``output``.
    Raises:
        RenderError: the folder is not ours or cannot be written; the
            previous output is left in place.
        Exception: whatever producing the pieces raised; the previous output is left in place.
    """
    target = target_of(output)
    try:
        _recover(target)
    except OSError as e:
        raise RenderError(
            f"{target}: cannot clean up what an earlier build left beside the output ({e.filename}): {e.strerror or e}"
        ) from e
    existing = _writable(target)
    carried = _foreign(target, files)
    files = {**files, MARKER: "\n".join([_MARKER_HEADER, *sorted(files)]) + "\n"}
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    staging = target.with_name(f".{target.name}.staging-{token}")
    try:
        os.mkdir(staging, 0o700 if existing else 0o777)  # exclusive; a new output gets the umask's mode
        for name, text in files.items():
            _write(staging / name, text)
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
        _recover_quietly(target)
        raise RenderError(f"{target}: cannot publish: {e.strerror or e}") from e
    except BaseException:
        _recover_quietly(target)
        raise
    try:
        _remove(old)
    except OSError as e:
        log.warning(
            "%s: published, but the previous copy %s could not be removed (%s); the next build removes it",
            target,
            old,
            e.strerror or e,
        )
    return [output / name for name in files]


def check_output(output: Path) -> None:
    """Refuse, before a build fetches or stores anything, an output folder :func:`publish` would refuse
    for a fixed reason: not a folder, or read-only (see the module docstring). Same line as publish's.

    Raises:
        RenderError: naming the folder (exit code 6); a folder that does not exist yet passes.
    """
    _writable(target_of(output))


def _writable(target: Path) -> os.stat_result | None:
    """The status of the output folder ``target``, or None when it does not exist yet.

    Raises:
        RenderError: it is not a folder, or it is read-only (no write bit for its
            owner, or this process may not write it).
    """
    try:
        status = os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise RenderError(f"{target}: cannot read the output folder: {e.strerror or e}") from e
    if not stat.S_ISDIR(status.st_mode):
        raise RenderError(f"{target}: the output is not a folder; choose an --output folder")
    if not status.st_mode & stat.S_IWUSR or not os.access(target, os.W_OK | os.X_OK):
        raise RenderError(
            f"{target}: the output folder is read-only (mode {stat.S_IMODE(status.st_mode):o}); "
            "make it writable (chmod u+w) to publish into it"
        )
    return status


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


def _foreign(target: Path, files: Mapping[str, object]) -> list[str]:
    """The names of the entries of ``target`` that the last publish did not write and this one does not either.

    Raises:
        RenderError: ``target`` has no :data:`MARKER` and is neither empty nor a
            git checkout, or it would be overwritten where it holds a file of its own.
    """
    try:
        names = sorted(entry.name for entry in os.scandir(target))
    except FileNotFoundError:
        return []
    except OSError as e:
        raise RenderError(f"{target}: cannot read the output folder: {e.strerror or e}") from e
    written = written_files(target)
    ours = {name.split("/")[0] for name in (*files, *(written or ()))} | {MARKER, CARRIED}
    foreign = [name for name in names if name not in ours]
    if written is None and names and (".git" not in names or len(foreign) < len(names)):
        raise RenderError(
            f"{target}: refusing to publish into a folder syndicator did not write "
            f"(no {MARKER} file); choose an empty or new --output folder, or a git checkout"
        )
    return foreign


def written_files(target: Path) -> list[str] | None:
    """The files the last publish into ``target`` wrote (its :data:`MARKER`), or None when it has none.

    A marker written before the files were listed names none: only the
    files a publish writes now are then taken as syndicator's.
    """
    try:
        lines = (target / MARKER).read_text(encoding="utf-8", errors="replace").splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise RenderError(f"{target}: cannot read {MARKER}: {e.strerror or e}") from e
    return lines[1:] if lines and lines[0] == _MARKER_HEADER else []


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


def _recover(target: Path) -> None:
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
        owners.add(target.stat().st_uid)  # root gives staging the output's owner (_take_mode)
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
        _remove(leftover)  # a symlink is removed, never followed


def _recover_quietly(target: Path) -> None:
    """:func:`_recover` after a failed publish: a failure to clean up is a warning, the publish's own
    error is the one shown; the next publish tries again."""
    try:
        _recover(target)
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


def _remove(path: Path) -> None:
    """Remove a folder tree of ours, or a symlink without following it; nothing if absent.

    A folder inside without its owner's write or search permission (a read-only
    old site) is given them first, when this user owns it.
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
