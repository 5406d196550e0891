"""Authors: names only in every output, and the feed's author for entries without one.

Rules: the entry's own author, then its atom:source's, then the feed's
(RFC 4287 section 4.2.1; RSS managingEditor, channel dc:creator and
itunes:author; JSON Feed top-level authors); with none, the site's name is
shown on the pages but never claimed as the post's author in feed.xml or
feed.json.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.parse.authors import author_name
from syndicator.parse.feed import parse_feed

from .conftest import ATOM, NOW, build, post, rss, write_config
from .outputs import atom_problems

URL = "https://feeds.example.org/feed.xml"
ITUNES = 'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"'


def parse(document: str, content_type: str = "application/xml"):
    return parse_feed(document.encode("utf-8"), URL, {"content-type": content_type}, NOW)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("desk@news.example.net (Robin Roe)", "Robin Roe"),
        ("Robin Roe (mailto:robin@news.example.net)", "Robin Roe"),
        ("Robin Roe <robin@news.example.net>", "Robin Roe"),
        ("Robin Roe <mailto:robin@news.example.net>", "Robin Roe"),
        ("desk@.news.example.net (Robin)", "Robin"),
        ("desk@localhost (Robin)", "Robin"),
        ('"Robin Roe" <robin@news.example.net>', "Robin Roe"),
        ("desk@.news.example.net", None),
        ("robin@news", None),
        ("mailto:robin@news.example.net", None),
        ("Robin (@robin)", "Robin (@robin)"),
        ("robin@news.example.net\n (Robin Roe (@robin))", "Robin Roe (@robin)"),
        ("(Robin) and (Kim)", "(Robin) and (Kim)"),
        ("Robin Roe, Kim Lee", "Robin Roe, Kim Lee"),
        ("robin D0T roe AT@ mail.example", None),
        ("robin AT news DOT example (Robin Roe)", "Robin Roe"),
        ("robin [at] news.example", None),
        ("Robin at News.example and Kim", "Robin at News.example and Kim"),
        ("AT&T Newsroom", "AT&T Newsroom"),
    ],
    ids=[
        "address-then-name",
        "mailto-in-brackets",
        "angle-brackets",
        "angle-mailto",
        "malformed-address",
        "no-dot-domain",
        "quoted-name",
        "malformed-only",
        "bare-host-only",
        "mailto-only",
        "handle-kept",
        "nested-brackets",
        "two-bracketed",
        "two-names",
        "disguised-address",
        "disguised-then-name",
        "bracketed-at",
        "lowercase-at-is-a-word",
        "at-and-t",
    ],
)
def test_an_author_is_a_name_never_an_address(written: str, expected: str | None) -> None:
    assert author_name(written) == expected


@pytest.mark.parametrize(
    ("element", "expected"),
    [
        ("<author>desk@news.example.net (Robin Roe)</author>", "Robin Roe"),
        ("<author>Robin Roe (mailto:robin@news.example.net)</author>", "Robin Roe"),
        ("<author>desk@.news.example.net (Robin)</author>", "Robin"),
        ("<author>desk@.news.example.net</author>", None),
    ],
    ids=["address-then-name", "mailto-in-brackets", "malformed-address", "malformed-only"],
)
def test_rss_author_forms(element: str, expected: str | None) -> None:
    document = rss({"link": "https://blog.example.org/1", "title": "t"}).replace("<item>", "<item>" + element, 1)
    assert parse(document).entries[0].author == expected


@pytest.mark.parametrize(
    "channel",
    [
        "<managingEditor>desk@news.example.net (Kim Lee)</managingEditor>",
        "<dc:creator>Kim Lee</dc:creator>",
        "<itunes:author>Kim Lee</itunes:author>",
    ],
    ids=["managingEditor", "dc-creator", "itunes-author"],
)
def test_rss_items_without_an_author_take_the_channels(channel: str) -> None:
    document = rss(
        {"link": "https://blog.example.org/1", "title": "one"},
        {"link": "https://blog.example.org/2", "title": "two", "dc:creator": "Robin Roe"},
        extra=channel,
    ).replace("<rss ", f"<rss {ITUNES} ")
    assert [e.author for e in parse(document).entries] == ["Kim Lee", "Robin Roe"]


def atom(feed_author: str, *entries: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        "<title>A</title><id>urn:a</id><updated>2026-11-01T00:00:00Z</updated>"
        f'<link href="https://blog.example.org/"/>{feed_author}{"".join(entries)}</feed>'
    )


def atom_entry(n: int, extra: str = "") -> str:
    return (
        f"<entry><id>urn:a:{n}</id><title>Post {n}</title><updated>2026-11-0{n}T00:00:00Z</updated>"
        f'<link href="https://blog.example.org/{n}"/>{extra}</entry>'
    )


def test_atom_feed_author_applies_to_entries_without_one() -> None:
    feed_author = "<author><name>Kim Lee</name><email>kim@news.example.net</email></author>"
    document = atom(
        feed_author,
        atom_entry(1),
        atom_entry(2, "<author><name>Robin Roe</name></author>"),
        atom_entry(3, "<source><id>urn:s</id><title>S</title><author><name>Sam Poe</name></author></source>"),
    )
    assert [e.author for e in parse(document).entries] == ["Kim Lee", "Robin Roe", "Sam Poe"]
    assert parse(atom("", atom_entry(1))).entries[0].author is None


@pytest.mark.parametrize(
    ("top", "expected"),
    [
        ('"authors": [{"name": "Kim Lee"}, {"name": "kim@news.example.net"}]', "Kim Lee"),
        ('"author": {"name": "Kim Lee <kim@news.example.net>"}', "Kim Lee"),
    ],
    ids=["1.1-authors", "1.0-author"],
)
def test_json_feed_items_without_authors_take_the_feeds(top: str, expected: str) -> None:
    items = (
        '{"id": "1", "url": "https://blog.example.org/1", "content_text": "x"},'
        '{"id": "2", "url": "https://blog.example.org/2", "content_text": "y", "authors": [{"name": "Robin"}]}'
    )
    document = f'{{"version": "https://jsonfeed.org/version/1.1", "title": "J", {top}, "items": [{items}]}}'
    assert [e.author for e in parse(document, "application/feed+json").entries] == [expected, "Robin"]


def test_without_any_author_the_site_is_shown_but_never_claimed_as_author(server: HTTPServer, tmp_path: Path) -> None:
    named = post(2, day=2) | {"author": "robin@news.example.net (Robin Roe)"}
    server.expect_request("/feed.xml").respond_with_data(rss(named, post(1)), content_type="application/rss+xml")
    config = write_config(tmp_path, [{"name": "Roe's Blog", "feed": server.url_for("/feed.xml")}])
    assert build(config).exit_code == 0
    public = tmp_path / "public"
    feed_xml = (public / "feed.xml").read_bytes()
    assert atom_problems(feed_xml) == []  # valid Atom: the feed's own author covers the entry without one
    entries = ET.fromstring(feed_xml).findall(f"{ATOM}entry")
    assert [e.findtext(f"{ATOM}author/{ATOM}name") for e in entries] == ["Robin Roe", None]
    assert [e.findtext(f"{ATOM}source/{ATOM}title") for e in entries] == ["Roe's Blog"] * 2
    items = json.loads((public / "feed.json").read_text())["items"]
    assert [item.get("authors") for item in items] == [[{"name": "Robin Roe"}], None]
    assert [item["_source"]["title"] for item in items] == ["Roe's Blog"] * 2
    index = (public / "index.html").read_text()
    assert index.count("Roe&#39;s Blog") >= 2 and "@news.example.net" not in index


def test_the_first_author_element_of_an_item_wins() -> None:
    """A podcast item names its writer in dc:creator and the show in itunes:author."""
    document = rss(
        {"link": "https://blog.example.org/1", "title": "t", "dc:creator": "Robin Roe", "itunes:author": "The Show"}
    ).replace("<rss ", f"<rss {ITUNES} ")
    assert parse(document).entries[0].author == "Robin Roe"
