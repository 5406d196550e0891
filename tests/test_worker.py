"""``syndicator worker``: several processes polling into one PostgreSQL state (a real throwaway server),
feeds on 127.0.0.1, the real CLI as subprocesses, ``kill -9`` included."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests
from werkzeug.serving import make_server

from syndicator.state import claims, duequeue
from syndicator.state.store import Store

from .conftest import sent_to, write_config
from .postgres import pg_database, postgres_url  # noqa: F401 - fixtures
from .websub_hub import SYNDICATOR, WAIT, free_port, metric_samples, wait_for

FEEDS = 24


class Farm:
    """Atom feeds at /feeds/N.xml on 127.0.0.1, answering after ``delay`` seconds; records syndicator's GETs."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.gets: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.port}"

    def app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        if "syndicator" in environ.get("HTTP_USER_AGENT", ""):
            with self.lock:
                self.gets.append((time.monotonic(), path))
        time.sleep(self.delay)
        name = path.rsplit("/", 1)[-1].removesuffix(".xml")
        body = (
            f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Feed {name}</title>'
            f"<id>urn:feed:{name}</id><updated>2026-12-01T00:00:00Z</updated><entry><id>urn:{name}:1</id>"
            f"<title>Post of feed {name}</title><updated>2026-12-01T00:00:00Z</updated>"
            f'<link href="https://example.org/{name}/1"/></entry></feed>'
        ).encode()
        start_response("200 OK", [("Content-Type", "application/atom+xml"), ("Content-Length", str(len(body)))])
        return [body]

    def url(self, n: int) -> str:
        return f"{self.base}/feeds/{n}.xml"

    def counts(self) -> Counter[str]:
        with self.lock:
            return Counter(path for _, path in self.gets)


@pytest.fixture()
def farm() -> Iterator[Farm]:
    running = Farm()
    yield running
    running.server.shutdown()


def planet(tmp_path: Path, farm: Farm, url: str, **settings: Any) -> Path:
    sites = [{"name": f"Feed {n}", "feed": farm.url(n)} for n in range(FEEDS)]
    return write_config(tmp_path, sites, state=url, host_gap=0, per_host_concurrency=4, **settings)


def worker(config: Path, name: str, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and k != "SYNDICATOR_STATE"}
    with open(config.parent / f"worker-{name}.log", "wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(
            [str(SYNDICATOR), "worker", "--config", str(config), "--name", name, "-v", *args],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=env,
        )


def stop(process: subprocess.Popen[bytes]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=WAIT)
        raise AssertionError("the worker did not stop on SIGTERM") from None


def attempted(url: str) -> set[str]:
    with Store.connect(url) as store:
        return {source for source, state in store.states().items() if state.last_attempt is not None}


def test_two_workers_fetch_every_feed_once_and_a_build_publishes_them(
    tmp_path: Path, farm: Farm, pg_database: str
) -> None:
    config = planet(tmp_path, farm, pg_database)
    processes = [worker(config, "a"), worker(config, "b")]
    try:
        wait_for(lambda: len(attempted(pg_database)) == FEEDS, "every feed fetched")
        time.sleep(1.5)  # a turn or two more: nothing is due again for an hour, so nothing more is fetched
    finally:
        codes = [stop(process) for process in processes]
    assert codes == [0, 0]
    counts = farm.counts()
    assert sorted(counts) == sorted(f"/feeds/{n}.xml" for n in range(FEEDS))
    assert set(counts.values()) == {1}, counts  # no feed fetched twice
    logs = [(tmp_path / f"worker-{name}.log").read_text() for name in ("a", "b")]
    assert all("stopped after storing" in log for log in logs), logs
    built = subprocess.run(
        [str(SYNDICATOR), "build", "--config", str(config), "--no-fetch"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "SYNDICATOR_STATE"},
    )
    assert built.returncode == 0, built.stderr
    page = (tmp_path / "public" / "index.html").read_text(encoding="utf-8")
    assert all(f"Post of feed {n}" in page for n in range(FEEDS))


def test_the_sources_of_a_dead_worker_are_taken_over_when_its_leases_expire(
    tmp_path: Path, farm: Farm, pg_database: str
) -> None:
    config = planet(tmp_path, farm, pg_database)
    with Store.open(tmp_path / "seed", pg_database) as store:  # the dead worker held every source
        duequeue.register(store, [(farm.url(n), "127.0.0.1") for n in range(FEEDS)])
        held = claims.claim(store, "dead", datetime.now(UTC), FEEDS, lease_seconds=4, per_host=FEEDS)
    assert len(held) == FEEDS
    started = time.monotonic()
    port = free_port()
    process = worker(config, "b", "--listen", f"127.0.0.1:{port}")
    try:
        wait_for(lambda: len(attempted(pg_database)) == FEEDS, "every feed fetched after the leases expired")
        samples = wait_for(
            lambda: metric_samples(requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text),
            "the worker's metrics",
        )
        assert requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5).text == "ok\n"
    finally:
        assert stop(process) == 0
    assert samples[("syndicator_lease_expiries_total", frozenset())] == FEEDS  # the dead worker's leases
    assert samples[("syndicator_claimed_sources_total", frozenset())] == FEEDS
    assert samples[("syndicator_fetches_total", frozenset({("outcome", "fetched"), ("kind", "")}))] == FEEDS
    assert samples[("syndicator_claim_seconds_count", frozenset())] >= 1
    first = min(at for at, _ in farm.gets)
    assert first - started >= 3.0  # not before the dead worker's leases ended (4 s after they were taken)
    assert set(farm.counts().values()) == {1}


