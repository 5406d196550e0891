"""Entry identity, in-document duplicate ids, aliases in the store, edits, and cross-site duplicates."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.configtypes import Site
from syndicator.model import SourceState
from syndicator.parse.feed import parse_feed
from syndicator.poll.path import save
from syndicator.site.selection import select_entries
from syndicator.state.store import Store
from syndicator.urls import canonical as canonical_url

from .conftest import NOW, NOW_ISO, rss
from .outputs import run_build

FEED = "https://blog.example.org/feed.xml"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTPS://Blog.Example.ORG:443/Post?id=1#comments", "https://blog.example.org/Post?id=1"),
        ("http://blog.example.org:80", "http://blog.example.org/"),
        ("http://blog.example.org:8080/a", "http://blog.example.org:8080/a"),
        ("https://b.example/p?utm_source=rss&utm_medium=feed&id=2&fbclid=x&b=1", "https://b.example/p?id=2&b=1"),
    ],
)
def test_canonical_url(url: str, expected: str) -> None:
    assert canonical_url(url) == expected


def item(n: int, **fields: str) -> dict[str, str]:
    base = {
        "title": f"Post {n}",
        "link": f"https://blog.example.org/{n}",
        "pubDate": f"Tue, {n + 1:02d} Sep 2026 10:00:00 GMT",
        "description": f"Text {n}",
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v}


def ids(document: str, now=NOW) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.id for e in parse_feed(document.encode(), FEED, {}, now).entries]


def test_identity_is_guid_then_link_then_fingerprint_never_fetch_time() -> None:
    document = rss(item(1, guid="tag:blog,2026:1"), item(2), item(3, link=""))
    first, second, third = ids(document)
    assert (first, second) == ("tag:blog,2026:1", "https://blog.example.org/2")
    assert third.startswith("urn:sha256:")
    assert ids(document, NOW + timedelta(days=9)) == [first, second, third]


def test_every_item_sharing_one_guid_stays_distinct() -> None:
    document = rss(*(item(n, guid="same") for n in range(4)))
    assert ids(document) == [f"https://blog.example.org/{n}" for n in range(4)]


def test_a_few_items_sharing_a_guid_fall_back_to_link_then_fingerprint() -> None:
    document = rss(
        item(1, guid="g1"),
        item(2, guid="shared"),
        item(3, guid="shared", link="https://blog.example.org/2"),
        item(4, guid="g4"),
    )
    result = ids(document)
    assert result[0] == "g1" and result[3] == "g4"
    assert result[1].startswith("urn:sha256:") and result[2].startswith("urn:sha256:") and result[1] != result[2]


def test_an_item_repeated_word_for_word_is_one_entry_keeping_its_guid() -> None:
    document = rss(item(1, guid="g1"), item(2, guid="g2"), item(1, guid="g1"))
    assert ids(document) == ["g1", "g2"]


def test_items_differing_only_in_enclosure_are_distinct() -> None:
    one = item(1, link="") | {"enclosure url='https://cdn.example/a.mp3' type='audio/mpeg' length='1'": ""}
    two = item(1, link="") | {"enclosure url='https://cdn.example/b.mp3' type='audio/mpeg' length='1'": ""}
    assert len(set(ids(rss(one, two)))) == 2


def save_document(store: Store, document: str, now) -> None:  # type: ignore[no-untyped-def]
    save(store, SourceState(FEED, FEED), parse_feed(document.encode(), FEED, {}, now).entries, now)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ([item(1), item(2)], [item(1, guid="tag:blog,2026:1"), item(2, guid="tag:blog,2026:2")]),
        (
            [item(1, guid="http://blog.example.org/?p=1"), item(2, guid="http://blog.example.org/?p=2")],
            [item(1, guid="https://blog.example.org/?p=1"), item(2, guid="https://blog.example.org/?p=2")],
        ),
        (
            [item(1, guid="http://old.example/1"), item(2, guid="http://old.example/2")],
            [
                item(1, guid="https://new.example/1", link="https://new.example/1"),
                item(2, guid="https://new.example/2", link="https://new.example/2"),
            ],
        ),
        ([item(1, link=""), item(2, link="")], [item(1, link="", title="Post 1 (fixed typo)"), item(2, link="")]),
    ],
    ids=["guid-appears", "guid-http-to-https", "feed-moves-host", "title-edited-no-link"],
)
def test_identifier_style_change_keeps_one_identity(tmp_path: Path, before: list, after: list) -> None:
    earlier = NOW - timedelta(days=2)
    with Store.open(tmp_path) as store:
        save_document(store, rss(*before), earlier)
        old_ids = [s.entry.id for s in store.snapshots([FEED])[FEED]]
        save_document(store, rss(*after), NOW)
        stored = store.snapshots([FEED])[FEED]
        aliases = store.aliases(FEED)
    assert [s.entry.id for s in stored] == old_ids
    assert [s.first_seen for s in stored] == [earlier, earlier]
    assert set(old_ids) <= set(aliases.values())


def test_an_edited_post_is_updated_in_place_and_keeps_first_seen(tmp_path: Path) -> None:
    earlier = NOW - timedelta(days=2)
    with Store.open(tmp_path) as store:
        save_document(store, rss(item(1), item(2)), earlier)
        save_document(store, rss(item(1), item(2)), earlier + timedelta(hours=1))
        assert [s.changed for s in store.snapshots([FEED])[FEED]] == [None, None]
        save_document(store, rss(item(1, description="Text 1, corrected"), item(2)), NOW)
        stored = store.snapshots([FEED])[FEED]
    assert [s.entry.summary for s in stored] == ["Text 1, corrected", "Text 2"]
    assert [s.first_seen for s in stored] == [earlier, earlier]
    assert [s.changed for s in stored] == [NOW, None]


def test_two_new_posts_never_claim_one_old_identity(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        save_document(store, rss(item(1)), NOW - timedelta(days=1))
        save_document(
            store, rss(item(1, guid="tag:a"), item(5, guid="tag:b", link="https://blog.example.org/1?x")), NOW
        )
        stored = store.snapshots([FEED])[FEED]
    assert len({s.entry.id for s in stored}) == 2


def test_guid_appearing_does_not_show_posts_twice_in_the_build(server: HTTPServer, tmp_path: Path) -> None:
    feed = server.url_for("/feed.xml")
    server.expect_request("/feed.xml").respond_with_data(rss(item(1), item(2)), content_type="application/rss+xml")
    sites = [{"name": "Blog", "feed": feed, "link": "https://blog.example.org/"}]
    run_build(tmp_path, sites, "2026-11-29T12:00:00Z")
    first_atom = (tmp_path / "public" / "feed.xml").read_text()
    server.clear()
    server.expect_request("/feed.xml").respond_with_data(
        rss(item(1, guid="tag:blog,2026:1"), item(2, guid="tag:blog,2026:2")), content_type="application/rss+xml"
    )
    output = run_build(tmp_path, sites, NOW_ISO)
    index = (output / "index.html").read_text()
    assert index.count(">Post 1<") == 1 and index.count(">Post 2<") == 1
    atom = (output / "feed.xml").read_text()
    assert "<id>https://blog.example.org/1</id>" in first_atom and "<id>https://blog.example.org/1</id>" in atom
    assert "tag:blog" not in atom


def test_same_post_in_two_sites_feeds_shows_once_credited_to_its_own_site(tmp_path: Path) -> None:
    own = Site("Alice", "https://alice.example/feed", "https://www.alice.example/")
    planet = Site("Planet", "https://planet.example/feed", "https://planet.example/")
    other = Site("Bob", "https://bob.example/feed", "https://bob.example/")
    post = item(1, link="https://alice.example/1?utm_source=planet")
    snapshots = {}
    with Store.open(tmp_path) as store:
        for site, document in (
            (planet, rss(post)),
            (own, rss(item(1, link="http://alice.example/1"))),
            (other, rss(item(7, link="https://bob.example/7"))),
        ):
            entries = parse_feed(document.encode(), site.feed, {}, NOW).entries
            save(store, SourceState(site.feed, site.feed), entries, NOW)
        snapshots = store.snapshots([s.feed for s in (planet, own, other)])
    merged = select_entries([planet, own, other], snapshots, 5)
    assert [(s.site.name, s.entry.title) for s in merged] == [("Bob", "Post 7"), ("Alice", "Post 1")]
    nobody_owns = select_entries([planet, Site("Carol", own.feed, "https://carol.example/"), other], snapshots, 5)
    assert [(s.site.name, s.entry.title) for s in nobody_owns] == [("Bob", "Post 7"), ("Planet", "Post 1")]


def test_non_uri_ids_are_not_matched_across_sites() -> None:
    one, two = Site("A", "https://a.example/f"), Site("B", "https://b.example/f")
    from syndicator.feedtypes import StoredEntry

    def snapshot(site: Site, title: str) -> list[StoredEntry]:
        document = rss(item(1, guid="1001", link="", title=title), link=site.feed)
        return [StoredEntry(site.feed, e, NOW) for e in parse_feed(document.encode(), site.feed, {}, NOW).entries]

    merged = select_entries([one, two], {one.feed: snapshot(one, "A's"), two.feed: snapshot(two, "B's")}, 5)
    assert sorted(s.entry.title for s in merged) == ["A's", "B's"]


def test_a_version_1_state_database_is_migrated(tmp_path: Path) -> None:
    import sqlite3

    from syndicator.state.schema import MIGRATIONS

    db = sqlite3.connect(tmp_path / "state.sqlite")
    db.executescript(MIGRATIONS[1])
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    db.execute(
        "INSERT INTO seen (source, id, first_seen) VALUES (?, ?, ?)",
        (FEED, "https://blog.example.org/1", (NOW - timedelta(days=5)).isoformat()),
    )
    db.commit()
    db.close()
    with Store.open(tmp_path) as store:
        save_document(store, rss(item(1, guid="tag:blog,2026:1")), NOW)
        stored = store.snapshots([FEED])[FEED]
        assert store.aliases(FEED)["id:tag:blog,2026:1"] == "https://blog.example.org/1"
    assert [(s.entry.id, s.first_seen) for s in stored] == [("https://blog.example.org/1", NOW - timedelta(days=5))]
