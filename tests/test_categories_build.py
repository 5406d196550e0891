"""Categories through the real CLI: five sites on a loopback server, one of each format (RSS 2.0, Atom,
JSON Feed, RSS 1.0 with dc:subject, a podcast), built with ``syndicator build``; each entry's categories
are shown on the front page and carried in feed.xml, feed.json and the old planet's feeds."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from pytest_httpserver import HTTPServer

from .conftest import ATOM, build, write_config
from .outputs import atom_problems, html_problems
from .xss_dom import parse_page, visible_text

RSS20 = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>R</title><link>https://rss.example.org/</link><description>d</description>
<item><title>An RSS post</title><link>https://rss.example.org/1</link><pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate>
<description>Text</description><category domain="https://rss.example.org/tags">Python</category>
<category>python</category><category>Web &amp; HTTP</category></item></channel></rss>"""

ATOM10 = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><id>tag:atom.example.org,2026:feed</id>
<link href="https://atom.example.org/"/><updated>2026-11-03T10:00:00Z</updated>
<entry><title>An Atom post</title><id>tag:atom.example.org,2026:1</id><link href="https://atom.example.org/1"/>
<updated>2026-11-03T10:00:00Z</updated><summary>Text</summary>
<category term="rust" label="Rust"/><category term="systems"/></entry></feed>"""

JSON11 = {
    "version": "https://jsonfeed.org/version/1.1",
    "title": "J",
    "home_page_url": "https://json.example.org/",
    "items": [
        {
            "id": "1",
            "url": "https://json.example.org/1",
            "title": "A JSON post",
            "content_text": "Text",
            "date_published": "2026-11-04T10:00:00Z",
            "tags": ["Go", "go", "a &lt;b&gt; c", "<img src=x onerror=alert(1)>"],
        }
    ],
}

RSS10 = """<?xml version="1.0" encoding="utf-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
 xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="https://rdf.example.org/"><title>D</title><link>https://rdf.example.org/</link>
<description>d</description></channel>
<item rdf:about="https://rdf.example.org/1"><title>An RSS 1.0 post</title><link>https://rdf.example.org/1</link>
<dc:date>2026-11-05T10:00:00Z</dc:date><description>Text</description>
<dc:subject>Linux</dc:subject><dc:subject>Kernel</dc:subject></item></rdf:RDF>"""

PODCAST = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>P</title>
<link>https://pod.example.org/</link><description>d</description>
<itunes:category text="Technology"><itunes:category text="Podcasting"/></itunes:category>
<item><title>An episode</title><guid isPermaLink="false">urn:ep:1</guid><pubDate>Fri, 06 Nov 2026 10:00:00 GMT</pubDate>
<description>Notes</description><enclosure url="https://pod.example.org/1.mp3" length="10" type="audio/mpeg"/>
<itunes:keywords>keyword, not, shown</itunes:keywords></item></channel></rss>"""

EXPECTED = {
    "An RSS post": ["Python", "Web & HTTP"],
    "An Atom post": ["Rust", "systems"],
    "A JSON post": ["Go", "a <b> c"],
    "An RSS 1.0 post": ["Linux", "Kernel"],
    "An episode": ["Technology", "Podcasting"],
}


def _serve(server: HTTPServer) -> list[dict[str, str]]:
    documents = {
        "/rss.xml": (RSS20, "application/rss+xml"),
        "/atom.xml": (ATOM10, "application/atom+xml"),
        "/feed.json": (json.dumps(JSON11), "application/feed+json"),
        "/rdf.xml": (RSS10, "application/rdf+xml"),
        "/pod.xml": (PODCAST, "application/rss+xml"),
    }
    for path, (body, content_type) in documents.items():
        server.expect_request(path).respond_with_data(body, content_type=content_type)
    return [{"name": path.strip("/"), "feed": server.url_for(path)} for path in documents]


def _page_categories(index: str) -> dict[str, list[str]]:
    shown = {}
    for article in parse_page(index).iter("article"):
        title = visible_text(next(article.iter("h2")))
        lists = [ul for ul in article.iter("ul") if ul.get("class") == "categories"]
        assert len(lists) <= 1
        shown[title] = [visible_text(li) for ul in lists for li in ul.iter("li")]
        if lists:
            assert lists[0].get("aria-label") == "Categories"
    return shown


