"""Count what the private-network guard (syndicator/fetch/netguard.py) refuses and allows, by kind.

    .venv/bin/python benchmarks/private_networks.py

Loopback only: a trusted server on 127.0.0.1 (what sites.yaml names) and a
"private" one on 127.0.0.2; ``internal.test`` resolves to 127.0.0.2. Each kind
(a redirect, a discovered feed, an advertised hub, a webhook's redirect) is
tried against every learned target, with ``allow_private_networks`` off and
on. Targets outside loopback (10.x, 169.254.169.254) are tried only with the
setting off, where they are refused before any connection; with it on they
are skipped, so no packet leaves the machine. Prints one line per kind and
setting: refused, allowed, and requests that reached the private server.
"""

from __future__ import annotations

import logging
import socket
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer

from syndicator.configtypes import Config
from syndicator.fetch.http import Fetcher
from syndicator.fetch.outbound import new_session
from syndicator.model import FetchRequest
from syndicator.poll.observe import job_for, observe
from syndicator.push.deliveries import _post as webhook_post
from syndicator.push.deliveries import make_session
from syndicator.push.websub import request_subscription

UA = "syndicator-bench/1.0 (+https://planet.example.org/)"
FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>https://a.example/</link>'
    b"<description>d</description><item><title>1</title><guid>1</guid></item></channel></rss>"
)
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def targets(private: HTTPServer, allow: bool) -> list[str]:
    """The learned URLs tried: loopback ones always, the others only while they are refused."""
    served = [
        private.url_for("/x"),
        f"http://internal.test:{private.port}/x",
        f"http://[::ffff:127.0.0.2]:{private.port}/x",
    ]
    outside = [
        "http://10.0.0.1/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://192.168.1.1/x",
        "http://0.0.0.0:1/x",
        "http://localhost:1/x",
        "http://[fe80::1]/x",
    ]
    return served if allow else served + outside


def resolver(host: str, port: int, family: int, kind: int) -> Any:
    return socket.getaddrinfo("127.0.0.2" if host == "internal.test" else host, port, family, kind)


def run(kind: str, trusted: HTTPServer, private: HTTPServer, allow: bool) -> Counter[str]:
    counts: Counter[str] = Counter()
    before = len(private.log)
    fetcher = Fetcher(UA, timeout=1.0, retries=0, resolver=resolver, allow_private=allow)
    for n, target in enumerate(targets(private, allow)):
        path = f"/{kind}{n}"
        if kind == "redirect":
            trusted.expect_request(path).respond_with_data("", status=302, headers={"Location": target})
            result = fetcher.fetch(FetchRequest(trusted.url_for(path), trusted.url_for(path)))
            refused = getattr(getattr(result, "error", None), "kind", None) == "private_address"
        elif kind == "discovered feed":
            html = f'<html><head><link rel="alternate" type="application/rss+xml" href="{target}"></head></html>'
            trusted.expect_request(path).respond_with_data(html, content_type="text/html")
            seen = observe(job_for(trusted.url_for(path), None), fetcher, NOW, time.monotonic())
            refused = seen.failure is not None and seen.failure.kind == "private_address"
        elif kind == "hub":
            with new_session(UA) as session, _resolving():
                answer = request_subscription(
                    session,
                    target,
                    mode="subscribe",
                    topic="https://t.example/",
                    callback="https://planet.example/websub/x",
                    timeout=1.0,
                    source=trusted.url_for("/feed"),
                    allow_private=allow,
                )
            refused = "not a public address" in answer.message
        else:  # a webhook at the trusted server answers 307 to the target
            trusted.expect_request(path, method="POST").respond_with_data("", status=307, headers={"Location": target})
            session = make_session(Config(path=Path("sites.yaml"), title="t", link="https://p.example/", sites=()))
            refused = webhook_post(session, trusted.url_for(path), b"{}", {}, 1.0) == "HTTP 307"
            counts["not followed"] += refused
            continue
        counts["refused" if refused else "allowed"] += 1
    fetcher.close()
    counts["reached 127.0.0.2"] = len(private.log) - before
    return counts


class _resolving:
    """socket.getaddrinfo answers internal.test with 127.0.0.2 (the hub's session has no resolver of its own)."""

    def __enter__(self) -> None:
        self.real: Callable[..., Any] = socket.getaddrinfo
        real = self.real
        socket.getaddrinfo = lambda host, *a, **k: real("127.0.0.2" if host == "internal.test" else host, *a, **k)

    def __exit__(self, *exc: object) -> None:
        socket.getaddrinfo = self.real


def main() -> None:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    trusted, private = HTTPServer(host="127.0.0.1", port=0), HTTPServer(host="127.0.0.2", port=0)
    trusted.start()
    private.start()
    private.expect_request("/x").respond_with_data(FEED, content_type="application/rss+xml")
    private.expect_request("/x", method="POST").respond_with_data("", status=202)
    try:
        for kind in ("redirect", "discovered feed", "hub", "webhook"):
            for allow in (False, True):
                counts = run(kind, trusted, private, allow)
                print(
                    f"{kind:16} allow_private_networks={str(allow).lower():5} "
                    + ", ".join(f"{name}: {counts[name]}" for name in sorted(counts))
                )
    finally:
        trusted.stop()
        private.stop()


if __name__ == "__main__":
    main()
