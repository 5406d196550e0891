"""Host fairness measured on the server side, the breaker, and a simulated week of builds."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.fetch.hosts import host_key

from .conftest import NOW, loopback_server, rss, write_config
from .polite_helpers import Feed, build, later, reset_concurrency, site, status

FAST = {"host_gap": 0, "retries": 0, "timeout": 1}


@pytest.fixture
def second_host() -> Iterator[HTTPServer]:
    """A loopback server on another address: another host key."""
    with loopback_server("127.0.0.2") as http:
        yield http


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_no_host_sees_more_than_per_host_concurrency(server: HTTPServer, tmp_path: Path, limit: int) -> None:
    reset_concurrency()
    feeds = [Feed(server, f"/f{n}.xml", delay=0.15) for n in range(6)]
    config = write_config(tmp_path, [site(f) for f in feeds], workers=8, per_host_concurrency=limit, **FAST)
    report = build(config)
    assert Feed.peak == limit  # measured by the server
    assert report["hosts"] == {"127.0.0.1": {"sources": 6, "requests": 6, "peak_concurrency": limit, "skipped": 0}}


def test_one_address_spelled_two_ways_is_one_host(server: HTTPServer, tmp_path: Path) -> None:
    reset_concurrency()
    feeds = [Feed(server, f"/s{n}.xml", delay=0.15) for n in range(4)]
    sites = [site(f) for f in feeds]
    for entry in sites[::2]:  # the same server as 127.1, which the resolver reads as 127.0.0.1
        entry["feed"] = entry["feed"].replace("127.0.0.1", "127.1")
    config = write_config(tmp_path, sites, workers=8, per_host_concurrency=1, **FAST)
    report = build(config)
    assert Feed.peak == 1  # measured by the server: one request at a time, whichever spelling
    assert report["hosts"] == {"127.0.0.1": {"sources": 4, "requests": 4, "peak_concurrency": 1, "skipped": 0}}


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://a.b.example.co.uk/feed", "example.co.uk"),
        ("https://alice.blogspot.com/feeds", "alice.blogspot.com"),
        ("http://127.0.0.2:8080/x", "127.0.0.2"),
        ("http://127.1/x", "127.0.0.1"),
        ("http://2130706433/x", "127.0.0.1"),
        ("http://0x7f.0.0.1/x", "127.0.0.1"),
        ("http://0177.0.0.1/x", "127.0.0.1"),
        ("http://[::1]:8080/x", "::1"),
        ("http://cafe.babe/x", "cafe.babe"),
        ("http://999.1/x", "999.1"),
        ("not a url", ""),
    ],
)
def test_host_keys(url: str, key: str) -> None:
    assert host_key(url) == key


def test_host_gap_spaces_request_starts(server: HTTPServer, tmp_path: Path) -> None:
    feeds = [Feed(server, f"/f{n}.xml") for n in range(3)]
    config = write_config(tmp_path, [site(f) for f in feeds], retries=0, host_gap=0.3)
    build(config)
    starts = sorted(t for f in feeds for t in f.started)
    # Seen from the server, so with a margin for a loaded machine: test_pool.py checks the exact
    # spacing on a fake clock; here, that the real requests are spread out at all.
    assert all(b - a >= 0.15 for a, b in zip(starts, starts[1:], strict=False))
    assert starts[-1] - starts[0] >= 0.45


def test_a_busy_host_does_not_starve_another(server: HTTPServer, second_host: HTTPServer, tmp_path: Path) -> None:
    busy = [Feed(server, f"/b{n}.xml") for n in range(4)]
    small = Feed(second_host, "/s.xml")
    config = write_config(
        tmp_path, [site(f) for f in busy] + [site(small)], workers=1, per_host_concurrency=1, retries=0, host_gap=0.2
    )
    report = build(config)
    assert small.started[0] < sorted(t for f in busy for t in f.started)[1]  # served in the first round
    assert set(report["hosts"]) == {"127.0.0.1", "127.0.0.2"}


def test_breaker_skips_the_rest_of_a_failing_host(server: HTTPServer, second_host: HTTPServer, tmp_path: Path) -> None:
    failing = [Feed(server, f"/f{n}.xml", status=500, etag=None) for n in range(5)]
    healthy = Feed(second_host, "/ok.xml")
    config = write_config(
        tmp_path, [site(f) for f in failing] + [site(healthy)], per_host_concurrency=1, host_breaker=2, **FAST
    )
    report = build(config)
    assert sum(len(f.requests) for f in failing) == 2 and len(healthy.requests) == 1
    assert (report["skipped_by_breaker"], report["failed_by_class"]) == (3, {"http_5xx": 2})
    rows = status(config)
    skipped = [rows[f"f{n}"] for n in range(2, 5)]
    assert all(row["reason"].startswith("breaker: 127.0.0.1") and row["due_now"] for row in skipped)
    for feed in failing:
        feed.status = 200
    report = build(config, later(minutes=1))
    assert report["fetched"] == 3  # the skipped ones, in the next build


def test_a_simulated_week(server: HTTPServer, tmp_path: Path) -> None:
    """Builds every hour for a week: an hourly feed, a daily feed and a dormant one."""
    clock = {"now": NOW}

    def hourly(request: Request) -> Response:
        return publishing(request, clock["now"], timedelta(hours=1))

    def daily(request: Request) -> Response:
        return publishing(request, clock["now"], timedelta(days=1))

    server.expect_request("/hourly.xml").respond_with_handler(hourly)
    server.expect_request("/daily.xml").respond_with_handler(daily)
    dormant = Feed(server, "/dormant.xml")
    config = write_config(
        tmp_path,
        [
            {"name": "hourly", "feed": server.url_for("/hourly.xml")},
            {"name": "daily", "feed": server.url_for("/daily.xml")},
            site(dormant),
        ],
        **FAST,
    )
    reports = []
    for hour in range(7 * 24):
        clock["now"] = NOW + timedelta(hours=hour, minutes=3)
        reports.append(build(config, clock["now"]))
    assert all(r["fetched"] == r["sources_due"] for r in reports)
    assert all(r["due_lag_seconds"]["max"] is None or r["due_lag_seconds"]["max"] < 3600 for r in reports)
    per_path = {
        path: sum(1 for request, _ in server.log if request.path == path) for path in ("/hourly.xml", "/daily.xml")
    }
    assert per_path["/hourly.xml"] >= 6 * 24  # nearly every build
    # The square-root rule: a daily feed is checked more often than it posts, a dormant one less often still.
    assert 7 < per_path["/daily.xml"] < per_path["/hourly.xml"]
    assert len(dormant.requests) < per_path["/daily.xml"] and len(dormant.requests) <= 7 * 24 / 4
    rows = status(config, clock["now"])
    assert rows["dormant"]["interval_seconds"] >= 4 * 3600 and rows["dormant"]["reason"].startswith("habits: ~1 post")
    assert rows["hourly"]["interval_seconds"] <= 3600
    assert rows["hourly"]["reason"].startswith("habits: ~") and "posts/day" in rows["hourly"]["reason"]
    assert len(rows["hourly"]["recent_changes"]) >= 4


def publishing(request: Request, now: datetime, every: timedelta) -> Response:
    """A feed with an item every ``every`` up to ``now``; ETag from the newest item."""
    newest = (now - NOW) // every
    items = [
        {
            "title": f"Post {n}",
            "guid": f"urn:post:{n}",
            "pubDate": (NOW + n * every).strftime("%a, %d %b %Y %H:%M:%S +0000"),
        }
        for n in range(max(0, newest - 9), newest + 1)
    ]
    etag = f'"{newest}"'
    if request.headers.get("If-None-Match") == etag:
        return Response(status=304, headers={"ETag": etag})
    return Response(rss(*items), content_type="application/rss+xml", headers={"ETag": etag})
