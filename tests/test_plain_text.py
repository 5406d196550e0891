"""Plain-text fields: character references decoded once, every written character kept.

Text fields that carry HTML character references (JSON Feed ``summary``,
``content_text``, ``title`` and author names; RSS author names feedparser
leaves encoded) have them decoded exactly once; titles, summaries and names
keep every character apart from runs of ordinary white space.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.parse.feed import parse_feed
from syndicator.parse.sanitize import decode_references, html_to_text, one_line

from .conftest import NOW, build, rss, write_config

URL = "https://feeds.example.org/feed.json"


def json_feed(**item: object) -> str:
    base = {"id": "1", "url": "https://blog.example.org/1", "date_published": "2026-11-02T10:00:00Z"}
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [base | item]})


def json_entry(**item: object):  # type: ignore[no-untyped-def]
    return parse_feed(json_feed(**item).encode(), URL, {"content-type": "application/feed+json"}, NOW).entries[0]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("A long evening&hellip;", "<p>A long evening…</p>"),
        ("Fish &amp; chips", "<p>Fish &amp; chips</p>"),
        ("Write &amp;lt;p&amp;gt; for a paragraph", "<p>Write &amp;lt;p&amp;gt; for a paragraph</p>"),
        ("Q&A, R&D &copy 2026", "<p>Q&amp;A, R&amp;D &amp;copy 2026</p>"),
        ("It&#8217;s &#x201C;fine&#x201D;", "<p>It’s “fine”</p>"),
    ],
    ids=["named", "amp", "escaped-once-only", "no-semicolon-left-alone", "numeric"],
)
def test_json_summary_and_content_text_decode_references_once(written: str, expected: str) -> None:
    entry = json_entry(summary=written, content_text=written)
    assert (entry.summary, entry.content) == (expected, expected)


def test_json_summary_holding_markup_is_html_not_visible_tags() -> None:
    entry = json_entry(summary="<p>One <em>two</em></p>", content_text="x")
    assert entry.summary == "<p>One <em>two</em></p>"


def test_json_title_and_author_names_decode_references_once() -> None:
    entry = json_entry(title="Caf&eacute; &amp;lt;3", content_text="x", authors=[{"name": "Jos&eacute; &amp;amp; Ana"}])
    assert (entry.title, entry.author) == ("Café &lt;3", "José &amp; Ana")


def test_rss_author_references_are_decoded_once() -> None:
    document = rss({"title": "t", "link": "https://blog.example.org/1", "dc:creator": "Jos&amp;eacute; &amp;amp;lt;3"})
    assert parse_feed(document.encode(), URL, {}, NOW).entries[0].author == "José &lt;3"


KEPT = "a\u00a0b\u200bc\u200dd\u00ade\u202ff\u3000g\u2009h\U0001f600i\u2060j"  # no-break, zero-width, soft hyphen, ...


@pytest.mark.parametrize("text", [KEPT, "x\ufeffy", "\u05d0\u200f!"], ids=["spaces-and-joiners", "bom", "rtl-mark"])
def test_plain_text_keeps_every_character_but_ordinary_white_space(text: str) -> None:
    assert one_line(f" \t{text} \r\n\u2028 {text}\n") == f"{text} {text}"
    assert html_to_text(f"<p>{text}</p>\n<p>{text}</p>") == f"{text} {text}"
    assert one_line("a\x00b\x1bc\ufffed") == "abcd"  # characters XML forbids go


def test_titles_summaries_and_names_keep_their_characters_in_every_source() -> None:
    rss_entry = parse_feed(
        rss(
            {
                "title": f"T {KEPT}",
                "link": "https://blog.example.org/1",
                "dc:creator": f"N {KEPT}",
                "description": f"S {KEPT}",
            }
        ).encode(),
        URL,
        {},
        NOW,
    )
    entry = rss_entry.entries[0]
    assert (entry.title, entry.author, html_to_text(entry.summary)) == (f"T {KEPT}", f"N {KEPT}", f"S {KEPT}")
    entry = json_entry(title=f"T {KEPT}", summary=f"S {KEPT}", content_text="x", authors=[{"name": f"N {KEPT}"}])
    assert (entry.title, entry.author, html_to_text(entry.summary)) == (f"T {KEPT}", f"N {KEPT}", f"S {KEPT}")


def test_decode_references_is_one_pass() -> None:
    assert decode_references("&amp;amp; &amp;hellip; &hellip;") == "&amp; &hellip; …"
    assert decode_references("no references & here") == "no references & here"


def test_published_json_feed_shows_the_character_not_the_reference(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/feed.json").respond_with_data(
        json_feed(title="Day&nbsp;one", summary="A long evening&hellip;"), content_type="application/feed+json"
    )
    config = write_config(tmp_path, [{"name": "J", "feed": server.url_for("/feed.json")}])
    assert build(config).exit_code == 0
    item = json.loads((tmp_path / "public" / "feed.json").read_text())["items"][0]
    assert item["title"] == "Day\u00a0one" and item["content_html"] == "<p>A long evening…</p>"
    assert "&amp;hellip;" not in (tmp_path / "public" / "index.html").read_text()
