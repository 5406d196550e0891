"""Entry languages and out-of-line content: read from Atom, RSS and JSON Feed on both parse paths,
overridden per site, and published on the pages, in feed.xml and in feed.json."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.feedtypes import Entry
from syndicator.language import direction, language_tag
from syndicator.parse import fastreader
from syndicator.parse.feed import parse_feed

from .conftest import ATOM, NOW, build, write_config
from .outputs import atom_problems, html_problems
from .xss_dom import parse_page, visible_text

XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
ARABIC_TITLE = "Android \u0623\u0646\u062f\u0631\u0648\u064a\u062f \u0627\u0644\u062c\u062f\u064a\u062f"

ATOM_FEED = f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">
  <title>Mixed</title><id>urn:feed:mixed</id><updated>2026-11-29T10:00:00Z</updated>
  <author><name>Mixed</name></author>
  <entry xml:lang="ar">
    <title>{ARABIC_TITLE}</title><id>urn:post:ar</id><updated>2026-11-29T10:00:00Z</updated>
    <link href="https://mixed.example.org/ar"/><content type="html">&lt;p&gt;Android \u0646\u0635&lt;/p&gt;</content>
  </entry>
  <entry>
    <title>Inherited English</title><id>urn:post:en</id><updated>2026-11-29T09:00:00Z</updated>
    <link href="https://mixed.example.org/en"/><content type="html">&lt;p&gt;Hello&lt;/p&gt;</content>
  </entry>
  <entry xml:lang="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">
    <title>Hostile tag</title><id>urn:post:hostile</id><updated>2026-11-29T08:00:00Z</updated>
    <link href="https://mixed.example.org/hostile"/><content type="html">&lt;p&gt;x&lt;/p&gt;</content>
  </entry>
  <entry>
    <title>Elsewhere with a summary</title><id>urn:post:src1</id><updated>2026-11-29T07:00:00Z</updated>
    <link href="https://mixed.example.org/src1"/><summary>The abstract</summary>
    <content type="application/pdf" src="/papers/1.pdf"/>
  </entry>
  <entry>
    <title>Elsewhere alone</title><id>urn:post:src2</id><updated>2026-11-29T06:00:00Z</updated>
    <link href="https://mixed.example.org/src2"/><content type="text/html" src="https://mixed.example.org/full/2"/>
  </entry>
</feed>
"""

RSS_FEED = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
  <title>Hebrew</title><link>https://he.example.org/</link><description>d</description><language>he-IL</language>
  <item><title>Hello in Hebrew</title><link>https://he.example.org/1</link><description>\u05e9\u05dc\u05d5\u05dd</description>
    <pubDate>Sat, 28 Nov 2026 10:00:00 GMT</pubDate></item>
  <item><title>Persian item</title><link>https://he.example.org/2</link><dc:language>fa</dc:language>
    <description>\u0633\u0644\u0627\u0645</description><pubDate>Sat, 28 Nov 2026 09:00:00 GMT</pubDate></item>
