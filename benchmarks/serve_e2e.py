"""The Done-when run of ``syndicator serve`` on loopback: push latency, forgeries, a dead hub, restart, own hub.

Starts, all on 127.0.0.1 and in this process unless said otherwise:

* a real WebSub hub: flask-websub's, its deliveries run by celery in eager
  mode (the test extra installs it);
* a feed server: ``--feeds`` Atom feeds, feed 0 advertising the hub in its
  ``Link`` header and document, the others plain; it records every GET
  syndicator makes (by User-Agent) with its time;
* a recording hub for the planet's own ``hub:`` setting: it counts the
  publish pings and hashes the published feed.xml at each one;
* ``syndicator serve`` as a child process (the real CLI), with
  ``min_interval: 60``, ``default_interval: 60`` and ``max_interval: 120``
  so polling repairs within two minutes.

Then it measures, and prints one line per figure:

1. push latency: a post published at the hub, to the post in the rendered
   ``public/index.html`` (``--trials`` posts; median, p95, max), and the
   GETs of the feed syndicator made meanwhile (a push needs none);
2. forgeries: unsigned, wrongly signed and signed-over-other-bytes
   notifications to the real callback; how many reached the state;
3. the hub killed: posts published while it is down, to the site, through
   polling alone;
4. SIGTERM and restart: exit code, entries before and after, the posts
   published while down reaching the site, and the most feed GETs in any
   one second while the overdue sources are released (against the
   recovery rate of ``workers / 2`` a second);
5. the planet's own hub: pings against the distinct feed.xml versions
   published.

Every wait is bounded (``--timeout`` seconds each). Usage::

    python benchmarks/serve_e2e.py [--feeds 200] [--trials 20] [--workers 8]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import logging
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests
from celery import Celery
from flask import Flask, Response, request
from flask_websub.hub import Hub, SQLite3HubStorage
from werkzeug.serving import make_server

SYNDICATOR = Path(sys.executable).with_name("syndicator")


class Farm:
    """The feed server: feeds of Atom entries, one of them advertising the hub."""

    def __init__(self, feeds: int, hub: str) -> None:
        first = "2026-12-01T00:00:00Z"
        self.posts: dict[int, list[tuple[str, str, str]]] = {
            i: [(f"f{i}-p0", f"Feed {i} first", first)] for i in range(feeds)
        }
        self.hub = hub
        self.gets: list[tuple[float, int]] = []
        self.lock = threading.Lock()
        app = Flask("farm")
        app.add_url_rule("/f/<int:number>.xml", "feed", self.feed)
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.base = f"http://127.0.0.1:{self.server.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, number: int) -> str:
        return f"{self.base}/f/{number}.xml"

    def feed(self, number: int) -> Response:
        if "syndicator" in request.headers.get("User-Agent", ""):
            with self.lock:
                self.gets.append((time.monotonic(), number))
        with self.lock:
            posts = list(self.posts.get(number, []))
        me = self.url(number)
        links = f"<link rel='hub' href='{self.hub}'/><link rel='self' href='{me}'/>" if number == 0 else ""
        entries = "".join(
            f"<entry><id>urn:{i}</id><title>{t}</title><updated>{d}</updated>"
            f"<link href='https://example.org/{i}'/></entry>"
            for i, t, d in reversed(posts)
        )
        body = (
            f"<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'><title>Feed {number}</title>"
            f"<id>urn:feed:{number}</id><updated>2026-12-01T00:00:00Z</updated>{links}{entries}</feed>"
        )
        headers = {"Link": f'<{self.hub}>; rel="hub", <{me}>; rel="self"'} if number == 0 else {}
        return Response(body, content_type="application/atom+xml", headers=headers)

    def post(self, number: int, title: str) -> None:
        with self.lock:
            count = len(self.posts[number])
            self.posts[number].append(
                (f"f{number}-p{count}", title, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            )

    def gets_of(self, number: int, since: float) -> int:
        with self.lock:
            return sum(1 for at, n in self.gets if n == number and at >= since)


def websub_hub(folder: Path) -> tuple[Any, str]:
    """flask-websub's hub, deliveries in eager mode; returns (server, hub URL)."""
    app = Flask("hub")
    app.config["PUBLISH_SUPPORTED"] = True
    celery = Celery("hub", broker="memory://", backend="cache+memory://")
    celery.conf.task_always_eager = True
    hub = Hub(
        SQLite3HubStorage(str(folder / "hub.sqlite")),
        celery,
        PUBLISH_SUPPORTED=True,
        REQUEST_TIMEOUT=3,
        MAX_ATTEMPTS=1,
        BACKOFF_BASE=0.01,
    )
    app.register_blueprint(hub.build_blueprint(url_prefix="/hub"))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.port}/hub"


