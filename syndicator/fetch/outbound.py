"""The one policy for every request syndicator sends: feed fetches, WebSub hub requests and webhooks.

requests and urllib3 are imported inside :mod:`syndicator.fetch` only; what
:mod:`push` needs of them (a session, a POST, its errors) it gets here.
Every outbound request:

* sends the planet's User-Agent and never a ``.netrc`` credential
  (requests' ``trust_env`` is off; what it would read from the environment
  is read here by hand);
* goes through the proxy the environment names for its URL, as curl and
  requests read them (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``,
  ``NO_PROXY``, lower case too: :func:`proxies`);
* trusts the CA bundle the environment names (:data:`CA_VARIABLES`,
  :func:`environment_ca_bundle`), else requests' own; one naming a missing
  path is a ConfigError when the session is made;
* keeps no cookie a server sets (a fetch keeps one for its redirect chain
  only, in a jar of its own);
* runs on connections the total deadline can cut (:class:`DeadlineAdapter`,
  :mod:`deadline`) and that :mod:`netguard` screens while the caller is
  inside :func:`netguard.screening`.

:func:`post` is the POST of hub requests and webhooks: one request, no
redirect followed, under a total deadline; a request that gets no answer
raises :class:`OutboundError`, whose ``kind`` says why.
"""

from __future__ import annotations

import http.cookiejar
import os
import socket
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter

from syndicator.errors import ConfigError
from syndicator.fetch import netguard
from syndicator.fetch.answer import reason, response_headers
from syndicator.fetch.deadline import DEADLINES, POOL_CLASSES

#: The session type the callers name (requests'); made by :func:`new_session`.
Session = requests.Session

#: Environment variables naming a CA bundle (a file, or a folder of certificates), in the order
#: they are read: requests' own two, then OpenSSL's.
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR")


def environment_ca_bundle() -> str | None:
    """The CA bundle the environment names (:data:`CA_VARIABLES`, the first set and non-empty), or None.

    Raises:
        ConfigError: the variable names no file or folder (requests would
            fail every https request with it).
    """
    name = next((name for name in CA_VARIABLES if os.environ.get(name)), None)
    if name is None:
        return None
    if not os.path.exists(os.environ[name]):
        raise ConfigError(f"{name}={os.environ[name]}: no such CA bundle file or folder")
    return os.environ[name]


