"""A healthy webhook's delivery delay, alone and beside one that hangs and one that trickles (issue 31).

serve's and worker's delivery thread (``deliveries.DeliveryLoop``) on a SQLite
state; one entry version is stored every --every seconds, --events times, and
the loop woken after each store (as serve does). Destinations, each on a
loopback server of its own:

- ``ok``: answers 200 at once, and records when each event arrived;
- ``hang``: reads the POST and never answers (until the run ends);
- ``trickle``: answers one byte of a status line and headers every 5 s.

Printed per run (``ok`` alone, then beside ``hang`` and ``trickle``): the
median and largest delay (seconds) from an event's commit to its arrival at
``ok``, and the POSTs the slow two received. ``timeout`` is sites.yaml's
default, 15 s. Every wait is bounded. Usage::

    .venv/bin/python benchmarks/slow_destinations_bench.py --events 30 --every 1
"""

from __future__ import annotations

import argparse
import json
import socketserver
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from syndicator.config.load import load_config  # noqa: E402
from syndicator.feedtypes import Entry  # noqa: E402
from syndicator.model import SourceState  # noqa: E402
from syndicator.poll.path import save  # noqa: E402
from syndicator.push.deliveries import DeliveryLoop  # noqa: E402
from syndicator.state.store import Store  # noqa: E402

SOURCE = "https://blog.example.org/feed.xml"


class Destination:
    """One webhook on its own threaded loopback server, answering by ``mode`` (ok, hang, trickle)."""

    def __init__(self, mode: str, release: threading.Event) -> None:
        self.mode, self.release = mode, release
        self.arrived: dict[str, float] = {}  # entry id -> time.monotonic() of its arrival
        self.posts = 0
        destination = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                destination.answer(self)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/{mode}"

    def answer(self, handler: socketserver.StreamRequestHandler) -> None:
        length = 0
        for line in iter(handler.rfile.readline, b""):
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("latin-1").partition(":")
            length = int(value) if name.lower() == "content-length" else length
        body = json.loads(handler.rfile.read(length))
        self.posts += 1
        try:
            if self.mode == "hang":
                self.release.wait(600)
            elif self.mode == "trickle":
                for byte in (b"HTTP/1.1 200 OK\r\nX-Slow: " + b"y" * 200)[:120]:
                    handler.wfile.write(bytes([byte]))
                    handler.wfile.flush()
                    if self.release.wait(5):
                        return
            else:
                self.arrived.setdefault(body["id"], time.monotonic())
                handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        except OSError:
            return

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def run(folder: Path, modes: list[str], events: int, every: float) -> dict[str, Any]:
    """Store ``events`` entry versions ``every`` s apart with ``modes`` as destinations; the delays at ``ok``."""
    release = threading.Event()
    destinations = {mode: Destination(mode, release) for mode in modes}
    path = folder / "sites.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "title": "Bench",
                "link": "https://planet.example.org/",
                "deliveries": [{"url": d.url, "secret": "s"} for d in destinations.values()],
                "sites": [{"name": "Blog", "feed": SOURCE}],
            }
        ),
        encoding="utf-8",
    )
    config = load_config(path)
    committed: dict[str, float] = {}
    with Store.open(config.cache) as store:
        store.outbox = tuple(d.url for d in destinations.values())
        save(store, SourceState(SOURCE, SOURCE), [Entry(id="e0")], datetime.now(UTC))  # the baseline
        loop = DeliveryLoop(config)
        loop.start()
        try:
            for n in range(1, events + 1):
                entries = [*(Entry(id=f"e{k}", title=f"Post {k}") for k in range(n, 0, -1)), Entry(id="e0")]
                save(store, SourceState(SOURCE, SOURCE), entries, datetime.now(UTC))
                committed[f"e{n}"] = time.monotonic()
                loop.wake()
                time.sleep(every)
            ok = destinations["ok"]
            deadline = time.monotonic() + 60
            while len(ok.arrived) < events and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            release.set()
            loop.stop(timeout=20)
            for destination in destinations.values():
                destination.stop()
    delays = [ok.arrived[key] - at for key, at in committed.items() if key in ok.arrived]
    return {
        "destinations": "+".join(modes),
        "delivered": f"{len(delays)}/{events}",
        "median_s": round(statistics.median(delays), 3) if delays else None,
        "max_s": round(max(delays), 3) if delays else None,
        "slow_posts": {m: d.posts for m, d in destinations.items() if m != "ok"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=30)
    parser.add_argument("--every", type=float, default=1.0, help="seconds between two stored entry versions")
    args = parser.parse_args()
    for modes in (["ok"], ["hang", "trickle", "ok"]):
        with tempfile.TemporaryDirectory() as folder:
            print(json.dumps(run(Path(folder), modes, args.events, args.every)), flush=True)


if __name__ == "__main__":
    main()
