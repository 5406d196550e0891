"""Deliveries (issue 13): the outbox written with the entries, and signed webhook POSTs with retries."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import hmac
import json
import socketserver
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.cli import main
from syndicator.config.load import load_config
from syndicator.errors import ConfigError
from syndicator.feedtypes import Entry
from syndicator.model import SourceState
from syndicator.poll.path import save
from syndicator.push import deliveries
from syndicator.push.deliveries import ATTEMPTS, deliver_due, make_session
from syndicator.state import outbox, statefile
from syndicator.state.schema import SCHEMA_VERSION
from syndicator.state.store import TABLES, Store

from .conftest import NOW, NOW_ISO, build, post, rss, sent_to, write_config
from .postgres import pg_database, postgres_url  # noqa: F401

SECRETS = {"a": "secret-of-a", "b": "secret-of-b"}


def after(start: datetime) -> Callable[[], datetime]:
    """A delivery clock that reads ``start`` plus the seconds passed since it was made (not the real date)."""
    origin = time.monotonic()
    return lambda: start + timedelta(seconds=time.monotonic() - origin)


class Hook:
    """A webhook on the loopback server: records each POST, answers with ``answers`` in turn (the last repeats);
    an answer of None hangs (waits on ``release``, bounded) longer than the config's timeout."""

    def __init__(
        self,
        server: HTTPServer,
        name: str,
        answers: list[int | None] | None = None,
        release: threading.Event | None = None,
    ) -> None:
        self.name, self.answers, self.release = name, answers or [200], release
        self.received: list[tuple[bytes, dict[str, str]]] = []
        self.url = server.url_for(f"/hook/{name}")
        server.expect_request(f"/hook/{name}", method="POST").respond_with_handler(self.handle)

    def handle(self, request: Request) -> Response:
        self.received.append((request.get_data(), dict(request.headers)))
        status = self.answers[min(len(self.received), len(self.answers)) - 1]
        if status is None:
            assert self.release is not None
            self.release.wait(3)  # longer than timeout: 1; set at the test's end
            status = 200
        return Response("ok", status=status)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(body) for body, _ in self.received]


def planet(
    server: HTTPServer,
    tmp_path: Path,
    hooks: list[Hook],
    items: list[dict[str, str]],
    built: datetime = NOW - timedelta(days=3),
    **settings: Any,
) -> Path:
    """A planet of one feed with ``hooks`` as destinations, built at ``built`` (three days before NOW) with
    an older post only (a source's first snapshot is its baseline: no event); the feed then serves ``items``
    too."""
    feed(server, [post(0, day=2, month=10)])
    deliveries = [{"url": hook.url, "secret": SECRETS.get(hook.name, "s")} for hook in hooks]
    config = write_config(
        tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}], deliveries=deliveries, timeout=1, **settings
    )
    assert build(config, now=built.isoformat()).exit_code == 0  # due again a day later (max_interval 24 h)
    assert all(hook.received == [] for hook in hooks)  # the baseline sends nothing
    feed(server, [*items, post(0, day=2, month=10)])
    return config


def feed(server: HTTPServer, items: list[dict[str, str]]) -> None:
    for handler in list(server.handlers):
        if handler.matcher.uri == "/feed.xml":
            server.handlers.remove(handler)
    server.expect_request("/feed.xml").respond_with_data(rss(*items), content_type="application/rss+xml")


def later(seconds: float) -> str:
    return (NOW + timedelta(seconds=seconds)).isoformat()