def test_a_worker_killed_mid_fetch_loses_nothing(tmp_path: Path, pg_database: str) -> None:
    slow = Farm(delay=2.0)
    try:
        config = planet(tmp_path, slow, pg_database)
        first = worker(config, "a", "--lease", "10", "--workers", "2")
        wait_for(lambda: slow.gets, "the first worker's first request")
        time.sleep(0.5)
        first.send_signal(signal.SIGKILL)  # mid-fetch, holding leases
        first.wait(timeout=WAIT)
        before = attempted(pg_database)
        second = worker(config, "b", "--workers", "4")
        try:
            wait_for(
                lambda: len(attempted(pg_database)) == FEEDS, "every feed fetched by the second worker", timeout=60
            )
        finally:
            assert stop(second) == 0
        assert before < attempted(pg_database)
    finally:
        slow.server.shutdown()


def test_a_worker_renews_the_leases_of_the_sources_still_queued_so_none_is_fetched_twice_at_once(
    tmp_path: Path, pg_database: str
) -> None:
    slow = Farm(delay=6.0)  # a batch of two, fetched one after the other: 12 s, beyond the 10 s lease
    try:
        sites = [{"name": f"Feed {n}", "feed": slow.url(n)} for n in range(4)]
        config = write_config(tmp_path, sites, state=pg_database, host_gap=0, per_host_concurrency=4)
        processes = [worker(config, name, "--lease", "10", "--workers", "1") for name in ("a", "b")]
        try:
            wait_for(lambda: len(attempted(pg_database)) == 4, "every feed fetched", timeout=60)
        finally:
            codes = [stop(process) for process in processes]
        assert codes == [0, 0]
        assert set(slow.counts().values()) == {1}, slow.gets  # without the renewal, b takes a's second source
    finally:
        slow.server.shutdown()


def test_a_worker_and_its_deliveries_connect_again_when_the_server_drops_their_connections(
    tmp_path: Path, farm: Farm, server: Any, pg_database: str
) -> None:
    from syndicator.feedtypes import Entry
    from syndicator.model import SourceState
    from syndicator.poll.path import save

    from .test_deliveries import Hook

    hook = Hook(server, "a")
    sites = [{"name": f"Feed {n}", "feed": farm.url(n)} for n in range(3)]
    config = write_config(tmp_path, sites, state=pg_database, host_gap=0, deliveries=[{"url": hook.url, "secret": "s"}])
    port = free_port()
    process = worker(config, "a", "--listen", f"127.0.0.1:{port}")
    try:
        wait_for(lambda: len(attempted(pg_database)) == 3, "every feed fetched (their baselines: no event)")
        with Store.connect(pg_database) as store:  # as a restart of the server does
            store._db.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            source = "https://blog.example.org/feed.xml"
            store.outbox = sent_to(hook.url)
            save(store, SourceState(source, source), [Entry(id="e0")], datetime.now(UTC))
            save(store, SourceState(source, source), [Entry(id="e1", title="One"), Entry(id="e0")], datetime.now(UTC))
        wait_for(
            lambda: "connected to the state again" in (tmp_path / "worker-a.log").read_text(),
            "the worker to connect again",
            timeout=30,
        )
        wait_for(lambda: hook.received, "the event delivered by the delivery thread's new connection", timeout=30)
        assert requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5).text == "ok\n"
    finally:
        assert stop(process) == 0
    assert [body["id"] for body in hook.bodies()] == ["e1"]


#: A "billion laughs" sites.yaml (1 KB; nine levels of nine aliases would be 387 million values).
ALIAS_BOMB = (
    "title: T\nlink: https://planet.example.org/\nsites:\n  - name: A\n    feed: https://a.example.org/f\n"
    "    extra:\n      l0: &l0 ["
    + ", ".join(["lol"] * 9)
    + "]\n"
    + "".join(f"      l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]\n" for n in range(1, 9))
)


def test_sighup_makes_a_worker_read_sites_yaml_again(tmp_path: Path, farm: Farm, pg_database: str) -> None:
    sites = [{"name": f"Feed {n}", "feed": farm.url(n)} for n in range(3)]
    config = write_config(tmp_path, sites[:2], state=pg_database, host_gap=0)
    process = worker(config, "a")
    log = tmp_path / "worker-a.log"
    try:
        wait_for(lambda: len(attempted(pg_database)) == 2, "the first two feeds fetched")
        config.write_text("sites: [\n", encoding="utf-8")  # broken: one error, and the worker goes on
        process.send_signal(signal.SIGHUP)
        wait_for(lambda: "previous configuration stays in use" in log.read_text(), "the error line")
        config.write_text(ALIAS_BOMB, encoding="utf-8")  # 1 KB that would take gigabytes: one error line too
        process.send_signal(signal.SIGHUP)
        wait_for(lambda: log.read_text().count("previous configuration stays in use") == 2, "the second error")
        write_config(tmp_path, sites, state=pg_database, host_gap=0)
        process.send_signal(signal.SIGHUP)
        wait_for(lambda: len(attempted(pg_database)) == 3, "the added feed fetched")
    finally:
        assert stop(process) == 0
    text = log.read_text()
    assert f"read {config} again: 3 sites" in text
    assert sum(1 for line in text.splitlines() if line.startswith("syndicator: error:")) == 2, text
    assert "would add more than 100,000 values" in text
    assert set(farm.counts().values()) == {1}


