"""Read a feed from a local file: the fetch step of a site whose ``feed`` is a path.

A path in sites.yaml becomes the ``file:`` URI of the absolute path
(:mod:`config`); :func:`read` turns it into the same :class:`Fetched` a
200 would be, so parse, decide and store treat it like any feed, and an
unchanged file is not parsed again (its hash is the same). No HTTP request
is made and the host limits do not apply. Only a source configured as a
file is read this way: a URL a feed or a page gives (a redirect, an
advertised feed) is never a local file (:mod:`fetch` and :mod:`urls` accept
http(s) only).
"""

from __future__ import annotations

import os
import stat
import time
from urllib.parse import unquote, urlsplit

from syndicator.errors import FeedError
from syndicator.model import Failed, Fetched, FetchRequest


def path_of(url: str) -> str:
    """The file system path of a ``file:`` URI (str -> str), as :meth:`pathlib.Path.as_uri` wrote it."""
    return unquote(urlsplit(url).path)


def read(request: FetchRequest, max_bytes: int) -> Fetched | Failed:
    """The local file of ``request.source``, as a 200 would give it.

    Args:
        request: the source's request; ``source`` is a ``file:`` URI.
        max_bytes: the largest file accepted, bytes (``max_bytes`` setting).
    Returns:
        Fetched (no request counted, no headers), or Failed of kind
        ``file`` (missing, unreadable, not a regular file) or ``too_large``,
        whose message names the file but not its folder (it is published).
    """
    started = time.monotonic()
    path = path_of(request.source)
    name = os.path.basename(path)  # messages are shown on the sites page: no path of this machine
    try:
        # O_NONBLOCK: opening a named pipe must not wait for a writer; it is refused below.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(descriptor, "rb") as file:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return _failed(request, f"{name} is not a regular file")
            body = file.read(max_bytes + 1)
    except OSError as error:
        return _failed(request, f"cannot read {name}: {error.strerror or type(error).__name__}")
    if len(body) > max_bytes:
        return Failed(
            FeedError(request.source, f"{name} is larger than max_bytes ({max_bytes} bytes)", kind="too_large"),
            requests=0,
        )
    return Fetched(request.source, body, elapsed=time.monotonic() - started, requests=0)


def _failed(request: FetchRequest, message: str) -> Failed:
    return Failed(FeedError(request.source, message, kind="file"), requests=0)
