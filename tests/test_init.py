"""Moving in: ``syndicator init`` writes sites.yaml from an old planet's config (Planet Venus, Planet 2.0,
pluto, rawdog, OPML), and a site without a ``link`` shows its feed's own home page, through the real CLI.

The configs are small fixtures written here; the feeds are served by the loopback test server. The
corpus tests read shared/corpus/opml (``SYNDICATOR_CORPUS``, else ``../shared/corpus`` beside the
repository) and skip when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_httpserver import HTTPServer

from .conftest import build, post, rss, write_config


def _atom(link: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>C</title>'
        f'<id>urn:c</id><updated>2026-11-01T10:00:00Z</updated><link rel="alternate" href="{link}"/>'
        "<entry><title>C post</title><id>urn:c:1</id><link href='https://c.example.org/1'/>"
        "<updated>2026-11-01T10:00:00Z</updated></entry></feed>"
    )


def _json_feed(home: str) -> str:
    item = {"id": "b1", "url": "https://b.example.org/1", "title": "B post", "date_published": "2026-11-02T10:00:00Z"}
    return json.dumps(
        {"version": "https://jsonfeed.org/version/1.1", "title": "B", "home_page_url": home, "items": [item]}
    )


def test_a_site_without_link_shows_its_feeds_home_page_on_every_page(tmp_path: Path, server: HTTPServer) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1), link="https://a.example.org/"))
    server.expect_request("/b.json").respond_with_data(
        _json_feed("https://b.example.org/"), content_type="application/feed+json"
    )
    server.expect_request("/c.atom").respond_with_data(_atom("https://feed-says.example.org/"))
    server.expect_request("/d.xml").respond_with_data(rss(post(4, host="d.example.org"), link="javascript:alert(1)"))
    sites = [
        {"name": "Alpha", "feed": server.url_for("/a.xml")},
        {"name": "Beta", "feed": server.url_for("/b.json")},
        {"name": "Gamma", "feed": server.url_for("/c.atom"), "link": "https://own.example.org/"},
        {"name": "Delta", "feed": server.url_for("/d.xml")},
    ]
    config = write_config(tmp_path, sites)
    result = build(config)
    assert result.exit_code == 0, result.output
    public = tmp_path / "public"
    for page in ("index.html", "sites.html", "opml.xml", "feed.xml"):
        text = (public / page).read_text(encoding="utf-8")
        assert "https://a.example.org/" in text, page
        assert "https://b.example.org/" in text, page
        assert "https://own.example.org/" in text, page  # the link sites.yaml gives wins
        assert "https://feed-says.example.org/" not in text, page
        assert "javascript:" not in text, page  # only an http(s) home page is taken
    sites_page = (public / "sites.html").read_text(encoding="utf-8")
    assert '<a href="https://a.example.org/" rel="noopener noreferrer"><bdi>Alpha</bdi></a>' in sites_page
    assert "<bdi>Delta</bdi></td>" in sites_page  # no link: a name alone
    opml = (public / "opml.xml").read_text(encoding="utf-8")
    assert 'htmlUrl="https://b.example.org/"' in opml