class OwnHub:
    """A recording hub for the planet's ``hub:``: counts pings and hashes feed.xml at each."""

    def __init__(self, output: Path) -> None:
        self.pings: list[str] = []
        self.output = output
        app = Flask("own")
        app.add_url_rule("/", "ping", self.ping, methods=["POST"])
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.port}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def ping(self) -> Response:
        if request.form.get("hub.mode") == "publish":
            data = (self.output / "feed.xml").read_bytes()
            self.pings.append(hashlib.sha256(data).hexdigest())
        return Response("", status=204)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def until(condition: Callable[[], bool], timeout: float, what: str) -> float:
    """Seconds until ``condition()`` holds, polling every 10 ms; raises TimeoutError after ``timeout``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if condition():
            return time.monotonic() - started
        time.sleep(0.01)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s")


def on_site(output: Path, title: str) -> bool:
    try:
        return title in (output / "index.html").read_text(encoding="utf-8")
    except OSError:
        return False


def metric(base: str, name: str) -> float:
    for line in requests.get(base + "/metrics", timeout=5).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


class Serve:
    """``syndicator serve`` as a child process."""

    def __init__(self, config: Path, port: int, workers: int, log: Path) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.log = log
        self.process = subprocess.Popen(
            [
                str(SYNDICATOR),
                "serve",
                "--config",
                str(config),
                "--listen",
                f"127.0.0.1:{port}",
                "--public-url",
                self.base,
                "--workers",
                str(workers),
                "-v",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log.open("a"),
        )
        until(self.up, 30, "serve answering /healthz")

    def up(self) -> bool:
        try:
            return requests.get(self.base + "/healthz", timeout=1).ok
        except requests.RequestException:
            return False

    def stop(self, timeout: float) -> int | None:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return None


def entries_stored(cache: Path) -> int:
    with sqlite3.connect(cache / "state.sqlite") as db:
        return int(db.execute("SELECT COUNT(*) FROM seen").fetchone()[0])


def titles_stored(cache: Path) -> str:
    with sqlite3.connect(cache / "state.sqlite") as db:
        return "\n".join(row[0] for row in db.execute("SELECT data FROM entries"))


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feeds", type=int, default=200)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request of the farm and hubs otherwise
    work = Path(tempfile.mkdtemp(prefix="serve-e2e-"))
    hub_server, hub = websub_hub(work)
    farm = Farm(args.feeds, hub)
    output, cache = work / "public", work / "cache"
    own = OwnHub(output)
    config = work / "sites.yaml"
    sites = "".join(f"  - name: Feed {i}\n    feed: {farm.url(i)}\n" for i in range(args.feeds))
    config.write_text(
        f"title: Bench\nlink: https://planet.example.org/\nhub: {own.url}\n"
        f"min_interval: 60\ndefault_interval: 60\nmax_interval: 120\nhost_gap: 0\n"
        f"per_host_concurrency: 8\nsites:\n{sites}",
        encoding="utf-8",
    )
    port = free_port()
    log = work / "serve.log"
    serve = Serve(config, port, args.workers, log)
    figures: list[str] = []
    try:
        until(lambda: metric(serve.base, "syndicator_live_leases") >= 1, args.timeout, "a live lease")
        until(lambda: on_site(output, "Feed 0 first"), args.timeout, "the first render")

        # 1. push latency
        latencies, gets = [], 0
        for trial in range(args.trials):
            title = f"Pushed post {trial}"
            farm.post(0, title)
            since = time.monotonic()
            requests.post(
                hub, data={"hub.mode": "publish", "hub.topic": farm.url(0), "hub.url": farm.url(0)}, timeout=10
            ).raise_for_status()
            until(lambda t=title: on_site(output, t), args.timeout, title)
            latencies.append(time.monotonic() - since)  # from before the publish request
            gets += farm.gets_of(0, since)
        latencies.sort()
        p95 = latencies[max(0, int(round(0.95 * len(latencies))) - 1)]
        figures.append(
            f"push latency (publish at the hub -> post in index.html), {len(latencies)} posts: "
            f"median {statistics.median(latencies):.2f} s, p95 {p95:.2f} s, max {latencies[-1]:.2f} s; "
            f"feed GETs by syndicator meanwhile: {gets}"
        )

        # 2. forgeries
        with sqlite3.connect(f"file:{cache / 'push.sqlite'}?mode=ro", uri=True) as db:
            token, secret = db.execute("SELECT token, secret FROM subscriptions").fetchone()
        callback = f"{serve.base}/websub/{token}"
        statuses: Counter[int] = Counter()
        for n in range(10):
            for kind in ("unsigned", "wrong-secret", "other-bytes"):
                title = f"Forged {kind} {n}"
                body = (
                    f"<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'><title>X</title>"
                    f"<id>urn:x</id><updated>2026-12-01T00:00:00Z</updated><entry><id>urn:forged-{kind}-{n}"
                    f"</id><title>{title}</title><updated>2026-12-01T00:00:00Z</updated></entry></feed>"
                ).encode()
                headers = {"Content-Type": "application/atom+xml"}
                if kind == "wrong-secret":
                    headers["X-Hub-Signature"] = sign("not the secret", body)
                elif kind == "other-bytes":
                    headers["X-Hub-Signature"] = sign(secret, body.replace(b"Forged", b"Signed"))
                statuses[requests.post(callback, data=body, headers=headers, timeout=10).status_code] += 1
        time.sleep(1.0)  # a render would have happened by now
        reached = titles_stored(cache).count("Forged") + (output / "index.html").read_text().count("Forged")
        verdicts = 'syndicator_push_notifications_total{verdict="%s"}'
        figures.append(
            f"forged notifications: 30 sent (10 unsigned, 10 wrong secret, 10 signed over other bytes), "
            f"answered {dict(statuses)}; reached the state or the site: {reached}; counted unsigned "
            f"{metric(serve.base, verdicts % 'unsigned'):.0f}, bad_signature "
            f"{metric(serve.base, verdicts % 'bad_signature'):.0f}"
        )

        # 3. the hub killed
        hub_server.shutdown()
        down = []
        for n in range(3):
            title = f"Posted with the hub dead {n}"
            farm.post(0, title)
            with contextlib.suppress(requests.RequestException):  # the hub is dead: the publisher's ping fails
                requests.post(hub, data={"hub.mode": "publish", "hub.topic": farm.url(0)}, timeout=2)
            down.append(until(lambda t=title: on_site(output, t), args.timeout, title))
        figures.append(
            f"hub killed: {len(down)} posts reached the site by polling alone in "
            f"{', '.join(f'{d:.0f}' for d in down)} s (max_interval 120 s)"
        )

        # 4. SIGTERM and restart
        before = entries_stored(cache)
        code = serve.stop(args.timeout)
        stopped_at = time.monotonic()
        stopped = "stopped; the state is saved" in log.read_text()
        while_down = "Posted while serve was down"
        farm.post(0, while_down)
        for i in range(1, args.feeds, 10):
            farm.post(i, f"Feed {i} while down")
        # every source falls due: wait out the longest interval (120 s, plus jitter)
        time.sleep(max(0.0, 150 - (time.monotonic() - stopped_at)))
        restart = time.monotonic()
        serve = Serve(config, port, args.workers, log)
        after = entries_stored(cache)
        until(lambda: on_site(output, while_down), args.timeout, "the post published while down")
        until(
            lambda: len({n for at, n in farm.gets if at >= restart}) >= args.feeds,
            args.timeout,
            "every feed fetched after the restart",
        )
        seconds = Counter(int(at - restart) for at, _ in farm.gets if at >= restart)
        window = max(seconds) + 1
        rate = max(1.0, args.workers / 2)
        figures.append(
            f"SIGTERM: exit {code}, clean stop logged: {stopped}; entries {before} before, {after} at "
            f"restart (none lost); the post published while down reached the site"
        )
        figures.append(
            f"restart after 150 s down: {args.feeds} overdue feeds fetched over {window} s, at most "
            f"{max(seconds.values())} GETs in one second (release rate {rate:.0f}/s, {args.workers} "
            f"workers); GETs per second: {[seconds[s] for s in range(window)][:40]}"
        )

        # 5. the planet's own hub
        distinct = len(set(own.pings))
        figures.append(
            f"own hub: {len(own.pings)} publish pings for {distinct} distinct feed.xml versions "
            f"(a ping for the same feed.xml twice: {len(own.pings) - distinct})"
        )
        print("\n".join(figures))
        return 0
    except Exception as error:
        print("\n".join(figures))
        print(f"FAILED: {error}\n--- serve log (tail) ---\n{log.read_text()[-4000:]}", file=sys.stderr)
        return 1
    finally:
        if serve.process.poll() is None:
            serve.stop(30)
        for server in (farm.server, own.server):
            server.shutdown()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"work folder: {work}", file=sys.stderr)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
