"""Enclosures: read from RSS, Atom, Media RSS and JSON Feed, stored, and published in every output."""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.feedtypes import Enclosure, Entry
from syndicator.model import SourceState
from syndicator.parse.feed import parse_feed
from syndicator.parse.media import duration_seconds, media_type, parse_length
from syndicator.poll.path import save
from syndicator.site.mediaview import clock, human_size
from syndicator.state.store import DATABASE, Store

from .conftest import ATOM, NOW, build, rss, write_config
from .outputs import atom_problems, html_problems
from .xss_dom import parse_page, visible_text

FEED = "https://pod.example.org/feed.xml"
NAMESPACES = (
    '<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" '
    'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">'
)


def podcast(*items: dict[str, str]) -> str:
    """An RSS 2.0 document with the Media RSS and iTunes namespaces."""
    return rss(*items, link="https://pod.example.org/").replace('<rss version="2.0"', NAMESPACES[:-1], 1)


def parse(document: str, content_type: str = "application/rss+xml") -> list[Entry]:
    return list(parse_feed(document.encode("utf-8"), FEED, {"content-type": content_type}, NOW).entries)


def episode(n: int, **extra: str) -> dict[str, str]:
    item = {
        "title": f"Episode {n}",
        "guid isPermaLink='false'": f"urn:ep:{n}",
        "pubDate": f"Mon, {n:02d} Nov 2026 10:00:00 GMT",
        "description": f"Show notes {n}",
    }
    item.update(extra)
    return item


# --- reading values ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1:02:03", 3723),
        ("62:03", 3723),
        ("3723", 3723),
        (" 00:45 ", 45),
        ("12:34.6", 755),
        ("0:00:00", None),
        ("", None),
        ("1 hour", None),
        ("-5", None),
        ("1:2:3:4", None),
        ("9" * 30, None),
        ("1:" * 50_000 + "1", None),
        ("169:00:00", None),
        (3723, 3723),
        (12.4, 12),
        (float("nan"), None),
        (float("inf"), None),
        (True, None),
        (None, None),
    ],
    ids=lambda v: repr(v)[:20],
)
def test_durations_are_read_in_seconds_bounded_and_never_raise(value: object, expected: int | None) -> None:
    assert duration_seconds(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("24986239", 24986239),
        (" 12 ", 12),
        ("0", None),
        ("-1", None),
        ("12.5", None),
        ("1,000", None),
        ("9" * 40, None),
        (1024, 1024),
        (1024.0, 1024),
        (1.5, None),
        (False, None),
        (None, None),
        ({}, None),
    ],
    ids=lambda v: repr(v)[:20],
)
def test_lengths_are_whole_bytes_or_unknown(value: object, expected: int | None) -> None:
    assert parse_length(value) == expected


@pytest.mark.parametrize(
    ("given", "url", "expected"),
    [
        ("Audio/MPEG; charset=binary", "https://x.example/a", "audio/mpeg"),
        ("", "https://x.example/ep.m4a?token=1", "audio/mp4"),
        ("mp3", "https://x.example/ep.MP3", "audio/mpeg"),
        (None, "https://x.example/download", ""),
        ("<script>", "https://x.example/file.pdf", "application/pdf"),
    ],
    ids=["parameters-dropped", "guessed", "not-a-type", "unknown", "markup"],
)
def test_media_types(given: str | None, url: str, expected: str) -> None:
    assert media_type(given, url) == expected


def test_sizes_and_durations_as_people_read_them() -> None:
    assert [human_size(n) for n in (1, 999, 1000, 1500, 24_986_239, 3 * 10**9)] == [
        "1 byte",
        "999 bytes",
        "1 kB",
        "1.5 kB",
        "25 MB",
        "3 GB",
    ]
    assert [clock(n) for n in (45, 754, 3723)] == ["0:45", "12:34", "1:02:03"]


# --- parsing ----------------------------------------------------------------------


def test_an_rss_enclosure_is_kept_with_type_length_and_itunes_duration() -> None:
    item = episode(1)
    item['enclosure url="ep1.mp3" length="24986239" type="audio/mpeg"'] = ""
    item["itunes:duration"] = "1:02:03"
    (entry,) = parse(podcast(item))
    assert entry.enclosures == (Enclosure("https://pod.example.org/ep1.mp3", "audio/mpeg", 24986239, 3723),)


