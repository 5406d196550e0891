"""Loopback fixtures for the ``syndicator serve`` tests (tests/test_serve.py).

* :class:`WebSubHub`: flask-websub's hub on 127.0.0.1, its tasks run at once
  (celery in eager mode), recording every request it is sent.
* :class:`FeedServer`: Atom feeds on 127.0.0.1 whose posts a test changes,
  advertising a hub in a ``Link`` header or in the document, recording every
  request (arrival time, path, User-Agent).
* :class:`ServeProcess`: ``syndicator serve`` as a subprocess, its stderr in
  a file, with helpers to read ``/metrics`` and to wait for a condition.
* :func:`wait_for`: poll a condition until it holds or a deadline passes.

Nothing here reaches beyond the loopback interface, and every wait is bounded.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from xml.sax.saxutils import escape, quoteattr

import requests
from prometheus_client.parser import text_string_to_metric_families
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

T = TypeVar("T")

#: The venv's ``syndicator`` script (the CLI has no ``__main__`` guard).
SYNDICATOR = Path(sys.executable).with_name("syndicator")
#: The longest any wait of these tests lasts, seconds.
WAIT = 20.0
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (a listener started soon after gets it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(
    condition: Callable[[], T],
    what: str,
    timeout: float = WAIT,
    details: Callable[[], str] | None = None,
    interval: float = 0.05,
) -> T:
    """Call ``condition`` until it returns something true, and return that; fail after ``timeout`` seconds.

    ``what`` says what was awaited; ``details`` (e.g. a log) is added to the failure.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            extra = details() if details is not None else ""
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what}\n{extra}")
        time.sleep(interval)


def session() -> requests.Session:
    """A requests session that ignores the machine's proxy settings (every server here is loopback)."""
    s = requests.Session()
    s.trust_env = False
    return s


def sign(secret: str, body: bytes, method: str = "sha256") -> str:
    """An ``X-Hub-Signature`` value for ``body`` keyed with ``secret``."""
    return f"{method}={hmac.new(secret.encode(), body, getattr(hashlib, method)).hexdigest()}"


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class Running:
    """A WSGI app served on 127.0.0.1 (a free port) by a thread until :meth:`stop`."""

    def __init__(self, app: Any) -> None:
        self.server: BaseWSGIServer = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_QuietHandler)
        self.url = f"http://127.0.0.1:{self.server.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()
        self.stopped = False

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=WAIT)


# --- the hub -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HubRequest:
    """One POST to the hub: hub.mode, hub.topic, hub.callback (the latter two may be "")."""

    mode: str
    topic: str
    callback: str
    lease_seconds: str


class WebSubHub:
    """flask-websub's hub at ``<url>``; see the module docstring.

    ``lease``: the lease it grants (seconds), whatever is asked; None: what is
    asked, at most 31 days (flask-websub's default bounds).
    """

    def __init__(self, folder: Path, lease: int | None = None) -> None:
        from celery import Celery  # type: ignore[import-untyped]
        from flask import Flask, request
        from flask_websub.hub import Hub, SQLite3HubStorage  # type: ignore[import-untyped]

        celery = Celery("hub", broker="memory://", backend="cache+memory://")
        celery.conf.task_always_eager = True
        app = Flask("hub")
        app.config["PUBLISH_SUPPORTED"] = True  # the blueprint reads the app's config, not the Hub's
        if lease is not None:  # the blueprint clamps the lease asked to these (get_lease_seconds)
            app.config.update(HUB_MIN_LEASE_SECONDS=lease, HUB_DEFAULT_LEASE_SECONDS=lease, HUB_MAX_LEASE_SECONDS=lease)
        self.database = folder / "hub.sqlite"
        self.storage = SQLite3HubStorage(str(self.database))
        hub = Hub(self.storage, celery, PUBLISH_SUPPORTED=True, REQUEST_TIMEOUT=5, MAX_ATTEMPTS=1)
        self.requests: list[HubRequest] = []
        self._lock = threading.Lock()

        @app.before_request
        def record() -> None:
            if request.method == "POST":
                form = request.form
                with self._lock:
                    self.requests.append(
                        HubRequest(
                            form.get("hub.mode", ""),
                            form.get("hub.topic", ""),
                            form.get("hub.callback", ""),
                            form.get("hub.lease_seconds", ""),
                        )
                    )

        app.register_blueprint(hub.build_blueprint(url_prefix="/hub"))
        self._running = Running(app)
        self.url = self._running.url + "/hub"

    def stop(self) -> None:
        """Stop answering: from now on the hub's port refuses connections."""
        self._running.stop()

    def sent(self, mode: str, topic: str | None = None) -> list[HubRequest]:
        """The requests of ``mode`` (for ``topic``) the hub received, oldest first."""
        with self._lock:
            return [r for r in self.requests if r.mode == mode and (topic is None or r.topic == topic)]

    def callbacks(self, topic: str) -> list[tuple[str, str]]:
        """(callback URL, secret) of the subscriptions the hub holds for ``topic`` whose lease runs."""
        return [(str(row[0]), str(row[1])) for row in self.storage.get_callbacks(topic)]

    def rows(self) -> list[tuple[str, str]]:
        """(topic, callback) of every subscription the hub stores, expired or not."""
        with sqlite3.connect(self.database, timeout=10) as db:
            return [(str(t), str(c)) for t, c in db.execute("SELECT topic_url, callback_url FROM hub ORDER BY 1, 2")]

    def publish(self, topic: str) -> requests.Response:
        """Tell the hub ``topic`` changed; it fetches the topic and delivers it before it answers (eager)."""
        with session() as s:
            return s.post(self.url, data={"hub.mode": "publish", "hub.topic": topic}, timeout=WAIT)


