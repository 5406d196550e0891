"""Dates of entries: an undated item among dated ones, and dates of entries already seen.

An undated item in a feed whose other items are dated borrows the date of
the next dated item (or, with none after it, the oldest), never the build
time; a feed with no dated item keeps first-seen dates.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pytest_httpserver import HTTPServer

from syndicator.parse.feed import parse_feed

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
    document = rss(
        item("A", day(5)),
        item("more"),
        item("B", day(3)),
        item("C", day(1)),
        item("D", day(4)),
        item("archive"),
        item("E", day(2)) | {"pubDate": "sometime"},
    )
    entries = parse_feed(document.encode(), URL, {}, NOW).entries
    second = timedelta(seconds=1)
    assert [(e.title, e.date) for e in entries] == [
        ("A", day(5)),
        ("more", day(3) - second),
        ("B", day(3)),
        ("C", day(1)),
        ("D", day(4)),
        ("archive", day(1) - second),
        ("E", day(1) - second),
    ]
    assert entries[-1].date_note is not None and "sometime" in entries[-1].date_note


def test_a_feed_with_no_dated_item_keeps_first_seen() -> None:
    entries = parse_feed(rss(item("one"), item("two")).encode(), URL, {}, NOW).entries
    assert [e.date for e in entries] == [None, None]


def test_a_navigation_item_never_tops_the_planet(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/news.xml").respond_with_data(
        rss(item("More news"), item("Old story", day(2)), item("Older story", day(1)))
    )
    server.expect_request("/blog.xml").respond_with_data(rss(post(7, day=20)))
    config = write_config(
        tmp_path,
        [{"name": "News", "feed": server.url_for("/news.xml")}, {"name": "Blog", "feed": server.url_for("/blog.xml")}],
    )
    assert build(config).exit_code == 0
    entries = ET.parse(tmp_path / "public" / "feed.xml").getroot().findall(f"{ATOM}entry")
    assert [(e.findtext(f"{ATOM}title"), e.findtext(f"{ATOM}published")) for e in entries] == [
        ("Post 7", "2026-11-20T10:07:00Z"),
        ("Old story", "2026-11-02T10:00:00Z"),
        ("More news", "2026-11-02T09:59:59Z"),
        ("Older story", "2026-11-01T10:00:00Z"),
    ]


# --- entries already seen keep their first date when their only date moves forward -------------


def atom_feed(*entries: tuple[int, str, str]) -> str:
    """An Atom feed of entries (n, updated, published or "") with only the dates given."""
    body = "".join(
        f'<entry><id>urn:news:{n}</id><title>Story {n}</title><link href="https://news.example.org/{n}"/>'
        f"<updated>{updated}</updated>{f'<published>{published}</published>' if published else ''}"
        f"<summary>Story {n}</summary></entry>"
        for n, updated, published in entries
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        "<title>News</title><id>urn:news</id><updated>2026-11-02T09:00:00Z</updated>"
        f'<link href="https://news.example.org/"/>{body}</feed>'
    )


def published_and_updated(path: Path) -> dict[str, tuple[str | None, str | None]]:
    return {
        e.findtext(f"{ATOM}title") or "": (e.findtext(f"{ATOM}published"), e.findtext(f"{ATOM}updated"))
        for e in ET.parse(path).getroot().findall(f"{ATOM}entry")
    }


def test_a_regenerated_feed_does_not_float_entries_already_seen(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_oneshot_request("/news.xml").respond_with_data(
        atom_feed((1, "2026-11-01T09:00:00Z", ""), (2, "2026-11-02T09:00:00Z", ""))
    )
    regenerated = "2026-12-01T06:00:00Z"  # the site rewrote every <updated> to the time of the rewrite
    server.expect_oneshot_request("/news.xml").respond_with_data(
        atom_feed((3, "2026-12-01T05:00:00Z", ""), (1, regenerated, ""), (2, regenerated, ""))
    )
    server.expect_request("/blog.xml").respond_with_data(rss(post(7, day=2)))
    config = write_config(
        tmp_path,
        [{"name": "News", "feed": server.url_for("/news.xml")}, {"name": "Blog", "feed": server.url_for("/blog.xml")}],
    )
    assert build(config, now="2026-11-02T12:00:00Z").exit_code == 0
    assert build(config, "--force", now="2026-12-01T12:00:00Z").exit_code == 0
    dates = published_and_updated(tmp_path / "public" / "feed.xml")
    assert list(dates) == ["Story 3", "Post 7", "Story 2", "Story 1"]
    assert dates["Story 3"] == ("2026-12-01T05:00:00Z", "2026-12-01T05:00:00Z")  # new: dated by its own <updated>
    assert dates["Story 1"] == ("2026-11-01T09:00:00Z", regenerated)  # seen: its first date, updated now
    assert dates["Story 2"] == ("2026-11-02T09:00:00Z", regenerated)


def test_a_date_moved_back_or_a_publication_date_apart_from_updated_is_taken(tmp_path: Path) -> None:
    from syndicator.model import SourceState
    from syndicator.poll.path import save
    from syndicator.state.store import Store

    def save_document(store: Store, document: str, now: datetime) -> dict[str, datetime]:
        save(store, SourceState(URL, URL), parse_feed(document.encode(), URL, {}, now).entries, now)
        return {s.entry.title: s.entry.date for s in store.snapshots([URL])[URL]}  # type: ignore[misc]

    with Store.open(tmp_path) as store:
        save_document(
            store, atom_feed((1, "2026-11-05T00:00:00Z", ""), (2, "2026-11-05T00:00:00Z", "2026-11-04T00:00:00Z")), NOW
        )
        dates = save_document(
            store, atom_feed((1, "2026-11-03T00:00:00Z", ""), (2, "2026-11-20T00:00:00Z", "2026-11-19T00:00:00Z")), NOW
        )
        assert dates == {"Story 1": datetime(2026, 11, 3, tzinfo=UTC), "Story 2": datetime(2026, 11, 19, tzinfo=UTC)}
        dates = save_document(store, atom_feed((1, "2026-11-04T00:00:00Z", ""), (2, "2026-11-20T00:00:00Z", "")), NOW)
        assert dates == {"Story 1": datetime(2026, 11, 3, tzinfo=UTC), "Story 2": datetime(2026, 11, 4, tzinfo=UTC)}


def test_an_older_cache_learns_first_dates_from_its_snapshot(tmp_path: Path) -> None:
    import sqlite3

    from syndicator.model import SourceState
    from syndicator.poll.path import save
    from syndicator.state.schema import MIGRATIONS
    from syndicator.state.store import Store

    db = sqlite3.connect(tmp_path / "state.sqlite")
    for version in range(1, 5):
        db.executescript(MIGRATIONS[version])
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('schema_version', '4')")
    db.execute("INSERT INTO sources (url, fetch_url) VALUES (?, ?)", (URL, URL))
    db.execute(
        "INSERT INTO entries VALUES (?, 'urn:news:1', 0, ?)",
        (URL, '{"id": "urn:news:1", "title": "Story 1", "date": "2026-11-01T09:00:00+00:00"}'),
    )
    db.execute("INSERT INTO seen (source, id, first_seen) VALUES (?, 'urn:news:1', ?)", (URL, NOW.isoformat()))
    db.commit()
    db.close()
    with Store.open(tmp_path) as store:
        entries = parse_feed(atom_feed((1, "2026-11-29T00:00:00Z", "")).encode(), URL, {}, NOW).entries
        save(store, SourceState(URL, URL), entries, NOW)
        (stored,) = store.snapshots([URL])[URL]
    assert (stored.entry.date, stored.entry.updated) == (
        datetime(2026, 11, 1, 9, tzinfo=UTC),
        datetime(2026, 11, 29, tzinfo=UTC),
    )