def test_a_worker_needs_a_postgresql_state(tmp_path: Path, farm: Farm) -> None:
    config = write_config(tmp_path, [{"name": "A", "feed": farm.url(0)}])
    result = subprocess.run(
        [str(SYNDICATOR), "worker", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "SYNDICATOR_STATE"},
    )
    assert result.returncode == 2
    assert result.stderr.startswith("syndicator: error: worker: workers share a PostgreSQL state")
    assert farm.gets == []


def test_lease_time_defaults_to_twice_a_fetch_deadline() -> None:
    from syndicator.configtypes import Config
    from syndicator.drivers.worker import WorkerOptions, lease_seconds

    config = Config(path=Path("sites.yaml"), title="t", link="https://x.example/", sites=(), timeout=30, retries=1)
    assert lease_seconds(config, WorkerOptions()) == 240
    assert lease_seconds(config, WorkerOptions(lease=15)) == 15
    assert (
        lease_seconds(
            Config(path=Path("s"), title="t", link="https://x.example/", sites=(), timeout=5, retries=0),
            WorkerOptions(),
        )
        == 60
    )


def database_now(store: Store) -> datetime:
    moment: datetime = store._db.execute("SELECT clock_timestamp()").fetchone()[0]
    return moment.astimezone(UTC)


class LeaseFarm(Farm):
    """A Farm that reads, as each feed is fetched, the lease the fetching worker holds on it: {path: (claimed,
    expires)}."""

    def __init__(self, url: str) -> None:
        self.state_url = url
        self.leases: dict[str, tuple[datetime, datetime]] = {}
        super().__init__()

    def app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        with Store.connect(self.state_url) as store:
            for claimed, expires in store._db.execute(
                "SELECT claimed, expires FROM leases WHERE source LIKE ?", (f"%{path}",)
            ):
                self.leases[path] = (claimed.astimezone(UTC), expires.astimezone(UTC))
        return super().app(environ, start_response)


def test_a_worker_whose_clock_is_five_minutes_fast_takes_leases_and_due_times_from_the_database(
    tmp_path: Path, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys
    from datetime import timedelta

    from syndicator.config.load import load_config
    from syndicator.drivers.worker import WorkerOptions, run_worker

    class Fast(datetime):
        """This machine's clock, five minutes fast."""

        @classmethod
        def now(cls, tz: Any = None) -> Fast:  # type: ignore[override]
            return datetime.now(tz) + timedelta(minutes=5)  # type: ignore[return-value]

    farm = LeaseFarm(pg_database)
    try:
        config = load_config(planet(tmp_path, farm, pg_database))
        with Store.connect(pg_database) as store:
            before = database_now(store)
        for name, module in list(sys.modules.items()):  # every datetime.now() of ours reads the fast clock
            if name.startswith("syndicator") and getattr(module, "datetime", None) is datetime:
                monkeypatch.setattr(module, "datetime", Fast)
        assert run_worker(config, WorkerOptions(name="fast", turns=1, lease=600), threading.Event()) == 4  # per host
        monkeypatch.undo()
        with Store.connect(pg_database) as store:
            after = database_now(store)
            states = {s: st for s, st in store.states().items() if st.last_attempt is not None}
            assert claims.claim(store, "other", after, limit=100, lease_seconds=60, per_host=4) != []
    finally:
        farm.server.shutdown()
    assert len(farm.leases) == 4 and len(states) == 4
    for claimed, expires in farm.leases.values():  # the database's clock, not five minutes ahead of it
        assert before <= claimed <= after and expires == claimed + timedelta(seconds=600)
    for state in states.values():
        assert state.last_attempt is not None and state.next_attempt is not None
        assert before <= state.last_attempt <= after
        assert state.next_attempt >= state.last_attempt + timedelta(seconds=config.min_interval)


def test_a_listen_address_in_use_is_one_line_naming_it(tmp_path: Path) -> None:
    import socket

    # the state is never reached: the address fails first
    site = {"name": "A", "feed": "http://127.0.0.1:1/feed"}
    config = write_config(tmp_path, [site], state="postgresql://nobody@127.0.0.1:1/never")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        process = worker(config, "a", "--listen", f"127.0.0.1:{port}")
        assert process.wait(timeout=WAIT) == 2
    finally:
        taken.close()
    said = (tmp_path / "worker-a.log").read_text()
    assert f"--listen 127.0.0.1:{port}: cannot listen there" in said
    assert "Traceback" not in said
