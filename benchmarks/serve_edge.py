"""``syndicator serve``'s WebSub edge under load, on loopback: replays, slow clients, idle keep-alive connections.

Starts the real ``syndicator serve`` (a subprocess, with ``--public-url`` its own address), flask-websub's hub and
a feed server (tests/websub_hub.py), then measures:

1. a replayed notification: version 1, version 2, then version 1 again (the same signed bytes, then other bytes):
   SHA-256 of every published file and of the stored entries and state, before and after the replays;
2. ``--slow N`` connections (default 600) that each send one byte of a request every ``--every`` seconds (and
   reconnect when cut): the time from a signed notification's 202 to its post on the site, five times, and the
   latency of /healthz (a fresh connection each) meanwhile, median and max;
3. the same with ``--idle N`` (default 1,000) keep-alive connections that sent one request and then idle.

Every loop is bounded in count and time (``--seconds`` per phase). Run from the checkout's root:

    .venv/bin/python benchmarks/serve_edge.py
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import selectors
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import write_config  # noqa: E402
from tests.websub_hub import FeedServer, ServeProcess, WebSubHub, session, sign, sqlite  # noqa: E402


def digest(folder: Path, source: str) -> dict[str, str]:
    """SHA-256 of each published file, of the entries and seen tables, and of the source's state row."""
    found = {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((folder / "public").rglob("*"))
        if p.is_file()
    }
    with sqlite(folder / "cache" / "state.sqlite") as db:
        for table in ("entries", "seen"):
            found[table] = hashlib.sha256(
                repr(db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()).encode()  # noqa: S608
            ).hexdigest()
        found["sources"] = hashlib.sha256(
            repr(db.execute("SELECT * FROM sources WHERE url = ?", (source,)).fetchall()).encode()
        ).hexdigest()
    return found


def page(folder: Path) -> str:
    try:
        return (folder / "public" / "index.html").read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def until(condition: Callable[[], object], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


class Crowd:
    """``count`` connections to ``port`` on a thread of their own: ``slow`` ones trickle a request a byte every
    ``every`` s (reopened when cut); the others send one keep-alive GET, read its answer, then idle."""

    def __init__(self, port: int, count: int, slow: bool, every: float) -> None:
        self.port, self.count, self.slow, self.every = port, count, slow, every
        self.stop = threading.Event()
        self.opened = self.cut = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Crowd:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)

    def _open(self) -> socket.socket:
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        self.opened += 1
        if self.slow:
            connection.sendall(b"POST /websub/slow HTTP/1.1\r\n")
        else:
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
        connection.setblocking(False)
        return connection

    def _run(self) -> None:
        chooser = selectors.DefaultSelector()
        sockets = []
        for _ in range(self.count):
            if self.stop.is_set():
                break
            try:
                sockets.append(self._open())
            except OSError:
                time.sleep(0.01)
        for s in sockets:
            chooser.register(s, selectors.EVENT_READ)
        next_byte = time.monotonic() + self.every
        while not self.stop.is_set():
            for key, _ in chooser.select(timeout=0.1):
                s = key.fileobj
                assert isinstance(s, socket.socket)
                try:
                    closed = s.recv(65536) == b""
                except OSError:
                    closed = True
                if closed:
                    self.cut += 1
                    chooser.unregister(s)
                    s.close()
                    try:
                        fresh = self._open()
                        chooser.register(fresh, selectors.EVENT_READ)
                    except OSError:
                        pass
            if self.slow and time.monotonic() >= next_byte:
                next_byte = time.monotonic() + self.every
                for key in list(chooser.get_map().values()):
                    with contextlib.suppress(OSError):
                        key.fileobj.send(b"X")  # type: ignore[union-attr]
        for key in list(chooser.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]


def healthz_latencies(base: str, stop: threading.Event, out: list[float]) -> None:
    with session() as http:
        while not stop.is_set():
            started = time.monotonic()
            try:
                http.get(base + "/healthz", timeout=20, headers={"Connection": "close"})
                out.append(time.monotonic() - started)
            except OSError:
                out.append(float("inf"))
            stop.wait(0.25)