def test_atom_enclosure_links_are_kept() -> None:
    document = (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:f</id>'
        '<updated>2026-11-01T00:00:00Z</updated><link href="https://pod.example.org/"/>'
        "<entry><id>urn:e</id><title>e</title><updated>2026-11-01T00:00:00Z</updated>"
        '<link rel="enclosure" href="/a.ogg" type="audio/ogg" length="0"/>'
        '<link rel="enclosure" href="https://pod.example.org/a.ogg" length="99"/>'
        '<link rel="enclosure" href="https://[oops/b.mp3" type="audio/mpeg"/>'
        '<link rel="enclosure" href="/c.opus"/></entry></feed>'
    )
    (entry,) = parse(document, "application/atom+xml")
    assert entry.enclosures == (
        Enclosure("https://pod.example.org/a.ogg", "audio/ogg", 99),  # one per URL
        Enclosure("https://pod.example.org/c.opus", "audio/ogg"),
    )  # no type: guessed


def test_media_content_of_audio_or_video_is_an_enclosure_and_an_image_is_not() -> None:
    item = episode(1)
    item['enclosure url="https://cdn.example.org/ep.mp3" type="audio/mpeg"'] = ""
    item['media:content url="https://cdn.example.org/ep.mp3" fileSize="1000" duration="61"'] = ""
    item['media:content url="https://cdn.example.org/clip" medium="video" type="video/mp4"'] = ""
    item['media:content url="https://cdn.example.org/pic.jpg" medium="image"'] = ""
    item['media:content url="https://cdn.example.org/doc.pdf" medium="document"'] = ""
    item['media:content url="https://cdn.example.org/v/1" medium="video" type="application/x-shockwave-flash"'] = ""
    item['media:content url="https://cdn.example.org/stream" medium="audio"'] = ""
    item['enclosure url="https://cdn.example.org/cover.png" type="image/png"'] = ""
    item["itunes:duration"] = "99"  # the first playable enclosure has its own duration already
    (entry,) = parse(podcast(item))
    assert entry.enclosures == (
        Enclosure("https://cdn.example.org/ep.mp3", "audio/mpeg", 1000, 61),
        Enclosure("https://cdn.example.org/clip", "video/mp4"),
        Enclosure("https://cdn.example.org/stream"),
    )  # audio, of a type not given


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "data:audio/mpeg;base64,AAAA", "file:///etc/passwd", "https://[oops/x.mp3", "   "]
)
def test_unusable_enclosure_urls_are_dropped(url: str) -> None:
    item = episode(1)
    item[f'enclosure url="{url}" type="audio/mpeg"'] = ""
    (entry,) = parse(podcast(item))
    assert entry.enclosures == ()


def test_json_feed_attachments_are_enclosures() -> None:
    document = json.dumps(
        {
            "version": "https://jsonfeed.org/version/1.1",
            "title": "t",
            "home_page_url": "https://pod.example.org/",
            "items": [
                {
                    "id": "1",
                    "content_text": "x",
                    "attachments": [
                        {"url": "/ep.mp3", "mime_type": "audio/mpeg", "size_in_bytes": 5, "duration_in_seconds": 61.4},
                        {"url": "/ep.mp3", "mime_type": "audio/mpeg"},
                        {"url": "javascript:alert(1)", "mime_type": "audio/mpeg"},
                        {"url": "/cover.jpg", "mime_type": "image/jpeg"},
                        "not an object",
                        {"url": 7},
                    ],
                },
                {"id": "2", "content_text": "y", "attachments": {"url": "/x.mp3"}},
            ],
        }
    )
    first, second = parse(document, "application/feed+json")
    assert first.enclosures == (Enclosure("https://pod.example.org/ep.mp3", "audio/mpeg", 5, 61),)
    assert second.enclosures == ()


def test_an_item_with_only_an_enclosure_is_kept() -> None:
    (entry,) = parse(podcast({'enclosure url="https://cdn.example.org/only.mp3" type="audio/mpeg"': ""}))
    assert entry.enclosures == (Enclosure("https://cdn.example.org/only.mp3", "audio/mpeg"),)


