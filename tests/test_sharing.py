"""Pages that share well: canonical links, OpenGraph and Twitter card meta, rel=alternate for every feed
a page has, sitemap.xml and robots.txt (the ``robots`` setting). Through the real CLI, feeds on 127.0.0.1.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.site.sitemap import MAX_URLS, sitemap_files

from .conftest import build, post, rss, write_config

SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def planet(tmp_path: Path, server: HTTPServer, **settings: object) -> Path:
    server.expect_request("/feed.xml").respond_with_data(rss(*(post(n, day=n) for n in range(1, 5))))
    sites = [{"name": "Notes", "feed": server.url_for("/feed.xml")}]
    settings = {"title": 'Planet "Q" <&>', "description": "Posts & more", "page_entries": 2, **settings}
    config = write_config(tmp_path, sites, host_gap=0, **settings)
    result = build(config)
    assert result.exit_code == 0, result.output
    return tmp_path / "public"


def head(page: Path) -> str:
    return page.read_text(encoding="utf-8").split("</head>")[0]


def meta(text: str, key: str) -> list[str]:
    return re.findall(rf'<meta (?:property|name)="{re.escape(key)}" content="([^"]*)">', text)


def test_every_page_names_its_canonical_address_and_its_title_for_sharing(tmp_path: Path, server: HTTPServer) -> None:
    public = planet(tmp_path, server)
    front, sites, older = head(public / "index.html"), head(public / "sites.html"), head(public / "page2.html")
    assert '<link rel="canonical" href="https://planet.example.org/">' in front
    assert '<link rel="canonical" href="https://planet.example.org/sites.html">' in sites
    assert '<link rel="canonical" href="https://planet.example.org/page2.html">' in older
    assert meta(front, "og:title") == ["Planet &#34;Q&#34; &lt;&amp;&gt;"]  # escaped, whole
    assert meta(sites, "og:title") == ["Sites · Planet &#34;Q&#34; &lt;&amp;&gt;"]
    assert meta(front, "og:url") == ["https://planet.example.org/"] and meta(front, "og:type") == ["website"]
    assert meta(front, "og:description") == meta(front, "twitter:description") == ["Posts &amp; more"]
    assert meta(front, "twitter:card") == ["summary"] and meta(front, "og:locale") == ["en"]
    site_page = head(public / "sites" / "notes" / "index.html")
    assert '<link rel="canonical" href="https://planet.example.org/sites/notes/">' in site_page
    assert (
        'rel="alternate" type="application/atom+xml"' in site_page and 'href="../../sites/notes/feed.xml"' in site_page
    )
    assert meta(front, "robots") == []


def test_an_entry_has_one_stable_anchor_and_a_link_to_it(tmp_path: Path, server: HTTPServer) -> None:
    public = planet(tmp_path, server)
    front = (public / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'class="permalink" href="archive/2026-11.html#(e-[0-9a-f]{12})"', front)
    assert len(links) == 2 and len(set(links)) == 2
    month = (public / "archive" / "2026-11.html").read_text(encoding="utf-8")
    assert all(month.count(f'id="{anchor}"') == 1 for anchor in links)
    (tmp_path / "again").mkdir()
    again = (planet(tmp_path / "again", server) / "index.html").read_text("utf-8")
    assert re.findall(r'class="permalink" href="archive/2026-11.html#(e-[0-9a-f]{12})"', again) == links


def test_the_sitemap_lists_every_page_once_and_robots_names_it(tmp_path: Path, server: HTTPServer) -> None:
    public = planet(tmp_path, server)
    root = ET.parse(public / "sitemap.xml").getroot()
    assert root.tag == f"{SITEMAP}urlset"
    urls = [url.findtext(f"{SITEMAP}loc") for url in root.findall(f"{SITEMAP}url")]
    pages = sorted(str(p.relative_to(public)) for p in public.rglob("*.html"))
    assert len(urls) == len(set(urls)) == len(pages)
    assert "https://planet.example.org/" in urls and "https://planet.example.org/sites/notes/" in urls
    assert all(url.startswith("https://planet.example.org/") for url in urls)
    assert root.find(f"{SITEMAP}url/{SITEMAP}lastmod") is None
    robots = (public / "robots.txt").read_text(encoding="utf-8")
    assert robots == "User-agent: *\nAllow: /\n\nSitemap: https://planet.example.org/sitemap.xml\n"


@pytest.mark.parametrize(("robots", "text"), [("noindex", "User-agent: *\nDisallow: /\n"), ("none", None)])
def test_robots_noindex_and_none(tmp_path: Path, server: HTTPServer, robots: str, text: str | None) -> None:
    public = planet(tmp_path, server, robots=robots)
    if text is None:
        assert not (public / "robots.txt").exists()
    else:
        assert (public / "robots.txt").read_text(encoding="utf-8") == text
        assert meta(head(public / "index.html"), "robots") == ["noindex"]


def test_a_bad_robots_value_is_one_line(tmp_path: Path) -> None:
    result = build(write_config(tmp_path, [{"name": "A", "feed": "a.xml"}], robots="maybe"))
    assert result.exit_code != 0 and "robots" in result.output


def test_old_feeds_are_named_as_alternates(tmp_path: Path, server: HTTPServer) -> None:
    front = head(planet(tmp_path, server, old_feeds=["rss20.xml", "foafroll.xml"]) / "index.html")
    title = "Planet &#34;Q&#34; &lt;&amp;&gt; (RSS 2.0)"
    assert f'<link rel="alternate" type="application/rss+xml" title="{title}" href="rss20.xml">' in front
    assert "foafroll.xml" not in front


def test_a_very_big_site_gets_a_sitemap_index() -> None:
    files = sitemap_files("https://p.example/", [f"archive/{n}.html" for n in range(MAX_URLS + 1)])
    assert sorted(files) == ["sitemap-1.xml", "sitemap-2.xml", "sitemap.xml"]
    index = ET.fromstring(files["sitemap.xml"])
    assert [loc.text for loc in index.iter(f"{SITEMAP}loc")] == [
        "https://p.example/sitemap-1.xml",
        "https://p.example/sitemap-2.xml",
    ]
