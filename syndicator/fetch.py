"""Conditional GET of one feed. The only module that imports requests.

Policy, all from seed 000 and RFC 9110:

* Validators are sent back byte for byte: ``If-None-Match`` carries the
  stored ETag (quotes and ``W/`` included) and ``If-Modified-Since`` the
  stored Last-Modified string. When both are held both are sent; RFC 9110
  section 13.2.2 makes a server evaluate If-None-Match first and ignore
  If-Modified-Since when it is present, so this is safe.
* 304 is a successful fetch (:class:`NotModified`).
* Redirects are followed by hand, at most 5 hops; a loop is a failure.
  ``permanent_url`` is set only when every hop was 301 or 308.
* Timeouts: ``timeout`` seconds to connect and between bytes, and a total
  deadline of ``2 * timeout`` for the whole fetch, redirects and retry
  included, so a server that drips one byte a second cannot hold a worker.
* The body is capped at ``max_bytes`` after decompression (gzip accepted).
* One retry (``retries``) after a transient failure (timeout, connection
  error, or a 5xx without ``Retry-After``) while the deadline leaves time. A 429, or any answer with
  ``Retry-After``, is not retried within the build: the schedule honours it.
* A ``Retry-After`` HTTP-date is measured from the response's ``Date``.
* No cookies are kept, no Referer is sent, the URL is requested as given.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import socket
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .dates import http_date
from .errors import FeedError, FetchError, HTTPStatusError
from .failures import kind_of
from .model import Failed, Fetched, FetchRequest, FetchResult, NotModified

MAX_REDIRECTS = 5
ACCEPT = (
    "application/atom+xml, application/rss+xml, application/feed+json, "
    "application/rdf+xml;q=0.9, application/xml;q=0.9, text/xml;q=0.9, "
    "application/json;q=0.8, */*;q=0.5"
)
_PERMANENT = {301, 308}
_REDIRECT = {301, 302, 303, 307, 308}
_KEEP_HEADERS = ("content-type", "etag", "last-modified", "cache-control", "expires",
                 "retry-after", "link", "date", "content-location")


class _Deadlines:
    """Cuts the socket of a fetch that passes its deadline, whatever it is blocked in.

    A read timeout only bounds the wait for each byte, so a server that sends
    its status line and headers one byte at a time could hold a worker for
    ever. The connection classes below register their socket for the calling
    thread when a response is awaited; a timer shuts that socket down at the
    deadline, which wakes the blocked read with an error.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: dict[int, socket.socket] = {}
        self._active: set[int] = set()
        self.expired: set[int] = set()

    def register(self, sock: socket.socket | None) -> None:
        """Note the socket the calling thread now waits on (called by the connections)."""
        with self._lock:
            if sock is not None and threading.get_ident() in self._active:
                self._sockets[threading.get_ident()] = sock

    def start(self, seconds: float) -> threading.Timer:
        """Arm the deadline of the calling thread's fetch, ``seconds`` from now."""
        ident = threading.get_ident()
        with self._lock:
            self._active.add(ident)
            self.expired.discard(ident)
        timer = threading.Timer(seconds, self._expire, (ident,))
        timer.daemon = True
        timer.start()
        return timer

    def stop(self, timer: threading.Timer) -> bool:
        """Disarm the calling thread's deadline; True if it had expired."""
        timer.cancel()
        ident = threading.get_ident()
        with self._lock:
            self._active.discard(ident)
            self._sockets.pop(ident, None)
            return ident in self.expired

    def _expire(self, ident: int) -> None:
        with self._lock:
            if ident not in self._active:
                return
            self.expired.add(ident)
            sock = self._sockets.get(ident)
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed: nothing left to cut
                sock.shutdown(socket.SHUT_RDWR)


_DEADLINES = _Deadlines()


