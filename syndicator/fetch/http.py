"""Conditional GET of one feed. Proxies, the CA bundle, the User-Agent rules and the connections' deadline
are :mod:`outbound`'s, the one policy of every request syndicator sends (hub requests and webhooks too).

Policy, all from seed 000 and RFC 9110:

* Validators are sent back byte for byte: ``If-None-Match`` carries the
  stored ETag (quotes and ``W/`` included) and ``If-Modified-Since`` the
  stored Last-Modified string. When both are held both are sent; RFC 9110
  section 13.2.2 makes a server evaluate If-None-Match first and ignore
  If-Modified-Since when it is present, so this is safe.
* Redirects are followed by hand, at most 5 hops; a loop is a failure.
  ``permanent_url`` is set only when every hop was 301 or 308. A
  redirect's body is never read. What an answer means (a 304, a redirect's
  Location, the body and its cap, Retry-After, the headers kept) is :mod:`answer`'s.
* Timeouts: ``timeout`` seconds to connect and between bytes, and a total
  deadline of ``2 * timeout`` for the whole fetch: name resolution,
  connect, headers and body, redirects and retry included (see
  :mod:`deadline`), so a slow name server or a server that drips one byte
  a second cannot hold a worker. An answer complete before the deadline is
  kept.
* The body is capped at ``max_bytes`` after decompression
  (``Accept-Encoding: gzip, br``: Brotli saves a fifth more bytes than gzip
  on feeds, and its decoder is bounded; see :mod:`answer`).
* Private networks (:mod:`netguard`): a URL learned from the network (a
  redirect target, or a feed followed from a page: any URL on another host
  than the configured one) reaches only public addresses, screened as the
  socket connects, unless ``allow_private``; a refusal is a
  ``private_address`` failure, made before connecting. A redirect to a URL
  with credentials (``user:password@``) is a ``redirect`` failure: never
  followed, so never stored.
* One retry (``retries``) after a transient failure (timeout, connection
  error, or a 5xx without ``Retry-After``) while the deadline leaves time. A 429, or any answer with
  ``Retry-After``, is not retried within the build: the schedule honours it.
* Cookies live for one redirect chain: a cookie set by a hop is sent on the
  later hops of the same chain that match it (domain, path, secure, expiry:
  RFC 6265 as :mod:`http.cookiejar` applies it), for publishers that gate a
  feed behind a redirect setting a cookie. Nothing is kept between fetches
  or attempts: a fresh fetch sends no cookie. Revisiting a URL is a loop
  only when no cookie changed in between.
* No Referer is sent, the URL is requested as given.
* A private feed's credential goes only to the configured feed's origin, on every hop; a 401 or 403
  to a request that carried it is a ``credentials`` failure (held until the credential changes), and
  no message holds its secret (:mod:`private`).
* A request may carry its own User-Agent, extra headers and timeout (a site's own settings,
  :class:`model.FetchRequest`): they replace the fetcher's for that fetch, on every hop and retry.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import socket
import threading
import time
from collections.abc import Generator
from dataclasses import MISSING, fields, replace
from types import SimpleNamespace
from typing import Any

import requests
import urllib3

from syndicator import __version__, urls
from syndicator.configtypes import Config
from syndicator.errors import FeedError, FetchError, HTTPStatusError
from syndicator.fetch import answer, keepalive, netguard, outbound, private
from syndicator.fetch.deadline import DEADLINES, Resolver, resolve
from syndicator.model import Failed, FetchRequest, FetchResult

MAX_REDIRECTS = 5
ACCEPT = (
    "application/atom+xml, application/rss+xml, application/feed+json, "
    "application/rdf+xml;q=0.9, application/xml;q=0.9, text/xml;q=0.9, "
    "application/json;q=0.8, */*;q=0.5"
)
#: The codings asked for; :mod:`coding` undoes these (and deflate, sent unasked by some servers).
ACCEPT_ENCODING = "gzip, br"
_PERMANENT = {301, 308}
_REDIRECT = {301, 302, 303, 307, 308}
#: A fetch with no sites.yaml: the defaults of Config's fields (:meth:`Fetcher.for_config`).
_NO_CONFIG = SimpleNamespace(**{field.name: field.default for field in fields(Config) if field.default is not MISSING})


class _Session(requests.Session):
    """A session that leaves redirects alone: :class:`Fetcher` follows them by hand.

    Even with ``allow_redirects=False`` requests prepares the next hop of
    every redirect: it reads the whole redirect body into memory (no
    ``max_bytes`` cap) and parses its Location with urllib, which raises
    ValueError on ``http://[oops/``.
    """

    def resolve_redirects(self, *args: Any, **kwargs: Any) -> Generator[Any, None, None]:
        yield from ()


class Fetcher:
    """Fetches feeds over HTTP; safe to share between threads.

    Args:
        user_agent: the User-Agent header value.
        timeout: connect/read timeout in seconds; the total deadline of a
            fetch, name resolution, retries and redirects included, is twice this.
        retries: extra attempts after a transient failure (int >= 0).
        max_bytes: body cap after decompression, bytes.
        retry_delay: seconds to wait before a retry.
        resolver: turns a host name into addresses, with the signature of
            ``socket.getaddrinfo`` (the default); tests pass a slow one.
        per_host: connections kept open per host between fetches (the
            pool's per-host concurrency; int >= 1).
        allow_private: URLs learned from the network may reach private
            addresses (sites.yaml's ``allow_private_networks``; :mod:`netguard`).

    Connections are kept alive and reused across fetches and threads
    (RFC 9112 section 9.3, persistence): one pool of at most ``per_host``
    idle connections for each of the :data:`keepalive.HOST_POOLS` hosts used last. A
    connection goes back to its pool only when its answer was read to the
    end within the deadline; anything else closes it. Cookies never outlive
    one fetch's redirect chain. Call :meth:`close` when done.

    Proxies come from the environment as curl and requests read them
    (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``, lower case
    too), per URL, and the CA bundle from :data:`outbound.CA_VARIABLES` (read when the
    fetcher is made); credentials in ``.netrc`` are never sent.

    Raises:
        ConfigError: a CA bundle variable names a missing path (:func:`outbound.environment_ca_bundle`).
    """

    @classmethod
    def for_config(
        cls,
        config: Config | None,
        *,
        user_agent: str | None = None,
        timeout: float | None = None,
        retries: int | None = None,
        max_bytes: int | None = None,
    ) -> Fetcher:
        """The fetcher of a planet: its User-Agent, timeout, retries, body cap, per-host connections and
        private-network rule. The one place a Fetcher is made outside :mod:`fetch` (tests and benchmarks aside).

        Args:
            config: the planet's sites.yaml; None for none (discovery, ``import``, ``add``): the
                defaults of Config's fields, and the User-Agent ``syndicator/<version>`` (no contact URL).
            user_agent, timeout (seconds), retries, max_bytes (bytes): given instead of the config's.
        Raises:
            ConfigError: a CA bundle variable names a missing path.
        """
        settings = config if config is not None else _NO_CONFIG
        return cls(
            user_agent or (config.user_agent if config is not None else f"syndicator/{__version__}"),
            timeout=settings.timeout if timeout is None else timeout,
            retries=settings.retries if retries is None else retries,
            max_bytes=settings.max_bytes if max_bytes is None else max_bytes,
            per_host=settings.per_host_concurrency,
            allow_private=settings.allow_private_networks,
        )

    def __init__(
        self,
        user_agent: str,
        timeout: float = 15.0,
        retries: int = 1,
        max_bytes: int = 10 * 1024 * 1024,
        retry_delay: float = 1.0,
        resolver: Resolver = socket.getaddrinfo,
        per_host: int = 2,
        allow_private: bool = False,
    ) -> None:
        self.user_agent = user_agent
        self.allow_private = allow_private
        self.timeout = timeout
        self.retries = retries
        self.max_bytes = max_bytes
        self.retry_delay = retry_delay
        self.resolver = resolver
        self.ca_bundle = outbound.environment_ca_bundle()
        self._local = threading.local()
        self._adapter = outbound.DeadlineAdapter(
            pool_connections=keepalive.host_pools(per_host), pool_maxsize=max(1, per_host)
        )

    def close(self) -> None:
        """Close every kept connection (the fetcher still works after: it opens new ones)."""
        self._adapter.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a fetcher dropped without close() leaves no socket open
        with contextlib.suppress(Exception):
            self.close()

    @property
    def deadline(self) -> float:
        """Seconds a whole fetch may take, name resolution, redirects and retry included (float)."""
        return 2 * self.timeout

    def deadline_of(self, request: FetchRequest) -> float:
        """Seconds the fetch of ``request`` may take: twice its own timeout, else :attr:`deadline` (float)."""
        return self.deadline if request.timeout is None else 2 * request.timeout

    def fetch(self, request: FetchRequest, budget: float | None = None) -> FetchResult:
        """Fetch ``request.url`` with conditional headers.

        Args:
            request: what to ask.
            budget: seconds this fetch may take, when less than
                :attr:`deadline` is left (a feed followed from a page shares
                the page's deadline); None: the whole deadline.
        Returns Fetched (200), NotModified (304) or Failed; never raises for
        a feed's trouble. Failed carries a FetchError or HTTPStatusError whose
        ``kind`` classifies it (see failures.KINDS). An answer that was
        complete before the deadline is kept, whenever the fetch returns.
        """
        started = time.monotonic()
        self._local.requests = 0
        self._local.timeout = self.timeout if request.timeout is None else request.timeout
        deadline = self.deadline_of(request)
        self._local.total = deadline if budget is None else min(budget, deadline)
        if self._local.total <= 0:
            error = FetchError(request.url, f"no time left within {deadline:g} s", kind="timeout")
            return Failed(error, requests=0)
        timer = DEADLINES.start(self._local.total, self.resolver)
        try:
            result = self._fetch(request, started, started + self._local.total)
        finally:
            DEADLINES.stop(timer)
        return replace(result, requests=self._local.requests)

    def _fetch(self, request: FetchRequest, started: float, deadline: float) -> FetchResult:
        attempt = 0
        while True:
            try:
                return self._attempt(request, started)
            except FeedError as raised:
                error = private.scrub(raised, request.credential)
                out_of_time = time.monotonic() + self.retry_delay >= deadline
                if attempt >= self.retries or not answer.transient(error) or out_of_time:
                    return Failed(error, elapsed=time.monotonic() - started)
            attempt += 1
            time.sleep(self.retry_delay)

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            # The outbound policy's (no .netrc, no cookie kept, the CA bundle read when the fetcher was made);
            # one adapter, so one pool per host, for every thread; the headers are each request's.
            session = outbound.new_session(None, ca_bundle=self.ca_bundle, adapter=self._adapter, factory=_Session)
            self._local.session = session
        return session

    def _headers(self, request: FetchRequest, url: str) -> requests.structures.CaseInsensitiveDict[str]:
        headers = requests.structures.CaseInsensitiveDict({"User-Agent": request.user_agent or self.user_agent})
        headers["Accept"] = ACCEPT
        headers.update(request.headers)  # a site's own, Accept included (config/sitesettings.py refuses the rest)
        headers["Accept-Encoding"] = ACCEPT_ENCODING
        if url == (request.validators_url or request.url):  # validators are bound to their URL
            if request.etag is not None:
                headers["If-None-Match"] = request.etag
            if request.last_modified is not None:
                headers["If-Modified-Since"] = request.last_modified
        # Last: a site's own headers never replace a private feed's credential.
        headers.update(private.headers_for(request.credential, request.source, url))
        return headers

    def _attempt(self, request: FetchRequest, started: float) -> FetchResult:
        url, permanent = request.url, True
        jar = requests.cookies.RequestsCookieJar()  # this chain's cookies only: nothing outlives the attempt
        jar.set_policy(http.cookiejar.DefaultCookiePolicy())
        seen = {(url, _cookies(jar))}
        for hop in range(MAX_REDIRECTS + 1):
            self._check_learned(request, url)
            response = self._get(request, url, jar, redirected=hop > 0)
            intact = False  # the answer was read as HTTP frames it: the connection may serve another request
            try:
                if response.status_code in _REDIRECT:
                    requests.cookies.extract_cookies_to_jar(jar, response.request, response.raw)
                    intact = True
                    url = private.without_token(
                        request.credential, answer.redirect_target(request.source, url, response)
                    )
                    permanent = permanent and response.status_code in _PERMANENT
                    if (url, _cookies(jar)) in seen:  # the same URL again with a new cookie is no loop
                        raise FetchError(request.source, f"redirect loop at {url}", kind="redirect")
                    seen.add((url, _cookies(jar)))
                    continue
                result = self._finish(request, url, response, permanent, started)
                intact = True
                return result
            except HTTPStatusError as error:
                intact = True
                sent = request.credential is not None and private.same_origin(request.source, url)
                if sent and error.kind == "http_401":  # the credential was sent, and refused
                    error.kind = "credentials"
                raise
            finally:
                keepalive.recycle(response, intact)
        raise FetchError(request.source, f"more than {MAX_REDIRECTS} redirects", kind="redirect")

    def _check_learned(self, request: FetchRequest, url: str) -> None:
        """Refuse a learned URL (not the configured one) with credentials, or on a private IP literal.

        Raises:
            FetchError: kind "redirect" (credentials) or "private_address".
        """
        problem = None if url == request.source else netguard.refusal(request.source, url, self.allow_private)
        if problem is not None:
            shown = urls.hostname(url) or "?"  # never the credentials
            kind = "redirect" if netguard.has_credentials(url) else "private_address"
            raise FetchError(request.source, f"{problem} (to {shown})" if kind == "redirect" else problem, kind=kind)

    def _get(
        self, request: FetchRequest, url: str, jar: requests.cookies.RequestsCookieJar, redirected: bool
    ) -> requests.Response:
        self._local.requests += 1
        proxies = outbound.proxies(url)
        screened = netguard.screened(request.source, url, self.allow_private)
        try:
            with netguard.screening(screened):
                if screened and proxies and requests.utils.select_proxy(url, proxies):
                    self._screen_name(url)
                return self._session().get(
                    private.url_for(request.credential, request.source, url),
                    headers=self._headers(request, url),
                    cookies=jar,
                    stream=True,
                    allow_redirects=False,
                    timeout=self._local.timeout,
                    proxies=proxies,
                )
        except (
            requests.exceptions.RequestException,
            urllib3.exceptions.LocationValueError,
            netguard.PrivateAddress,
        ) as e:
            raise self._failure(url, e, redirected) from e  # LocationValueError: a host urllib3 cannot encode

    def _screen_name(self, url: str) -> None:
        """Through a proxy: screen every address the URL's host resolves to here (:mod:`netguard`).

        Raises:
            netguard.PrivateAddress: one of them is not public.
            requests.exceptions.ConnectionError: the name does not resolve.
        """
        host = urls.hostname(url)
        try:
            found = resolve(self.resolver, host, 443, DEADLINES.remaining())
        except OSError as error:
            raise requests.exceptions.ConnectionError(f"cannot resolve {host}: {error}") from error
        for *_, address in found:
            netguard.screen(host, str(address[0]))

    def _failure(self, url: str, error: Exception, redirected: bool = False) -> FetchError:
        """Classify a requests/urllib3 exception (:func:`answer.failure`)."""
        return answer.failure(url, error, self._local.timeout, self._local.total, redirected)

    def _finish(
        self, request: FetchRequest, url: str, response: requests.Response, permanent: bool, started: float
    ) -> FetchResult:
        def read() -> bytes:
            return answer.read_body(url, response, self.max_bytes, self._local.timeout, self._local.total)

        return answer.outcome(request, url, response, permanent, started, read)


def _cookies(jar: http.cookiejar.CookieJar) -> frozenset[tuple[str, str, str, str | None]]:
    """What a jar holds, as a value: (domain, path, name, value) of every cookie."""
    return frozenset((c.domain, c.path, c.name, c.value) for c in jar)