def proxies(url: str) -> dict[str, str] | None:
    """The proxies the environment names for ``url`` (requests' reading of HTTP(S)_PROXY, ALL_PROXY
    and NO_PROXY), for requests' ``proxies=``; None when the environment names no proxy at all."""
    if not urllib.request.getproxies():
        return None
    return dict(requests.utils.get_environ_proxies(url))


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter with connections whose sockets the deadline watchdog can cut (:mod:`deadline`)."""

    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        super().init_poolmanager(*args, **kwargs)  # type: ignore[arg-type]
        self.poolmanager.pool_classes_by_scheme = dict(POOL_CLASSES)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> urllib3.PoolManager:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = dict(POOL_CLASSES)  # a proxied request keeps its deadline too
        return manager


def new_session(
    user_agent: str | None,
    *,
    ca_bundle: str | None = None,
    adapter: HTTPAdapter | None = None,
    factory: Callable[[], requests.Session] = requests.Session,
) -> requests.Session:
    """A session under the policy (module docstring); close it when done.

    Args:
        user_agent: the User-Agent every request sends, beside requests'
            other default headers; None: no default header at all (each
            request sends its own, as the fetcher's do).
        ca_bundle: the CA bundle to trust, read before by
            :func:`environment_ca_bundle`; None reads the environment now.
        adapter: the connections' adapter for http and https (one shared by
            several sessions shares their pools); None: a new
            :class:`DeadlineAdapter`.
        factory: makes the bare session (a requests.Session subclass).
    Returns:
        the session. Proxies are given per request (:func:`proxies`), since
        ``trust_env`` is off.
    Raises:
        ConfigError: a CA bundle variable names a missing path.
    """
    verify = ca_bundle or environment_ca_bundle()
    made = factory()
    made.trust_env = False
    made.verify = verify or True
    made.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    if user_agent is None:
        made.headers.clear()
    else:
        made.headers["User-Agent"] = user_agent
    adapter = adapter or DeadlineAdapter()
    made.mount("http://", adapter)
    made.mount("https://", adapter)
    return made


@dataclass(frozen=True)
class Answer:
    """What a server answered a :func:`post`.

    Attributes:
        status: the HTTP status (int); reason: its reason phrase as sent ("" for none).
        headers: every field, by lower-case name, each one str (:func:`answer.response_headers`:
            a singleton sent twice with two values is left out).
        body: the first bytes of the body, as many as :func:`post` was asked to read (no coding undone).
    """

    status: int
    reason: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class OutboundError(Exception):
    """A request that got no answer (no status line and headers).

    Attributes:
        kind: why: "deadline" (the total deadline passed), "private_address"
            (:mod:`netguard` refused the address), "connect_timeout",
            "timeout" (no byte for ``timeout`` seconds), "connection" (no
            connection: refused, a name that does not resolve, the proxy,
            TLS), or "request" (any other failure of the request).
        name: the class name of the HTTP library's error ("ConnectionError", "ReadTimeout").
        detail: that error's message, on one line.
        reason: the innermost message of its chain, on one line, at most 200 characters.
        refused: the netguard.PrivateAddress of a "private_address" failure, else None.
    """

    def __init__(self, kind: str, error: BaseException, refused: netguard.PrivateAddress | None = None) -> None:
        self.kind = kind
        self.name = type(error).__name__
        self.detail = " ".join(str(error).split())
        self.reason = reason(error)
        self.refused = refused
        super().__init__(f"{self.name}: {self.detail}")


def post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    timeout: float,
    user_agent: str | None = None,
    *,
    session: requests.Session | None = None,
    deadline: float | None = None,
    read: int = 0,
    enough: Callable[[bytes], bool] = lambda _: False,
) -> Answer:
    """POST ``body`` to ``url`` under the policy, and read its answer. No redirect is followed.

    Args:
        headers: the request's headers (Content-Type...).
        timeout: seconds to connect and between bytes.
        user_agent: sent as User-Agent when given (else the session's).
        session: the session to send with (:func:`new_session`); None: one made
            for this POST with ``user_agent``.
        deadline: seconds the whole POST may take, from name resolution to
            the last byte read (the :mod:`deadline` watchdog cuts it then);
            None: ``timeout``.
        read: bytes of the body to read at most (0: none); reading stops
            sooner at its end, at the deadline, or once ``enough(the bytes so
            far)`` is true. A failure while reading keeps what arrived.
    Returns:
        the :class:`Answer`, whatever its status.
    Raises:
        OutboundError: no answer arrived (see its ``kind``).
        ConfigError: ``session`` is None and a CA bundle variable names a missing path.
    """
    own = session is None
    sender = new_session(user_agent) if session is None else session
    sent = dict(headers) if user_agent is None else {**headers, "User-Agent": user_agent}
    total = timeout if deadline is None else deadline
    budget = DEADLINES.start(total, socket.getaddrinfo)  # looked up now: a test may stand in for it
    try:
        try:
            response = sender.post(
                url, data=body, headers=sent, timeout=timeout, allow_redirects=False, stream=True, proxies=proxies(url)
            )
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, netguard.PrivateAddress) as error:
            raise _failure(error) from error
        try:
            names = tuple(dict.fromkeys(name.lower() for name in response.headers))
            start = _start(response, read, enough)
            return Answer(response.status_code, str(response.reason or ""), response_headers(response, names), start)
        finally:
            response.close()
    finally:
        DEADLINES.stop(budget)
        if own:
            sender.close()


def _failure(error: Exception) -> OutboundError:
    """The OutboundError for a request's failure, classified by the exception's type and the deadline."""
    if DEADLINES.expired():  # the watchdog cut the socket, or no time was left to resolve or connect
        return OutboundError("deadline", error)
    refused = netguard.private_cause(error)
    if refused is not None:
        return OutboundError("private_address", error, refused)
    if isinstance(error, requests.exceptions.ConnectTimeout):
        return OutboundError("connect_timeout", error)
    if isinstance(error, requests.exceptions.Timeout):
        return OutboundError("timeout", error)
    if isinstance(error, requests.exceptions.ConnectionError):
        return OutboundError("connection", error)
    return OutboundError("request", error)


def _start(response: requests.Response, read: int, enough: Callable[[bytes], bool]) -> bytes:
    """The first bytes of the body: at most ``read``, until its end, the deadline or ``enough``."""
    chunks: list[bytes] = []
    size = 0
    try:
        while size < read and (DEADLINES.remaining() or 0) > 0:
            chunk = response.raw.read1(read - size, decode_content=False)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if enough(b"".join(chunks)):
                break
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError):
        pass  # what arrived is kept
    return b"".join(chunks)
