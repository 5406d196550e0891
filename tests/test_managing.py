"""Managing the list of sites through the real CLI: pausing a site (``enabled: false``), removing one
(``syndicator remove``), the same feed under two names, and a changed interval re-planning the schedule."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator.cli import main

from .conftest import NOW_ISO, build, entry_titles, post, rss, write_config


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
    assert "not checked while paused" in page
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
    assert result.stderr == f"syndicator: error: {config}:8: sites[1].enabled: must be true or false, not 'maybe'\n"