def test_enclosures_per_entry_are_capped() -> None:
    item = episode(1)
    for n in range(100):
        item[f'enclosure url="https://cdn.example.org/{n}.mp3" type="audio/mpeg"'] = ""
    (entry,) = parse(podcast(item))
    assert len(entry.enclosures) == 16


# --- storing ----------------------------------------------------------------------


def test_enclosures_are_stored_and_rows_stored_without_them_still_load(tmp_path: Path) -> None:
    with_media = Entry(
        id="urn:1",
        title="One",
        enclosures=(
            Enclosure("https://cdn.example.org/1.mp3", "audio/mpeg", 10, 61),
            Enclosure("https://cdn.example.org/x"),
        ),
    )
    without = Entry(id="urn:2", title="Two")
    with Store.open(tmp_path) as store:
        save(store, SourceState(FEED, FEED), [with_media, without], NOW)
    with sqlite3.connect(tmp_path / DATABASE) as db:  # as an earlier version wrote it: no "enclosures" key
        (data,) = db.execute("SELECT data FROM entries WHERE id = 'urn:2'").fetchone()
        old = json.loads(data)
        old.pop("enclosures")
        db.execute("UPDATE entries SET data = ? WHERE id = 'urn:2'", (json.dumps(old),))
    with Store.open(tmp_path) as store:
        stored = store.snapshots([FEED])[FEED]
    assert [s.entry for s in stored] == [with_media, without]


# --- publishing -------------------------------------------------------------------


def publish(server: HTTPServer, tmp_path: Path, document: str) -> Path:
    server.expect_request("/feed.xml").respond_with_data(document, content_type="application/rss+xml")
    result = build(write_config(tmp_path, [{"name": "Pod", "feed": server.url_for("/feed.xml")}]))
    assert result.exit_code == 0, result.output
    return tmp_path / "public"


def test_an_episode_is_playable_and_carried_in_every_output(server: HTTPServer, tmp_path: Path) -> None:
    audio, video, other = episode(3), episode(2), episode(1)
    audio['enclosure url="https://cdn.example.org/ep3.mp3" length="24986239" type="audio/mpeg"'] = ""
    audio["itunes:duration"] = "1:02:03"
    video['enclosure url="https://cdn.example.org/ep2.webm" type="video/webm"'] = ""
    other['enclosure url="https://cdn.example.org/notes.pdf" length="2048"'] = ""  # no type: guessed
    public = publish(server, tmp_path, podcast(audio, video, other))

    index = (public / "index.html").read_text()
    assert html_problems(index) == []
    assert "media-src https: http:" in index
    articles = list(parse_page(index).iter("article"))
    players = [
        [(m.tag, m.get("src"), m.get("preload"), m.get("controls")) for m in a.iter() if m.tag in ("audio", "video")]
        for a in articles
    ]
    assert players == [
        [("audio", "https://cdn.example.org/ep3.mp3", "none", "")],
        [("video", "https://cdn.example.org/ep2.webm", "none", "")],
        [],
    ]
    links = [
        [
            (x.get("href"), x.get("type"), visible_text(x))
            for x in a.iter("a")
            if x.get("href", "").startswith("https://cdn.")
        ]
        for a in articles
    ]
    assert links == [
        [("https://cdn.example.org/ep3.mp3", "audio/mpeg", "Audio (audio/mpeg, 25 MB, 1:02:03)")],
        [("https://cdn.example.org/ep2.webm", "video/webm", "Video (video/webm)")],
        [("https://cdn.example.org/notes.pdf", "application/pdf", "Download (application/pdf, 2 kB)")],
    ]

    feed_xml = (public / "feed.xml").read_bytes()
    assert atom_problems(feed_xml) == []
    enclosures = [
        [link.attrib for link in e.findall(f"{ATOM}link") if link.get("rel") == "enclosure"]
        for e in ET.fromstring(feed_xml).findall(f"{ATOM}entry")
    ]
    assert enclosures[0] == [
        {"rel": "enclosure", "href": "https://cdn.example.org/ep3.mp3", "type": "audio/mpeg", "length": "24986239"}
    ]
    assert enclosures[1] == [{"rel": "enclosure", "href": "https://cdn.example.org/ep2.webm", "type": "video/webm"}]

    items = json.loads((public / "feed.json").read_text())["items"]
    assert [item.get("attachments") for item in items] == [
        [
            {
                "url": "https://cdn.example.org/ep3.mp3",
                "mime_type": "audio/mpeg",
                "size_in_bytes": 24986239,
                "duration_in_seconds": 3723,
            }
        ],
        [{"url": "https://cdn.example.org/ep2.webm", "mime_type": "video/webm"}],
        [{"url": "https://cdn.example.org/notes.pdf", "mime_type": "application/pdf", "size_in_bytes": 2048}],
    ]


