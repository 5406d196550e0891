"""A load-test farm: many synthetic feed hosts on loopback addresses, one process.

Host i listens on its own address (127.0.0.2, 127.0.0.3, ... 127.0.0.254, then
127.0.1.1 ...), every host on the same port, so a per-host limiter keyed by IP
sees distinct hosts. Feed j lives on host j % hosts at /feeds/<j>.xml.

    with Farm(hosts=200, feeds=10_000, port=0) as farm:
        farm.write_sites_yaml("sites.yaml", workers=8)
        ...                      # run a client against farm.url(j)
        farm.touch(0.1)          # 10% of feeds get a new item
        print(farm.stats())

Documents depend on a farm clock (`set_time`), not the wall clock. Loopback
addresses other than 127.0.0.1 need Linux (elsewhere, alias them first).
CLI: `python benchmarks/farm.py --help`; self-check: `--selftest`.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import itertools
import random
import re
import socket
import sys
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # so `from benchmarks.farm import Farm` finds the siblings too
    sys.path.insert(0, _HERE)

import farm_feeds  # noqa: E402
import farm_http  # noqa: E402
import farm_profile  # noqa: E402

FarmProfile = farm_profile.FarmProfile
Behaviour = farm_profile.Behaviour
ATOM, GZIP, PADDED = farm_profile.ATOM, farm_profile.GZIP, farm_profile.PADDED
Response = farm_http.Response

__all__ = ["DEFAULT_START", "Farm", "FarmProfile", "host_address"]

DEFAULT_START = datetime(2025, 1, 1, tzinfo=UTC)  # farm clock at start unless told
_FEED_PATH = re.compile(r"/feeds/(?:(moved|temp)/)?(\d+)\.xml")
_THROTTLED = {Behaviour.THROTTLE_429: 429, Behaviour.THROTTLE_503: 503}
_REDIRECTS = {Behaviour.REDIRECT_301: (301, "moved"), Behaviour.REDIRECT_302: (302, "temp")}


def host_address(i: int) -> str:
    """Loopback address of host index i: 127.0.0.2..254 for i < 253, then 127.0.1.1 ..."""
    if i < 253:
        return f"127.0.0.{i + 2}"
    block, last = divmod(i - 253, 254)
    if block >= 255:
        raise ValueError(f"host index {i} is beyond the loopback addresses the farm uses")
    return f"127.0.{block + 1}.{last + 1}"


class Farm:
    """Synthetic feed hosts on 127.x.y.z, all on one TCP port; see the module docstring."""

    def __init__(
        self,
        hosts: int,
        feeds: int,
        port: int = 0,
        profile: FarmProfile | None = None,
        start: datetime = DEFAULT_START,
    ) -> None:
        """hosts >= 1 listeners; feeds >= 0 documents; port 0 picks a free port at
        start(); start is the farm clock's first value and every feed's first
        version time (aware UTC)."""
        if hosts < 1 or feeds < 0:
            raise ValueError("need hosts >= 1 and feeds >= 0")
        self.hosts, self.feeds, self.profile = hosts, feeds, profile or FarmProfile()
        self.addresses = [host_address(i) for i in range(hosts)]
        self.counters = farm_http.Stats(self.addresses)
        self.connections: set[socket.socket] = set()  # open client connections
        self._requested_port = port
        self._servers: list[farm_http.HostServer] = []
        self._acceptor: farm_http.Acceptor | None = None
        self._traits = farm_profile.assign_traits(self.profile, feeds)
        self._padding = farm_feeds.padding_text(self.profile.padding_bytes, self.profile.seed)
        self._lock = threading.Lock()
        self._start = _utc(start)
        self._clock = self._start
        self._added: dict[int, list[datetime]] = {}  # feed -> publication times of new items
        self._hits = [0] * feeds  # GETs per feed, for seeded per-request latency
        self._etag_serial = itertools.count(1)
        self._touches = 0

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> Farm:
        """Bind every host and start serving. Raises OSError if the port is taken."""
        if self._servers:
            raise RuntimeError("farm already started")
        self._servers = farm_http.bind_all(
            self.addresses,
            self._requested_port,
            lambda addr, port, i: farm_http.HostServer((addr, port), i, self),
        )
        self._acceptor = farm_http.Acceptor(self._servers)
        self._acceptor.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop accepting, close listeners, hang up open connections; waits at most
        about `timeout_s` seconds for handler threads to let go. Safe to call twice."""
        if self._acceptor is not None:
            self._acceptor.stop(timeout_s)
            self._acceptor = None
        for server in self._servers:
            server.server_close()
        self._servers = []
        for conn in list(self.connections):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + timeout_s
        while self.connections and time.monotonic() < deadline:
            time.sleep(0.01)

    def __enter__(self) -> Farm:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The TCP port every host listens on (known after start())."""
        if not self._servers:
            return self._requested_port
        return self._servers[0].server_port

    # -- addresses ---------------------------------------------------------

    def host_of(self, j: int) -> int:
        """Host index that serves feed j."""
        return j % self.hosts

    def site_url(self, i: int) -> str:
        """Base URL of host i, ending in '/'."""
        return f"http://{self.addresses[i]}:{self.port}/"

    def url(self, j: int) -> str:
        """URL of feed j."""
        return f"{self.site_url(self.host_of(j))}feeds/{j}.xml"

    # -- clock and versions ------------------------------------------------

    def now(self) -> datetime:
        """The farm clock (aware UTC)."""
        return self._clock

    def set_time(self, when: datetime) -> None:
        """Set the farm clock (aware UTC). Only touch() and the Date header read it."""
        self._clock = _utc(when)

    def http_now(self) -> str:
        """The farm clock as an HTTP date."""
        return farm_feeds.http_date(self._clock)

    def version(self, j: int) -> int:
        """How many times feed j has been touched."""
        with self._lock:
            return len(self._added.get(j, ()))

    def touch(self, fraction: float = 0.1, seed: int | None = None) -> list[int]:
        """Give round(fraction * feeds) feeds, chosen from `seed` (default: the
        profile seed and a call counter), a new version with one new item published
        at the farm clock, or 1 s after the feed's previous version if that is later
        (so Last-Modified always moves). Returns the touched feed numbers, sorted."""
        if not 0.0 <= fraction <= 1.0:
            raise ValueError("fraction must be in [0, 1]")
        with self._lock:
            self._touches += 1
            rng = random.Random(seed if seed is not None else f"{self.profile.seed}:touch:{self._touches}")
            chosen = sorted(rng.sample(range(self.feeds), round(fraction * self.feeds)))
            for j in chosen:
                times = self._added.setdefault(j, [])
                previous = times[-1] if times else self._start
                times.append(max(self._clock, previous + timedelta(seconds=1)))
        return chosen

    # -- introspection -----------------------------------------------------

    def traits(self, j: int) -> dict[str, Any]:
        """Behaviour name and flags of feed j, e.g. {'behaviour': 'normal', 'atom': False, ...}."""
        behaviour, flags = self._traits.of(j)
        return {
            "behaviour": behaviour.name.lower(),
            "atom": bool(flags & ATOM),
            "gzip": bool(flags & GZIP),
            "padded": bool(flags & PADDED),
        }

    def summary(self) -> dict[str, int]:
        """Number of feeds per behaviour and flag."""
        return self._traits.counts()

    def stats(self) -> dict[str, Any]:
        """Request counters since start or reset_stats(); see farm_http.Stats.snapshot."""
        return self.counters.snapshot()

    def reset_stats(self) -> None:
        """Zero the request counters."""
        self.counters.reset()

    # -- answering ---------------------------------------------------------

    def respond(self, host: int, path: str, headers: Mapping[str, str]) -> Response:
        """The answer of host index `host` to a GET of `path` with request `headers`."""
        match = _FEED_PATH.fullmatch(path.split("?", 1)[0])
        j = int(match.group(2)) if match else -1
        if not match or j >= self.feeds or self.host_of(j) != host:
            if path == "/":
                return Response(
                    200,
                    [("Content-Type", "text/html; charset=utf-8")],
                    b"<!DOCTYPE html><title>Farm host</title><p>Farm host.</p>\n",
                )
            return Response(404, [("Content-Type", "text/plain")], b"Not found\n")
        delay = self._delay(j)
        behaviour, flags = self._traits.of(j)
        if behaviour in _REDIRECTS and match.group(1) is None:
            status, where = _REDIRECTS[behaviour]
            location = f"{self.site_url(host)}feeds/{where}/{j}.xml"
            return Response(status, [("Location", location)], b"", delay)
        if behaviour in _THROTTLED:
            return Response(
                _THROTTLED[behaviour],
                [("Retry-After", str(self.profile.retry_after_s)), ("Content-Type", "text/plain")],
                b"Slow down\n",
                delay,
            )
        if behaviour is Behaviour.INVALID_HTML:
            return Response(200, [("Content-Type", "text/html; charset=utf-8")], farm_feeds.ERROR_PAGE, delay)
        return self._document(j, host, behaviour, flags, headers, delay)

    def _document(
        self,
        j: int,
        host: int,
        behaviour: Behaviour,
        flags: int,
        headers: Mapping[str, str],
        delay: float,
    ) -> Response:
        with self._lock:
            added = list(self._added.get(j, ()))
        modified = added[-1] if added else self._start
        gz = bool(flags & GZIP) and farm_http.accepts_gzip(headers.get("Accept-Encoding", ""))
        out = [("Vary", "Accept-Encoding")] if flags & GZIP else []
        if behaviour is not Behaviour.NO_VALIDATORS:
            etag = self._etag(j, len(added), gz, behaviour is Behaviour.CHANGING_ETAG)
            out += [("ETag", etag), ("Last-Modified", farm_feeds.http_date(modified))]
            if farm_http.not_modified(headers, etag, modified):
                return Response(304, out, b"", delay)
        kind = "atom" if flags & ATOM else "rss"
        out.append(("Content-Type", f"application/{kind}+xml; charset=utf-8"))
        body = self._body(j, host, added, modified, flags)
        if behaviour is Behaviour.INVALID_TRUNCATED:
            body = body[: len(body) // 2]
        if gz:
            body = gzip.compress(body, compresslevel=6, mtime=0)
            out.append(("Content-Encoding", "gzip"))
        return Response(200, out, body, delay)

    def _body(self, j: int, host: int, added: list[datetime], modified: datetime, flags: int) -> bytes:
        items = self.profile.items
        times = farm_feeds.initial_item_times(j, items, self._start) + added
        first = len(times) - items
        return farm_feeds.render_feed(
            j,
            self.site_url(host),
            first,
            times[first:],
            modified,
            atom=bool(flags & ATOM),
            padding=self._padding if flags & PADDED else "",
        )

    def _etag(self, j: int, version: int, gz: bool, changing: bool) -> str:
        if changing:
            return f'"{j:x}-{version:x}-r{next(self._etag_serial)}"'
        digest = hashlib.sha1(f"{self.profile.seed}:{j}:{version}".encode()).hexdigest()[:10]
        return f'"{j:x}-{version:x}-{digest}{"-gz" if gz else ""}"'

    def _delay(self, j: int) -> float:
        lo, hi = self.profile.latency_ms
        if hi <= 0:
            return 0.0
        with self._lock:
            self._hits[j] += 1
            n = self._hits[j]
        rng = random.Random((self.profile.seed << 48) ^ (j << 24) ^ n)
        return rng.uniform(lo, hi) / 1000.0

    # -- sites.yaml --------------------------------------------------------

    def write_sites_yaml(self, path: str | Path, **settings: Any) -> Path:
        """Write a sites.yaml naming every feed as its own site; `settings` are extra
        (or overriding) top-level keys: title, link, workers=8, per_host_concurrency=2.
        Values may be str, int, float, bool or None. Returns the path."""
        top: dict[str, Any] = {
            "title": "Farm",
            "link": "http://127.0.0.1/",
            "workers": 8,
            "per_host_concurrency": 2,
            **settings,
        }
        width = max(5, len(str(max(self.feeds - 1, 0))))
        sites = ((f"feed-{j:0{width}d}", self.url(j), self.site_url(self.host_of(j))) for j in range(self.feeds))
        out = Path(path)
        out.write_text(farm_feeds.sites_yaml(top, sites), encoding="utf-8")
        return out


def _utc(when: datetime) -> datetime:
    if when.tzinfo is None:
        raise ValueError("farm times must be timezone-aware")
    return when.astimezone(UTC)


if __name__ == "__main__":
    from farm_cli import main

    raise SystemExit(main())
