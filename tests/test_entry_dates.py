"""Dates of entries: an undated item among dated ones, and dates of entries already seen.

An undated item in a feed whose other items are dated borrows the date of
the next dated item (or, with none after it, the oldest), never the build
time; a feed with no dated item keeps first-seen dates.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from pytest_httpserver import HTTPServer

from syndicator.parse import parse_feed

from .conftest import ATOM, NOW, build, post, rss, write_config

URL = "https://feeds.example.org/feed.xml"


def day(n: int) -> datetime:
    return datetime(2026, 11, n, 10, 0, tzinfo=UTC)


def item(title: str, date: datetime | None = None) -> dict[str, str]:
    fields = {"title": title, "link": f"https://news.example.org/{title.replace(' ', '-')}"}
    if date is not None:
        fields["pubDate"] = date.strftime("%a, %d %b %Y %H:%M:%S +0000")
    return fields


def test_an_undated_item_takes_the_next_dated_items_date_or_the_oldest() -> None:
    document = rss(item("A", day(5)), item("more"), item("B", day(3)), item("C", day(1)), item("D", day(4)),
                   item("archive"), item("E", day(2)) | {"pubDate": "sometime"})
    entries = parse_feed(document.encode(), URL, {}, NOW).entries
    assert [(e.title, e.date) for e in entries] == [
        ("A", day(5)), ("more", day(3)), ("B", day(3)), ("C", day(1)), ("D", day(4)),
        ("archive", day(1)), ("E", day(1))]
    assert entries[-1].date_note is not None and "sometime" in entries[-1].date_note


def test_a_feed_with_no_dated_item_keeps_first_seen() -> None:
    entries = parse_feed(rss(item("one"), item("two")).encode(), URL, {}, NOW).entries
    assert [e.date for e in entries] == [None, None]


def test_a_navigation_item_never_tops_the_planet(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/news.xml").respond_with_data(rss(item("More news"), item("Old story", day(2)),
                                                             item("Older story", day(1))))
    server.expect_request("/blog.xml").respond_with_data(rss(post(7, day=20)))
    config = write_config(tmp_path, [{"name": "News", "feed": server.url_for("/news.xml")},
                                     {"name": "Blog", "feed": server.url_for("/blog.xml")}])
    assert build(config).exit_code == 0
    entries = ET.parse(tmp_path / "public" / "feed.xml").getroot().findall(f"{ATOM}entry")
    assert [(e.findtext(f"{ATOM}title"), e.findtext(f"{ATOM}published")) for e in entries] == [
        ("Post 7", "2026-11-20T10:07:00Z"), ("More news", "2026-11-02T10:00:00Z"),
        ("Old story", "2026-11-02T10:00:00Z"), ("Older story", "2026-11-01T10:00:00Z")]