</channel></rss>
"""

JSON_FEED = {
    "version": "https://jsonfeed.org/version/1.1",
    "title": "Urdu",
    "home_page_url": "https://ur.example.org/",
    "language": "ur",
    "items": [
        {
            "id": "1",
            "url": "https://ur.example.org/1",
            "title": "Urdu post",
            "content_text": "\u0627\u0631\u062f\u0648",
            "date_published": "2026-11-27T10:00:00Z",
        },
        {
            "id": "2",
            "url": "https://ur.example.org/2",
            "title": "English post",
            "content_text": "Hi",
            "language": "en-GB",
            "date_published": "2026-11-27T09:00:00Z",
        },
    ],
}


# --- the tag and its direction ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ar", "ar"),
        ("AR-eg", "ar-EG"),
        (" en_US ", "en-US"),
        ("sr-latn-rs", "sr-Latn-RS"),
        ("zh-yue-Hant", "zh-yue-Hant"),
        ("de-CH-1996", "de-CH-1996"),
        ("en-US-u-ca-gregory", "en-US-u-ca-gregory"),
        ("es-419", "es-419"),
        ("", None),
        ("x-private", None),
        ("i-klingon", None),
        ("und", None),
        ("zxx", None),
        ("en-", None),
        ("en--US", None),
        ("de-1996-1996", None),
        ("en-u-ca-u-nu", None),
        ('"><script>', None),
        ("en us", None),
        ("ar\u0660", None),
        ("a" * 9, None),
        ("en-" + "-".join(["abcdefgh"] * 5), None),
        ("x" * 100_000, None),
        (None, None),
        (7, None),
    ],
    ids=lambda v: repr(v)[:24],
)
def test_only_a_well_formed_bcp47_tag_of_bounded_length_is_kept_in_canonical_case(
    value: object, expected: str | None
) -> None:
    assert language_tag(value) == expected


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("ar", "rtl"),
        ("he", "rtl"),
        ("fa-IR", "rtl"),
        ("ur", "rtl"),
        ("ps", "rtl"),
        ("sd", "rtl"),
        ("ug", "rtl"),
        ("yi", "rtl"),
        ("dv", "rtl"),
        ("ckb", "rtl"),
        ("iw", "rtl"),
        ("az-Arab", "rtl"),
        ("pa-Arab-PK", "rtl"),
        ("syr", "rtl"),
        ("ff-Adlm", "rtl"),
        ("rhg-Rohg", "rtl"),
        ("nqo", "rtl"),
        ("ku-Arab", "rtl"),
        ("ar-Latn", "ltr"),
        ("en", "ltr"),
        ("az", "ltr"),
        ("ku", "ltr"),
        ("zh-Hant-TW", "ltr"),
        ("grc", "ltr"),
        (None, "auto"),
    ],
)
def test_the_direction_comes_from_the_script_subtag_else_the_primary_language(tag: str | None, expected: str) -> None:
    assert direction(tag) == expected


# --- reading, on both parse paths ------------------------------------------------------------------


def _parse(document: str, fast: bool, monkeypatch: pytest.MonkeyPatch) -> list[Entry]:
    if not fast:
        monkeypatch.setattr(fastreader, "read", lambda prepared, budget: None)
    parsed = parse_feed(document.encode("utf-8"), "https://mixed.example.org/feed.xml", {}, NOW)
    return list(parsed.entries)


@pytest.mark.parametrize("fast", [True, False], ids=["lxml", "feedparser"])
def test_both_parse_paths_read_languages_and_out_of_line_content_alike(
    fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy: list[bool] = []
    real = fastreader.read
    monkeypatch.setattr(fastreader, "read", lambda prepared, budget: spy.append(True) or real(prepared, budget))
    atom = _parse(ATOM_FEED, fast, monkeypatch)
    rss = _parse(RSS_FEED, fast, monkeypatch)
    assert [(e.title[:7], e.language) for e in atom] == [
        ("Android", "ar"),
        ("Inherit", "en"),
        ("Hostile", "en"),
        ("Elsewhe", "en"),
        ("Elsewhe", "en"),
    ]
    assert [(e.content_src, e.content_type, e.summary, e.content) for e in atom[3:]] == [
        ("https://mixed.example.org/papers/1.pdf", "application/pdf", "<p>The abstract</p>", ""),
        ("https://mixed.example.org/full/2", "text/html", "", ""),
    ]
    assert [(e.title, e.language) for e in rss] == [("Hello in Hebrew", "he-IL"), ("Persian item", "fa")]
    assert bool(spy) == fast  # the lxml reader took both documents, or was kept out


def test_json_feed_items_take_their_own_language_else_the_feeds() -> None:
    parsed = parse_feed(
        json.dumps(JSON_FEED).encode(),
        "https://ur.example.org/feed.json",
        {"content-type": "application/feed+json"},
        NOW,
    )
    assert [e.language for e in parsed.entries] == ["ur", "en-GB"]


# --- publishing, through the real CLI ----------------------------------------------------------------


def _serve(server: HTTPServer) -> None:
    server.expect_request("/atom.xml").respond_with_data(ATOM_FEED, content_type="application/atom+xml")
    server.expect_request("/rss.xml").respond_with_data(RSS_FEED, content_type="application/rss+xml")
    server.expect_request("/feed.json").respond_with_data(json.dumps(JSON_FEED), content_type="application/feed+json")


def _publish(server: HTTPServer, tmp_path: Path, sites: list[dict[str, str]]) -> Path:
    result = build(write_config(tmp_path, sites))
    assert result.exit_code == 0, result.output
    return tmp_path / "public"


def _articles(public: Path) -> dict[str, dict[str, str | None]]:
    index = (public / "index.html").read_text(encoding="utf-8")
    assert html_problems(index) == []
    found = {}
    for article in parse_page(index).iter("article"):
        heading = next(article.iter("h2"))
        meta = next(p for p in article.iter("p") if p.get("class") == "meta")
        found[visible_text(heading).strip()] = {
            "lang": article.get("lang"),
            "dir": article.get("dir"),
            "h2": heading.get("dir"),
            "meta": meta.get("lang"),
        }
    return found


def test_languages_and_directions_are_published_on_the_pages_and_in_both_feeds(
    server: HTTPServer, tmp_path: Path
) -> None:
    _serve(server)
    public = _publish(
        server,
        tmp_path,
        [
            {"name": "Mixed", "feed": server.url_for("/atom.xml")},
            {"name": "Hebrew", "feed": server.url_for("/rss.xml")},
            {"name": "Urdu", "feed": server.url_for("/feed.json")},
        ],
    )

    articles = _articles(public)
    assert articles[ARABIC_TITLE] == {"lang": "ar", "dir": "rtl", "h2": "rtl", "meta": "en"}
    assert articles["Inherited English"] == {"lang": "en", "dir": "ltr", "h2": "ltr", "meta": "en"}
    assert articles["Hello in Hebrew"]["lang"] == "he-IL" and articles["Hello in Hebrew"]["dir"] == "rtl"
    assert articles["Persian item"]["dir"] == "rtl"
    assert (articles["Urdu post"]["lang"], articles["Urdu post"]["dir"]) == ("ur", "rtl")
    assert (articles["English post"]["lang"], articles["English post"]["dir"]) == ("en-GB", "ltr")
    assert "<script>alert" not in (public / "index.html").read_text(encoding="utf-8")

    feed_xml = (public / "feed.xml").read_bytes()
    assert atom_problems(feed_xml) == []
    langs = {e.findtext(f"{ATOM}title"): e.get(XML_LANG) for e in ET.fromstring(feed_xml).iter(f"{ATOM}entry")}
    assert (langs[ARABIC_TITLE], langs["Hello in Hebrew"], langs["Persian item"], langs["English post"]) == (
        "ar",
        "he-IL",
        "fa",
        "en-GB",
    )

    feed_json = json.loads((public / "feed.json").read_text(encoding="utf-8"))
    items = {item["title"]: item.get("language") for item in feed_json["items"]}
    assert (items[ARABIC_TITLE], items["Urdu post"], items["English post"]) == ("ar", "ur", "en-GB")
    assert "language" not in feed_json  # the items differ: each states its own


def test_a_sites_language_overrides_the_feeds_and_a_uniform_language_is_feed_jsons(
    server: HTTPServer, tmp_path: Path
) -> None:
    _serve(server)
    public = _publish(server, tmp_path, [{"name": "Hebrew", "feed": server.url_for("/rss.xml"), "language": "YI"}])
    articles = _articles(public)
    assert {(a["lang"], a["dir"]) for a in articles.values()} == {("yi", "rtl")}
    feed_json = json.loads((public / "feed.json").read_text(encoding="utf-8"))
    assert feed_json["language"] == "yi"
    assert [item["language"] for item in feed_json["items"]] == ["yi", "yi"]
    assert {e.get(XML_LANG) for e in ET.fromstring((public / "feed.xml").read_bytes()).iter(f"{ATOM}entry")} == {"yi"}


def test_an_entry_without_a_language_keeps_dir_auto_and_no_lang(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/plain.xml").respond_with_data(
        RSS_FEED.replace("<language>he-IL</language>", "").replace("<dc:language>fa</dc:language>", ""),
        content_type="application/rss+xml",
    )
    public = _publish(server, tmp_path, [{"name": "Plain", "feed": server.url_for("/plain.xml")}])
    assert {(a["lang"], a["dir"], a["h2"], a["meta"]) for a in _articles(public).values()} == {
        (None, None, "auto", None)
    }  # the article as before: its title and summary decide, dir="auto"
    feed_json = json.loads((public / "feed.json").read_text(encoding="utf-8"))
    assert "language" not in feed_json and all("language" not in item for item in feed_json["items"])


def test_a_site_language_that_is_no_tag_is_one_line_naming_the_field(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"name": "Bad", "feed": "https://bad.example.org/feed", "language": "ar;drop"}])
    result = build(config)
    assert result.exit_code == 2, result.output
    assert f"{config}:6: sites[0].language: 'ar;drop' is not a BCP 47 language tag" in result.output
    assert not (tmp_path / "public").exists()


@pytest.mark.parametrize("feed_content", ["full", "summary"])
def test_out_of_line_content_keeps_its_src_beside_a_summary_and_is_never_empty(
    server: HTTPServer, tmp_path: Path, feed_content: str
) -> None:
    server.expect_request("/atom.xml").respond_with_data(ATOM_FEED, content_type="application/atom+xml")
    feed = server.url_for("/atom.xml")  # every entry of its first fetch published: each is a case
    config = write_config(tmp_path, [{"name": "Mixed", "feed": feed}], feed_content=feed_content, new_feed_items="all")
    result = build(config)
    assert result.exit_code == 0, result.output
    public = tmp_path / "public"

    feed_xml = (public / "feed.xml").read_bytes()
    assert atom_problems(feed_xml) == []  # RFC 4287: content with src is empty, and a summary is there
    entries = {e.findtext(f"{ATOM}title"): e for e in ET.fromstring(feed_xml).iter(f"{ATOM}entry")}
    for title, src, kind, summary in [
        ("Elsewhere with a summary", "https://mixed.example.org/papers/1.pdf", "application/pdf", "The abstract"),
        ("Elsewhere alone", "https://mixed.example.org/full/2", "text/html", "https://mixed.example.org/full/2"),
    ]:
        contents = entries[title].findall(f"{ATOM}content")
        assert [(c.get("src"), c.get("type"), c.text) for c in contents] == [(src, kind, None)]
        assert summary in (entries[title].findtext(f"{ATOM}summary") or "")
    for element in ET.fromstring(feed_xml).iter(f"{ATOM}content"):
        assert element.get("src") or (element.text or "").strip(), "an empty content was published"

    items = {item["title"]: item for item in json.loads((public / "feed.json").read_text())["items"]}
    assert "The abstract" in items["Elsewhere with a summary"]["content_html"]
    assert 'href="https://mixed.example.org/full/2"' in items["Elsewhere alone"]["content_html"]

    index = (public / "index.html").read_text(encoding="utf-8")
    assert html_problems(index) == []
    summaries = {visible_text(next(a.iter("h2"))).strip(): visible_text(a) for a in parse_page(index).iter("article")}
    assert "The abstract" in summaries["Elsewhere with a summary"]
    assert "https://mixed.example.org/full/2" in summaries["Elsewhere alone"]


@pytest.mark.parametrize("fast", [True, False], ids=["lxml", "feedparser"])
@pytest.mark.parametrize("src", ["javascript:alert(1)", "data:text/html,<b>x</b>", "  "])
def test_out_of_line_content_that_is_no_web_url_is_dropped(
    src: str, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = ATOM_FEED.replace("https://mixed.example.org/full/2", src.replace("<", "&lt;"))
    entries = _parse(document, fast, monkeypatch)
    assert [(e.title, e.content_src) for e in entries][4] == ("Elsewhere alone", None)
    assert entries[3].content_src == "https://mixed.example.org/papers/1.pdf"
