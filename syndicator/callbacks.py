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

import logging
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from . import push, websub
from .metrics import Metrics, metrics_app
from .pushstate import PushState

__all__ = ["CALLBACK_PREFIX", "App", "callback_url"]

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

    def __init__(self, push_state: PushState, metrics: Metrics, max_bytes: int, wake: Callable[[], None],
                 healthy: Callable[[], tuple[bool, str]],
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
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
                return _answer(start_response, "405 Method Not Allowed", b"GET or POST\n",
                               headers=[("Allow", "GET, POST")])
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
                log.info("serve: %s verified the subscription to %s (lease %s s)", changed.hub, changed.topic,
                         changed.lease_seconds)
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
            log.log(logging.WARNING if loud else logging.INFO, "serve: discarded a%s notification for %s (%s)%s",
                    "n unsigned" if verdict == "unsigned" else " badly signed", subscription.topic,
                    environ.get("REMOTE_ADDR", "?"), "; more in the next minute are logged with -v" if loud else "")
            return _answer(start_response, "202 Accepted", b"")
        content_type = environ.get("CONTENT_TYPE", "")[:200]
        self.push_state.receive(token, body, content_type, now)  # durable before the 2xx
        self.metrics.notification("accepted")
        self.wake()
        return _answer(start_response, "202 Accepted", b"")


def _answer(start_response: StartResponse, status: str, body: bytes, content_type: str = "text/plain; charset=utf-8",
            headers: list[tuple[str, str]] | None = None) -> list[bytes]:
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body))),
                            ("Cache-Control", "no-store"), *(headers or [])])
    return [body]
