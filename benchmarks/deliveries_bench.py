"""Deliveries exactly once per destination and entry version, from two workers, one killed (issue 13).

Two `syndicator worker` processes share a PostgreSQL state and poll --feeds
feeds on a loopback server; sites.yaml has four webhook destinations on
another loopback server:

- ``ok``: answers 200;
- ``flaky``: answers 500 to the first POST of every second entry version,
  then 200 (the retry comes after the 60 s backoff);
- ``hang``: holds the first POST of every fourth entry version past the
  workers' timeout (2 s) before answering 200, so the sender never hears
  the answer it was given (a lost answer: the retry is a duplicate the
  Idempotency-Key lets the receiver drop);
- ``twice``: writes two 200 answers to each POST on a kept-alive
  connection (the second must never be taken for the answer of another
  delivery).

The first fetch of each feed is its baseline (no events); then each feed
gains one post, twice, one poll interval (60 s) apart: 2 x --feeds entry
versions. While the second wave is being delivered, one worker is killed
with SIGKILL (a crash between commit and delivery for what it had not
sent). The run ends when every delivery is delivered or dead, or after
--timeout seconds. Printed per destination: the entry versions in the
outbox, the distinct Idempotency-Keys the destination accepted (answered
2xx), missing ones, keys accepted more than once (and whether each such
duplicate had a lost answer: a hang, or a POST in flight at the kill),
and deliveries the state marks delivered that the destination never
accepted (must be 0). Every wait is bounded. Usage::

    .venv/bin/python benchmarks/deliveries_bench.py --feeds 100
"""

from __future__ import annotations

import argparse
import hashlib
import signal
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from workers_bench import new_database, server, start_workers, stop  # noqa: E402

from syndicator.push.deliveries import idempotency_key  # noqa: E402

TIMEOUT = 2  # the workers' fetch and POST timeout, seconds
HANG = 3 * TIMEOUT