def phase(
    name: str, serve: ServeProcess, folder: Path, blog: object, token: str, secret: str, crowd: Crowd, seconds: float
) -> None:
    latencies: list[float] = []
    pushes: list[float] = []
    with crowd:
        until(lambda: crowd.opened >= crowd.count, 30)
        time.sleep(1)
        stop = threading.Event()
        prober = threading.Thread(target=healthz_latencies, args=(serve.base, stop, latencies), daemon=True)
        prober.start()
        ends = time.monotonic() + seconds
        with session() as http:
            for n in range(5):
                if time.monotonic() > ends:
                    break
                title = f"{name} push {n}"
                post = blog.add(title)  # type: ignore[attr-defined]
                body = blog.document([post])  # type: ignore[attr-defined]
                started = time.monotonic()
                try:
                    answer = http.post(
                        f"{serve.base}/websub/{token}",
                        data=body,
                        timeout=20,
                        headers={"Content-Type": "application/atom+xml", "X-Hub-Signature": sign(secret, body)},
                    )
                    ok = answer.status_code == 202 and until(lambda t=title: t in page(folder), 20)
                except OSError:
                    ok = False
                pushes.append(time.monotonic() - started if ok else float("inf"))
                time.sleep(1)
        stop.set()
        prober.join(timeout=25)
    finite = [p for p in pushes if p != float("inf")]
    print(f"{name}: {crowd.count} connections open ({crowd.opened} opened, {crowd.cut} cut by the server)")
    print(
        f"  signed notification to the site: {len(finite)}/{len(pushes)} within 20 s; "
        + ", ".join(f"{p:.2f}" for p in pushes)
        + " s"
    )
    answered = [x for x in latencies if x != float("inf")]
    if answered:
        print(
            f"  /healthz: {len(answered)}/{len(latencies)} answered; median {statistics.median(answered) * 1000:.0f}"
            f" ms, max {max(answered) * 1000:.0f} ms"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=600)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between a slow client's bytes")
    parser.add_argument("--seconds", type=float, default=40.0, help="the most one load phase lasts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="serve-edge-") as name:
        folder = Path(name)
        feeds, hub = FeedServer(), WebSubHub(folder)
        try:
            blog = feeds.feed("blog", hub=hub.url)
            config = write_config(folder, [{"name": "Blog", "feed": blog.url}])
            serve = ServeProcess(config, verbose=False)
            try:
                row = None

                def live() -> object:
                    nonlocal row
                    try:
                        with sqlite(folder / "cache" / "push.sqlite") as db:
                            row = db.execute("SELECT token, secret FROM subscriptions WHERE state = 'live'").fetchone()
                    except Exception:  # noqa: BLE001 - not created yet
                        return None
                    return row and "blog post 3" in page(folder)

                if not until(live, 30):
                    print(serve.details())
                    return 1
                assert row is not None
                token, secret = row
                replay(serve, folder, blog, token, secret)
                phase(
                    "slow clients",
                    serve,
                    folder,
                    blog,
                    token,
                    secret,
                    Crowd(serve.port, args.slow, True, args.every),
                    args.seconds,
                )
                phase(
                    "idle keep-alive",
                    serve,
                    folder,
                    blog,
                    token,
                    secret,
                    Crowd(serve.port, args.idle, False, args.every),
                    args.seconds,
                )
            finally:
                serve.kill()
        finally:
            hub.stop()
            feeds.stop()
    return 0


def replay(serve: ServeProcess, folder: Path, blog: object, token: str, secret: str) -> None:
    edited = blog.add("Version one")  # type: ignore[attr-defined]
    version_1 = blog.document()  # type: ignore[attr-defined]
    from datetime import timedelta

    edited.title, edited.date = "Version two", edited.date + timedelta(minutes=5)
    version_2 = blog.document()  # type: ignore[attr-defined]
    with session() as http:

        def deliver(body: bytes) -> None:
            http.post(
                f"{serve.base}/websub/{token}",
                data=body,
                timeout=20,
                headers={"Content-Type": "application/atom+xml", "X-Hub-Signature": sign(secret, body)},
            )

        deliver(version_1)
        until(lambda: "Version one" in page(folder), 20)
        deliver(version_2)
        until(lambda: "Version two" in page(folder), 20)
        time.sleep(1)
        before = digest(folder, blog.url)  # type: ignore[attr-defined]
        deliver(version_1)
        deliver(version_1.replace(b"</feed>", b" </feed>"))
        until(lambda: (serve.metric("syndicator_push_notifications_total", verdict="replay") or 0) >= 1, 20)
        time.sleep(1)
        after = digest(folder, blog.url)  # type: ignore[attr-defined]
    changed = [k for k in before if before[k] != after.get(k)]
    print(
        f"replay: {len(before)} hashes (files and tables) compared: "
        f"{'all equal' if not changed else 'CHANGED: ' + ', '.join(changed)}"
        f"; page shows version two: {'Version two' in page(folder)}, version one: {'Version one' in page(folder)}; "
        f"verdicts duplicate={serve.metric('syndicator_push_notifications_total', verdict='duplicate')} "
        f"replay={serve.metric('syndicator_push_notifications_total', verdict='replay')}"
    )


if __name__ == "__main__":
    sys.exit(main())
