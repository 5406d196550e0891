"""``syndicator serve`` end to end: WebSub discovery, verification and signed delivery, polling as the safety net,
stopping and restarting, sites.yaml changes, /metrics and /healthz.

Everything runs on loopback: flask-websub's hub (tests/websub_hub.py), a feed server that records each request,
and ``serve`` itself, as a subprocess (its stderr in a file shown on failure) or, where time must pass faster than
the wall clock, as a :class:`serve.Server` in a thread with an injected clock. Every wait is a poll with a
deadline; nothing asserts how long anything took.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from prometheus_client.parser import text_string_to_metric_families

from syndicator.config.load import load_config
from syndicator.configtypes import Config
from syndicator.drivers.planner import recovery_rate
from syndicator.drivers.serve import ServeOptions, Server
from syndicator.push import subscriptions as push

from .conftest import write_config
from .test_worker import ALIAS_BOMB
from .websub_hub import (
    SYNDICATOR,
    WAIT,
    Feed,
    FeedServer,
    ServeProcess,
    WebSubHub,
    free_port,
    metric_samples,
    session,
    sign,
    sqlite,
    wait_for,
)

METRICS_PAGE = Path(__file__).parent.parent / "docs" / "metrics.md"


# --- fixtures and helpers ------------------------------------------------------------------------------------------


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[WebSubHub]:
    running = WebSubHub(tmp_path)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def feeds() -> Iterator[FeedServer]:
    running = FeedServer()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def spawn() -> Iterator[Callable[..., ServeProcess]]:
    """Start ``syndicator serve`` subprocesses; each is killed at teardown and its log printed (shown on failure)."""
    started: list[ServeProcess] = []

    def start(config: Path, *args: str, public: bool = True, verbose: bool = True) -> ServeProcess:
        process = ServeProcess(config, *args, public=public, verbose=verbose)
        started.append(process)
        return process

    try:
        yield start
    finally:
        for process in started:
            process.kill()
            print(process.details())


def site(feed: Feed, url: str | None = None) -> dict[str, str]:
    return {"name": feed.name.capitalize(), "feed": url or feed.url}


def page(folder: Path, name: str = "index.html") -> str:
    """A published file's text, "" while it does not exist."""
    try:
        return (folder / "public" / name).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def subscription(folder: Path, source: str) -> dict[str, Any] | None:
    """The row of ``source`` in cache/push.sqlite's subscriptions, or None."""
    with sqlite(folder / "cache" / "push.sqlite") as db:
        db.row_factory = sqlite3.Row
        row = db.execute("SELECT * FROM subscriptions WHERE source = ?", (source,)).fetchone()
        return dict(row) if row is not None else None


def inbox(folder: Path) -> list[tuple[bytes, str | None]]:
    """(body, verdict) of every notification row in cache/push.sqlite."""
    with sqlite(folder / "cache" / "push.sqlite") as db:
        return [(bytes(body), verdict) for body, verdict in db.execute("SELECT body, verdict FROM notifications")]


def stored_entries(folder: Path, text: str = "") -> int:
    """How many entries in cache/state.sqlite hold ``text`` (all of them for "")."""
    with sqlite(folder / "cache" / "state.sqlite") as db:
        return int(db.execute("SELECT COUNT(*) FROM entries WHERE instr(data, ?) > 0", (text,)).fetchone()[0])


def rewrite(config: Path, text: str, mtime_ns: int | None = None) -> None:
    """Replace sites.yaml at once (a reader never sees half of it), with a given modification time if asked."""
    fresh = config.with_name("sites.yaml.new")
    fresh.write_text(text, encoding="utf-8")
    if mtime_ns is not None:
        os.utime(fresh, ns=(mtime_ns, mtime_ns))
    os.replace(fresh, config)


def planet_yaml(sites: list[dict[str, str]], **settings: Any) -> str:
    return yaml.safe_dump(
        {"title": "Planet Test", "link": "https://planet.example.org/", **settings, "sites": sites}, sort_keys=False
    )


def live_subscription(serve: ServeProcess, folder: Path, source: str) -> dict[str, Any]:
    """Wait until ``source``'s subscription is live; return its row."""

    def live() -> dict[str, Any] | None:
        row = subscription(folder, source)
        return row if row is not None and row["state"] == "live" else None

    found = serve.wait_for(live, f"a live subscription for {source}")
    assert found is not None
    return found


def tampered(signature: str) -> str:
    """``signature`` with its last hex digit changed."""
    return signature[:-1] + ("1" if signature[-1] == "0" else "0")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    return subprocess.run([str(SYNDICATOR), *args], capture_output=True, text=True, timeout=60, env=env, check=False)


