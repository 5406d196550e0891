"""End-to-end smoke test: the real CLI against a real loopback server."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator.cli import main

from .conftest import NOW_ISO, post, rss, write_config


def test_build_publishes_site(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.xml").respond_with_data(
        rss(post(1, day=1), post(2, day=2)), content_type="application/rss+xml"
    )
    config = write_config(
        tmp_path, [{"name": "Example Blog", "feed": server.url_for("/feed.xml"), "link": "https://blog.example.org/"}]
    )
    result = CliRunner().invoke(main, ["build", "--config", str(config), "--now", NOW_ISO], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("1 site: 1 feed due, 1 requested (1 changed, ")
    index = (tmp_path / "public" / "index.html").read_text()
    assert index.index("Post 2") < index.index("Post 1")
    for name in ("sites.html", "feed.xml", "feed.json", "opml.xml", "style.css"):
        assert (tmp_path / "public" / name).is_file()