def rows(tmp_path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(tmp_path / "cache" / "state.sqlite") as db:
        return db.execute(sql).fetchall()


def check_signed(hook: Hook, index: int, source: str) -> dict[str, Any]:
    """The ``index``th POST to ``hook``: its body, after checking its headers against an independent computation."""
    body, headers = hook.received[index]
    data = json.loads(body)
    assert headers["Content-Type"] == "application/json"
    expected_key = hashlib.sha256(
        json.dumps([source, data["id"], data["version"]], ensure_ascii=False, separators=(",", ":")).encode()
    ).hexdigest()
    assert headers["Idempotency-Key"] == expected_key
    mac = hmac.new(SECRETS[hook.name].encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Syndicator-Signature"], "sha256=" + mac)
    assert headers["X-Syndicator-Signature"] != "sha256=" + hmac.new(b"wrong", body, hashlib.sha256).hexdigest()
    return data  # type: ignore[no-any-return]


def test_the_idempotency_key_is_the_sha256_of_the_compact_utf8_json_array() -> None:
    from syndicator.push.deliveries import idempotency_key

    text = '["https://blog.example.org/feed.xml","caf\u00e9 \\"1\\"","v1"]'.encode()  # as JSON.stringify writes it
    assert text == b'["https://blog.example.org/feed.xml","caf\xc3\xa9 \\"1\\"","v1"]'
    key = idempotency_key("https://blog.example.org/feed.xml", 'caf\u00e9 "1"', "v1")
    assert key == hashlib.sha256(text).hexdigest()


# --- through the CLI, SQLite -----------------------------------------------------------------------------------


def test_new_changed_and_unchanged_entries_each_reach_every_destination_once(
    server: HTTPServer, tmp_path: Path
) -> None:
    a, b = Hook(server, "a"), Hook(server, "b")
    config = planet(server, tmp_path, [a, b], [post(1)])
    source = server.url_for("/feed.xml")
    assert build(config).exit_code == 0
    for hook in (a, b):
        assert len(hook.received) == 1
        data = check_signed(hook, 0, source)
        assert data["kind"] == "new" and data["source"] == source
        assert data["id"] == "https://blog.example.org/posts/1" and data["title"] == "Post 1"
        assert data["link"] == "https://blog.example.org/posts/1" and data["date"].startswith("2026-11-01T10:01")
    assert a.received[0][0] == b.received[0][0]  # one body for every destination

    assert build(config, "--force", now=later(60)).exit_code == 0  # fetched again, nothing changed
    assert (len(a.received), len(b.received)) == (1, 1)

    edited = {**post(1), "title": "Post 1, corrected"}
    feed(server, [edited, post(2)])
    assert build(config, "--force", now=later(120)).exit_code == 0
    for hook in (a, b):
        events = sorted((d["kind"], d["id"]) for d in hook.bodies()[1:])
        assert events == [("changed", "https://blog.example.org/posts/1"), ("new", "https://blog.example.org/posts/2")]
        changed = next(d for d in hook.bodies()[1:] if d["kind"] == "changed")
        assert changed["title"] == "Post 1, corrected" and changed["version"] != hook.bodies()[0]["version"]
        assert check_signed(hook, 1, source) and check_signed(hook, 2, source)
    assert rows(tmp_path, "SELECT state, COUNT(*) FROM deliveries GROUP BY state") == [("delivered", 6)]

    status = CliRunner().invoke(main, ["status", "--config", str(config), "--now", later(120)])
    assert status.exit_code == 0
    assert "deliveries: 0 pending, 6 delivered, 0 dead (dead letters)" in status.stdout
    assert SECRETS["a"] not in status.stdout + status.stderr


def test_a_failed_delivery_is_retried_after_the_backoff_with_the_same_key_then_never_again(
    server: HTTPServer, tmp_path: Path
) -> None:
    a = Hook(server, "a", [500, 200])
    config = planet(server, tmp_path, [a], [post(1)])
    assert build(config).exit_code == 0
    assert len(a.received) == 1
    assert rows(tmp_path, "SELECT state, attempts, last_error FROM deliveries") == [("pending", 1, "HTTP 500")]
    assert build(config, "--no-fetch", now=later(59)).exit_code == 0  # the first retry waits 60 s
    assert len(a.received) == 1
    assert build(config, "--no-fetch", now=later(61)).exit_code == 0
    assert len(a.received) == 2
    assert a.received[1][0] == a.received[0][0]  # the same body ...
    assert a.received[1][1]["Idempotency-Key"] == a.received[0][1]["Idempotency-Key"]  # ... and the same key
    check_signed(a, 1, server.url_for("/feed.xml"))
    assert rows(tmp_path, "SELECT state, attempts FROM deliveries") == [("delivered", 2)]
    for hours in (1, 7, 30):  # answered 2xx: never POSTed there again
        assert build(config, "--no-fetch", now=later(hours * 3600)).exit_code == 0
    assert len(a.received) == 2


def test_a_destination_that_hangs_is_a_failed_attempt_and_the_others_are_delivered(
    server: HTTPServer, tmp_path: Path, release: threading.Event
) -> None:
    slow, a = Hook(server, "slow", [None], release), Hook(server, "a")
    config = planet(server, tmp_path, [slow, a], [post(1)])
    result = build(config)
    assert result.exit_code == 0
    assert len(slow.received) == 1 and len(a.received) == 1
    assert "1 to retry" in result.stderr
    state = dict(
        (url.rsplit("/", 1)[1], (st, n, err))
        for url, st, n, err in rows(tmp_path, "SELECT url, state, attempts, last_error FROM deliveries")
    )
    assert state["a"] == ("delivered", 1, None)
    assert state["slow"][:2] == ("pending", 1) and "Timeout" in state["slow"][2]


def test_a_destination_that_hangs_holds_back_only_its_own_events(
    server: HTTPServer, tmp_path: Path, release: threading.Event
) -> None:
    slow, a = Hook(server, "slow", [None], release), Hook(server, "a")
    seen_by_slow: list[int] = []  # how many POSTs the hanging destination had had when each of a's arrived
    handle = a.handle

    def handle_a(request: Request) -> Response:
        seen_by_slow.append(len(slow.received))
        return handle(request)

    a.handle = handle_a  # type: ignore[method-assign]
    server.handlers.clear()
    server.expect_request("/hook/slow", method="POST").respond_with_handler(slow.handle)
    server.expect_request("/hook/a", method="POST").respond_with_handler(handle_a)
    config = planet(server, tmp_path, [slow, a], [post(3), post(2), post(1)])
    assert build(config).exit_code == 0
    assert len(a.received) == 3
    # a's three came while slow's first POST still hung (1 s each): one after each of slow's, were they in turn
    assert max(seen_by_slow) <= 1, seen_by_slow
    assert len(slow.received) >= 1


def test_after_ten_failures_a_delivery_is_dead_and_status_counts_it(server: HTTPServer, tmp_path: Path) -> None:
    a = Hook(server, "a", [503])
    config = planet(server, tmp_path, [a], [post(1)])
    assert build(config).exit_code == 0
    for attempt in range(2, ATTEMPTS + 1):
        assert build(config, "--no-fetch", now=later(attempt * 7 * 3600)).exit_code == 0  # past the 6 h ceiling
    assert len(a.received) == ATTEMPTS
    assert rows(tmp_path, "SELECT state, attempts FROM deliveries") == [("dead", ATTEMPTS)]
    assert build(config, "--no-fetch", now=later(100 * 3600)).exit_code == 0
    assert len(a.received) == ATTEMPTS  # a dead letter is not sent again
    status = CliRunner().invoke(main, ["status", "--config", str(config), "--now", later(100 * 3600)])
    assert "0 delivered, 1 dead (dead letters)" in status.stdout


def test_a_planet_without_deliveries_writes_no_events(server: HTTPServer, tmp_path: Path) -> None:
    feed(server, [post(1), post(2)])
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    assert build(config).exit_code == 0
    assert rows(tmp_path, "SELECT COUNT(*) FROM seen") == [(2,)]
    assert rows(tmp_path, "SELECT COUNT(*) FROM outbox") == [(0,)]
    status = CliRunner().invoke(main, ["status", "--config", str(config), "--now", NOW_ISO])
    assert "deliveries" not in status.stdout


# --- commit before fan-out -----------------------------------------------------------------------------------


def test_events_committed_without_a_delivery_run_are_delivered_later_once_per_destination(
    server: HTTPServer, tmp_path: Path
) -> None:
    a, b = Hook(server, "a"), Hook(server, "b")
    config_path = planet(server, tmp_path, [a, b], [post(1)])
    config = load_config(config_path)
    source = "https://blog.example.org/feed.xml"
    with Store.open(tmp_path / "cache") as store:  # the build "crashed" after the commit: nothing delivered
        store.outbox = sent_to(a.url, b.url)
        save(store, SourceState(source, source), [Entry(id="e0")], NOW)  # the source's baseline: no event
        save(
            store,
            SourceState(source, source),
            [Entry(id="e1", title="One", link="https://blog.example.org/1"), Entry(id="e0")],
            NOW,
        )
    assert a.received == [] and b.received == []
    with Store.open(tmp_path / "cache") as store:
        session = make_session(config)
        try:
            counts = deliver_due(store, config, NOW + timedelta(seconds=5), session, 10)
            assert (counts.delivered, counts.retrying, counts.left) == (2, 0, 0)
            again = deliver_due(store, config, NOW + timedelta(days=1), session, 10)
            assert again.delivered == 0
        finally:
            session.close()
    for hook in (a, b):
        assert len(hook.received) == 1
        assert check_signed(hook, 0, source)["id"] == "e1"


def test_a_save_that_fails_writes_no_event(tmp_path: Path) -> None:
    source = "https://blog.example.org/feed.xml"
    with Store.open(tmp_path / "cache") as store:
        store.outbox = sent_to("https://hooks.example.org/in")
        save(store, SourceState(source, source), [Entry(id="e0")], NOW)  # the baseline: no event
        assert store._db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0] == 0
        with pytest.raises(TypeError):  # an entry that cannot be stored: the transaction rolls back
            save(
                store,
                SourceState(source, source),
                [Entry(id="e1"), Entry(id="e2", title=object())],  # type: ignore[arg-type]
                NOW,
            )
        assert store._db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0] == 0
        assert store._db.execute("SELECT id FROM seen").fetchall() == [("e0",)]
        save(store, SourceState(source, source), [Entry(id="e1"), Entry(id="e0")], NOW)
        assert store._db.execute("SELECT kind, entry_id FROM outbox").fetchall() == [("new", "e1")]