def test_an_episode_without_a_link_can_still_be_reached(server: HTTPServer, tmp_path: Path) -> None:
    item = {
        "title": "Linkless",
        "guid isPermaLink='false'": "urn:ep:x",
        "pubDate": "Mon, 02 Nov 2026 10:00:00 GMT",
        'enclosure url="https://cdn.example.org/x.mp3" type="audio/mpeg"': "",
    }
    public = publish(server, tmp_path, podcast(item))
    (article,) = parse_page((public / "index.html").read_text()).iter("article")
    # the site's name links to the feed's own home page, its date to its place in the archive; the episode
    # itself only to its file
    hrefs = [a.get("href") for a in article.iter("a")]
    assert hrefs[0] == "https://pod.example.org/" and hrefs[2:] == ["https://cdn.example.org/x.mp3"]
    assert hrefs[1].startswith("archive/2026-11.html#e-")
    (entry,) = ET.parse(public / "feed.xml").getroot().findall(f"{ATOM}entry")
    assert [link.get("rel") for link in entry.findall(f"{ATOM}link")] == ["enclosure"]


def test_one_player_per_entry_and_a_file_name_for_a_title(server: HTTPServer, tmp_path: Path) -> None:
    item = {
        "guid isPermaLink='false'": "urn:ep:y",
        "pubDate": "Mon, 02 Nov 2026 10:00:00 GMT",
        'enclosure url="https://cdn.example.org/show/episode-12.mp3" type="audio/mpeg"': "",
        'media:content url="https://cdn.example.org/show/episode-12.ogg" type="audio/ogg"': "",
        'media:content url="https://cdn.example.org/show/episode-12.webm" type="video/webm"': "",
    }
    public = publish(server, tmp_path, podcast(item))
    (article,) = parse_page((public / "index.html").read_text()).iter("article")
    assert [m.get("src") for m in article.iter() if m.tag in ("audio", "video")] == [
        "https://cdn.example.org/show/episode-12.mp3"
    ]  # the other formats are links, not a row of players
    assert len([a for a in article.iter("a") if a.get("href", "").startswith("https://cdn.")]) == 3
    assert visible_text(next(article.iter("h2"))) == "episode-12.mp3"


# --- images beside the text --------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({'media:content url="/full.jpg" medium="image"': "", 'media:thumbnail url="/thumb.jpg"': ""}, "full.jpg"),
        ({'media:content url="https://cdn.example.org/pic" type="image/webp"': ""}, "https://cdn.example.org/pic"),
        ({'media:content url="/guessed.png"': ""}, "guessed.png"),
        ({'enclosure url="/cover.jpg" type="image/jpeg"': ""}, "cover.jpg"),
        ({'itunes:image href="/art.jpg"': "", 'media:thumbnail url="/thumb.jpg"': ""}, "art.jpg"),
        ({'media:thumbnail url="/thumb.jpg"': ""}, "thumb.jpg"),
        (
            {
                'media:thumbnail url="/avatar.png" width="30" height="30"': "",
                'media:content url="/pixel.gif" medium="image" width="1"': "",
                'media:thumbnail url="/big.png" width="640" height="360"': "",
            },
            "big.png",
        ),
        (
            {
                'media:content url="javascript:alert(1)" medium="image"': "",
                'media:thumbnail url="data:image/png,x"': "",
                'media:content url="/ok.jpg" medium="image"': "",
            },
            "ok.jpg",
        ),
        ({'media:content url="/song.mp3" type="audio/mpeg"': "", 'media:content url="/page.html"': ""}, None),
    ],
    ids=[
        "content-before-thumbnail",
        "declared-type",
        "guessed-type",
        "image-enclosure",
        "itunes-image",
        "thumbnail",
        "small-skipped",
        "unusable-skipped",
        "no-image",
    ],
)
def test_the_image_beside_the_text(extra: dict[str, str], expected: str | None) -> None:
    (entry,) = parse(podcast(episode(1, **extra)))
    assert entry.image == (
        expected if expected is None or expected.startswith("https:") else f"https://pod.example.org/{expected}"
    )


