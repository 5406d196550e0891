"""``syndicator serve`` beside an attribute bomb (issue 31): /healthz and a signed notification's time to the site.

Starts, all on 127.0.0.1: flask-websub's hub and a feed server (tests/websub_hub.py), a bomb server whose
``/bomb.xml`` is an Atom feed whose root element holds ``COUNT`` attributes (a fresh title on every GET, so
no body is ever unchanged by hash), and the real ``syndicator serve`` (a subprocess, ``--public-url`` its own
address) on a planet of two sites: "Bomb" and "Healthy" (subscribed at the hub). ``min_interval``,
``default_interval`` 60 s (the shortest sites.yaml allows), ``max_interval`` 120 s, ``host_gap`` 0;
``max_bytes`` raised to 32 MiB when the bomb is larger than the default 10 MiB. For each count:

1. ``poll``: once the subscription is live, wait (at most ``--wait`` s) for serve to poll the bomb again; the
   moment the bomb server sends it, push ``--samples`` signed notifications (one new post each) to the
   healthy site's callback, one after the other, each timed from its POST to its title in
   ``public/index.html``;
2. ``push``: ``--samples`` times, POST the bomb (a fresh title each) as a signed notification to the healthy
   site's callback, then at once a signed notification with a new post, timed the same way (it waits for
   the bomb's parse: notifications are parsed in arrival order).

Meanwhile /healthz is probed every 0.25 s on a fresh connection (timeout 20 s): median and max over each phase,
and the max of probes started within 10 s after a bomb was sent. Prints one row per (count, phase); asserts
nothing (tests/test_bounded.py and tests/test_serve.py assert the outcomes). Run from the checkout's root:

    .venv/bin/python benchmarks/serve_bomb.py [--counts 50000 100000 300000 1000000] [--samples 5] [--wait 100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import write_config  # noqa: E402
from tests.websub_hub import FeedServer, Running, ServeProcess, WebSubHub, session, sign, sqlite  # noqa: E402

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
#: The longest a notification may take to reach the site before it counts as lost, seconds.
PUSH_WAIT = 120.0


def attribute_bomb(count: int, title: str) -> bytes:
    """An Atom feed of one entry whose root element holds ``count`` attributes."""
    attributes = "".join(f' a{n}="v"' for n in range(count))
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        f'<feed xmlns="http://www.w3.org/2005/Atom"{attributes}><title>{title}</title><id>urn:bomb</id>'
        '<entry><id>urn:bomb:1</id><title>Bomb entry</title><link href="https://bomb.example.org/1"/>'
        "<updated>2026-11-29T10:00:00Z</updated><content>hi</content></entry></feed>"
    ).encode()


class BombServer:
    """``/bomb.xml``: the bomb of ``count`` attributes, retitled on every GET; records when each GET was answered."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.sent: list[float] = []
        self.event = threading.Event()
        self._lock = threading.Lock()
        self._attributes = attribute_bomb(count, "TITLE")
        self._running = Running(self._app)
        self.url = self._running.url + "/bomb.xml"

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        if environ.get("PATH_INFO") != "/bomb.xml":
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found\n"]
        with self._lock:
            body = self._attributes.replace(b"<title>TITLE</title>", f"<title>Bomb {len(self.sent)}</title>".encode())
            self.sent.append(time.monotonic())
        self.event.set()
        start_response("200 OK", [("Content-Type", "application/atom+xml"), ("Content-Length", str(len(body)))])
        return [body]

    def stop(self) -> None:
        self._running.stop()