# --- PostgreSQL ----------------------------------------------------------------------------------------------


def test_deliveries_from_a_postgresql_state(server: HTTPServer, tmp_path: Path, pg_database: str) -> None:
    a = Hook(server, "a")
    config = planet(server, tmp_path, [a], [post(1)], state=pg_database)
    source = server.url_for("/feed.xml")
    assert build(config).exit_code == 0
    assert len(a.received) == 1 and check_signed(a, 0, source)["kind"] == "new"
    assert build(config, "--force", now=later(60)).exit_code == 0
    assert len(a.received) == 1
    feed(server, [post(1), post(2)])
    assert build(config, "--force", now=later(120)).exit_code == 0
    assert [d["id"] for d in a.bodies()] == ["https://blog.example.org/posts/1", "https://blog.example.org/posts/2"]
    import psycopg

    with psycopg.connect(pg_database, autocommit=True) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert db.execute("SELECT state, COUNT(*) FROM deliveries GROUP BY state").fetchall() == [("delivered", 2)]


def test_a_worker_delivers_the_events_committed_in_a_shared_state_once(
    server: HTTPServer, tmp_path: Path, pg_database: str
) -> None:
    import signal
    import subprocess

    from .websub_hub import SYNDICATOR

    a, b = Hook(server, "a"), Hook(server, "b")
    with Store.connect(pg_database) as store:
        now = store._db.now()  # noqa: SLF001 - the worker's clock is the database server's, not NOW
    config = planet(server, tmp_path, [a, b], [post(1)], built=now - timedelta(days=3), state=pg_database)
    source = "https://blog.example.org/feed.xml"
    with Store.connect(pg_database) as store:  # committed by a worker that died before delivering them
        store.outbox = sent_to(a.url, b.url)
        save(store, SourceState(source, source), [Entry(id="e0")], now)  # the baseline: no event
        save(store, SourceState(source, source), [Entry(id="e1", title="One"), Entry(id="e0")], now)
    worker = subprocess.Popen(
        [str(SYNDICATOR), "worker", "--config", str(config), "--name", "w", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(200):  # bounded: at most about 20 s
            if len(a.received) >= 2 and len(b.received) >= 2:
                break
            threading.Event().wait(0.1)
    finally:
        worker.send_signal(signal.SIGTERM)
        _, stderr = worker.communicate(timeout=60)
    assert worker.returncode == 0, stderr
    polled = server.url_for("/feed.xml")  # the worker's own poll found post 1: one more event
    for hook in (a, b):
        assert sorted(check_signed(hook, n, body["source"])["id"] for n, body in enumerate(hook.bodies())) == [
            "e1",
            "https://blog.example.org/posts/1",
        ]
        assert {body["source"] for body in hook.bodies()} == {source, polled}
    import psycopg

    with psycopg.connect(pg_database, autocommit=True) as db:
        assert db.execute(
            "SELECT url, state, COUNT(*) FROM deliveries GROUP BY url, state ORDER BY url"
        ).fetchall() == [(a.url, "delivered", 2), (b.url, "delivered", 2)]


# --- the settings and the state file -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("https://hook.example/", "deliveries: must be a list of 1 to 16 webhooks"),
        ([], "deliveries: must be a list of 1 to 16 webhooks"),
        ([{"url": "ftp://hook.example/", "secret": "TOPSECRET"}], "deliveries[0].url: 'ftp://hook.example/' is not"),
        ([{"url": "https://hook.example/", "secret": ""}], "deliveries[0].secret: must be a non-empty string"),
        ([{"url": "https://hook.example/"}], "deliveries[0].secret: is required"),
        ([{"url": "https://hook.example/", "secret": "TOPSECRET", "token": 1}], "deliveries[0].token: unknown key"),
        (
            [{"url": "https://hook.example/", "secret": "TOPSECRET"}, {"url": "https://hook.example/", "secret": "x"}],
            "deliveries[1].url: 'https://hook.example/' is listed twice",
        ),
    ],
)
def test_bad_deliveries_are_one_line_naming_the_field(tmp_path: Path, value: Any, message: str) -> None:
    path = write_config(tmp_path, [{"name": "Blog", "feed": "https://blog.example.org/feed"}], deliveries=value)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:") and message in text and "\n" not in text
    assert "TOPSECRET" not in text