class Clock:
    """The wall clock (UTC) moved forward by what the test has advanced it."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, delta: timedelta) -> None:
        self.offset += delta


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname.lower()}: {record.getMessage()}")


class InProcess:
    """A :class:`Server` running in a thread; ``lines`` is what it logged, ``thread_errors`` the exceptions that
    ended any thread while it ran, as (thread name, exception)."""

    def __init__(self, server: Server, lines: list[str]) -> None:
        self.server = server
        self.lines = lines
        self.thread_errors: list[tuple[str, BaseException]] = []
        assert server.address is not None
        self.base = f"http://{server.address[0]}:{server.address[1]}"

    def metric(self, name: str, **labels: str) -> float | None:
        return metric_samples(self.server.metrics.text().decode()).get((name, frozenset(labels.items())))

    def details(self) -> str:
        return "--- serve log:\n" + "\n".join(self.lines[-60:])

    def wait_for(self, condition: Callable[[], Any], what: str, timeout: float = WAIT) -> Any:
        return wait_for(condition, what, timeout, self.details)


@contextmanager
def in_process(
    config_path: Path, clock: Clock, heartbeat: float | None = None, config: Config | None = None
) -> Iterator[InProcess]:
    """``serve`` as a :class:`Server` in a thread on a free loopback port (its own public URL), clock injected;
    ``config``: the configuration to serve, instead of the one ``config_path`` holds.

    On exit the server is stopped and its threads joined; an exception that ended one of its threads fails the
    test (``thread_errors`` holds them).
    """
    logger = logging.getLogger("syndicator")
    handler, level = _Lines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    port = free_port()
    server = Server(
        config or load_config(config_path),
        ServeOptions(
            host="127.0.0.1", port=port, public_url=f"http://127.0.0.1:{port}", heartbeat=heartbeat, clock=clock
        ),
    )
    failures: list[BaseException] = []
    thread_errors: list[tuple[str, BaseException]] = []
    previous_hook = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            thread_errors.append((args.thread.name if args.thread is not None else "?", args.exc_value))

    def run() -> None:
        try:
            server.run()
        except BaseException as error:  # reported by the test
            failures.append(error)

    before = set(threading.enumerate())
    threading.excepthook = hook
    thread = threading.Thread(target=run, name="serve", daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.ready.is_set() or failures, "the in-process server to listen")
        if failures:
            raise failures[0]
        running = InProcess(server, handler.lines)
        running.thread_errors = thread_errors
        started = [t for t in threading.enumerate() if t not in before and t.name in ("http", "poller", "subscriber")]
        yield running
    finally:
        server.stop()
        thread.join(timeout=WAIT)
        for other in locals().get("started", []):
            other.join(timeout=WAIT)
        threading.excepthook = previous_hook
        logger.removeHandler(handler)
        logger.setLevel(level)
        print("--- in-process serve log:\n" + "\n".join(handler.lines))
    assert not thread.is_alive(), "the in-process server did not stop"
    if failures:
        raise failures[0]
    assert thread_errors == [], thread_errors


# --- 1. discovery, subscription, verification of intent ------------------------------------------------------------


@pytest.mark.parametrize("advertise", ["header", "document"])
def test_a_feed_advertising_a_hub_gets_a_verified_lease(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess], advertise: str
) -> None:
    blog = feeds.feed("blog", hub=hub.url, advertise=advertise)
    plain = feeds.feed("plain")  # advertises no hub: polled only
    source = blog.url + "?from=sites.yaml"  # the topic must be the advertised self URL, not this one
    config = write_config(tmp_path, [site(blog, source), site(plain)])
    serve = spawn(config)

    serve.wait_metric("syndicator_live_leases", 1.0)
    row = live_subscription(serve, tmp_path, source)
    assert row["topic"] == blog.url
    assert row["hub"] == hub.url
    assert row["lease_seconds"] == push.LEASE_SECONDS  # the hub granted what was asked
    callback = f"{serve.base}/websub/{row['token']}"
    # The hub verified our intent and stores us (it stores after our answer to its check: wait for it).
    serve.wait_for(lambda: hub.callbacks(blog.url) == [(callback, row["secret"])], "the hub to store the subscription")
    asked = hub.sent("subscribe")
    assert [(r.topic, r.callback, r.lease_seconds) for r in asked] == [(blog.url, callback, str(push.LEASE_SECONDS))]
    serve.wait_metric("syndicator_hub_requests_total", 1.0, mode="subscribe", result="accepted")  # after the 202
    assert subscription(tmp_path, plain.url) is None
    assert f"verified the subscription to {blog.url}" in serve.log()


# --- 2. signed delivery ---------------------------------------------------------------------------------------------


def test_a_signed_delivery_is_published_without_a_poll(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    blog = feeds.feed("blog", hub=hub.url)
    config = write_config(tmp_path, [site(blog)])
    serve = spawn(config)
    live_subscription(serve, tmp_path, blog.url)
    serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the first poll's posts on the site")
    polls = len(feeds.syndicator_gets("blog"))
    assert polls == 1
    hub_fetches = sum(1 for hit in feeds.hits if "python-requests" in hit.user_agent)

    blog.add("Pushed post")
    answer = hub.publish(blog.url)
    assert answer.status_code == 202, answer.text
    assert sum(1 for hit in feeds.hits if "python-requests" in hit.user_agent) == hub_fetches + 1  # the hub's GET

    serve.wait_for(
        lambda: "Pushed post" in page(tmp_path) and "Pushed post" in page(tmp_path, "feed.xml"),
        "the pushed post in index.html and feed.xml",
    )
    assert len(feeds.syndicator_gets("blog")) == polls  # it came by push: syndicator did not fetch the feed
    assert stored_entries(tmp_path, "Pushed post") == 1
    serve.wait_metric("syndicator_push_notifications_total", 1.0, verdict="stored")
    assert serve.metric("syndicator_push_notifications_total", verdict="accepted") == 1.0
    row = subscription(tmp_path, blog.url)
    assert row is not None and row["notifications"] == 1 and row["last_push"] is not None
    assert [verdict for _, verdict in inbox(tmp_path)] == ["stored"]


# --- 3. forged and unsigned deliveries, unknown callbacks, bad verifications ---------------------------------------


def test_forged_and_unsigned_deliveries_are_acknowledged_counted_and_discarded(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    blog = feeds.feed("blog", hub=hub.url)
    config = write_config(tmp_path, [site(blog)])
    serve = spawn(config)
    row = live_subscription(serve, tmp_path, blog.url)
    token, secret = row["token"], row["secret"]
    callback = f"{serve.base}/websub/{token}"
    serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the first poll's posts on the site")

    forged = blog.document([*blog.posts, replace(blog.posts[0], key="urn:forged", title="Forged post")])
    other = blog.document(blog.posts[:1])
    content_type = {"Content-Type": "application/atom+xml"}
    with session() as http:
        answers = [
            http.post(callback, data=forged, headers=content_type, timeout=WAIT),
            http.post(
                callback,
                data=forged,
                timeout=WAIT,
                headers={**content_type, "X-Hub-Signature": sign("not the secret", forged)},
            ),
            http.post(
                callback, data=forged, timeout=WAIT, headers={**content_type, "X-Hub-Signature": sign(secret, other)}
            ),
            http.post(
                callback,
                data=forged,
                timeout=WAIT,
                headers={**content_type, "X-Hub-Signature": tampered(sign(secret, forged))},
            ),
        ]
        assert [a.status_code for a in answers] == [202, 202, 202, 202]
        assert serve.metric("syndicator_push_notifications_total", verdict="unsigned") == 1.0
        assert serve.metric("syndicator_push_notifications_total", verdict="bad_signature") == 3.0
        assert serve.metric("syndicator_push_notifications_total", verdict="accepted") == 0.0
        assert inbox(tmp_path) == []  # nothing committed
        rejected = subscription(tmp_path, blog.url)
        assert rejected is not None and rejected["rejected"] == 4 and rejected["notifications"] == 0

        # A callback we do not know: 410 Gone, so its hub stops.
        gone = http.post(
            f"{serve.base}/websub/{token[:-4]}abcd",
            data=forged,
            headers={**content_type, "X-Hub-Signature": sign(secret, forged)},
            timeout=WAIT,
        )
        assert gone.status_code == 410
        assert serve.metric("syndicator_push_notifications_total", verdict="unknown_callback") == 1.0

        # Verification of intent: the challenge is echoed only for our callback, topic and mode.
        def verify(url: str, **params: str) -> requests.Response:
            return http.get(
                url, params={"hub.challenge": "challenge-4711", "hub.lease_seconds": "432000", **params}, timeout=WAIT
            )

        right = verify(callback, **{"hub.mode": "subscribe", "hub.topic": blog.url})
        assert (right.status_code, right.text) == (200, "challenge-4711")  # a hub may re-verify a live lease
        for url, mode, topic in [
            (callback, "subscribe", blog.url + "?other"),
            (callback, "subscribe", feeds.url + "/feeds/other.xml"),
            (callback, "unsubscribe", blog.url),
            (callback, "publish", blog.url),
            (f"{serve.base}/websub/{token[:-4]}abcd", "subscribe", blog.url),
            (f"{serve.base}/websub/", "subscribe", blog.url),
        ]:
            wrong = verify(url, **{"hub.mode": mode, "hub.topic": topic})
            assert wrong.status_code == 404, (url, mode, topic)
            assert "challenge-4711" not in wrong.text
        assert subscription(tmp_path, blog.url) is not None  # the wrong unsubscribe forgot nothing

        # A genuine delivery sent after the forgeries is stored: once it shows, so would they have.
        genuine = blog.document([*blog.posts, replace(blog.posts[0], key="urn:genuine", title="Genuine post")])
        ok = http.post(
            callback, data=genuine, headers={**content_type, "X-Hub-Signature": sign(secret, genuine)}, timeout=WAIT
        )
        assert ok.status_code == 202
    serve.wait_for(
        lambda: "Genuine post" in page(tmp_path) and "Genuine post" in page(tmp_path, "feed.xml"),
        "the genuine delivery on the site",
    )
    assert stored_entries(tmp_path, "Genuine post") == 1
    for name in ("index.html", "feed.xml"):
        assert "Forged post" not in page(tmp_path, name)
    assert stored_entries(tmp_path, "Forged post") == 0
    assert stored_entries(tmp_path, "urn:forged") == 0
    assert all(b"Forged post" not in body for body, _ in inbox(tmp_path))


# --- 4. a notification delivered twice -----------------------------------------------------------------------------


def test_a_notification_delivered_twice_is_stored_once(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    blog = feeds.feed("blog", hub=hub.url)
    config = write_config(tmp_path, [site(blog)])
    serve = spawn(config)
    row = live_subscription(serve, tmp_path, blog.url)
    callback = f"{serve.base}/websub/{row['token']}"
    serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the first poll's posts on the site")
    entries = stored_entries(tmp_path)

    post = blog.add("Twice post")
    body = blog.document([post])  # only the new entry, as some hubs send
    headers = {"Content-Type": "application/atom+xml", "X-Hub-Signature": sign(row["secret"], body, "sha512")}
    with session() as http:
        for _ in range(2):
            assert http.post(callback, data=body, headers=headers, timeout=WAIT).status_code == 202
    committed = inbox(tmp_path)  # before the 202s: each row still pending (its body) or already stored
    assert len(committed) == 2 and all(
        stored == body or verdict in ("stored", "duplicate") for stored, verdict in committed
    )
    serve.wait_metric("syndicator_push_notifications_total", 1.0, verdict="duplicate")
    assert serve.metric("syndicator_push_notifications_total", verdict="stored") == 1.0
    serve.wait_for(lambda: "Twice post" in page(tmp_path, "feed.xml"), "the pushed post in feed.xml")
    assert stored_entries(tmp_path, post.key) == 1
    # Merged into the last good copy, at most as many entries as it held (the oldest gives way, as in the feed).
    assert stored_entries(tmp_path) == entries
    assert stored_entries(tmp_path, blog.posts[-2].key) == 1
    assert page(tmp_path, "feed.xml").count(">Twice post</title>") == 1
    assert page(tmp_path).count("Twice post") == 1
    assert [verdict for _, verdict in inbox(tmp_path)] == ["stored", "duplicate"]
    row = subscription(tmp_path, blog.url)
    assert row is not None and row["duplicates"] == 1 and row["replays"] == 0


def site_and_state(folder: Path, source: str) -> dict[str, str]:
    """SHA-256 of every published file, of the stored entries and of the source's state row."""
    digests = {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((folder / "public").rglob("*"))
        if path.is_file()
    }
    with sqlite(folder / "cache" / "state.sqlite") as db:
        for table, order in (("entries", "source, position"), ("seen", "source, id")):
            rows = db.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()  # noqa: S608 - our names
            digests[table] = hashlib.sha256(repr(rows).encode()).hexdigest()
        row = db.execute("SELECT * FROM sources WHERE url = ?", (source,)).fetchall()
        digests["sources"] = hashlib.sha256(repr(row).encode()).hexdigest()
    return digests


