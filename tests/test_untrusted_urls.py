"""Unusable URLs in feeds and pages (``http://[oops/1``, a malformed IPv6 literal): the one
bad field is dropped, everything else is published, and the build exits 0.

Through the real CLI against a loopback server; urllib.parse raises ValueError on
such URLs, which used to crash every build.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator.cli import main

from .conftest import build, post, rss, write_config
from .outputs import atom_problems

BAD = "http://[oops/1"
PUBLISHED = ("index.html", "feed.xml", "feed.json", "sites.html")


def _item(n: int, **fields: str) -> dict[str, str]:
    item = post(n, host="bad.example")
    item.update(fields)
    return {k: v for k, v in item.items() if v}


def bad_rss() -> str:
    """Six items, five of them with the bad URL in one field each; the channel link is bad too."""
    return rss(
        _item(1, guid=BAD),
        _item(2, link=BAD),
        _item(3, description="", **{'description xml:base="http://[oops/"': '&lt;a href="more"&gt;more&lt;/a&gt;'}),
        _item(4, **{f'enclosure url="{BAD}" length="1" type="audio/mpeg"': ""}),
        _item(5, description=f'&lt;p&gt;Picture&lt;img src="{BAD}"&gt;&lt;/p&gt;'),
        _item(6),
        link=BAD,
    )


def bad_json_feed() -> str:
    item: dict[str, Any] = {
        "id": BAD,
        "url": BAD,
        "external_url": "https://json.example/posts/9",
        "title": "Post 9",
        "date_published": "2026-11-09T10:00:00Z",
        "content_html": f'<p>Nine<img src="{BAD}"></p>',
        "attachments": [{"url": BAD}],
    }
    return json.dumps(
        {"version": "https://jsonfeed.org/version/1.1", "title": "J", "home_page_url": BAD, "items": [item]}
    )


def test_bad_urls_in_a_feed_drop_one_field_and_the_build_publishes_everything(
    server: HTTPServer, tmp_path: Path
) -> None:
    server.expect_request("/bad.xml").respond_with_data(bad_rss(), content_type="application/rss+xml")
    server.expect_request("/bad.json").respond_with_data(bad_json_feed(), content_type="application/feed+json")
    server.expect_request("/good.xml").respond_with_data(
        rss(post(7, host="good.example"), post(8, host="good.example")), content_type="application/rss+xml"
    )
    config = write_config(
        tmp_path,
        [
            {"name": "Bad", "feed": server.url_for("/bad.xml")},
            {"name": "Json", "feed": server.url_for("/bad.json")},
            {"name": "Good", "feed": server.url_for("/good.xml")},
        ],
        items_per_feed=10,
        new_feed_items="all",  # every entry of each first fetch published: each is a case
    )
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "3 requested (3 changed, 0 unchanged, 0 failed)" in result.stdout
    public = tmp_path / "public"
    assert atom_problems((public / "feed.xml").read_bytes()) == []
    for name in PUBLISHED:
        assert "[oops" not in (public / name).read_text(encoding="utf-8"), name
    items = {item["title"]: item for item in json.loads((public / "feed.json").read_text())["items"]}
    assert set(items) == {f"Post {n}" for n in range(1, 10)}
    assert items["Post 1"]["url"] == "https://bad.example/posts/1"  # the guid is no URL, the link is
    assert "url" not in items["Post 2"]  # the unusable link is dropped, the entry kept
    assert 'href="https://bad.example/posts/more"' in items["Post 3"]["content_html"]  # next base: the entry link
    assert items["Post 5"]["content_html"] == "<p>Picture<img></p>"  # the src is dropped, the text kept
    assert items["Post 9"]["url"] == "https://json.example/posts/9"
    assert items["Post 9"]["content_html"] == "<p>Nine<img></p>"


PAGE = """<!doctype html><html><head><base href="http://[oops/">
<link rel="alternate" type="application/rss+xml" href="http://[oops/feed.xml">
<link rel="alternate" type="application/atom+xml" href="/atom.xml">
</head><body>hi</body></html>"""


def test_discover_skips_an_unusable_base_and_alternate(server: HTTPServer) -> None:
    server.expect_request("/").respond_with_data(PAGE, content_type="text/html")
    result = CliRunner().invoke(main, ["discover", server.url_for("/")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [server.url_for("/atom.xml")]  # resolved against the page's own URL


def test_a_page_with_unusable_urls_served_as_a_feed_follows_the_usable_one(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/page").respond_with_data(PAGE, content_type="text/html")
    server.expect_request("/atom.xml").respond_with_data(rss(post(8, host="atom.example")))
    server.expect_request("/good.xml").respond_with_data(rss(post(7, host="good.example")))
    config = write_config(
        tmp_path,
        [{"name": "Page", "feed": server.url_for("/page")}, {"name": "Good", "feed": server.url_for("/good.xml")}],
    )
    result = build(config)
    assert result.exit_code == 0, result.output
    assert f"followed the feed it advertises, {server.url_for('/atom.xml')}:" in result.stderr
    assert "[oops" not in result.stderr
    index = (tmp_path / "public" / "index.html").read_text()
    assert "good.example/posts/7" in index and "atom.example/posts/8" in index
