"""The poll path (poll.path.Poller) with a fake fetcher: pipeline behaviour without HTTP.

The fetcher is the one part replaced: the host pool, the parser, decide and a
real SQLite store on disk all run. The end-to-end tests (test_cli, test_serve,
test_worker) keep covering the same path over a loopback server.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from syndicator.config.load import load_config, reread
from syndicator.configtypes import Config
from syndicator.errors import FeedError
from syndicator.model import Failed, Fetched, FetchRequest, FetchResult, NotModified
from syndicator.poll import schedule
from syndicator.poll.path import Poller, policy_of
from syndicator.state.store import Store

from .conftest import NOW

A, B, C = "http://a.example/feed", "http://b.example/feed", "http://c.example/feed"


def rss(*titles: str) -> bytes:
    """An RSS 2.0 feed with one dated item per title."""
    items = "".join(
        f"<item><title>{title}</title><link>http://a.example/{i}</link><guid>urn:{title}</guid>"
        f"<pubDate>Mon, 30 Nov 2026 0{i}:00:00 GMT</pubDate></item>"
        for i, title in enumerate(titles)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()


@dataclass
class FakeFetcher:
    """A fetcher that answers from a table {URL: body | "304" | FeedError} and records every request."""

    answers: dict[str, Any]
    max_bytes: int = 1 << 20
    allow_private: bool = False
    deadline: float = 30.0
    requests: list[FetchRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fetch(self, request: FetchRequest, budget: float | None = None) -> FetchResult:
        with self.lock:
            self.requests.append(request)
        answer = self.answers[request.url]
        if isinstance(answer, FeedError):
            return Failed(answer)
        if answer == "304":
            return NotModified(request.url, etag=request.etag)
        return Fetched(request.url, answer, {"content-type": "application/rss+xml"}, etag='"v1"', elapsed=0.01)

    def close(self) -> None:
        raise AssertionError("a fetcher passed in is never closed by the Poller")


def planet(tmp_path: Path, *feeds: str) -> Config:
    sites = "".join(f"  - name: Site {i}\n    feed: {feed}\n" for i, feed in enumerate(feeds))
    (tmp_path / "sites.yaml").write_text(f"title: Test\nlink: http://planet.example/\nsites:\n{sites}")
    return load_config(tmp_path / "sites.yaml")


def run(config: Config, store: Store, fetcher: FakeFetcher, sources: list[str], now=NOW) -> dict[str, Any]:
    states = store.states()
    policy, _ = policy_of(config, states, now)
    fingerprints = schedule.site_fingerprints(config.sites)
    with Poller(config, fetcher=fetcher) as poller:
        return {o.request.source: d for o, d in poller.poll(store, states, sources, now, 0.0, policy, fingerprints)}


def test_every_source_is_decided_and_stored_once(tmp_path: Path) -> None:
    config = planet(tmp_path, A, B)
    fetcher = FakeFetcher({A: rss("a1", "a2"), B: rss("b1")})
    with Store.open(tmp_path / "cache") as store:
        decisions = run(config, store, fetcher, [A, B])
        assert sorted(decisions) == [A, B]
        assert len(fetcher.requests) == 2
        stored = store.snapshots([A, B])
        assert sorted(item.entry.title for item in stored[A]) == ["a1", "a2"]
        assert [item.entry.title for item in stored[B]] == ["b1"]
        assert store.states()[A].etag == '"v1"'


def test_the_next_poll_sends_the_validators_back_and_a_304_keeps_the_entries(tmp_path: Path) -> None:
    config = planet(tmp_path, A)
    with Store.open(tmp_path / "cache") as store:
        run(config, store, FakeFetcher({A: rss("a1")}), [A])
        again = FakeFetcher({A: "304"})
        decisions = run(config, store, again, [A], NOW + timedelta(hours=2))
        assert again.requests[0].etag == '"v1"'
        assert not decisions[A].changed
        assert [item.entry.title for item in store.snapshots([A])[A]] == ["a1"]


def test_a_failure_keeps_the_last_good_copy_and_counts(tmp_path: Path) -> None:
    config = planet(tmp_path, A)
    with Store.open(tmp_path / "cache") as store:
        run(config, store, FakeFetcher({A: rss("a1")}), [A])
        run(config, store, FakeFetcher({A: FeedError(A, "connection refused", kind="connect")}), [A], NOW)
        state = store.states()[A]
        assert state.failures == 1
        assert state.error_kind == "connect"
        assert [item.entry.title for item in store.snapshots([A])[A]] == ["a1"]


def test_a_bug_while_handling_one_source_is_contained_to_it(tmp_path: Path, monkeypatch: Any) -> None:
    from syndicator.poll import path

    config = planet(tmp_path, A, B)
    real = path.decide
    calls = {"n": 0}

    def once(state, observation, *args: Any):
        if observation.request.source == A and calls["n"] == 0:
            calls["n"] += 1
            raise RuntimeError("a bug of ours")
        return real(state, observation, *args)

    monkeypatch.setattr(path, "decide", once)
    with Store.open(tmp_path / "cache") as store:
        decisions = run(config, store, FakeFetcher({A: rss("a1"), B: rss("b1")}), [A, B])
        assert decisions[A].state.error_kind == "internal"
        assert decisions[B].state.error_kind is None
        assert [item.entry.title for item in store.snapshots([B])[B]] == ["b1"]


def test_a_reload_keeps_the_fetcher_and_the_next_pool_takes_the_new_settings(tmp_path: Path) -> None:
    config = planet(tmp_path, A)
    poller = Poller(config)
    try:
        first = poller.open()
        (tmp_path / "sites.yaml").write_text((tmp_path / "sites.yaml").read_text() + "workers: 3\ntimeout: 7\n")
        poller.reconfigure(reread(config))
        assert poller.open() is first
        assert first.timeout == config.timeout != 7  # kept on a reload (KEPT_ON_RELOAD)
        list(poller.observe([], NOW, 0.0))
        assert poller.config.workers == 3
    finally:
        poller.close()
