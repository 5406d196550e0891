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
* leftovers of killed builds are removed by the next publish;
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
import os
import secrets
import shutil
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from filelock import FileLock, Timeout

from .errors import OutputLockedError, RenderError

#: A file in every published folder: a header line, then each file the publish wrote, one per line.
MARKER = ".syndicator-output"
_MARKER_HEADER = "written by syndicator: the files listed below are replaced on each build, nothing else is touched"
#: In a staging folder: the names of the output's entries moved into it (see the module docstring).
CARRIED = ".syndicator-carried"
_AT_FDCWD = -100
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
        raise OutputLockedError(f"{target}: another syndicator build or serve is publishing into this "
                                "folder; wait for the build to finish, or stop the serve") from None
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
    _recover(target)
    carried = _foreign(target, files)
    files = {**files, MARKER: "\n".join([_MARKER_HEADER, *sorted(files)]) + "\n"}
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    staging = target.with_name(f".{target.name}.staging-{token}")
    try:
        staging.mkdir()
        for name, text in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, Path):
                shutil.copyfile(text, path)
                continue
            with open(path, "w", encoding="utf-8", newline="\n") as file:
                if isinstance(text, str):
                    file.write(text)
                else:
                    file.writelines(text)
        if carried:
            (staging / CARRIED).write_text("\n".join(carried) + "\n", encoding="utf-8")
            for name in carried:
                os.replace(target / name, staging / name)
        _swap(staging, target, target.with_name(f".{target.name}.old-{token}"))
        with contextlib.suppress(FileNotFoundError):
            (target / CARRIED).unlink()
    except OSError as e:
        _recover(target)
        raise RenderError(f"{target}: cannot publish: {e.strerror or e}") from e
    except BaseException:
        _recover(target)
        raise
    return [output / name for name in files]


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
        raise RenderError(f"{target}: refusing to publish into a folder syndicator did not write "
                          f"(no {MARKER} file); choose an empty or new --output folder, or a git checkout")
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


def _swap(staging: Path, target: Path, aside: Path) -> None:
    """Put ``staging`` in ``target``'s place; the old folder is removed afterwards."""
    if target.exists() and _exchange(staging, target):
        _remove(staging)  # now holds the old site
        return
    if target.exists():
        os.replace(target, aside)
    try:
        os.replace(staging, target)
    except OSError:
        if aside.exists() and not target.exists():
            os.replace(aside, target)
        raise
    _remove(aside)


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
    staging and aside folders (including older versions' names)."""
    name = target.name
    leftovers = sorted(target.parent.glob(f".{glob.escape(name)}.old*"), key=lambda p: p.lstat().st_mtime)
    if not target.exists() and not target.is_symlink():
        restorable = [p for p in leftovers if p.is_dir() and not p.is_symlink()]
        if restorable:
            os.replace(restorable[-1], target)
    stagings = list(target.parent.glob(f".{glob.escape(name)}.staging*"))
    for staging in stagings:
        _carry_back(staging, target)
    for leftover in [*leftovers, *stagings]:
        _remove(leftover)


def _carry_back(staging: Path, target: Path) -> None:
    """Move the entries listed in ``staging``'s :data:`CARRIED` file back into ``target``."""
    try:
        names = (staging / CARRIED).read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in names:
        if not name or "/" in name or name in (".", ".."):
            continue
        source, destination = staging / name, target / name
        if os.path.lexists(source) and not os.path.lexists(destination):
            target.mkdir(exist_ok=True)
            os.replace(source, destination)


def _remove(path: Path) -> None:
    """Remove a folder tree, or a symlink without following it; nothing if absent."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
