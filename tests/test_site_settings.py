"""A site's own settings through the real CLI on a loopback server: the User-Agent, headers and timeout
its feed is fetched with, the intervals its next check keeps to, and how many of its entries are
published and how (``items_per_feed``, ``summary_only``)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator import __version__
from syndicator.cli import main

from .conftest import ATOM, NOW_ISO, atom_entries, build, entry_titles, post, rss, write_config
from .test_serve import Clock, feeds, in_process  # noqa: F401 - a fixture
from .websub_hub import FeedServer


def status_rows(config: Path, now: str = NOW_ISO) -> dict[str, dict[str, Any]]:
    """``syndicator status --json`` of ``config`` as of ``now``: {site name: its row}."""
    result = CliRunner().invoke(main, ["status", "--config", str(config), "--now", now, "--json"])
    assert result.exit_code == 0, result.output
    return {row["name"]: row for row in json.loads(result.stdout)}


def feed_of(server: HTTPServer, path: str, *items: dict[str, str]) -> str:
    server.expect_request(path).respond_with_data(rss(*items), content_type="application/rss+xml")
    return server.url_for(path)


def test_each_feed_is_fetched_with_its_own_sites_user_agent_and_headers(server: HTTPServer, tmp_path: Path) -> None:
    alpha = {
        "name": "Alpha",
        "feed": feed_of(server, "/a.xml", post(1)),
        "user_agent": "https://alpha.example.org/contact",
        "headers": {"Accept-Language": "fr", "X-Planet-Key": "alpha only", "Accept": "application/rss+xml"},
    }
    beta = {"name": "Beta", "feed": feed_of(server, "/b.xml", post(2, host="beta.example.org"))}
    assert build(write_config(tmp_path, [alpha, beta], host_gap=0)).exit_code == 0
    sent = {request.path: request.headers for request, _ in server.log}
    assert sent["/a.xml"]["User-Agent"] == f"syndicator/{__version__} (+https://alpha.example.org/contact)"
    assert sent["/a.xml"]["Accept-Language"] == "fr" and sent["/a.xml"]["X-Planet-Key"] == "alpha only"
    assert sent["/a.xml"]["Accept"] == "application/rss+xml"  # one Accept, the site's
    assert sent["/a.xml"]["Accept-Encoding"] == "gzip, br"
    assert sent["/b.xml"]["User-Agent"] == f"syndicator/{__version__} (+https://planet.example.org/)"
    assert "Accept-Language" not in sent["/b.xml"] and "X-Planet-Key" not in sent["/b.xml"]
    assert sent["/b.xml"]["Accept"].startswith("application/atom+xml, ")


def test_a_sites_headers_follow_a_redirect_and_its_validators_come_back(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/old.xml").respond_with_data("", status=301, headers={"Location": "/new.xml"})
    server.expect_request("/new.xml").respond_with_data(
        rss(post(1)), content_type="application/rss+xml", headers={"ETag": '"v1"'}
    )
    site = {"name": "Alpha", "feed": server.url_for("/old.xml"), "headers": {"X-Planet-Key": "k"}}
    config = write_config(tmp_path, [site], host_gap=0)
    assert build(config).exit_code == 0
    assert build(config, "--force", now="2026-11-30T13:00:00Z").exit_code == 0
    news = [request.headers for request, _ in server.log if request.path == "/new.xml"]
    assert [headers.get("X-Planet-Key") for headers in news] == ["k", "k"]
    assert news[1].get("If-None-Match") == '"v1"'  # the site's headers leave the conditional request alone


def test_a_sites_timeout_cuts_its_slow_feed_and_not_the_others(
    server: HTTPServer, tmp_path: Path, release: threading.Event
) -> None:
    def slow(_request: Request) -> Response:
        release.wait(1.5)  # a little longer than the site's timeout, far less than the planet's
        return Response(rss(post(1)), content_type="application/rss+xml")

    server.expect_request("/slow.xml").respond_with_handler(slow)
    slow_site = {"name": "Slow", "feed": server.url_for("/slow.xml"), "timeout": 1}
    patient = {"name": "Patient", "feed": server.url_for("/patient.xml")}
    server.expect_request("/patient.xml").respond_with_handler(slow)
    config = write_config(tmp_path, [slow_site, patient], host_gap=0, retries=0, timeout=20)
    build(config)
    rows = status_rows(config)
    assert rows["Slow"]["failure_class"] == "timeout"
    assert rows["Patient"]["failure_class"] is None and rows["Patient"]["last_success"] is not None


def test_a_sites_max_interval_bounds_its_next_check(server: HTTPServer, tmp_path: Path) -> None:
    """Posts a year apart ask for checks far apart: the planet's max_interval (a day) caps one feed, the
    site's own (two hours) the other."""
    years = [
        {"title": f"Post {y}", "link": f"https://slow.example.org/{y}", "pubDate": f"Mon, 03 Jun {y} 10:00:00 +0000"}
        for y in (2023, 2024, 2025)
    ]
    sites = [
        {"name": "Capped", "feed": feed_of(server, "/capped.xml", *years), "max_interval": "2h"},
        {"name": "Planet", "feed": feed_of(server, "/planet.xml", *years)},
    ]
    config = write_config(tmp_path, sites, host_gap=0)
    assert build(config).exit_code == 0
    rows = status_rows(config)
    assert rows["Capped"]["interval_seconds"] == 7200.0
    assert "2026-11-30T13:00:00" < rows["Capped"]["next_due"] <= "2026-11-30T14:00:00+00:00"
    assert rows["Planet"]["interval_seconds"] == 86400.0