def test_deliveries_are_read_and_their_secrets_never_shown(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        [{"name": "Blog", "feed": "https://blog.example.org/feed"}],
        deliveries=[{"url": "https://hook.example/a", "secret": "TOPSECRET"}],
    )
    config = load_config(path)
    assert [(d.url, d.secret) for d in config.deliveries] == [("https://hook.example/a", "TOPSECRET")]
    assert "TOPSECRET" not in repr(config)


def test_a_state_file_of_schema_7_loads_and_one_of_6_does_not(server: HTTPServer, tmp_path: Path) -> None:
    feed(server, [post(1), post(2)])
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}], snapshot=True)
    assert build(config).exit_code == 0
    lines = gzip.decompress((tmp_path / "public" / statefile.NAME).read_bytes()).decode().splitlines()
    header = json.loads(lines[0])
    assert header["schema"] == SCHEMA_VERSION == 10
    base = tmp_path.resolve().as_uri()

    def with_schema(schema: int) -> bytes:
        return gzip.compress("\n".join([json.dumps({**header, "schema": schema}), *lines[1:]]).encode())

    with Store.open(tmp_path / "old") as copy:
        loaded = statefile.load(copy, with_schema(7), "test", "https://planet.example.org/", base)
        assert loaded == sum(copy.count(table) for table in TABLES) and copy.count("entries") == 2
    with Store.open(tmp_path / "older") as copy, pytest.raises(Exception, match="schema 6"):
        statefile.load(copy, with_schema(6), "test", "https://planet.example.org/", base)


