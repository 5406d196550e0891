"""Keep-alive for fetches: how many hosts' idle connections are kept, and when a connection goes back to its pool.

Connections are reused across fetches and threads (RFC 9112 section 9.3,
persistence), but only one whose answer ended cleanly: its unread body (a
redirect's, an error page's) read and dropped when it is short and arrives
at once, so nothing left of it can be taken for the next answer. Anything
else closes the connection. A helper of fetch/http.py.
"""

from __future__ import annotations

import contextlib
import time

import requests
import urllib3

from syndicator.fetch.deadline import DEADLINES

#: Hosts whose idle connections are kept at most (the least recently used beyond are closed); fewer when
#: the process may open few files (:func:`host_pools`).
HOST_POOLS = 256
#: An unread body of at most this many bytes, arriving within DRAIN_SECONDS, is read and dropped
#: so that its connection can be reused.
DRAIN_BYTES = 65536
DRAIN_SECONDS = 0.25


def host_pools(per_host: int) -> int:
    """How many hosts' idle connections to keep: HOST_POOLS, or fewer so that they hold at most
    a quarter of the files this process may open (a soft limit of 256 is common), at least 4."""
    try:
        import resource  # noqa: PLC0415 - Unix only

        limit, infinite = resource.getrlimit(resource.RLIMIT_NOFILE)[0], resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError):
        limit, infinite = 256, -1
    if limit == infinite or limit <= 0:
        return HOST_POOLS
    return max(4, min(HOST_POOLS, limit // 4 // max(1, per_host)))


def recycle(response: requests.Response, intact: bool) -> None:
    """Give the connection back to its pool if its answer ended cleanly, else close it.

    An intact answer's unread body (a redirect's, an error page's) is read
    and dropped if it is at most :data:`DRAIN_BYTES` long and arrives within
    :data:`DRAIN_SECONDS`; a body with no framing (its end is the
    connection's close), one cut by the deadline, a longer or a slower one
    closes the connection instead, so nothing left of it can be taken for
    the next answer and no worker waits on it.
    """
    raw = response.raw
    # A 204 or 304 has no body, whatever its headers say (RFC 9112 section 6.3); after an interim
    # 1xx answer the real one is still to come, so its connection is never reused.
    bodiless = response.status_code in (204, 304)
    reusable = intact and (bodiless or (response.status_code >= 200 and framed(raw) and _drained(raw)))
    if reusable and DEADLINES.detach():
        answer = getattr(raw, "_fp", None)  # http.client's reader of this answer; the socket stays open
        if answer is not None:
            answer.close()
        raw.release_conn()
    else:
        response.close()


def _drained(raw: urllib3.response.BaseHTTPResponse) -> bool:
    """True once the rest of the body was read and dropped within DRAIN_BYTES and DRAIN_SECONDS."""
    if (raw.length_remaining or 0) > DRAIN_BYTES:
        return False
    sock = getattr(getattr(raw, "connection", None), "sock", None)
    if sock is None:
        return True  # nothing left to read: the connection is already done with
    kept, stop, drained = sock.gettimeout(), time.monotonic() + DRAIN_SECONDS, 0
    try:
        while (left := stop - time.monotonic()) > 0:
            sock.settimeout(left)
            chunk = raw.read1(65536, decode_content=False)
            if not chunk:
                return True
            drained += len(chunk)
            if drained > DRAIN_BYTES:
                return False
        return False
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError):
        return False
    finally:
        with contextlib.suppress(OSError):
            sock.settimeout(kept)


def framed(raw: urllib3.response.BaseHTTPResponse) -> bool:
    """True if the body's end is marked in the message (Content-Length or chunked; RFC 9112 section 6.3)."""
    return raw.length_remaining is not None or bool(getattr(raw, "chunked", False))
