"""Advisory locks on files, for one process at a time in a folder (the cache, the output).

A lock is a file beside what it guards, locked with the operating
system's advisory lock (filelock: ``fcntl.flock`` on POSIX), so a killed
process never leaves it held. Nothing waits: a lock held elsewhere is
refused at once, and the caller says who holds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

__all__ = ["Lock", "take"]

#: A held lock (filelock.FileLock): ``release()`` lets it go.
Lock = Any


def take(path: Path, mode: int | None = None) -> Lock | None:
    """The lock of ``path`` (a file, created if missing with ``mode`` when given), held by this process,
    or None when another process holds it.

    Raises:
        OSError: the lock file cannot be created or locked.
    """
    lock = FileLock(str(path), timeout=0) if mode is None else FileLock(str(path), timeout=0, mode=mode)
    try:
        lock.acquire()
    except Timeout:
        return None
    return lock