# --- the feeds -----------------------------------------------------------------------------------------------------


@dataclass
class Post:
    key: str
    title: str
    date: datetime


@dataclass
class Feed:
    """One Atom feed at ``/feeds/<name>.xml``.

    ``advertise``: where the hub and self links go: "header" (``Link``),
    "document" (``atom:link``), or None (no hub).
    """

    name: str
    server: FeedServer
    hub: str | None = None
    advertise: str | None = "header"
    posts: list[Post] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The feed's URL, which its ``rel="self"`` link names."""
        return f"{self.server.url}/feeds/{self.name}.xml"

    def add(self, title: str, date: datetime | None = None) -> Post:
        """Publish a post (dated now unless ``date``)."""
        post = Post(f"urn:syndicator-test:{self.name}:{len(self.posts) + 1}", title, date or datetime.now(UTC))
        self.posts.append(post)
        return post

    def links(self) -> dict[str, str]:
        if self.hub is None or self.advertise != "header":
            return {}
        return {"Link": f'<{self.hub}>; rel="hub", <{self.url}>; rel="self"'}

    def document(self, posts: list[Post] | None = None, padding: int = 0) -> bytes:
        """The feed as Atom (bytes): ``posts`` (default: all), newest first, and ``padding`` spaces at the end."""
        chosen = sorted(self.posts if posts is None else posts, key=lambda p: p.date, reverse=True)
        links = f'<link rel="alternate" href="https://{self.name}.example.org/"/>'
        if self.hub is not None and self.advertise == "document":
            links += (
                f'<link rel={quoteattr("hub")} href={quoteattr(self.hub)}/><link rel="self" '
                f"href={quoteattr(self.url)}/>"
            )
        updated = max((p.date for p in chosen), default=datetime(2026, 1, 1, tzinfo=UTC))
        entries = "".join(
            f"<entry><id>{escape(p.key)}</id><title>{escape(p.title)}</title><updated>{_iso(p.date)}</updated>"
            f'<link href="https://{self.name}.example.org/{p.key.rsplit(":", 1)[1]}"/></entry>'
            for p in chosen
        )
        text = (
            f'<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
            f"<title>{escape(self.name)}</title><id>urn:syndicator-test:{self.name}</id>"
            f"<updated>{_iso(updated)}</updated>{links}{entries}" + " " * padding + "</feed>\n"
        )
        return text.encode()


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Hit:
    """One request the feed server received: when (time.monotonic()), its path, its User-Agent."""

    at: float
    path: str
    user_agent: str


