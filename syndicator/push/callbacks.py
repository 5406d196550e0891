"""The HTTP face of ``syndicator serve``: WebSub callbacks, ``/metrics`` and ``/healthz``, as one WSGI app.

Served by waitress (:mod:`serve`) on the HTTP server's threads. Routes:

* ``GET /websub/<token>``: a hub verifying our intent, or denying a
  subscription (WebSub 5.2, 5.3). The answer (:func:`push.verify`) is
  the challenge for a callback, topic and mode we asked for, else 404.
* ``POST /websub/<token>``: a content distribution (WebSub 7). The raw
  body, capped at ``max_bytes``, is checked against ``X-Hub-Signature``
  (HMAC over the exact bytes, constant-time compare: :func:`websub.signature_valid`).
  A verified notification is committed to the inbox (:mod:`pushstate`)
  before the 202 is sent, and the serve loop is woken; an unsigned or
  badly signed one is acknowledged with 202 too (WebSub 7.1 allows it, and
  a hub told otherwise retries a forgery), counted and discarded; a
  callback we do not know answers 410 Gone, so its hub stops.
* ``GET /metrics``: :class:`metrics.Metrics` in the Prometheus text format.
* ``GET /healthz``: 200 ``ok`` while the serve loop turns, else 503 and why.

The handlers do no parsing and no fetching: a notification's feed is read
by the serve loop, never on the request path (seed 003).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from syndicator.errors import ConfigError
from syndicator.metrics import Metrics, metrics_app
from syndicator.push import subscriptions as push
from syndicator.push import websub
from syndicator.state.pushstate import PushState

__all__ = [
    "CALLBACK_PREFIX",
    "App",
    "address",
    "callback_url",
    "connection_limit",
    "create_server",
    "listen",
    "stop_server",
]

#: The path under which callbacks live: ``<public URL>/websub/<token>``.
CALLBACK_PREFIX = "/websub/"
#: Discarded notifications are a warning at most once in this many seconds per callback (else info):
#: a flood of forgeries must not flood the log.
WARN_EVERY = 60.0
log = logging.getLogger("syndicator")
StartResponse = Callable[[str, list[tuple[str, str]]], Any]


def callback_url(public_url: str, token: str) -> str:
    """The callback URL of a subscription: ``public_url`` (no trailing slash needed) + /websub/ + token."""
    return public_url.rstrip("/") + CALLBACK_PREFIX + token


class App:
    """The WSGI application; see the module docstring.

    Args:
        push_state: the subscriptions and the inbox.
        metrics: the process's instruments.
        max_bytes: the largest notification body accepted (bytes); larger gets 413.
        wake: called after a notification was stored, from the request's thread.
        healthy: returns (ok, one line) for ``/healthz``.
        clock: the current time (UTC); injectable for tests.
    """

    def __init__(
        self,
        push_state: PushState,
        metrics: Metrics,
        max_bytes: int,
        wake: Callable[[], None],
        healthy: Callable[[], tuple[bool, str]],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.push_state = push_state
        self.metrics = metrics
        self.max_bytes = max_bytes
        self.wake = wake
        self.healthy = healthy
        self.clock = clock
        self._warned: dict[str, float] = {}
        self._status = metrics_app(metrics, healthy)  # /metrics and /healthz, as a worker serves them

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method, path = environ.get("REQUEST_METHOD", "GET"), environ.get("PATH_INFO", "")
        try:
            if path in ("/metrics", "/healthz") and method in ("GET", "HEAD"):
                return self._status(environ, start_response)
            if CALLBACK_PREFIX in path:
                token = path.rsplit(CALLBACK_PREFIX, 1)[1]
                if method == "GET":
                    return self._verify(token, environ, start_response)
                if method == "POST":
                    return self._notification(token, environ, start_response)
                return _answer(
                    start_response, "405 Method Not Allowed", b"GET or POST\n", headers=[("Allow", "GET, POST")]
                )
            return _answer(start_response, "404 Not Found", b"not found\n")
        except Exception:  # a bug of ours: the hub retries; the loop and the server go on
            log.exception("serve: the request %s %s failed", method, path)
            return _answer(start_response, "500 Internal Server Error", b"internal error\n")

    def _verify(self, token: str, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        params = dict(parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True))
        subscription = self.push_state.by_token(token) if token else None
        verdict = push.verify(subscription, params, self.clock())
        if verdict.challenge is None or subscription is None:
            return _answer(start_response, "404 Not Found", b"not found\n")
        if verdict.forget:
            self.push_state.delete(subscription.source)
            log.info("serve: %s unsubscribed %s", subscription.hub, subscription.topic)
        elif verdict.subscription is not None:
            self.push_state.save(verdict.subscription)
            changed = verdict.subscription
            if changed.state == "live":
                log.info(
                    "serve: %s verified the subscription to %s (lease %s s)",
                    changed.hub,
                    changed.topic,
                    changed.lease_seconds,
                )
            else:
                log.warning("serve: %s", changed.error)
        self.wake()
        return _answer(start_response, "200 OK", verdict.challenge.encode())

    def _notification(self, token: str, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        subscription = self.push_state.by_token(token) if token else None
        if subscription is None:
            self.metrics.notification("unknown_callback")
            return _answer(start_response, "410 Gone", b"no such subscription\n")
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > self.max_bytes:
            self.metrics.notification("too_large")
            return _answer(start_response, "413 Content Too Large", b"too large\n")
        body = environ["wsgi.input"].read(self.max_bytes + 1) if length or "wsgi.input" in environ else b""
        if len(body) > self.max_bytes:
            self.metrics.notification("too_large")
            return _answer(start_response, "413 Content Too Large", b"too large\n")
        now = self.clock()
        signature = environ.get("HTTP_X_HUB_SIGNATURE")
        if not websub.signature_valid(signature, subscription.secret, body):
            verdict = "unsigned" if not signature else "bad_signature"
            self.metrics.notification(verdict)
            self.push_state.reject(token, now)
            moment = time.monotonic()
            loud = moment - self._warned.get(token, -WARN_EVERY) >= WARN_EVERY
            if loud:
                self._warned[token] = moment
            log.log(
                logging.WARNING if loud else logging.INFO,
                "serve: discarded a%s notification for %s (%s)%s",
                "n unsigned" if verdict == "unsigned" else " badly signed",
                subscription.topic,
                environ.get("REMOTE_ADDR", "?"),
                "; more in the next minute are logged with -v" if loud else "",
            )
            return _answer(start_response, "202 Accepted", b"")
        content_type = environ.get("CONTENT_TYPE", "")[:200]
        self.push_state.receive(token, body, content_type, now)  # durable before the 2xx
        self.metrics.notification("accepted")
        self.wake()
        return _answer(start_response, "202 Accepted", b"")


def _answer(
    start_response: StartResponse,
    status: str,
    body: bytes,
    content_type: str = "text/plain; charset=utf-8",
    headers: list[tuple[str, str]] | None = None,
) -> list[bytes]:
    start_response(
        status,
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
            *(headers or []),
        ],
    )
    return [body]


# --- the HTTP server ---------------------------------------------------------------------------------------------

#: A request must arrive whole (request line, headers and body) within this many seconds of its first byte;
#: a client that trickles one (slowloris) is disconnected. Enough for a ``max_bytes`` body at a few hundred KB/s.
REQUEST_DEADLINE = 30.0
#: A keep-alive connection with no request under way is closed after this many seconds (waitress's channel_timeout).
IDLE_TIMEOUT = 5.0
#: How often the connections are checked against those two limits, seconds (waitress's cleanup_interval).
CHECK_EVERY = 1.0
#: The most connections held at once, whatever the file descriptor limit allows.
MAX_CONNECTIONS = 4000
#: File descriptors kept apart from the connections: databases, outbound fetches, logs, templates.
FD_RESERVE = 256
#: The largest request line plus headers accepted, bytes (a hub's are well under 2 KB).
MAX_HEADER_BYTES = 16384


def connection_limit() -> int:
    """How many connections the HTTP server may hold (int): :data:`MAX_CONNECTIONS`, or fewer when the
    process's file descriptor limit is lower. The soft limit is raised first, up to the hard one.

    Every connection costs one descriptor; waitress stops accepting at its limit, so a limit it cannot
    reach (descriptors run out first) would fail accept() instead.
    """
    try:
        import resource
    except ImportError:  # not POSIX
        return 500
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MAX_CONNECTIONS + FD_RESERVE
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(16, min(MAX_CONNECTIONS, soft - FD_RESERVE))


def create_server(app: Any, host: str, port: int, max_body: int) -> Any:
    """A waitress server (bound, not yet running) for ``app``, hardened against slow and smuggling clients.

    * a request with both ``Content-Length`` and ``Transfer-Encoding``, or with ``Transfer-Encoding``
      in HTTP/1.0, is answered 400 and its connection closed, before it reaches the app (RFC 9112 6.1
      and 6.3: such framing is how a request is smuggled past a proxy that reads the other header);
    * a request must arrive whole within :data:`REQUEST_DEADLINE` seconds of its first byte, and an idle
      keep-alive connection is closed after :data:`IDLE_TIMEOUT` s, checked every :data:`CHECK_EVERY` s;
    * at most :func:`connection_limit` connections, served with poll() (select() cannot wait on a
      descriptor numbered 1024 or above), headers of at most :data:`MAX_HEADER_BYTES`.

    Raises:
        OSError: the address cannot be bound.
        ValueError: ``host`` is no address and resolves to none, or to several.
    """
    from waitress.server import create_server as waitress_server

    server: Any = waitress_server(
        app,
        host=host,
        port=port,
        threads=4,
        max_request_body_size=max_body,
        channel_timeout=IDLE_TIMEOUT,
        cleanup_interval=CHECK_EVERY,
        connection_limit=connection_limit(),
        max_request_header_size=MAX_HEADER_BYTES,
        ident="syndicator",
        clear_untrusted_proxy_headers=True,
        asyncore_use_poll=True,
    )
    if not hasattr(server, "maintenance"):  # a MultiSocketServer: the host named several addresses
        server.close()
        raise ValueError(f"{host} names several addresses; give one")
    server.channel_class = _channel_class()
    plain = server.maintenance

    def maintenance(now: float) -> None:
        plain(now)  # idle channels
        cutoff = time.monotonic() - REQUEST_DEADLINE
        for channel in list(server.active_channels.values()):
            request = channel.request
            if request is not None and not request.completed and getattr(request, "started", cutoff) < cutoff:
                channel.will_close = True  # closed by the loop at its next turn

    server.maintenance = maintenance
    return server


def listen(app: Any, host: str, port: int, max_body: int) -> Any:
    """:func:`create_server` for ``serve --listen HOST:PORT``: a waitress server, bound, not yet running.

    Raises:
        ConfigError: the address cannot be bound or resolved (one line naming it).
    """
    try:
        return create_server(app, host, port, max_body)
    except (OSError, ValueError) as error:  # ValueError: a host that is no address and resolves to none
        raise ConfigError(
            f"--listen {address(host, port)}: cannot listen there ({getattr(error, 'strerror', None) or error})"
        ) from error


def address(host: str, port: int) -> str:
    """HOST:PORT, an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def stop_server(server: Any) -> None:
    """Stop a running server of :func:`create_server` cleanly: no new connection, and the requests it holds
    are finished (waiting at most 10 s); a notification they carry is committed before its answer.

    The listening socket is closed from the server's own thread: closed from another, it could vanish
    between that thread listing the sockets and waiting on them. The close runs there instead (waitress's
    trigger), waited for at most 5 s.
    """
    closed = threading.Event()

    def close() -> None:
        try:
            server.close()
        finally:
            closed.set()

    server.trigger.pull_trigger(close)
    closed.wait(5)
    server.task_dispatcher.shutdown(cancel_pending=False, timeout=10)


def _channel_class() -> type:
    """waitress's channel, reading requests with :class:`_Parser` (built here: serve alone loads waitress)."""
    from waitress.channel import HTTPChannel
    from waitress.parser import HTTPRequestParser, ParsingError

    class Parser(HTTPRequestParser):
        def __init__(self, adj: Any) -> None:
            super().__init__(adj)
            self.started = time.monotonic()  # the request's first byte (the parser is made when it arrives)

        def parse_header(self, header_plus: bytes) -> None:
            super().parse_header(header_plus)
            if self.chunked and "CONTENT_LENGTH" in self.headers:
                raise ParsingError("both Content-Length and Transfer-Encoding")
            if "TRANSFER_ENCODING" in self.headers:  # left by waitress in HTTP/1.0 only
                raise ParsingError("Transfer-Encoding in an HTTP/1.0 request")

    class Channel(HTTPChannel):
        parser_class = Parser

    return Channel