def test_a_sites_min_interval_is_where_its_backoff_starts(server: HTTPServer, tmp_path: Path) -> None:
    """A transient failure waits min_interval before the first retry: the site's own (two minutes)."""
    for path in ("/own.xml", "/planet.xml"):
        server.expect_request(path).respond_with_data("busy", status=500)
    sites = [
        {"name": "Own", "feed": server.url_for("/own.xml"), "min_interval": "2m"},
        {"name": "Planet", "feed": server.url_for("/planet.xml")},
    ]
    config = write_config(tmp_path, sites, host_gap=0, retries=0)
    build(config)
    rows = status_rows(config)
    assert rows["Own"]["interval_seconds"] == 120.0
    assert rows["Planet"]["interval_seconds"] == 900.0


def test_lowering_a_sites_max_interval_replans_its_next_check_at_the_next_build(
    server: HTTPServer, tmp_path: Path
) -> None:
    years = [
        {"title": f"Post {y}", "link": f"https://slow.example.org/{y}", "pubDate": f"Mon, 03 Jun {y} 10:00:00 +0000"}
        for y in (2023, 2024, 2025)
    ]
    sites = [{"name": "Slow", "feed": feed_of(server, "/slow.xml", *years)}]
    config = write_config(tmp_path, sites, host_gap=0)
    assert build(config).exit_code == 0
    assert status_rows(config)["Slow"]["next_due"] > "2026-12-01T06:00:00"  # about a day away
    write_config(tmp_path, [{**sites[0], "max_interval": "2h"}], host_gap=0)
    server.clear_log()
    result = build(config, "-v", now="2026-11-30T12:10:00Z")
    assert result.exit_code == 0, result.output
    assert not server.log  # not due yet: planned again from the last check
    assert "the next check of 1 source re-planned within them" in result.stderr
    row = status_rows(config, now="2026-11-30T12:10:00Z")["Slow"]
    assert row["interval_seconds"] == 7200.0
    assert "2026-11-30T13:00:00" < row["next_due"] <= "2026-11-30T14:00:00+00:00"
    assert "re-planned" not in build(config, now="2026-11-30T12:20:00Z").stderr  # the same bounds: no replan


def test_a_sites_items_per_feed_sets_how_many_of_its_posts_are_published(server: HTTPServer, tmp_path: Path) -> None:
    alpha = {"name": "Alpha", "feed": feed_of(server, "/a.xml", *(post(n, day=n) for n in range(1, 5)))}
    beta = {
        "name": "Beta",
        "feed": feed_of(server, "/b.xml", *(post(n, day=n, host="beta.example.org") for n in range(11, 15))),
        "items_per_feed": 2,
    }
    config = write_config(tmp_path, [alpha, beta], host_gap=0, new_feed_items="all")
    assert build(config).exit_code == 0
    titles = entry_titles(tmp_path / "public" / "feed.xml")
    assert sorted(titles) == ["Post 1", "Post 13", "Post 14", "Post 2", "Post 3", "Post 4"]
    write_config(tmp_path, [alpha, {**beta, "items_per_feed": 3}], host_gap=0, new_feed_items="all")
    server.clear_log()
    assert build(config, now="2026-11-30T12:01:00Z").exit_code == 0
    assert not server.log  # nothing fetched: the stored entries published again
    assert "Post 12" in entry_titles(tmp_path / "public" / "feed.xml")