class FeedServer:
    """Atom feeds on 127.0.0.1; see the module docstring."""

    def __init__(self) -> None:
        self.feeds: dict[str, Feed] = {}
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        self._running = Running(self._app)
        self.url = self._running.url

    def stop(self) -> None:
        self._running.stop()

    def feed(
        self,
        name: str,
        hub: str | None = None,
        advertise: str | None = "header",
        posts: int = 3,
        start: datetime | None = None,
        every: timedelta = timedelta(hours=1),
    ) -> Feed:
        """A new feed with ``posts`` posts ``every`` apart, the newest at ``start`` (default: now)."""
        feed = Feed(name, self, hub, advertise)
        newest = start or datetime.now(UTC)
        for n in range(posts):
            feed.add(f"{name} post {n + 1}", newest - every * (posts - 1 - n))
        self.feeds[name] = feed
        return feed

    def syndicator_gets(self, name: str | None = None) -> list[Hit]:
        """The GETs of syndicator (its User-Agent names it), of feed ``name`` or of any."""
        with self._lock:
            return [
                hit
                for hit in self.hits
                if "syndicator" in hit.user_agent and (name is None or hit.path == f"/feeds/{name}.xml")
            ]

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        with self._lock:
            self.hits.append(Hit(time.monotonic(), path, environ.get("HTTP_USER_AGENT", "")))
        name = path.removeprefix("/feeds/").removesuffix(".xml")
        feed = self.feeds.get(name) if path.startswith("/feeds/") else None
        if feed is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found\n"]
        body = feed.document()
        start_response(
            "200 OK",
            [("Content-Type", "application/atom+xml"), ("Content-Length", str(len(body))), *feed.links().items()],
        )
        return [body]


# --- syndicator serve ----------------------------------------------------------------------------------------------


def metric_samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """{(sample name, labels): value} of a Prometheus text exposition (parsing must succeed)."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


class ServeProcess:
    """``syndicator serve --config CONFIG`` as a subprocess on a free loopback port.

    With ``public`` its ``--public-url`` is its own address, so hubs on
    loopback reach its callbacks. With ``verbose`` it runs with ``-v``. Its stderr goes to
    ``<folder>/serve-N.log``.
    """

    count = 0

    def __init__(self, config: Path, *args: str, public: bool = True, verbose: bool = True) -> None:
        ServeProcess.count += 1
        self.config = config
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = config.parent / f"serve-{ServeProcess.count}.log"
        command = [
            str(SYNDICATOR),
            "serve",
            "--config",
            str(config),
            "--listen",
            f"127.0.0.1:{self.port}",
            *(["--public-url", self.base] if public else []),
            *(["-v"] if verbose else []),
            *args,
        ]
        env = {k: v for k, v in os.environ.items() if k.upper() not in _PROXY_VARIABLES}
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env, cwd=config.parent
            )
        self.http = session()

    # --- reading

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def details(self) -> str:
        state = "running" if self.process.poll() is None else f"exited with {self.process.returncode}"
        return f"--- serve ({state}) log {self.log_path}:\n{self.log()[-6000:]}"

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.http.get(self.base + path, timeout=WAIT, **kwargs)

    def metrics(self) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        answer = self.get("/metrics")
        assert answer.status_code == 200, answer.text
        return metric_samples(answer.text)

    def metric(self, name: str, **labels: str) -> float | None:
        """The value of sample ``name`` with exactly ``labels``, or None when /metrics lacks it."""
        return self.metrics().get((name, frozenset(labels.items())))

    def wait_for(self, condition: Callable[[], T], what: str, timeout: float = WAIT) -> T:
        """:func:`wait_for`, failing at once (with the log) if the process ended."""

        def check() -> T:
            if self.process.poll() is not None:
                raise AssertionError(f"serve ended while waiting for {what}\n{self.details()}")
            try:
                return condition()
            except (requests.ConnectionError, FileNotFoundError, sqlite3.OperationalError):
                return None  # type: ignore[return-value]  # not up yet: try again

        return wait_for(check, what, timeout, self.details)

    def wait_healthy(self) -> None:
        self.wait_for(lambda: self.get("/healthz").status_code == 200, "/healthz to answer 200")

    def wait_metric(self, name: str, value: float, timeout: float = WAIT, **labels: str) -> None:
        self.wait_for(lambda: self.metric(name, **labels) == value, f"{name}{labels or ''} == {value}", timeout)

    # --- ending

    def terminate(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` and wait for the exit code (killed, and a failure, if it does not end in time)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"serve did not stop within {WAIT:g} s of signal {sig}\n{self.details()}") from None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT)
        self.http.close()


@contextmanager
def sqlite(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to an SQLite file (another process may be writing it), closed on exit."""
    db = sqlite3.connect(path, timeout=10)
    try:
        yield db
    finally:
        db.close()