def test_the_delivery_thread_of_serve_and_worker_sends_on_its_own_connection(
    server: HTTPServer, tmp_path: Path
) -> None:
    from syndicator.push.deliveries import DeliveryLoop

    a = Hook(server, "a")
    config = load_config(planet(server, tmp_path, [a], [post(1)]))
    source = "https://blog.example.org/feed.xml"
    with Store.open(tmp_path / "cache") as store:  # the loop's owner holds the lock, as serve does
        store.outbox = sent_to(a.url)
        save(store, SourceState(source, source), [Entry(id="e0")], NOW)  # the baseline: no event
        loop = DeliveryLoop(config, clock=after(NOW))
        loop.start()
        try:
            save(store, SourceState(source, source), [Entry(id="e1", title="One"), Entry(id="e0")], NOW)
            loop.wake()
            for _ in range(100):  # bounded: at most about 10 s
                if a.received:
                    break
                threading.Event().wait(0.1)
        finally:
            loop.stop(timeout=5)
    assert len(a.received) == 1 and check_signed(a, 0, source)["id"] == "e1"
    assert rows(tmp_path, "SELECT state FROM deliveries") == [("delivered",)]


# --- destinations that come and go, and the outbox's size ------------------------------------------------------


def test_a_destination_added_later_gets_the_events_after_it_and_one_removed_gets_nothing_more(
    server: HTTPServer, tmp_path: Path
) -> None:
    a, b = Hook(server, "a"), Hook(server, "b")
    both = load_config(planet(server, tmp_path, [a, b], [post(1)]))
    source = "https://blog.example.org/feed.xml"
    entries = [Entry(id="e0")]
    with Store.open(tmp_path / "cache") as store:
        session = make_session(both)
        try:
            store.outbox = sent_to(a.url)
            save(store, SourceState(source, source), entries, NOW)  # the baseline: no event
            entries = [Entry(id="e1", title="One"), *entries]
            save(store, SourceState(source, source), entries, NOW)
            store.outbox = sent_to(a.url, b.url)  # b is added to sites.yaml
            entries = [Entry(id="e2", title="Two"), *entries]
            save(store, SourceState(source, source), entries, NOW)
            assert deliver_due(store, both, NOW, session, 10).delivered == 3
            store.outbox = sent_to(b.url)  # a is removed
            entries = [Entry(id="e3", title="Three"), *entries]
            save(store, SourceState(source, source), entries, NOW)
            assert deliver_due(store, replace(both, deliveries=both.deliveries[1:]), NOW, session, 10).delivered == 1
        finally:
            session.close()
    assert [body["id"] for body in a.bodies()] == ["e1", "e2"]
    assert [body["id"] for body in b.bodies()] == ["e2", "e3"]  # not e1: it was stored before b was added