FULL = "The whole article, every paragraph of it, which only its own site should publish."


def article(n: int, host: str) -> dict[str, str]:
    return {**post(n, host=host), "content:encoded": f"&lt;p&gt;{FULL} ({n})&lt;/p&gt;"}


def test_a_summary_only_site_publishes_summaries_and_never_its_content(server: HTTPServer, tmp_path: Path) -> None:
    brief = {"name": "Brief", "feed": feed_of(server, "/brief.xml", article(1, "brief.example.org"))}
    full = {"name": "Full", "feed": feed_of(server, "/full.xml", article(2, "full.example.org"))}
    config = write_config(tmp_path, [{**brief, "summary_only": True}, full], host_gap=0, old_feeds=["rss20.xml"])
    assert build(config).exit_code == 0
    public = tmp_path / "public"
    for name in ("index.html", "feed.xml", "feed.json", "rss20.xml"):  # the front page shows summaries anyway
        text = (public / name).read_text(encoding="utf-8")
        assert f"{FULL} (1)" not in text, name
        assert name == "index.html" or f"{FULL} (2)" in text, name
        assert "Summary of post 1" in text, name
    entries = {e.findtext(f"{ATOM}title"): e for e in atom_entries(public / "feed.xml")}
    assert entries["Post 1"].find(f"{ATOM}content") is None
    assert "Summary of post 1" in (entries["Post 1"].findtext(f"{ATOM}summary") or "")
    items = {item["title"]: item for item in json.loads((public / "feed.json").read_text())["items"]}
    assert items["Post 1"]["content_html"] == "Summary of post 1"
    assert 'href="https://brief.example.org/posts/1"' in (public / "index.html").read_text()
    write_config(tmp_path, [brief, full], host_gap=0, old_feeds=["rss20.xml"])  # summary_only taken out
    assert build(config, now="2026-11-30T12:01:00Z").exit_code == 0
    assert f"{FULL} (1)" in (public / "feed.xml").read_text(encoding="utf-8")  # rendered again without a fetch


def test_serve_fetches_each_feed_with_its_sites_user_agent_and_plans_it_within_its_bounds(
    tmp_path: Path, feeds: FeedServer
) -> None:
    monthly = {"advertise": None, "every": timedelta(days=30)}  # habits ask for checks days apart
    alpha, beta = feeds.feed("alpha", **monthly), feeds.feed("beta", **monthly)
    sites = [
        {"name": "Alpha", "feed": alpha.url, "user_agent": "https://alpha.example.org/contact", "max_interval": "20m"},
        {"name": "Beta", "feed": beta.url},
    ]
    config = write_config(tmp_path, sites, host_gap=0)
    with in_process(config, Clock()) as serve:
        serve.wait_for(lambda: feeds.syndicator_gets("alpha") and feeds.syndicator_gets("beta"), "both feeds fetched")
        serve.wait_for(lambda: all(row["last_success"] for row in status_rows(config).values()), "both stored")
    assert {hit.user_agent for hit in feeds.syndicator_gets("alpha")} == {
        f"syndicator/{__version__} (+https://alpha.example.org/contact)"
    }
    assert {hit.user_agent for hit in feeds.syndicator_gets("beta")} == {
        f"syndicator/{__version__} (+https://planet.example.org/)"
    }
    rows = status_rows(config, now=datetime.now(UTC).isoformat())
    assert rows["Alpha"]["interval_seconds"] == 1200.0
    assert rows["Beta"]["interval_seconds"] > 3600.0, rows["Beta"]["reason"]


def test_two_sites_of_one_feed_asking_for_other_headers_are_one_warning_and_one_fetch(
    server: HTTPServer, tmp_path: Path
) -> None:
    feed = feed_of(server, "/shared.xml", post(1))
    sites = [
        {"name": "Alpha", "feed": feed, "headers": {"X-Planet": "alpha"}},
        {"name": "Beta", "feed": feed, "headers": {"X-Planet": "beta"}, "timeout": 30},
    ]
    result = build(write_config(tmp_path, sites, host_gap=0))
    assert result.exit_code == 0
    warned = [line for line in result.stderr.splitlines() if "other request headers" in line]
    assert len(warned) == 1 and "sites[1] 'Beta'" in warned[0] and "with those of sites[0]" in warned[0]
    assert [request.headers.get("X-Planet") for request, _ in server.log] == ["alpha"]  # once, the first site's
