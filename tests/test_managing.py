"""Managing the list of sites through the real CLI: pausing a site (``enabled: false``), removing one
(``syndicator remove``), the same feed under two names, and a changed interval re-planning the schedule."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.model import Check, SourceState
from syndicator.poll.replan import rebound
from syndicator.poll.schedule import Policy

from .conftest import NOW, NOW_ISO, build, entry_titles, post, rss, write_config
from .postgres import pg_database, postgres_url  # noqa: F401 - fixtures
from .test_serve import feeds, hub, live_subscription, page, planet_yaml, rewrite, site, spawn, subscription  # noqa: F401
from .websub_hub import FeedServer, ServeProcess, WebSubHub


def status(config: Path, *args: str, now: str = NOW_ISO) -> str:
    """``syndicator status`` output (stdout) of ``config``, as of ``now``."""
    result = CliRunner().invoke(main, ["status", "--config", str(config), "--now", now, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def requested(server: HTTPServer, path: str) -> int:
    """How many requests for ``path`` the server answered since its log was last cleared."""
    return sum(1 for request, _ in server.log if request.path == path)


def two_sites(server: HTTPServer, tmp_path: Path, paused: bool = False) -> Path:
    """A sites.yaml with sites Alpha (/a.xml) and Beta (/b.xml), Beta paused when ``paused``."""
    beta = {"name": "Beta", "feed": server.url_for("/b.xml"), **({"enabled": False} if paused else {})}
    return write_config(tmp_path, [{"name": "Alpha", "feed": server.url_for("/a.xml")}, beta], host_gap=0)


def serve_feeds(server: HTTPServer) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1, day=2)), content_type="application/rss+xml")
    server.expect_request("/b.xml").respond_with_data(
        rss(post(7, day=3, host="beta.example.org")), content_type="application/rss+xml"
    )


# --- enabled: false ----------------------------------------------------------------------------------


def test_a_paused_site_is_not_fetched_and_its_posts_stay_published(server: HTTPServer, tmp_path: Path) -> None:
    serve_feeds(server)
    config = two_sites(server, tmp_path)
    assert build(config).exit_code == 0
    assert "Post 7" in entry_titles(tmp_path / "public" / "feed.xml")
    two_sites(server, tmp_path, paused=True)
    server.clear_log()
    result = build(config, "--force", now="2026-12-01T12:00:00Z")
    assert result.exit_code == 0, result.output
    assert requested(server, "/b.xml") == 0
    assert requested(server, "/a.xml") == 1
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 7", "Post 1"]
    page = (tmp_path / "public" / "sites.html").read_text(encoding="utf-8")
    assert "paused" in page and "the posts already here stay listed" in page
    text = status(config, now="2026-12-09T12:00:00Z")
    assert "Beta  [paused]" in text  # not stale, however long it waits
    assert "next due: not while paused (enabled: false in sites.yaml)" in text
    assert text.splitlines()[-1] == "2 sites: 1 ok, 1 paused, 1 stale"  # Alpha: 8 days without a check
    (alpha, beta) = json.loads(status(config, "--json"))
    assert (alpha["enabled"], beta["enabled"], beta["health"], beta["due_now"]) == (True, False, "paused", False)


def test_a_paused_site_named_with_site_is_refused(server: HTTPServer, tmp_path: Path) -> None:
    serve_feeds(server)
    config = two_sites(server, tmp_path, paused=True)
    result = build(config, "--site", "Beta")
    assert result.exit_code == 2
    assert result.stderr == (
        f"syndicator: error: --site: 'Beta' is paused (enabled: false in {config}); it is not fetched\n"
    )
    assert requested(server, "/b.xml") == 0


def test_enabled_must_be_true_or_false(tmp_path: Path) -> None:
    config = tmp_path / "sites.yaml"
    config.write_text(
        "title: T\nlink: https://planet.example.org/\nsites:\n"
        "  - name: A\n    feed: https://a.example.org/feed\n"
        "  - name: B\n    feed: https://b.example.org/feed\n    enabled: maybe\n",
        encoding="utf-8",
    )
    result = build(config)
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"syndicator: error: {config}:8: sites[1].enabled: must be true or false (unquoted), not the text 'maybe'\n"
    )


# --- syndicator remove -------------------------------------------------------------------------------


def remove(config: Path, name: str) -> tuple[int, str, str]:
    """``syndicator remove NAME --config CONFIG``: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(main, ["remove", name, "--config", str(config)], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


HAND_WRITTEN = """\
# Our planet.
title: Planet Test   # shown on every page
link: https://planet.example.org/
sites:
  # Alpha writes about parsers.
  - name: Alpha
    feed: {a}

  # Beta: moved to a new host in 2025.
  - name: Beta
    feed:  {b}     # aligned by hand
    # ask Beta about a full-text feed
    link: https://beta.example.org/

  - name: Gamma
    feed: {c}
  # more sites below this line
host_gap: 0   # no pause between requests
"""


def test_remove_takes_out_the_site_and_keeps_the_comments_and_layout(server: HTTPServer, tmp_path: Path) -> None:
    serve_feeds(server)
    server.expect_request("/c.xml").respond_with_data(rss(post(4, day=4, host="gamma.example.org")))
    urls = {key: server.url_for(f"/{key}.xml") for key in "abc"}
    config = tmp_path / "sites.yaml"
    config.write_text(HAND_WRITTEN.format(**urls), encoding="utf-8")
    assert build(config).exit_code == 0
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 4", "Post 7", "Post 1"]
    code, out, err = remove(config, "Beta")
    assert (code, err) == (0, "")
    assert out == f"removed Beta <{urls['b']}>; its posts leave the published pages at the next build\n"
    expected = HAND_WRITTEN.format(**urls).replace(
        f"  - name: Beta\n    feed:  {urls['b']}     # aligned by hand\n"
        "    # ask Beta about a full-text feed\n    link: https://beta.example.org/\n",
        "",
    )
    assert config.read_text(encoding="utf-8") == expected
    assert "# Beta: moved to a new host in 2025.\n\n  - name: Gamma" in expected  # comments outside it stay
    assert build(config, now="2026-11-30T12:05:00Z").exit_code == 0
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 4", "Post 1"]
    assert "Beta" not in (tmp_path / "public" / "sites.html").read_text(encoding="utf-8")
    code, out, err = remove(config, "Gamma")  # the last site: the comment and the key after it stay
    assert code == 0
    assert config.read_text(encoding="utf-8").endswith(
        f"    feed: {urls['a']}\n\n  # Beta: moved to a new host in 2025.\n\n"
        "  # more sites below this line\nhost_gap: 0   # no pause between requests\n"
    )


def test_remove_an_unknown_name_is_one_line_suggesting_close_names(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        [
            {"name": "Planet Python News", "feed": "https://a.example.org/feed"},
            {"name": "Python Weekly", "feed": "https://b.example.org/feed"},
        ],
    )
    before = config.read_bytes()
    code, out, err = remove(config, "python weekly!")
    assert (code, out) == (2, "")
    assert err == f"syndicator: error: no site named 'python weekly!' in {config}; did you mean 'Python Weekly'?\n"
    code, out, err = remove(config, "Zebra")
    assert err == f"syndicator: error: no site named 'Zebra' in {config}\n"
    assert config.read_bytes() == before


def test_the_only_site_is_not_removed(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"name": "Only", "feed": "https://a.example.org/feed"}])
    before = config.read_bytes()
    code, _, err = remove(config, "Only")
    assert code == 2
    assert err == f"syndicator: error: 'Only' is the only site in {config}; a planet lists at least one\n"
    assert config.read_bytes() == before