def test_prune_deletes_old_events_no_destination_waits_for_and_keeps_dead_letters_a_while(
    server: HTTPServer, tmp_path: Path
) -> None:
    a, b = Hook(server, "a"), Hook(server, "b", answers=[500])
    config = load_config(planet(server, tmp_path, [a, b], [post(1)]))
    source = "https://blog.example.org/feed.xml"
    written = NOW - timedelta(days=40)
    with Store.open(tmp_path / "cache") as store:
        store.outbox = sent_to(a.url, b.url)
        save(store, SourceState(source, source), [Entry(id="e0")], written)  # the baseline: no event
        save(store, SourceState(source, source), [Entry(id="e1", title="One"), Entry(id="e0")], written)
        session = make_session(config)
        try:
            for attempt in range(ATTEMPTS):  # a is delivered at once; b fails until its delivery is dead
                deliver_due(store, config, written + timedelta(days=attempt), session, 10)
        finally:
            session.close()
        assert outbox.totals(store, [a.url, b.url]) == {"pending": 0, "delivered": 1, "dead": 1}
        assert outbox.totals(store, [a.url]) == {"pending": 0, "delivered": 1, "dead": 0}  # b removed
        only_a = replace(config, deliveries=config.deliveries[:1])
        assert deliveries.prune(store, config, written + timedelta(days=6)) == 0  # too young
        assert deliveries.prune(store, config, written + timedelta(days=29)) == 0  # b's dead letter is kept
        assert deliveries.prune(store, only_a, written + timedelta(days=8)) == 1  # b removed: nothing holds it
        assert store._db.execute("SELECT COUNT(*) FROM deliveries").fetchone()[0] == 0
        save(
            store,
            SourceState(source, source),
            [Entry(id="e2", title="Two"), Entry(id="e1", title="One"), Entry(id="e0")],
            written,
        )
        assert deliveries.prune(store, config, written + timedelta(days=31)) == 0  # pending: kept however old
        assert store._db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0] == 1


# --- slow destinations: a total deadline per POST, and destinations that never wait for one another ------------