class _HTTPConnection(HTTPConnection):
    def getresponse(self) -> urllib3.response.HTTPResponse:  # type: ignore[override]
        _DEADLINES.register(self.sock)
        return super().getresponse()


class _HTTPSConnection(HTTPSConnection):
    def getresponse(self) -> urllib3.response.HTTPResponse:  # type: ignore[override]
        _DEADLINES.register(self.sock)
        return super().getresponse()


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


class _DeadlineAdapter(HTTPAdapter):
    """requests' adapter with connections whose sockets the deadline timer can cut."""

    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        super().init_poolmanager(*args, **kwargs)  # type: ignore[arg-type]
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


class Fetcher:
    """Fetches feeds over HTTP; safe to share between threads.

    Args:
        user_agent: the User-Agent header value.
        timeout: connect/read timeout in seconds; the total deadline of a
            fetch, retries included, is twice this.
        retries: extra attempts after a transient failure (int >= 0).
        max_bytes: body cap after decompression, bytes.
        retry_delay: seconds to wait before a retry.
    """

    def __init__(self, user_agent: str, timeout: float = 15.0, retries: int = 1,
                 max_bytes: int = 10 * 1024 * 1024, retry_delay: float = 1.0) -> None:
        self.user_agent = user_agent
        self.timeout = timeout
        self.retries = retries
        self.max_bytes = max_bytes
        self.retry_delay = retry_delay
        self._local = threading.local()

    def fetch(self, request: FetchRequest) -> FetchResult:
        """Fetch ``request.url`` with conditional headers.

        Returns Fetched (200), NotModified (304) or Failed; never raises for
        a feed's trouble. Failed carries a FetchError or HTTPStatusError whose
        ``kind`` classifies it (see failures.KINDS).
        """
        started = time.monotonic()
        deadline = started + 2 * self.timeout
        self._local.requests = 0
        timer = _DEADLINES.start(deadline - started)
        try:
            result = self._fetch(request, started, deadline)
        finally:
            expired = _DEADLINES.stop(timer)
        if expired:  # the socket was cut: whatever was read is incomplete
            error = FetchError(request.url, f"no complete answer within {2 * self.timeout:g} s", kind="timeout")
            result = Failed(error, elapsed=time.monotonic() - started)
        return replace(result, requests=self._local.requests)

    def _fetch(self, request: FetchRequest, started: float, deadline: float) -> FetchResult:
        attempt = 0
        while True:
            try:
                return self._attempt(request, started, deadline)
            except FeedError as error:
                out_of_time = time.monotonic() + self.retry_delay >= deadline
                if attempt >= self.retries or not _transient(error) or out_of_time:
                    return Failed(error, elapsed=time.monotonic() - started)
            attempt += 1
            time.sleep(self.retry_delay)

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.trust_env = False  # no proxies or .netrc credentials from the environment
            session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
            session.headers.clear()
            adapter = _DeadlineAdapter()
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            self._local.session = session
        return session

    def _headers(self, request: FetchRequest, url: str) -> dict[str, str]:
        headers = {"User-Agent": self.user_agent, "Accept": ACCEPT, "Accept-Encoding": "gzip"}
        if url == (request.validators_url or request.url):  # validators are bound to their URL
            if request.etag is not None:
                headers["If-None-Match"] = request.etag
            if request.last_modified is not None:
                headers["If-Modified-Since"] = request.last_modified
        return headers

    def _attempt(self, request: FetchRequest, started: float, deadline: float) -> FetchResult:
        url, permanent, seen = request.url, True, {request.url}
        for _hop in range(MAX_REDIRECTS + 1):
            response = self._get(request, url)
            with response:
                if response.status_code in _REDIRECT:
                    target = response.headers.get("location")
                    if not target:
                        raise FetchError(url, f"HTTP {response.status_code} without Location", kind="redirect")
                    url = urljoin(url, target.strip())
                    permanent = permanent and response.status_code in _PERMANENT
                    if url in seen:
                        raise FetchError(request.source, f"redirect loop at {url}", kind="redirect")
                    if urlsplit(url).scheme not in ("http", "https"):
                        raise FetchError(request.source, f"redirect to a non-http(s) URL {url}", kind="redirect")
                    seen.add(url)
                    continue
                return self._finish(request, url, response, permanent, started, deadline)
        raise FetchError(request.source, f"more than {MAX_REDIRECTS} redirects", kind="redirect")

    def _get(self, request: FetchRequest, url: str) -> requests.Response:
        self._local.requests += 1
        try:
            return self._session().get(url, headers=self._headers(request, url), stream=True,
                                       allow_redirects=False, timeout=self.timeout)
        except requests.exceptions.SSLError as e:
            raise FetchError(url, f"TLS error: {_reason(e)}", kind="tls") from e
        except requests.exceptions.Timeout as e:
            raise FetchError(url, f"timed out after {self.timeout:g} s", kind="timeout") from e
        except requests.exceptions.RequestException as e:
            raise FetchError(url, f"connection failed: {_reason(e)}", kind="network") from e

    def _finish(self, request: FetchRequest, url: str, response: requests.Response,
                permanent: bool, started: float, deadline: float) -> FetchResult:
        headers = {k: response.headers[k] for k in _KEEP_HEADERS if k in response.headers}
        etag, modified = headers.get("etag"), headers.get("last-modified")
        new_url = url if permanent and url != request.url else None
        if response.status_code == 304:
            return NotModified(url=url, headers=headers, etag=etag, last_modified=modified,
                               permanent_url=new_url, elapsed=time.monotonic() - started)
        if response.status_code != 200:
            # An HTTP-date is measured against the server's own Date, else our clock.
            sent = http_date(headers.get("date")) or datetime.now(UTC)
            retry_after = parse_retry_after(headers.get("retry-after"), sent)
            raise HTTPStatusError(url, response.status_code, retry_after)
        body = self._read(url, response, deadline)
        return Fetched(url=url, body=body, headers=headers, etag=etag, last_modified=modified,
                       permanent_url=new_url, elapsed=time.monotonic() - started)

    def _read(self, url: str, response: requests.Response, deadline: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        try:
            # read1 returns what has arrived (decompressed); iter_content would block until a
            # whole 64 KB chunk came in, so a dripping server was never checked against the deadline.
            while chunk := response.raw.read1(65536, decode_content=True):
                size += len(chunk)
                if size > self.max_bytes:
                    raise FetchError(url, f"body larger than {self.max_bytes} bytes", kind="too_large")
                if time.monotonic() > deadline:
                    raise FetchError(url, f"body not complete within {2 * self.timeout:g} s", kind="timeout")
                chunks.append(chunk)
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError) as e:
            kind = "timeout" if "timed out" in str(e) else "network"
            raise FetchError(url, f"body read failed: {_reason(e)}", kind=kind) from e
        return b"".join(chunks)


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Read a Retry-After header (RFC 9110 section 10.2.3).

    Args:
        value: the header value: delay-seconds or an HTTP-date, or None.
        now: the current time (UTC) to measure an HTTP-date from.
    Returns:
        seconds to wait (float >= 0), or None when absent or unreadable.
    """
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    when = http_date(value)
    return None if when is None else max(0.0, (when - now).total_seconds())


def _transient(error: FeedError) -> bool:
    """True when the failure table says one more attempt may help (never with a Retry-After)."""
    if isinstance(error, HTTPStatusError) and error.retry_after is not None:
        return False
    return kind_of(error.kind).retry


def _reason(error: Exception) -> str:
    """The innermost message of a requests/urllib3 error chain, on one line."""
    while error.__context__ is not None and not isinstance(error.__context__, KeyboardInterrupt):
        error = error.__context__  # type: ignore[assignment]
    return " ".join(str(error).split())[:200] or type(error).__name__