def until(condition: Callable[[], object], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def page(folder: Path) -> str:
    try:
        return (folder / "public" / "index.html").read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


class Prober:
    """GET /healthz every 0.25 s on a fresh connection; records (start, seconds or inf)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.probes: list[tuple[float, float]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Prober:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=25)

    def _run(self) -> None:
        with session() as http:
            while not self.stop.is_set():
                started = time.monotonic()
                try:
                    ok = http.get(self.base + "/healthz", timeout=20, headers={"Connection": "close"}).ok
                    self.probes.append((started, time.monotonic() - started if ok else float("inf")))
                except OSError:
                    self.probes.append((started, float("inf")))
                self.stop.wait(0.25)

    def summary(self, bombs: list[float]) -> str:
        answered = [s for _, s in self.probes if s != float("inf")]
        near = [s for at, s in self.probes if any(0 <= at - b <= 10 for b in bombs)]
        if not answered:
            return f"0/{len(self.probes)} answered"
        close = f"{max(near) * 1000:.0f} ms" if near else "-"
        return (
            f"{len(answered)}/{len(self.probes)}, median {statistics.median(answered) * 1000:.0f} ms, "
            f"max {max(answered) * 1000:.0f} ms, max within 10 s of a bomb {close}"
        )


def notify(http: Any, callback: str, secret: str, body: bytes) -> int:
    return int(
        http.post(
            callback,
            data=body,
            timeout=60,
            headers={"Content-Type": "application/atom+xml", "X-Hub-Signature": sign(secret, body)},
        ).status_code
    )


def pushed(http: Any, callback: str, secret: str, blog: Any, folder: Path, title: str) -> float:
    """Seconds from a signed notification carrying a new post ``title`` to the title on the site (inf: lost)."""
    post = blog.add(title)
    started = time.monotonic()
    if notify(http, callback, secret, blog.document([post])) != 202:
        return float("inf")
    return time.monotonic() - started if until(lambda: title in page(folder), PUSH_WAIT) else float("inf")


def row(count: int, size: int, phase: str, bombs: str, prober: Prober, sent: list[float], samples: list[float]) -> str:
    finite = [s for s in samples if s != float("inf")]
    median = f"{statistics.median(finite):.2f}" if finite else "-"
    return (
        f"| {count:,} | {size:,} | {phase} | {bombs} | {prober.summary(sent)} | "
        f"{', '.join('lost' if s == float('inf') else f'{s:.2f}' for s in samples)} (median {median}) |"
    )


def variant(count: int, samples: int, wait: float) -> list[str]:
    """Both phases for one count; returns their table rows (or one line saying what failed)."""
    with tempfile.TemporaryDirectory(prefix="serve-bomb-") as name:
        folder = Path(name)
        feeds, hub, bombs = FeedServer(), WebSubHub(folder), BombServer(count)
        size = len(attribute_bomb(count, "Bomb 0"))
        settings: dict[str, Any] = {"min_interval": 60, "default_interval": 60, "max_interval": 120, "host_gap": 0}
        if size > DEFAULT_MAX_BYTES:
            settings["max_bytes"] = 32 * 1024 * 1024
        serve = None
        try:
            blog = feeds.feed("healthy", hub=hub.url)
            config = write_config(
                folder, [{"name": "Bomb", "feed": bombs.url}, {"name": "Healthy", "feed": blog.url}], **settings
            )
            serve = ServeProcess(config, verbose=False)
            found: list[tuple[str, str]] = []

            def live() -> bool:
                try:
                    with sqlite(folder / "cache" / "push.sqlite") as db:
                        got = db.execute("SELECT token, secret FROM subscriptions WHERE state = 'live'").fetchone()
                except Exception:  # noqa: BLE001 - not created yet
                    return False
                if got:
                    found[:] = [got]
                return bool(got) and "healthy post 3" in page(folder)

            if not until(live, 60):
                return [f"| {count:,} | {size:,} | - | no live subscription within 60 s | | |\n{serve.details()}"]
            token, secret = found[0]
            callback = f"{serve.base}/websub/{token}"
            rows = []
            with session() as http:
                # 1. the bomb polled
                polled = len(bombs.sent)
                bombs.event.clear()
                with Prober(serve.base) as prober:
                    repolled = until(lambda: len(bombs.sent) > polled, wait)
                    times = (
                        [pushed(http, callback, secret, blog, folder, f"poll phase push {n}") for n in range(samples)]
                        if repolled
                        else []
                    )
                during = bombs.sent[polled:]
                with sqlite(folder / "cache" / "state.sqlite") as db:
                    kind, failures = db.execute(
                        "SELECT error_kind, failures FROM sources WHERE url = ?", (bombs.url,)
                    ).fetchone() or (None, 0)
                rows.append(
                    row(
                        count,
                        size,
                        "poll",
                        f"{len(during)} GETs ({polled} before), stored {kind} x{failures}"
                        if repolled
                        else f"no re-poll within {wait:.0f} s",
                        prober,
                        during,
                        times,
                    )
                )
                # 2. the bomb pushed
                times, sent, answers = [], [], []
                with Prober(serve.base) as prober:
                    for n in range(samples):
                        sent.append(time.monotonic())
                        answers.append(notify(http, callback, secret, attribute_bomb(count, f"Pushed bomb {n}")))
                        times.append(pushed(http, callback, secret, blog, folder, f"push phase push {n}"))
                        time.sleep(0.5)
                unparsable = serve.metric("syndicator_push_notifications_total", verdict="unparsable")
                rows.append(
                    row(
                        count,
                        size,
                        "push",
                        f"{len(sent)} POSTs answered {sorted(set(answers))}, unparsable {unparsable:.0f}"
                        if unparsable is not None
                        else "unparsable -",
                        prober,
                        sent,
                        times,
                    )
                )
            return rows
        finally:
            if serve is not None:
                serve.kill()
            bombs.stop()
            hub.stop()
            feeds.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", nargs="*", type=int, default=[50_000, 100_000, 300_000, 1_000_000])
    parser.add_argument("--samples", type=int, default=5, help="signed notifications timed per phase")
    parser.add_argument("--wait", type=float, default=100.0, help="the longest wait for the bomb's re-poll, s")
    args = parser.parse_args()
    print(
        "| attributes | bomb bytes | phase | bombs during the phase | /healthz (answered, median, max) "
        "| notification to the site, s |"
    )
    print("|---|---|---|---|---|---|")
    for count in args.counts:
        for line in variant(count, args.samples, args.wait):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