class Farm:
    """The feeds (``/feed/N.xml``, ``round`` + 1 posts each) and the four destinations, on one loopback server."""

    def __init__(self) -> None:
        self.round = 0
        self.lock = threading.Lock()
        #: {destination: [(key, body, answered 2xx, received at monotonic, lost answer)]}
        self.posts: dict[str, list[tuple[str, bytes, bool, float, bool]]] = defaultdict(list)
        farm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                number = self.path.rsplit("/", 1)[-1].removesuffix(".xml")
                items = "".join(
                    f"<item><guid>urn:feed{number}:post{k}</guid><title>Post {k} of {number}</title>"
                    f"<link>https://feed{number}.example.org/{k}</link>"
                    f"<pubDate>Tue, 0{k + 1} Dec 2026 10:00:00 GMT</pubDate></item>"
                    for k in range(farm.round + 1)
                )
                body = (
                    f'<?xml version="1.0"?><rss version="2.0"><channel><title>Feed {number}</title>'
                    f"<link>https://feed{number}.example.org/</link>{items}</channel></rss>"
                ).encode()
                self.answer(200, body, "application/rss+xml")

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                key = self.headers.get("Idempotency-Key", "")
                name = self.path.rsplit("/", 1)[-1]
                with farm.lock:
                    seen = [post for post in farm.posts[name] if post[0] == key]
                number = int(hashlib.sha256(key.encode()).hexdigest(), 16)
                if name == "flaky" and not seen and number % 2 == 0:
                    self.record(name, key, body, ok=False)
                    self.answer(500, b"try later")
                    return
                lost = name == "hang" and not seen and number % 4 == 0
                self.record(name, key, body, ok=True, lost=lost)
                if lost:
                    time.sleep(HANG)  # the sender has given up: it never hears this 200
                self.answer(200, b"ok")
                if name == "twice":
                    self.answer(200, b"ok again")

            def record(self, name: str, key: str, body: bytes, ok: bool, lost: bool = False) -> None:
                with farm.lock:
                    farm.posts[name].append((key, body, ok, time.monotonic(), lost))

            def answer(self, status: int, body: bytes, kind: str = "text/plain") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                if not isinstance(sys.exc_info()[1], ConnectionError):  # a sender that gave up, or a second answer
                    super().handle_error(request, client_address)

        self.http = Server(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def count(url: str, sql: str) -> int:
    import psycopg

    with psycopg.connect(url) as db:
        try:
            row = db.execute(sql).fetchone()
        except psycopg.errors.UndefinedTable:
            return 0
    return int(row[0]) if row else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feeds", type=int, default=100)
    parser.add_argument("--state", help="an existing PostgreSQL server (superuser URL); default: a throwaway one")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="deliveries-bench-"))
    farm = Farm()
    names = ["ok", "flaky", "hang", "twice"]
    started = time.monotonic()

    def within(what: str, condition: Any) -> None:
        while not condition():
            if time.monotonic() - started > args.timeout:
                raise SystemExit(f"{what}: not within --timeout {args.timeout:.0f} s")
            time.sleep(1.0)

    with server(args.state) as admin:
        url = new_database(admin, "bench_deliveries")
        config = work / "sites.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "title": "Deliveries bench",
                    "link": "https://planet.example.org/",
                    "state": url,
                    "cache": str(work / "cache"),
                    "output": str(work / "public"),
                    "timeout": TIMEOUT,
                    "retries": 0,
                    "min_interval": 60,
                    "default_interval": 60,
                    "max_interval": 60,
                    "per_host_concurrency": 4,
                    "deliveries": [{"url": f"{farm.base}/hook/{name}", "secret": f"secret-{name}"} for name in names],
                    "sites": [{"name": f"Feed {n}", "feed": f"{farm.base}/feed/{n}.xml"} for n in range(args.feeds)],
                }
            )
        )
        workers = start_workers(config, 2, 4)
        killed_at = None
        try:
            attempted = "SELECT COUNT(*) FROM sources WHERE last_attempt IS NOT NULL"
            within("the baseline", lambda: count(url, attempted) >= args.feeds)
            for wave in (1, 2):
                farm.round = wave
                within(
                    f"wave {wave}'s events", lambda w=wave: count(url, "SELECT COUNT(*) FROM outbox") >= w * args.feeds
                )
            within(
                "the second wave's first deliveries",
                lambda: (
                    count(url, "SELECT COUNT(*) FROM deliveries WHERE state = 'delivered'") > len(names) * args.feeds
                ),
            )
            workers[0].send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            pending = count(url, "SELECT COUNT(*) FROM deliveries WHERE state = 'pending'")
            print(
                f"killed w0 (kill -9) at {killed_at - started:.0f} s, while the second wave was being delivered: "
                f"{pending} deliveries committed and not yet delivered",
                flush=True,
            )
            within(
                "every delivery delivered or dead",
                lambda: count(url, "SELECT COUNT(*) FROM deliveries WHERE state = 'pending'") == 0,
            )
        finally:
            stop(workers)
        import psycopg

        with psycopg.connect(url) as db:
            events = db.execute("SELECT source, entry_id, version FROM outbox").fetchall()
            marked = db.execute(
                "SELECT d.url, o.source, o.entry_id, o.version, d.state FROM deliveries d "
                "JOIN outbox o ON o.id = d.outbox_id"
            ).fetchall()
        farm.close()
    keys = {idempotency_key(*event) for event in events}
    print(
        f"\n{len(events)} entry versions in the outbox ({args.feeds} feeds, 2 waves), {len(names)} destinations, "
        f"{time.monotonic() - started:.0f} s\n"
    )
    print(
        "| destination | versions | accepted (distinct keys) | missing | accepted twice | of which with a "
        "lost answer | marked delivered, never accepted | dead |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        posts = farm.posts[name]
        accepted = Counter(key for key, _, ok, _, _ in posts if ok)
        twice = {key for key, n in accepted.items() if n > 1}
        lost = {
            key
            for key, _, ok, at, was_lost in posts
            if ok and (was_lost or (killed_at is not None and killed_at - HANG <= at <= killed_at))
        }
        state = {idempotency_key(s, e, v): st for u, s, e, v, st in marked if u.endswith("/" + name)}
        never = {key for key, st in state.items() if st == "delivered" and key not in accepted}
        print(
            f"| {name} | {len(keys)} | {len(set(accepted) & keys)} | {len(keys - set(accepted))} | {len(twice)} | "
            f"{len(twice & lost)} | {len(never)} | {sum(1 for st in state.values() if st == 'dead')} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