# --- the same feed under two names -------------------------------------------------------------------


def test_the_same_feed_under_two_names_is_a_warning_naming_both(server: HTTPServer, tmp_path: Path) -> None:
    serve_feeds(server)
    feed = server.url_for("/a.xml")
    config = tmp_path / "sites.yaml"
    config.write_text(
        "title: T\nlink: https://planet.example.org/\nhost_gap: 0\nsites:\n"
        f"  - name: Alpha\n    feed: {feed}\n"
        f"  - name: Beta\n    feed: {server.url_for('/b.xml')}\n"
        f"  - name: Alpha again\n    feed: {feed.replace('http://', 'HTTP://')}#top\n",
        encoding="utf-8",
    )
    warning = (
        f"syndicator: warning: {config}:10: sites[2] 'Alpha again' lists the feed of sites[0] 'Alpha' (line 6), "
        f"<{feed.replace('http://', 'HTTP://')}#top>; each post shows once, under one of the names: keep one "
        "(syndicator remove 'Alpha again')\n"
    )
    result = build(config)
    assert result.exit_code == 0, result.output
    assert result.stderr.count(warning) == 1
    result = CliRunner().invoke(main, ["status", "--config", str(config), "--now", NOW_ISO], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stderr == warning
    assert "Alpha again  [ok]" in result.stdout  # a warning, not an error: the site is read
    config.write_text(config.read_text(encoding="utf-8").replace("#top", "x"), encoding="utf-8")
    result = build(config, now="2026-11-30T12:05:00Z")
    assert "lists the feed of" not in result.stderr


# --- a changed interval re-plans every source --------------------------------------------------------


def years_apart() -> str:
    """A feed whose three posts are a year apart: its habits ask for checks far apart, capped at max_interval."""
    items = [
        {
            "title": f"Post {year}",
            "link": f"https://slow.example.org/{year}",
            "guid": f"https://slow.example.org/{year}",
            "pubDate": f"Mon, 03 Jun {year} 10:00:00 +0000",
        }
        for year in (2023, 2024, 2025)
    ]
    return rss(*items)


def status_block(config: Path, name: str, now: str) -> str:
    text = status(config, now=now)
    return next(block for block in text.split("\n\n") if block.startswith(f"{name}  ["))


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The settings that choose the state under test: SQLite in the cache folder, or a fresh PostgreSQL database."""
    return {} if request.param == "sqlite" else {"state": request.getfixturevalue("pg_database")}


def test_lowering_max_interval_brings_every_next_check_within_it(
    server: HTTPServer, tmp_path: Path, backend: dict[str, Any]
) -> None:
    server.expect_request("/slow.xml").respond_with_data(years_apart(), content_type="application/rss+xml")
    sites = [{"name": "Slow", "feed": server.url_for("/slow.xml")}]
    config = write_config(tmp_path, sites, host_gap=0, **backend)
    assert build(config).exit_code == 0
    (row,) = json.loads(status(config, "--json"))
    assert row["interval_seconds"] == 86400.0 and row["reason"].endswith("capped at max_interval")
    assert row["next_due"] > "2026-12-01T06:00:00"  # about a day away
    write_config(tmp_path, sites, host_gap=0, max_interval="2h", **backend)
    server.clear_log()
    result = build(config, "-v", now="2026-11-30T12:10:00Z")
    assert result.exit_code == 0, result.output
    assert requested(server, "/slow.xml") == 0  # not due yet: planned again from the last check
    assert "the next check of 1 source re-planned within them" in result.stderr
    (row,) = json.loads(status(config, "--json", now="2026-11-30T12:10:00Z"))
    assert row["interval_seconds"] == 7200.0
    assert "2026-11-30T13:00:00" < row["next_due"] <= "2026-11-30T14:00:00+00:00"
    assert row["reason"].endswith("capped at max_interval; re-planned: max_interval is now 2 h")
    text = status(config, now="2026-11-30T12:10:00Z")
    assert "interval: 2 h   reason: habits: " in text and "re-planned: max_interval is now 2 h" in text
    result = build(config, now="2026-11-30T12:20:00Z")  # the same intervals: nothing re-planned again
    assert "re-planned" not in result.stderr
    assert build(config, now="2026-11-30T14:00:01Z").exit_code == 0
    assert requested(server, "/slow.xml") == 1
    (row,) = json.loads(status(config, "--json", now="2026-11-30T14:00:01Z"))
    assert row["reason"].endswith("capped at max_interval")  # planned by the new limits from now on


def checked(**changes: Any) -> SourceState:
    """A source last checked at NOW, planned an hour later with the default intervals."""
    base = SourceState(
        "https://a.example.org/feed",
        "https://a.example.org/feed",
        last_attempt=NOW,
        next_attempt=NOW + timedelta(hours=1),
        interval=3600.0,
        reason="default: no change history yet",
    )
    return replace(base, **changes)


@pytest.mark.parametrize(
    ("state", "new", "interval", "why"),
    [
        (checked(), Policy(default_interval=1800), 1800.0, "default_interval is now 30 min"),
        (checked(), Policy(min_interval=7200, default_interval=7200), 7200.0, "default_interval is now 2 h"),
        (
            checked(history=(Check(NOW, 3600, True),)),
            Policy(min_interval=7200, default_interval=7200),
            7200.0,
            "min_interval is now 2 h",
        ),
        (
            checked(interval=86400.0, next_attempt=NOW + timedelta(hours=23)),
            Policy(max_interval=7200),
            7200.0,
            "max_interval is now 2 h",
        ),
    ],
    ids=["default lowered", "default raised", "min raised", "max lowered"],
)
def test_a_next_check_is_planned_again_within_the_new_intervals(
    state: SourceState, new: Policy, interval: float, why: str
) -> None:
    fresh = rebound(state, Policy(), new)
    assert fresh is not None
    assert fresh.interval == interval and fresh.reason == f"{state.reason}; re-planned: {why}"
    assert fresh.next_attempt is not None and state.last_attempt is not None
    assert new.min_interval <= (fresh.next_attempt - state.last_attempt).total_seconds() <= new.max_interval


@pytest.mark.parametrize(
    "state",
    [
        checked(reason="retry-after: 86400 s (http_503)", interval=86400.0, error_kind="http_503", failures=1),
        checked(reason="backoff: HTTP 404 x2 (slow ladder)", interval=14400.0, error_kind="http_404", failures=2),
        checked(hold="abc", error_kind="http_410", next_attempt=None),
        checked(last_attempt=None),
        checked(interval=3600.0),  # within the new limits: as planned
    ],
    ids=["retry-after", "slow ladder", "on hold", "never attempted", "within"],
)
def test_what_a_server_asked_for_and_what_fits_stay_as_planned(state: SourceState) -> None:
    assert rebound(state, Policy(), Policy(max_interval=7200)) is None


# --- serve: a site paused and back -------------------------------------------------------------------


def test_serve_unsubscribes_a_paused_site_and_subscribes_it_again_when_it_is_back(
    tmp_path: Path, hub: WebSubHub, feeds: FeedServer, spawn: Callable[..., ServeProcess]
) -> None:
    alpha, beta = feeds.feed("alpha", hub=hub.url), feeds.feed("beta", hub=hub.url)
    config = write_config(tmp_path, [site(alpha), site(beta)])
    serve = spawn(config)
    serve.wait_metric("syndicator_live_leases", 2.0)
    first = live_subscription(serve, tmp_path, beta.url)
    serve.wait_for(lambda: "beta post 3" in page(tmp_path), "beta on the site")

    rewrite(config, planet_yaml([site(alpha), {**site(beta), "enabled": False}]))
    serve.wait_for(lambda: hub.sent("unsubscribe", beta.url), "an unsubscribe request for beta at the hub")
    serve.wait_for(lambda: subscription(tmp_path, beta.url) is None, "serve to forget beta's subscription")
    gets = len(feeds.syndicator_gets("beta"))
    assert "beta post 3" in page(tmp_path)  # its posts stay published while it is paused

    rewrite(config, planet_yaml([site(alpha), site(beta)]))
    serve.wait_for(lambda: len(hub.sent("subscribe", beta.url)) == 2, "a new subscribe request for beta")
    again = live_subscription(serve, tmp_path, beta.url)
    assert again["token"] != first["token"]
    assert len(feeds.syndicator_gets("beta")) == gets + 1  # read whole once, for the hub it advertises
    serve.wait_metric("syndicator_live_leases", 2.0)
    assert serve.terminate() == 0