def test_a_replayed_notification_never_rolls_the_site_back(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    blog = feeds.feed("blog", hub=hub.url)
    config = write_config(tmp_path, [site(blog)])
    serve = spawn(config)
    row = live_subscription(serve, tmp_path, blog.url)
    callback = f"{serve.base}/websub/{row['token']}"
    serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the first poll's posts on the site")

    edited = blog.add("Version one")
    version_1 = blog.document()
    edited.title, edited.date = "Version two", edited.date + timedelta(minutes=5)  # an edit: a later updated
    blog.add("Posted after", edited.date)
    version_2 = blog.document()
    as_atom = {"Content-Type": "application/atom+xml"}
    with session() as http:

        def deliver(body: bytes) -> None:
            answer = http.post(
                callback, data=body, timeout=WAIT, headers={**as_atom, "X-Hub-Signature": sign(row["secret"], body)}
            )
            assert answer.status_code == 202

        deliver(version_1)
        serve.wait_for(lambda: "Version one" in page(tmp_path), "version 1 on the site")
        deliver(version_2)
        serve.wait_for(
            lambda: "Version two" in page(tmp_path) and "Posted after" in page(tmp_path, "feed.xml"),
            "version 2 on the site",
        )
        serve.wait_metric("syndicator_push_notifications_total", 2.0, verdict="stored")
        before = site_and_state(tmp_path, blog.url)

        deliver(version_1)  # the same signed bytes again, after version 2
        serve.wait_metric("syndicator_push_notifications_total", 1.0, verdict="duplicate")
        deliver(version_1.replace(b"</feed>", b" </feed>"))  # version 1 again, other bytes: entries compared
        serve.wait_metric("syndicator_push_notifications_total", 1.0, verdict="replay")
    renders = serve.metric("syndicator_renders_total")
    time.sleep(1)  # a render would come RENDER_QUIET (0.3 s) after a change
    assert serve.metric("syndicator_renders_total") == renders
    assert site_and_state(tmp_path, blog.url) == before
    for name in ("index.html", "feed.xml"):
        assert "Version two" in page(tmp_path, name) and "Posted after" in page(tmp_path, name)
        assert "Version one" not in page(tmp_path, name)
    assert [verdict for _, verdict in inbox(tmp_path)] == ["stored", "stored", "duplicate", "replay"]
    after = subscription(tmp_path, blog.url)
    assert after is not None and (after["duplicates"], after["replays"], after["notifications"]) == (1, 1, 4)
    assert len(feeds.syndicator_gets("blog")) == 1  # an older version, not a doubtful one: no poll needed


# --- 5. a hub that dies silently; lease renewal ---------------------------------------------------------------------


def test_a_hub_that_dies_silently_costs_freshness_only_until_the_next_normal_poll(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer
) -> None:
    clock = Clock()
    # A feed posting every hour for a day: push is late once about three posts are expected without one.
    blog = feeds.feed("blog", hub=hub.url, posts=24, start=clock() - timedelta(minutes=30))
    config = write_config(tmp_path, [site(blog)], min_interval=60, default_interval=600, max_interval=600)
    heartbeat = 7 * 86400.0
    with in_process(config, clock, heartbeat=heartbeat) as serve:
        serve.wait_for(lambda: serve.metric("syndicator_live_leases") == 1.0, "a live lease")
        serve.wait_for(lambda: serve.metric("syndicator_push_healthy_sources") == 1.0, "push to be healthy")
        assert len(feeds.syndicator_gets("blog")) == 1

        hub.stop()  # dies without a word
        blog.add("Missed post", clock())

        # An hour on, the normal schedule (at most max_interval, 10 min) is long due, but push is healthy:
        # the feed waits for its heartbeat (a week), and the post is missing.
        clock.advance(timedelta(hours=1))
        serve.server.wake()
        watched = time.monotonic() + 3  # three turns of the loop
        while time.monotonic() < watched:
            assert len(feeds.syndicator_gets("blog")) == 1, "polled while push was healthy"
            time.sleep(0.1)
        assert serve.metric("syndicator_push_healthy_sources") == 1.0
        assert "Missed post" not in page(tmp_path)

        # Five hours on, about five posts were expected and none was pushed: the normal poll repairs the gap,
        # long before the heartbeat.
        clock.advance(timedelta(hours=4))
        serve.server.wake()
        serve.wait_for(lambda: len(feeds.syndicator_gets("blog")) == 2, "a poll once push is late")
        serve.wait_for(lambda: "Missed post" in page(tmp_path), "the missed post on the site")
        assert stored_entries(tmp_path, "Missed post") == 1
        serve.wait_for(lambda: serve.metric("syndicator_push_healthy_sources") == 0.0, "push to count as unhealthy")

        # Push stays late, so the feed stays on its normal schedule: the next post comes with the next poll,
        # which also counts it as a change push missed.
        blog.add("Second missed post", clock())
        clock.advance(timedelta(hours=1))
        serve.server.wake()
        serve.wait_for(lambda: len(feeds.syndicator_gets("blog")) == 3, "the next normal poll")
        serve.wait_for(lambda: "Second missed post" in page(tmp_path), "the second missed post on the site")
        row = subscription(tmp_path, blog.url)
        assert row is not None and row["missed"] == 1 and row["notifications"] == 0
        assert any("a poll found a change that" in line and "had not pushed" in line for line in serve.lines)
        assert serve.metric("syndicator_push_healthy_sources") == 0.0
        assert clock.offset.total_seconds() < 0.9 * heartbeat


def test_a_lease_is_renewed_a_fifth_of_the_way_before_it_ends(tmp_path: Path, feeds: FeedServer) -> None:
    hub = WebSubHub(tmp_path, lease=600)
    try:
        clock = Clock()
        blog = feeds.feed("blog", hub=hub.url)
        config = write_config(tmp_path, [site(blog)])
        with in_process(config, clock) as serve:
            first = serve.wait_for(
                lambda: (row := subscription(tmp_path, blog.url)) is not None and row["state"] == "live" and row,
                "a live subscription",
            )
            verified = datetime.fromisoformat(first["verified"])
            expires = datetime.fromisoformat(first["lease_expires"])
            assert first["lease_seconds"] == 600
            assert expires - verified == timedelta(seconds=600)
            assert datetime.fromisoformat(first["next_action"]) == expires - timedelta(seconds=120)
            assert len(hub.sent("subscribe")) == 1

            clock.advance(timedelta(seconds=490))  # past the renewal, 480 s after verification
            serve.wait_for(lambda: len(hub.sent("subscribe")) == 2, "the renewal request")
            renewed = serve.wait_for(
                lambda: (
                    (row := subscription(tmp_path, blog.url)) is not None
                    and row["state"] == "live"
                    and row["verified"] != first["verified"]
                    and row
                ),
                "the renewal to be verified",
            )
            assert datetime.fromisoformat(renewed["lease_expires"]) >= expires + timedelta(seconds=490)
            assert renewed["token"] == first["token"] and renewed["secret"] == first["secret"]
            serve.wait_for(
                lambda: hub.callbacks(blog.url) == [(f"{serve.base}/websub/{first['token']}", first["secret"])],
                "the hub to store the renewal",
            )
            assert serve.metric("syndicator_live_leases") == 1.0
            serve.wait_for(
                lambda: serve.metric("syndicator_hub_requests_total", mode="subscribe", result="accepted") == 2.0,
                "the renewal counted",
            )

            # A renewal that fails does not count as live, though the lease has not ended.
            hub.stop()
            renewal = datetime.fromisoformat(renewed["next_action"])
            clock.advance(renewal - clock() + timedelta(seconds=10))
            serve.wait_for(
                lambda: (row := subscription(tmp_path, blog.url)) is not None and row["state"] == "failed",
                "the failed renewal",
            )
            assert datetime.fromisoformat(renewed["lease_expires"]) > clock()
            serve.wait_for(lambda: serve.metric("syndicator_live_leases") == 0.0, "no live lease")
            assert serve.metric("syndicator_hub_requests_total", mode="subscribe", result="refused") == 1.0
    finally:
        hub.stop()


def test_a_short_lease_is_not_renewed_at_once(
    tmp_path: Path, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    hub = WebSubHub(tmp_path, lease=60)  # flask-websub's own shortest lease
    try:
        blog = feeds.feed("blog", hub=hub.url)
        serve = spawn(write_config(tmp_path, [site(blog)]))
        row = live_subscription(serve, tmp_path, blog.url)
        assert row["lease_seconds"] == 60
        watched = time.monotonic() + 3  # three turns of the subscriber
        while time.monotonic() < watched:
            assert len(hub.sent("subscribe")) == 1, "a 60 s lease renewed within seconds of its verification"
            time.sleep(0.1)
    finally:
        hub.stop()


# --- 6. stopping and restarting --------------------------------------------------------------------------------------


def test_sigterm_stops_cleanly_and_a_restart_releases_the_overdue_sources_gradually(
    tmp_path: Path, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    count, workers = 16, 2
    blogs = [feeds.feed(f"f{n:02d}", posts=2) for n in range(count)]
    # One host, no gap between requests and no per-host cap below the workers: only the recovery paces the fetches.
    config = write_config(tmp_path, [site(b) for b in blogs], host_gap=0, per_host_concurrency=16)
    serve = spawn(config, "--workers", str(workers), public=False)
    serve.wait_for(lambda: all(f"{b.name} post 2" in page(tmp_path) for b in blogs), "every feed on the site")
    assert len(feeds.syndicator_gets()) == count

    assert serve.terminate(signal.SIGTERM) == 0
    assert "serve: stopped; the state is saved" in serve.log()
    entries = stored_entries(tmp_path)
    assert entries == 2 * count
    build = run_cli("build", "--config", str(config))  # the cache lock is free again; nothing is due
    assert build.returncode == 0, build.stderr
    assert len(feeds.syndicator_gets()) == count

    # Make every source overdue, by 10 to 160 minutes, in an order unlike the configured one.
    now = datetime.now(UTC)
    rank = {b.url: (7 * n) % count for n, b in enumerate(blogs)}  # 0: most overdue
    with sqlite(tmp_path / "cache" / "state.sqlite") as db:
        for url, position in rank.items():
            db.execute(
                "UPDATE sources SET next_attempt = ? WHERE url = ?",
                ((now - timedelta(minutes=10 * (count - position))).isoformat(), url),
            )
        db.commit()

    restarted = time.monotonic()
    serve = spawn(config, "--workers", str(workers), public=False)
    serve.wait_healthy()
    assert stored_entries(tmp_path) == entries  # nothing lost across the restart
    serve.wait_for(
        lambda: len(feeds.syndicator_gets()) == 2 * count,
        "every overdue feed fetched",
        timeout=WAIT + 2 * count / workers,
    )
    hits = [hit for hit in feeds.syndicator_gets() if hit.at >= restarted]
    assert len(hits) == count and {hit.path for hit in hits} == {f"/feeds/{b.name}.xml" for b in blogs}

    rate = workers / 2  # README: "released at most `workers / 2` a second"
    assert recovery_rate(workers) == rate
    times = sorted(hit.at for hit in hits)
    busiest = max(sum(1 for t in times if start <= t < start + 1.0) for start in times)
    assert busiest <= 2 * rate + workers, f"{busiest} fetches in one second after the restart"
    order = [rank[f"{feeds.url}{hit.path}"] for hit in sorted(hits, key=lambda h: h.at)]
    assert all(abs(position - index) <= workers for index, position in enumerate(order)), order  # most overdue first
    assert re.search(rf"serve: {count} sources were overdue; released over \d+ s, most overdue first", serve.log())
    serve.wait_for(lambda: all(f"{b.name} post 2" in page(tmp_path) for b in blogs), "every feed on the site")
    assert stored_entries(tmp_path) == entries
    assert serve.terminate(signal.SIGINT) == 0


def test_a_stop_stores_and_publishes_what_was_acknowledged_and_a_restart_reads_the_inbox(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    blog = feeds.feed("blog", hub=hub.url)
    config = write_config(tmp_path, [site(blog)])
    serve = spawn(config)
    row = live_subscription(serve, tmp_path, blog.url)
    serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the first poll's posts on the site")

    # SIGTERM at once after the 202, before the site's render is due: the stop stores and publishes it.
    last = blog.add("Last words")
    body = blog.document([last])
    with session() as http:
        headers = {"Content-Type": "application/atom+xml", "X-Hub-Signature": sign(row["secret"], body)}
        answer = http.post(f"{serve.base}/websub/{row['token']}", data=body, headers=headers, timeout=WAIT)
    assert answer.status_code == 202
    assert serve.terminate() == 0
    assert stored_entries(tmp_path, "Last words") == 1
    assert "Last words" in page(tmp_path) and "Last words" in page(tmp_path, "feed.xml")
    assert [verdict for _, verdict in inbox(tmp_path)] == ["stored"]

    # A notification committed by a serve that died before reading it is read at the next start.
    late = blog.add("After the crash")
    with sqlite(tmp_path / "cache" / "push.sqlite") as db:
        db.execute(
            "INSERT INTO notifications (token, received, content_type, body) VALUES (?, ?, ?, ?)",
            (row["token"], datetime.now(UTC).isoformat(), "application/atom+xml", blog.document([late])),
        )
        db.commit()
    polls = len(feeds.syndicator_gets())
    serve = spawn(config)
    serve.wait_for(lambda: "After the crash" in page(tmp_path), "the inbox's notification on the site")
    assert [verdict for _, verdict in inbox(tmp_path)] == ["stored", "stored"]
    assert len(feeds.syndicator_gets()) == polls  # read from the inbox, not fetched
    serve.wait_metric("syndicator_live_leases", 1.0)  # the lease survives the restart
    assert serve.terminate() == 0


def test_a_stop_closes_the_http_server_on_its_own_thread(
    tmp_path: Path, feeds: FeedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Closed from another thread, waitress's listening socket could vanish while the http thread waits on it
    # (it died of EBADF once): the close must run on the http thread, which polls rather than selects.
    from waitress import wasyncore
    from waitress.server import BaseWSGIServer

    closed_on: list[str] = []
    polled: list[bool] = []
    real_close, real_loop = BaseWSGIServer.close, wasyncore.loop

    def close(self: Any) -> Any:
        closed_on.append(threading.current_thread().name)
        return real_close(self)

    def loop(*args: Any, **kwargs: Any) -> Any:
        polled.append(bool(kwargs.get("use_poll")))
        return real_loop(*args, **kwargs)

    monkeypatch.setattr(BaseWSGIServer, "close", close)
    monkeypatch.setattr(wasyncore, "loop", loop)
    blog = feeds.feed("blog")
    with in_process(write_config(tmp_path, [site(blog)]), Clock()) as serve:
        serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the site")
    assert closed_on == ["http"]
    assert polled and all(polled)
    assert serve.thread_errors == []


# --- 7. one at a time ------------------------------------------------------------------------------------------------


def test_a_build_or_a_second_serve_on_the_same_cache_exits_4(
    tmp_path: Path, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    blog = feeds.feed("blog")
    config = write_config(tmp_path, [site(blog)])
    serve = spawn(config, public=False)
    serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the site")

    build = run_cli("build", "--config", str(config))
    assert build.returncode == 4, build.stderr
    assert len(build.stderr.splitlines()) == 1 and build.stderr.startswith("syndicator: error: "), build.stderr

    second = spawn(config, public=False, verbose=False)
    assert second.process.wait(timeout=WAIT) == 4
    assert len(second.log().splitlines()) == 1 and second.log().startswith("syndicator: error: "), second.log()

    assert serve.get("/healthz").status_code == 200  # the first goes on
    assert len(feeds.syndicator_gets()) == 1
    assert serve.terminate() == 0


# --- 8. sites.yaml changes while serving -----------------------------------------------------------------------------


def test_sites_yaml_changes_are_applied_while_serving(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    alpha, beta = feeds.feed("alpha", hub=hub.url), feeds.feed("beta", hub=hub.url)
    config = write_config(tmp_path, [site(alpha), site(beta)])
    serve = spawn(config)
    serve.wait_metric("syndicator_live_leases", 2.0)
    beta_row = live_subscription(serve, tmp_path, beta.url)
    serve.wait_for(  # the hub stores a subscription after our answer to its check
        lambda: hub.callbacks(beta.url) == [(f"{serve.base}/websub/{beta_row['token']}", beta_row["secret"])],
        "the hub to store beta's subscription",
    )
    serve.wait_for(lambda: "beta post 3" in page(tmp_path), "beta on the site")

    # A site added (the file changed) is fetched at once and published.
    gamma = feeds.feed("gamma")
    rewrite(config, planet_yaml([site(alpha), site(beta), site(gamma)]))
    serve.wait_for(lambda: "gamma post 3" in page(tmp_path), "the added site on the site")
    assert len(feeds.syndicator_gets("gamma")) == 1
    assert f"serve: read {config} again: 3 sites (feeds: 1 added, 0 removed)" in serve.log()

    # A broken file is one error line, and the running configuration stays.
    rewrite(config, "title: Planet Test\nsites: [\n")
    serve.wait_for(lambda: "previous configuration stays in use" in serve.log(), "the error line")
    assert serve.get("/healthz").text == "ok\n"
    rewrite(config, ALIAS_BOMB)  # 1 KB that would take gigabytes: one error line too, and serve goes on
    serve.wait_for(lambda: serve.log().count("previous configuration stays in use") == 2, "the second error line")
    assert "would add more than 100,000 values" in serve.log()
    assert serve.get("/healthz").text == "ok\n"

    # A site removed (SIGHUP alone: the file keeps the broken one's modification time) is unsubscribed.
    mtime = config.stat().st_mtime_ns
    rewrite(config, planet_yaml([site(alpha), site(gamma)]), mtime_ns=mtime)
    assert config.stat().st_mtime_ns == mtime
    serve.process.send_signal(signal.SIGHUP)
    serve.wait_for(lambda: hub.sent("unsubscribe", beta.url), "an unsubscribe request for beta at the hub")
    serve.wait_for(
        lambda: hub.callbacks(beta.url) == [] and subscription(tmp_path, beta.url) is None,
        "the hub and serve to forget beta's subscription",
    )
    assert [r.callback for r in hub.sent("unsubscribe")] == [f"{serve.base}/websub/{beta_row['token']}"]
    assert (beta.url, f"{serve.base}/websub/{beta_row['token']}") not in hub.rows()
    serve.wait_metric("syndicator_live_leases", 1.0)
    assert len(hub.callbacks(alpha.url)) == 1  # alpha stays
    serve.wait_for(
        lambda: "beta post" not in page(tmp_path) and "alpha post 3" in page(tmp_path), "the site without beta"
    )
    assert f"serve: read {config} again: 2 sites (feeds: 0 added, 1 removed)" in serve.log()
    errors = [line for line in serve.log().splitlines() if line.startswith("syndicator: error:")]
    assert len(errors) == 2 and all(str(config) in error for error in errors), errors
    assert serve.terminate() == 0


def test_changed_deliveries_apply_to_the_events_stored_after_a_reread(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, server: Any, spawn: Callable[..., ServeProcess]
) -> None:
    from .test_deliveries import Hook

    first, second = Hook(server, "a"), Hook(server, "b")
    blog = feeds.feed("blog", hub=hub.url)
    config = write_config(tmp_path, [site(blog)], deliveries=[{"url": first.url, "secret": "s1"}])
    serve = spawn(config)
    live_subscription(serve, tmp_path, blog.url)
    serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the first poll's posts (a baseline: no event)")
    blog.add("Before the change")
    assert hub.publish(blog.url).status_code == 202
    serve.wait_for(lambda: len(first.received) == 1, "the first destination's delivery")

    rewrite(config, planet_yaml([site(blog)], deliveries=[{"url": second.url, "secret": "s2"}]))
    serve.wait_for(lambda: f"serve: read {config} again" in serve.log(), "sites.yaml read again")
    blog.add("After the change")
    assert hub.publish(blog.url).status_code == 202
    serve.wait_for(lambda: len(second.received) == 1, "the second destination's delivery")
    assert serve.terminate() == 0
    assert [body["title"] for body in first.bodies()] == ["Before the change"]
    assert [body["title"] for body in second.bodies()] == ["After the change"]  # not the backlog


# --- 9. /healthz and /metrics ----------------------------------------------------------------------------------------


def documented_metrics() -> list[str]:
    """The metric names of the table in docs/metrics.md."""
    text = METRICS_PAGE.read_text(encoding="utf-8")
    table = text.split("| metric | what |", 1)[1].split("\n\n", 1)[0]
    names = [name for row in table.splitlines()[2:] for name in re.findall(r"`(syndicator_[a-z_]+)", row.split("|")[1])]
    assert len(names) >= 15, names
    return names


def test_healthz_and_metrics(tmp_path: Path, feeds: FeedServer, spawn: Callable[..., ServeProcess]) -> None:
    blog = feeds.feed("blog")
    serve = spawn(write_config(tmp_path, [site(blog)]), public=False)
    serve.wait_healthy()
    health = serve.get("/healthz")
    assert (health.status_code, health.text) == (200, "ok\n")

    serve.wait_for(lambda: serve.metric("syndicator_renders_total") == 1.0, "the first render")
    answer = serve.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/plain")
    samples = metric_samples(answer.text)
    families = list(text_string_to_metric_families(answer.text))
    # A labelled counter has no sample before its first count (no hub request without --public-url): its family
    # must still be declared.
    names = (
        {name for name, _ in samples}
        | {family.name + ("_total" if family.type == "counter" else "") for family in families}
        | {family.name for family in families}
    )
    missing = [name for name in documented_metrics() if name not in names]
    assert missing == [], missing
    assert samples[("syndicator_fetches_total", frozenset({("outcome", "fetched"), ("kind", "")}))] == 1.0
    assert samples[("syndicator_sources", frozenset())] == 1.0
    assert samples[("syndicator_live_leases", frozenset())] == 0.0
    assert serve.get("/nothing-here").status_code == 404


# --- 10. notifications over max_bytes ---------------------------------------------------------------------------------


def test_a_notification_over_max_bytes_gets_413_and_nothing_is_stored(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    limit = 1024
    blog = feeds.feed("b", hub=hub.url, posts=1)
    assert len(blog.document()) < limit
    config = write_config(tmp_path, [site(blog)], max_bytes=limit)
    serve = spawn(config)
    row = live_subscription(serve, tmp_path, blog.url)
    callback, secret = f"{serve.base}/websub/{row['token']}", row["secret"]

    huge = blog.add("Huge post")
    fits = blog.add("Fitting post")

    def padded(post: Any, size: int) -> bytes:
        body = blog.document([post])
        return blog.document([post], padding=size - len(body))

    over, at_limit = padded(huge, limit + 1), padded(fits, limit)
    assert (len(over), len(at_limit)) == (limit + 1, limit)
    far_over = padded(huge, 10 * limit)
    content_type = "application/atom+xml"
    with session() as http:

        def send(body: bytes, chunked: bool = False) -> int:
            headers = {"Content-Type": content_type, "X-Hub-Signature": sign(secret, body)}
            data: Any = iter([body[:100], body[100:]]) if chunked else body
            try:
                return http.post(callback, data=data, headers=headers, timeout=WAIT).status_code
            except requests.ConnectionError:  # the server may close while the body is still sent
                return 0

        assert send(over) == 413
        assert send(over, chunked=True) == 413
        assert send(far_over) in (413, 0)
        assert serve.metric("syndicator_push_notifications_total", verdict="too_large") >= 2.0  # type: ignore[operator]
        assert serve.metric("syndicator_push_notifications_total", verdict="accepted") == 0.0
        assert inbox(tmp_path) == []
        assert send(at_limit) == 202  # the limit itself is allowed
    serve.wait_for(lambda: "Fitting post" in page(tmp_path), "the notification at the limit on the site")
    assert stored_entries(tmp_path, "Huge post") == 0
    assert "Huge post" not in page(tmp_path)
    assert [verdict for _, verdict in inbox(tmp_path)] == ["stored"]


# --- found by a fresh-clone tester -----------------------------------------------------------------------------------


def test_a_feed_unchanged_since_the_last_build_is_still_subscribed(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    # After a build the feed is not due for an hour, and its next answer would be a 304 or the same body,
    # neither parsed: serve reads its document once, unconditionally, to find the hub.
    blog = feeds.feed("blog", hub=hub.url)
    config = write_config(tmp_path, [site(blog)])
    built = run_cli("build", "--config", str(config))
    assert built.returncode == 0, built.stderr
    gets = len(feeds.syndicator_gets("blog"))
    serve = spawn(config)
    serve.wait_metric("syndicator_live_leases", 1.0)
    assert len(feeds.syndicator_gets("blog")) == gets + 1  # one read, not a poll per turn
    assert serve.terminate() == 0


def test_a_stop_does_not_wait_for_a_fetch_that_hangs(
    tmp_path: Path, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    import socket

    held: list[socket.socket] = []
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(WAIT)

    def accept() -> None:  # takes the request and never answers
        with contextlib.suppress(OSError):
            held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    hanging = f"http://127.0.0.1:{listener.getsockname()[1]}/feed.xml"
    config = write_config(tmp_path, [{"name": "Hangs", "feed": hanging}, site(feeds.feed("blog"))], timeout=120)
    try:
        serve = spawn(config, public=False)
        serve.wait_for(lambda: held, "the hanging feed's request")
        assert serve.terminate() == 0  # within WAIT (20 s), not after the 120 s timeout
        assert "stopped; the state is saved" in serve.log()
    finally:
        for connection in held:
            connection.close()
        listener.close()


def test_a_cache_removed_while_serving_stops_serve_with_one_line(
    tmp_path: Path, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    import shutil

    config = write_config(tmp_path, [site(feeds.feed("blog"))])
    serve = spawn(config, public=False)
    serve.wait_for(lambda: "blog post 3" in page(tmp_path), "the site")
    shutil.rmtree(tmp_path / "cache")
    code = serve.process.wait(timeout=WAIT)
    assert code == 5, serve.details()
    errors = [line for line in serve.log().splitlines() if line.startswith("syndicator: error:")]
    assert len(errors) == 1 and "state.sqlite was removed while serving" in errors[0], serve.details()
    assert "Traceback" not in serve.log()


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("--listen", "999.1.1.1:8080", "cannot listen there"),
        ("--listen", "127.0.0.1:99999", "is not HOST:PORT"),
        ("--public-url", "http://127.0.0.1:8080/?x=1", "has a query or fragment"),
        ("--public-url", "http://user:secret@127.0.0.1:8080/", "credentials"),
        ("--public-url", "ftp://127.0.0.1/", "http"),
    ],
)
def test_a_bad_listen_or_public_url_is_one_line(
    tmp_path: Path, feeds: FeedServer, option: str, value: str, problem: str
) -> None:
    config = write_config(tmp_path, [site(feeds.feed("blog"))])
    result = run_cli("serve", "--config", str(config), option, value)
    assert result.returncode == 2, result.stderr
    first, *rest = result.stderr.splitlines()
    assert first.startswith("syndicator: error: ") and problem in first, result.stderr
    assert rest in ([], ["Try 'syndicator serve --help'."]), result.stderr  # a usage error names the help
    assert not (tmp_path / "public").exists()  # nothing fetched, nothing published


def test_a_burst_of_signals_never_hangs_serve(
    tmp_path: Path, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    """A handler that ran in the main thread could wait for a lock that thread held (a queue's, an
    event's): serve then never stopped. 300 SIGHUPs while the loop turns, then SIGTERM: it stops."""
    config = write_config(tmp_path, [site(feeds.feed(f"blog{n}")) for n in range(3)])
    serve = spawn(config, public=False, verbose=False)
    serve.wait_healthy()
    for _ in range(300):
        serve.process.send_signal(signal.SIGHUP)
        time.sleep(0.002)
    assert serve.get("/healthz").text == "ok\n"
    assert serve.terminate() == 0
    assert "serve: stopped; the state is saved" in serve.log()
