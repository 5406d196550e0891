"""The files of the cache folder: private to their owner, never reached through a symlink.

The cache holds what no other local user should read: the hub secrets of
``push.sqlite`` (WebSub, RFC 7518 HMAC keys), the validators and history of
``state.sqlite``. So:

* a cache folder syndicator creates is ``0700`` (its parents get the usual
  mode); an existing folder keeps its mode;
* a state file (a database, its ``-wal``, ``-shm`` and ``-journal``
  companions, a lock) is created ``0600`` (``O_NOFOLLOW``) before SQLite or
  filelock opens it (SQLite gives the companions the database's mode); one
  found with group or other permission bits, as earlier versions wrote
  them, loses them. An existing one is checked by path, never opened and
  closed: a close would drop the locks a SQLite connection of this process
  holds on it;
* a state file that is a symlink, or not a regular file, or that cannot be
  read and written, is refused with one line (:class:`StoreError`, exit code
  5): a planted ``state.sqlite`` link would have a database written over its
  target. The check and SQLite's own open are two steps, so a link planted
  between them by someone who can write the cache folder is not caught;
  the folder's ``0700`` keeps others out.

The state file published with the site (``syndicator-state.json.gz``,
statefile.py) is a copy with the site's normal modes.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from syndicator.errors import StoreError

#: The mode of a state file syndicator creates: read and write for its owner only.
FILE_MODE = 0o600
#: The mode of a cache folder syndicator creates.
FOLDER_MODE = 0o700
#: What SQLite writes beside a database (WAL mode; a rollback journal).
COMPANIONS = ("-wal", "-shm", "-journal")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def make_folder(cache: Path) -> None:
    """Create the cache folder ``cache`` (mode :data:`FOLDER_MODE`) and its parents, unless it exists.

    Raises:
        StoreError: it cannot be created, or it is not a folder.
    """
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.mkdir(mode=FOLDER_MODE)
    except FileExistsError:
        if not cache.is_dir():
            raise StoreError(f"{cache}: the cache folder is not a folder") from None
    except OSError as error:
        raise StoreError(f"{cache}: cannot create the cache folder: {error.strerror or error}") from error


def prepare(path: Path, companions: tuple[str, ...] = ()) -> None:
    """Make ``path`` a private regular file that this process can read and write (created empty,
    mode :data:`FILE_MODE`, if missing), and check the ``companions`` (suffixes: ``-wal``) beside it
    that exist.

    Raises:
        StoreError: ``path`` or a companion is a symlink or not a regular file, or cannot be
            created, read or written.
    """
    _keep_private(path, create=True)
    for suffix in companions:
        companion = path.with_name(path.name + suffix)
        if os.path.lexists(companion):
            _keep_private(companion, create=False)


def _keep_private(path: Path, create: bool) -> None:
    """Refuse a link or a special file at ``path``, or one this process cannot read and write;
    create it (``O_NOFOLLOW``, :data:`FILE_MODE`) when missing and ``create``; take group and other
    bits off it when it is this user's.

    An existing file is checked by path and never opened here: closing a descriptor drops every
    POSIX lock this process holds on the file, the locks of a SQLite connection to it included
    (SQLite, "How To Corrupt An SQLite Database File", section 2.2). A connection that lost its
    locks lets another process delete the ``-wal`` and ``-shm`` it still reads.
    """
    try:
        status = path.lstat()
    except FileNotFoundError:
        if not create:
            return
        status = _create(path)
    except OSError as error:
        raise StoreError(
            f"{path}: cannot read the state file: {error.strerror or error}; check its "
            "permissions and the cache folder's"
        ) from error
    _refuse_special(path, status)
    if not os.access(path, os.R_OK | os.W_OK, effective_ids=True):
        raise StoreError(
            f"{path}: cannot open the state file: Permission denied; check its permissions and the cache folder's"
        )
    if status.st_mode & 0o077 and status.st_uid == os.geteuid():
        try:
            os.chmod(path, stat.S_IMODE(status.st_mode) & 0o700)
        except OSError as error:
            raise StoreError(f"{path}: cannot make the state file private: {error.strerror or error}") from error


def _create(path: Path) -> os.stat_result:
    """Create ``path`` empty (mode :data:`FILE_MODE`, ``O_NOFOLLOW``) unless it exists; its status."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, FILE_MODE)
    except OSError as error:
        if error.errno == errno.ELOOP:
            _refuse_special(path, path.lstat())
        raise StoreError(
            f"{path}: cannot open the state file: {error.strerror or error}; check its "
            "permissions and the cache folder's"
        ) from error
    try:
        return os.fstat(descriptor)
    finally:
        os.close(descriptor)


def _refuse_special(path: Path, status: os.stat_result) -> None:
    """Raise StoreError when ``status`` (of ``path``, not followed) is not a regular file's."""
    if stat.S_ISLNK(status.st_mode):
        raise StoreError(
            f"{path}: a state file is a symbolic link (to {os.readlink(path)}); syndicator does "
            "not follow links in its cache folder: remove the link"
        )
    if not stat.S_ISREG(status.st_mode):
        raise StoreError(f"{path}: a state file is not a regular file; move it aside")