class RawHook:
    """A webhook on a loopback server of its own (a thread per connection), answering by ``mode``: "ok" a 200
    at once; "hang" nothing, until ``release`` is set (at most 30 s); "trickle" one byte of a status line and
    headers that never end every 0.2 s (at most 200), until ``release`` is set or the client goes away
    (``closed``)."""

    def __init__(self, mode: str, release: threading.Event) -> None:
        self.mode, self.release = mode, release
        self.bodies: list[dict[str, Any]] = []
        self.sent = 0
        self.closed = threading.Event()
        hook = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                hook.answer(self)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook/{mode}"

    def answer(self, handler: socketserver.StreamRequestHandler) -> None:
        length = 0
        for line in iter(handler.rfile.readline, b""):  # the request's head
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("latin-1").partition(":")
            length = int(value) if name.lower() == "content-length" else length
        self.bodies.append(json.loads(handler.rfile.read(length)))
        if self.mode == "hang":
            self.release.wait(30)
        elif self.mode == "trickle":
            try:
                for byte in (b"HTTP/1.1 200 OK\r\nX-Slow: " + b"y" * 200)[:200]:
                    handler.wfile.write(bytes([byte]))
                    handler.wfile.flush()
                    self.sent += 1
                    if self.release.wait(0.2):
                        return
            except OSError:
                self.closed.set()
            return
        with contextlib.suppress(OSError):
            handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def raw_hooks() -> Iterator[Callable[[str], RawHook]]:
    release, made = threading.Event(), []

    def make(mode: str) -> RawHook:
        made.append(RawHook(mode, release))
        return made[-1]

    yield make
    release.set()
    for hook in made:
        hook.stop()


def outbox_planet(tmp_path: Path, hooks: list[RawHook], timeout: float) -> Any:
    """A Config whose deliveries are ``hooks``; its state holds the baseline of one source."""
    config = load_config(
        write_config(
            tmp_path,
            [{"name": "Blog", "feed": "https://blog.example.org/feed.xml"}],
            deliveries=[{"url": hook.url, "secret": "s"} for hook in hooks],
            timeout=timeout,
        )
    )
    with Store.open(config.cache) as store:
        store.outbox = sent_to(*(hook.url for hook in hooks))
        save(store, SourceState(SOURCE, SOURCE), [Entry(id="e0")], NOW)  # the baseline: no event
    return config


SOURCE = "https://blog.example.org/feed.xml"


def test_an_answer_trickling_a_byte_at_a_time_is_cut_at_the_timeout(
    tmp_path: Path, raw_hooks: Callable[[str], RawHook]
) -> None:
    trickle = raw_hooks("trickle")
    config = outbox_planet(tmp_path, [trickle], timeout=1)
    with Store.open(config.cache) as store:
        store.outbox = sent_to(trickle.url)
        save(store, SourceState(SOURCE, SOURCE), [Entry(id="e1", title="One"), Entry(id="e0")], NOW)
        with make_session(config) as session:
            counts = deliver_due(store, config, NOW, session, 10)
    assert (counts.delivered, counts.retrying) == (0, 1)
    assert trickle.closed.wait(10), "the POST was not cut: the answer went on trickling"
    assert 0 < trickle.sent < 200 and len(trickle.bodies) == 1
    assert rows(tmp_path, "SELECT state, attempts, last_error FROM deliveries") == [
        ("pending", 1, "Timeout: no answer within 1 s")
    ]


def test_a_healthy_destination_is_served_beside_one_that_hangs_and_one_that_trickles(
    tmp_path: Path, raw_hooks: Callable[[str], RawHook]
) -> None:
    from syndicator.push.deliveries import DeliveryLoop

    hang, trickle, ok = raw_hooks("hang"), raw_hooks("trickle"), raw_hooks("ok")
    config = outbox_planet(tmp_path, [hang, trickle, ok], timeout=30)  # the slow two outlast the test
    with Store.open(config.cache) as store:
        store.outbox = sent_to(hang.url, trickle.url, ok.url)
        loop = DeliveryLoop(config, clock=after(NOW + timedelta(seconds=3)))
        loop.start()
        try:
            for n in (1, 2, 3):  # each stored while the first POSTs to hang and trickle are still under way
                entries = [*(Entry(id=f"e{k}", title=f"Post {k}") for k in range(n, 0, -1)), Entry(id="e0")]
                save(store, SourceState(SOURCE, SOURCE), entries, NOW + timedelta(seconds=n))
                loop.wake()
                for _ in range(100):  # bounded: at most about 10 s
                    if len(ok.bodies) == n:
                        break
                    threading.Event().wait(0.1)
                assert [body["id"] for body in ok.bodies] == [f"e{k}" for k in range(1, n + 1)]
            assert len(hang.bodies) == 1 and len(trickle.bodies) == 1  # one POST at a time each, still running
            assert not trickle.closed.is_set() and 0 < trickle.sent < 200
        finally:
            raw_hooks("ok").release.set()  # the slow two end now; the loop records them as it stops
            loop.stop(timeout=10)
