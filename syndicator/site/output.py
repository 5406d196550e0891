"""The output folder: the real folder a publish writes, its lock, and the checks before writing it.

Before :mod:`publish` writes anything, the output folder must be one
syndicator may publish into:

* when the output is a symlink, the folder it points to is published into
  and the link is left as it is (:func:`target_of`);
* an output folder without its owner's write permission (``chmod 555``) is
  refused before anything is written, even for root: read-only is taken as
  "do not publish here" (:func:`writable`, :func:`check_output`);
* what syndicator did not write is never deleted: the :data:`MARKER` file
  lists every file a publish wrote, and anything else in the output (a
  ``.git`` folder, ``CNAME``, ``.nojekyll``, a page added by hand) is carried
  into the new site (:func:`foreign_entries`, listed in :data:`CARRIED`);
* a folder without the :data:`MARKER` file is never published into unless it
  is empty or a git checkout (it holds ``.git``, as a GitHub Pages branch
  does) in which no file has the name of one to be written, so a mistyped
  ``--output`` cannot overwrite an unrelated folder.

:func:`output_lock` is held by a build from start to end: a second build on
the same output (even with another cache) stops before writing anything.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from syndicator.errors import OutputLockedError, RenderError
from syndicator.state import locks

#: A file in every published folder: a header line, then each file the publish wrote, one per line.
MARKER = ".syndicator-output"
_MARKER_HEADER = "written by syndicator: the files listed below are replaced on each build, nothing else is touched"
#: In a staging folder: the names of the output's entries moved into it (:mod:`publish`, :mod:`leftovers`).
CARRIED = ".syndicator-carried"
_PAGE = re.compile(r"page[0-9]+\.html")  # the front page's older pages (render.py)
_SHOWN = 5  # files named in a message before "and N more"


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
    try:
        lock = locks.take(target.with_name(f".{target.name}.lock"))
    except OSError as e:
        raise RenderError(f"{target.parent}: cannot lock the output folder there: {e.strerror or e}") from e
    if lock is None:
        raise OutputLockedError(
            f"{target}: another syndicator build or serve is publishing into this "
            "folder; wait for the build to finish, or stop the serve"
        )
    try:
        yield
    finally:
        lock.release()


def check_output(output: Path, names: Iterable[str]) -> None:
    """Refuse, before a build fetches or stores anything, an output folder :func:`publish.publish` would
    refuse: not a folder, read-only, or holding files it did not write (:func:`foreign_entries`) where
    the build would publish ``names`` (the site's top-level files as known before rendering; any
    ``pageN.html`` of the folder is taken as one too). Same lines as publish's.

    Raises:
        RenderError: naming the folder, and the files in the way (exit code 6); a folder that does not
            exist yet passes.
    """
    target = target_of(output)
    if writable(target) is not None:
        pages = [entry.name for entry in _entries(target) if _PAGE.fullmatch(entry.name)]
        foreign_entries(target, dict.fromkeys([*names, *pages]))


def writable(target: Path) -> os.stat_result | None:
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


def foreign_entries(target: Path, files: Mapping[str, object]) -> list[str]:
    """The names of the entries of ``target`` that the last publish did not write and this one does not either.

    Raises:
        RenderError: ``target`` has no :data:`MARKER` and is neither empty nor a
            git checkout, or it is a git checkout holding a file of its own with the name of one of
            ``files``; the message names the first few of them and their count.
    """
    names = sorted(entry.name for entry in _entries(target))
    written = written_files(target)
    ours = {name.split("/")[0] for name in (*files, *(written or ()))} | {MARKER, CARRIED}
    foreign = [name for name in names if name not in ours]
    if written is not None or not names:
        return foreign
    if ".git" not in names:
        raise RenderError(
            f"{target}: refusing to publish into a folder syndicator did not write (no {MARKER} file; "
            f"it holds {_some(names)}); choose an empty or new --output folder, or a git checkout"
        )
    in_the_way = [name for name in names if name in ours]
    if in_the_way:
        raise RenderError(
            f"{target}: a git checkout holding files syndicator did not write and would replace: "
            f"{_some(in_the_way)}; remove them (git rm) and commit, then build again; other files are kept"
        )
    return foreign


def _entries(target: Path) -> list[os.DirEntry[str]]:
    """The entries of the folder ``target``; none when it does not exist.

    Raises:
        RenderError: it cannot be read.
    """
    try:
        return list(os.scandir(target))
    except FileNotFoundError:
        return []
    except OSError as e:
        raise RenderError(f"{target}: cannot read the output folder: {e.strerror or e}") from e


def _some(names: list[str]) -> str:
    """The first few of ``names`` and how many there are in all: "a, b, c, d, e and 7 more" (str)."""
    shown = ", ".join(names[:_SHOWN])
    return shown if len(names) <= _SHOWN else f"{shown} and {len(names) - _SHOWN} more ({len(names)} in all)"


def marker_text(names: Iterable[str]) -> str:
    """The text of the :data:`MARKER` file of a publish that writes the files ``names`` (str)."""
    return "\n".join([_MARKER_HEADER, *sorted(names)]) + "\n"


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
