"""Polite polling end to end: the real CLI with --now against the loopback server."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.poll import observe

from .conftest import NOW, post, rss, write_config
from .polite_helpers import Feed, build, http_date, iso, later, run, site, status

FAST = {"host_gap": 0, "retries": 0, "timeout": 1}


def test_warm_build_with_nothing_due_makes_no_requests(server: HTTPServer, tmp_path: Path) -> None:
    feeds = [Feed(server, f"/f{n}.xml") for n in range(3)]
    config = write_config(tmp_path, [site(f) for f in feeds], **FAST)
    first = build(config)
    assert (first["sources_due"], first["fetched"], first["status_200"], first["parsed"]) == (3, 3, 3, 3)
    warm = build(config, later(minutes=20))
    assert (warm["sources_due"], warm["fetched"], warm["hosts"]) == (0, 0, {})
    assert sum(len(f.requests) for f in feeds) == 3
    assert warm["entries"] == 2  # the snapshots are reused without network


def test_force_with_nothing_changed_is_all_304_and_parses_nothing(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    feeds = [Feed(server, f"/f{n}.xml", etag=f'"e{n}"') for n in range(3)]
    config = write_config(tmp_path, [site(f) for f in feeds], **FAST)
    build(config)
    calls: list[str] = []
    real = observe.parse_feed
    monkeypatch.setattr(observe, "parse_feed", lambda body, url, *a: calls.append(url) or real(body, url, *a))
    forced = build(config, later(minutes=5), "--force")
    assert (forced["fetched"], forced["status_304"], forced["status_200"], forced["parsed"]) == (3, 3, 0, 0)
    assert calls == []
    assert forced["bytes_downloaded"] == 0 and forced["bytes_saved_by_304"] == 3 * len(feeds[0].body.encode())


def test_validators_are_sent_back_exactly_and_nothing_else(server: HTTPServer, tmp_path: Path) -> None:
    modified = "Sun, 29 Nov 2026 08:00:00 GMT"
    feed = Feed(
        server,
        "/feed.xml",
        etag='W/"a, b"',
        last_modified=modified,
        headers={"Set-Cookie": "session=abc; Path=/", "Date": http_date(NOW)},
    )
    config = write_config(tmp_path, [site(feed)], **FAST)
    build(config)
    build(config, later(minutes=1), "--force")
    first, second = feed.requests
    assert "If-None-Match" not in first and "If-Modified-Since" not in first
    assert second["If-None-Match"] == 'W/"a, b"'
    assert second["If-Modified-Since"] == modified
    for headers in (first, second):
        assert "Cookie" not in headers and "Referer" not in headers
        assert headers["Accept-Encoding"] == "gzip, br" and headers["_query"] == ""
        assert headers["User-Agent"].startswith("syndicator/")


def test_a_future_last_modified_is_not_sent_back(server: HTTPServer, tmp_path: Path) -> None:
    feed = Feed(
        server, "/feed.xml", etag=None, last_modified=http_date(later(days=2)), headers={"Date": http_date(NOW)}
    )
    config = write_config(tmp_path, [site(feed)], **FAST)
    build(config)
    second = build(config, later(minutes=1), "--force")
    assert "If-Modified-Since" not in feed.requests[1]
    assert second["unchanged_by_hash"] == 1 and second["parsed"] == 0  # the body hash decides


class TwoDates(Feed):
    """A feed whose answer carries two Date lines (as behind some proxies), in ``dates`` order."""

    def __init__(self, server: HTTPServer, dates: tuple[datetime, datetime], **kwargs: Any) -> None:
        super().__init__(server, "/dates.xml", **kwargs)
        self.dates = dates

    def _answer(self, request: Request) -> Response:
        response = super()._answer(request)
        for when in self.dates:
            response.headers.add("Date", http_date(when))
        return response


@pytest.mark.parametrize(
    ("dates", "sent_back"),
    [
        pytest.param((NOW, later(days=3)), False, id="disagreeing, the present first"),
        pytest.param((later(days=3), NOW), False, id="disagreeing, the future first"),
        pytest.param((later(days=3), later(days=3)), True, id="one date repeated"),
    ],
)
def test_two_date_lines_that_disagree_are_no_date(
    server: HTTPServer, tmp_path: Path, dates: tuple[datetime, datetime], sent_back: bool
) -> None:
    # RFC 9110 sections 5.3 and 6.6.1: Date holds one value; two that disagree make it invalid, and the
    # build's own clock (--now) stands in. A Last-Modified 2 days ahead of --now is then not sent back.
    feed = TwoDates(server, dates, etag=None, last_modified=http_date(later(days=2)))
    config = write_config(tmp_path, [site(feed)], **FAST)
    build(config)
    build(config, later(minutes=1), "--force")
    assert ("If-Modified-Since" in feed.requests[1]) is sent_back


def test_a_200_with_the_stored_etag_but_a_new_body_is_parsed(server: HTTPServer, tmp_path: Path) -> None:
    feed = Feed(server, "/feed.xml", etag='"same"')
    config = write_config(tmp_path, [site(feed)], **FAST)
    build(config)
    feed.etag = None  # the server now ignores If-None-Match ...
    feed.headers["ETag"] = '"same"'  # ... but still sends the same ETag with a new body
    feed.body = rss(post(1), post(2), post(3, day=3))
    second = build(config, later(minutes=1), "--force")
    assert (second["status_200"], second["parsed"], second["changed"]) == (1, 1, 1)
    assert "Post 3" in (tmp_path / "public" / "index.html").read_text()


def test_permanent_redirect_moves_the_fetch_url_and_drops_old_validators(server: HTTPServer, tmp_path: Path) -> None:
    old = Feed(server, "/old.xml", etag='"old"')
    new = Feed(server, "/new.xml", etag='"new"')
    config = write_config(tmp_path, [site(old, "Blog")], **FAST)
    build(config)
    old.status, old.headers = 301, {"Location": new.url}
    build(config, later(minutes=1), "--force")
    assert old.requests[1]["If-None-Match"] == '"old"'
    assert "If-None-Match" not in new.requests[0]  # the validators belong to /old.xml
    build(config, later(minutes=2), "--force")
    assert len(old.requests) == 2 and new.requests[1]["If-None-Match"] == '"new"'
    row = status(config)["Blog"]
    assert (row["feed"], row["fetch_url"]) == (old.url, new.url)


def test_temporary_redirect_keeps_the_fetch_url(server: HTTPServer, tmp_path: Path) -> None:
    target = Feed(server, "/target.xml", etag='"t"')
    temp = Feed(server, "/temp.xml", status=302, headers={"Location": target.url}, etag=None)
    config = write_config(tmp_path, [site(temp, "Blog")], **FAST)
    build(config)
    build(config, later(minutes=1), "--force")
    assert len(temp.requests) == 2 and "If-None-Match" not in temp.requests[1]
    assert target.requests[1]["If-None-Match"] == '"t"'
    assert status(config)["Blog"]["fetch_url"] is None


@pytest.mark.parametrize("hops", ["loop", "six"])
def test_redirect_loops_and_more_than_five_hops_fail(server: HTTPServer, tmp_path: Path, hops: str) -> None:
    count = 2 if hops == "loop" else 7
    for n in range(count):
        following = server.url_for(f"/r{(n + 1) % count}.xml") if hops == "loop" else server.url_for(f"/r{n + 1}.xml")
        Feed(server, f"/r{n}.xml", status=301, headers={"Location": following}, etag=None)
    Feed(server, f"/r{count}.xml")
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/r0.xml")}], **FAST)
    report = build(config, expect=3)
    assert report["failed_by_class"] == {"redirect": 1}


def test_five_redirect_hops_are_followed(server: HTTPServer, tmp_path: Path) -> None:
    for n in range(5):
        Feed(server, f"/r{n}.xml", status=308, headers={"Location": server.url_for(f"/r{n + 1}.xml")}, etag=None)
    Feed(server, "/r5.xml")
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/r0.xml")}], **FAST)
    assert build(config)["parsed"] == 1
    assert status(config)["Blog"]["fetch_url"] == server.url_for("/r5.xml")


def test_429_retry_after_is_honoured_and_stops_the_host(server: HTTPServer, tmp_path: Path) -> None:
    good = Feed(server, "/good.xml")
    busy = Feed(server, "/busy.xml", status=429, headers={"Retry-After": "7200"}, etag=None)
    other = Feed(server, "/other.xml")
    config = write_config(tmp_path, [site(good), site(busy), site(other)], per_host_concurrency=1, **FAST)
    report = build(config)
    assert (report["fetched"], report["skipped_throttled"], len(other.requests)) == (2, 1, 0)
    rows = status(config)
    assert rows["busy"]["reason"].startswith("retry-after: 7200 s")
    assert rows["busy"]["next_due"] >= later(seconds=7200).isoformat()
    assert rows["other"]["reason"].startswith("throttled: 127.0.0.1 asked to wait 7200 s")
    build(config, later(hours=1.5))
    assert (len(busy.requests), len(other.requests)) == (1, 0)  # both wait for the host
    busy.status = 200
    build(config, later(hours=2.5))
    assert (len(busy.requests), len(other.requests)) == (2, 1)


def test_503_with_a_retry_after_date_is_honoured(server: HTTPServer, tmp_path: Path) -> None:
    Feed(
        server,
        "/down.xml",
        status=503,
        etag=None,
        headers={"Date": http_date(NOW), "Retry-After": http_date(later(days=3, minutes=1))},
    )
    config = write_config(tmp_path, [{"name": "Down", "feed": server.url_for("/down.xml")}], **FAST)
    report = build(config, expect=3)
    assert report["failed_by_class"] == {"http_5xx": 1}
    row = status(config)["Down"]
    assert row["next_due"] >= later(days=3).isoformat() and row["reason"].startswith("retry-after: 2592")


def test_gone_waits_for_the_site_entry_to_change(server: HTTPServer, tmp_path: Path) -> None:
    ok = Feed(server, "/ok.xml")
    dead = Feed(server, "/dead.xml", status=410, etag=None)
    config = write_config(tmp_path, [site(ok), site(dead, "Dead")], **FAST)
    build(config)
    build(config, later(days=30))
    assert len(dead.requests) == 1
    row = status(config, later(days=30))
    assert (row["Dead"]["health"], row["Dead"]["next_due"], row["Dead"]["due_now"]) == ("gone", None, False)
    config = write_config(tmp_path, [site(ok), site(dead, "Dead") | {"link": "https://dead.example/"}], **FAST)
    build(config, later(days=30, minutes=1))
    assert len(dead.requests) == 2


def test_not_found_climbs_the_slow_ladder(server: HTTPServer, tmp_path: Path) -> None:
    Feed(server, "/ok.xml")
    Feed(server, "/missing.xml", status=404, etag=None)
    config = write_config(
        tmp_path,
        [
            {"name": "OK", "feed": server.url_for("/ok.xml")},
            {"name": "Missing", "feed": server.url_for("/missing.xml")},
        ],
        **FAST,
    )
    build(config)
    assert status(config)["Missing"]["interval_seconds"] == 3600
    build(config, later(hours=2), "--site", "Missing")
    row = status(config, later(hours=2))
    assert (row["Missing"]["interval_seconds"], row["Missing"]["failures"]) == (14400, 2)
    assert row["Missing"]["failure_class"] == "http_404"


def test_an_identical_invalid_body_is_not_parsed_again(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Feed(server, "/ok.xml")
    broken = Feed(server, "/broken.xml", body="<rss><channel><title>half", etag=None)
    config = write_config(tmp_path, [site(Feed(server, "/x.xml")), site(broken, "Broken")], **FAST)
    first = build(config)
    assert first["failed_by_class"] == {"parse": 1}
    calls: list[str] = []
    real = observe.parse_feed
    monkeypatch.setattr(observe, "parse_feed", lambda body, url, *a: calls.append(url) or real(body, url, *a))
    second = build(config, later(hours=2), "--site", "Broken")
    assert second["failed_by_class"] == {"parse": 1} and calls == []
    row = status(config, later(hours=2))["Broken"]
    assert (row["failures"], row["reason"]) == (2, "parse failure x2: normal cadence")
    broken.body = rss(post(7))
    build(config, later(hours=4), "--site", "Broken")
    assert calls == [broken.url] and status(config, later(hours=4))["Broken"]["failures"] == 0


def test_site_option_fetches_just_those_sites(server: HTTPServer, tmp_path: Path) -> None:
    a, b, c = (Feed(server, f"/{n}.xml") for n in "abc")
    config = write_config(tmp_path, [site(a, "A"), site(b, "B"), site(c, "C")], **FAST)
    build(config)
    report = build(config, later(minutes=1), "--site", "A", "--site", "C")
    assert report["fetched"] == 2 and [len(f.requests) for f in (a, b, c)] == [2, 1, 2]
    result = run("build", "--config", str(config), "--site", "Nope")
    assert result.exit_code == 2 and "no site named 'Nope'" in result.stderr


def test_status_shows_each_sites_schedule(server: HTTPServer, tmp_path: Path) -> None:
    feed = Feed(server, "/feed.xml", etag='"v1"', last_modified="Sun, 29 Nov 2026 08:00:00 GMT")
    config = write_config(
        tmp_path, [site(feed, "Blog"), {"name": "Never", "feed": server.url_for("/never.xml")}], **FAST
    )
    before = status(config)
    assert before["Blog"]["health"] == "new" and before["Blog"]["due_now"] is True
    Feed(server, "/never.xml", status=500, etag=None)
    build(config)
    rows = status(config)
    blog = rows["Blog"]
    assert (blog["health"], blog["etag"]) == ("ok", '"v1"')
    assert 900 <= blog["interval_seconds"] <= 86400
    assert blog["reason"].startswith("habits: ~") and blog["last_success"] == NOW.isoformat()
    assert blog["next_due"] > later(minutes=14).isoformat() and blog["stale"] is False
    never = rows["Never"]
    assert (never["health"], never["failure_class"], never["failures"]) == ("failing", "http_5xx", 1)
    assert never["stale"] is True and never["reason"] == "backoff: http_5xx x1"
    text = run("status", "--config", str(config), "--now", "2026-11-30T12:01:00Z")
    assert text.exit_code == 0
    assert "Blog  [ok]" in text.stdout and 'validators: ETag "v1", Last-Modified Sun, 29 Nov' in text.stdout
    assert "Never  [failing, stale]" in text.stdout and "failing: http_5xx x1" in text.stdout


def test_status_without_a_cache_shows_every_site_as_new(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"name": "Blog", "feed": "https://blog.example.org/feed"}])
    rows = json.loads(run("status", "--config", str(config), "--json", "--now", iso(NOW)).stdout)
    assert [(r["name"], r["health"], r["reason"]) for r in rows] == [("Blog", "new", "never attempted: due now")]
    assert not (tmp_path / "cache" / "state.sqlite").exists()


def test_interval_settings_are_validated(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, [{"name": "B", "feed": "https://b.example/feed"}], min_interval="2h", default_interval="1h"
    )
    result = run("build", "--config", str(config))
    assert result.exit_code == 2
    assert "min_interval: min_interval (7200 s) must not exceed default_interval (3600 s)" in result.stderr
    config = write_config(tmp_path, [{"name": "B", "feed": "https://b.example/feed"}], max_interval="8d")
    result = run("build", "--config", str(config))
    assert result.exit_code == 2 and "max_interval: must be at most 7 days" in result.stderr