def test_json_feed_image_then_banner_image() -> None:
    items = [
        {"id": "1", "url": "https://pod.example.org/1", "image": "/a.png", "banner_image": "/b.png"},
        {"id": "2", "url": "https://pod.example.org/2", "image": "javascript:x", "banner_image": "/b.png"},
        {"id": "3", "url": "https://pod.example.org/3", "image": 5},
    ]
    document = json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": items})
    assert [e.image for e in parse(document, "application/feed+json")] == [
        "https://pod.example.org/a.png",
        "https://pod.example.org/b.png",
        None,
    ]


def test_an_item_with_only_an_image_is_kept_and_told_apart() -> None:
    one, two = (
        {
            "pubDate": "Mon, 02 Nov 2026 10:00:00 GMT",
            f'media:content url="/{n}.jpg" medium="image"': "",
            "description": "",
        }
        for n in (1, 2)
    )
    first, second = parse(podcast(one, two))
    assert (first.image, second.image) == ("https://pod.example.org/1.jpg", "https://pod.example.org/2.jpg")
    assert first.id != second.id


def test_the_image_shows_when_the_text_has_none_and_is_carried_in_the_feeds(server: HTTPServer, tmp_path: Path) -> None:
    bare = episode(3, description="")
    bare['media:content url="https://cdn.example.org/only.jpg" medium="image"'] = ""
    texted = episode(2, description="&lt;p&gt;Words&lt;/p&gt;")
    texted['media:thumbnail url="https://cdn.example.org/thumb.jpg"'] = ""
    pictured = episode(1, description='&lt;p&gt;&lt;img src="https://cdn.example.org/own.jpg"&gt;&lt;/p&gt;')
    pictured['media:thumbnail url="https://cdn.example.org/other.jpg"'] = ""
    public = publish(server, tmp_path, podcast(bare, texted, pictured))

    index = (public / "index.html").read_text()
    assert html_problems(index) == []
    articles = list(parse_page(index).iter("article"))
    assert [[(i.get("src"), i.get("alt"), i.get("loading")) for i in a.iter("img")] for a in articles] == [
        [("https://cdn.example.org/only.jpg", "Episode 3", "lazy")],
        [("https://cdn.example.org/thumb.jpg", "Episode 2", "lazy")],
        [("https://cdn.example.org/own.jpg", None, None)],
    ]  # the text's own image, not a second one

    feed_xml = (public / "feed.xml").read_bytes()
    assert atom_problems(feed_xml) == []
    contents = [e.findtext(f"{ATOM}content") for e in ET.fromstring(feed_xml).findall(f"{ATOM}entry")]
    assert contents[0] == '<p><img src="https://cdn.example.org/only.jpg" alt="Episode 3"></p>'
    assert contents[1] == '<p><img src="https://cdn.example.org/thumb.jpg" alt="Episode 2"></p><p>Words</p>'
    assert "other.jpg" not in (contents[2] or "")
    items = json.loads((public / "feed.json").read_text())["items"]
    assert [item.get("image") for item in items] == [
        "https://cdn.example.org/only.jpg",
        "https://cdn.example.org/thumb.jpg",
        "https://cdn.example.org/other.jpg",
    ]
    assert [item["content_html"] for item in items[:2]] == contents[:2]


def test_an_untitled_image_only_item_is_published_with_alt_text(server: HTTPServer, tmp_path: Path) -> None:
    item = {
        "pubDate": "Mon, 02 Nov 2026 10:00:00 GMT",
        "description": "",
        'media:content url="https://cdn.example.org/photo.jpg" medium="image"': "",
    }
    public = publish(server, tmp_path, podcast(item))
    (article,) = parse_page((public / "index.html").read_text()).iter("article")
    assert [(i.get("src"), i.get("alt")) for i in article.iter("img")] == [
        ("https://cdn.example.org/photo.jpg", "Image from Pod")
    ]
    (entry,) = ET.parse(public / "feed.xml").getroot().findall(f"{ATOM}entry")
    content = entry.findtext(f"{ATOM}content")
    assert content == '<p><img src="https://cdn.example.org/photo.jpg" alt="Image from Pod"></p>'