def _atom_categories(document: bytes) -> dict[str, list[str]]:
    root = ET.fromstring(document)
    return {
        entry.findtext(f"{ATOM}title") or "": [c.get("term", "") for c in entry.findall(f"{ATOM}category")]
        for entry in root.findall(f"{ATOM}entry")
    }


def test_categories_of_every_format_are_shown_and_carried_in_every_feed(server: HTTPServer, tmp_path: Path) -> None:
    config = write_config(tmp_path, _serve(server), old_feeds=["rss20.xml", "rss10.xml", "atom.xml"])
    result = build(config)
    assert result.exit_code == 0, result.output
    public = tmp_path / "public"

    index = (public / "index.html").read_text()
    assert html_problems(index) == []
    assert "onerror" not in index and "<b>" not in index
    assert _page_categories(index) == EXPECTED

    feed_xml = (public / "feed.xml").read_bytes()
    assert atom_problems(feed_xml) == []
    assert _atom_categories(feed_xml) == EXPECTED
    assert _atom_categories((public / "atom.xml").read_bytes()) == EXPECTED

    items = json.loads((public / "feed.json").read_text())["items"]
    assert {item["title"]: item.get("tags", []) for item in items} == EXPECTED

    rss20 = ET.parse(public / "rss20.xml").getroot()
    assert {
        (item.findtext("title") or "").split(": ", 1)[1]: [c.text for c in item.findall("category")]
        for item in rss20.iter("item")
    } == EXPECTED
    rss10 = ET.parse(public / "rss10.xml").getroot()
    subject, title = "{http://purl.org/dc/elements/1.1/}subject", "{http://purl.org/rss/1.0/}title"
    assert {
        (item.findtext(title) or "").split(": ", 1)[1]: [c.text for c in item.findall(subject)]
        for item in rss10.iter("{http://purl.org/rss/1.0/}item")
    } == EXPECTED


def test_an_entry_without_categories_shows_no_list(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/plain.xml").respond_with_data(
        RSS20.replace('<category domain="https://rss.example.org/tags">Python</category>', "")
        .replace("<category>python</category>", "")
        .replace("<category>Web &amp; HTTP</category>", ""),
        content_type="application/rss+xml",
    )
    result = build(write_config(tmp_path, [{"name": "Plain", "feed": server.url_for("/plain.xml")}]))
    assert result.exit_code == 0, result.output
    public = tmp_path / "public"
    index = (public / "index.html").read_text()
    assert _page_categories(index) == {"An RSS post": []}
    assert 'class="categories"' not in index
    assert _atom_categories((public / "feed.xml").read_bytes()) == {"An RSS post": []}
    assert "tags" not in json.loads((public / "feed.json").read_text())["items"][0]


def test_new_categories_alone_are_published_but_are_no_edit(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/rss.xml").respond_with_data(RSS20, content_type="application/rss+xml")
    config = write_config(tmp_path, [{"name": "R", "feed": server.url_for("/rss.xml")}])
    assert build(config, now="2026-11-30T12:00:00Z").exit_code == 0
    public = tmp_path / "public"
    first = ET.fromstring((public / "feed.xml").read_bytes()).find(f"{ATOM}entry")
    assert first is not None

    server.clear()
    retagged = RSS20.replace("<category>Web &amp; HTTP</category>", "<category>Packaging</category>")
    server.expect_request("/rss.xml").respond_with_data(retagged, content_type="application/rss+xml")
    result = build(config, "--force", now="2026-11-30T18:00:00Z")
    assert result.exit_code == 0, result.output
    assert len(server.log) == 1
    assert _page_categories((public / "index.html").read_text()) == {"An RSS post": ["Python", "Packaging"]}
    second = ET.fromstring((public / "feed.xml").read_bytes()).find(f"{ATOM}entry")
    assert second is not None
    assert [c.get("term") for c in second.findall(f"{ATOM}category")] == ["Python", "Packaging"]
    assert second.findtext(f"{ATOM}updated") == first.findtext(f"{ATOM}updated") == "2026-11-02T10:00:00Z"
