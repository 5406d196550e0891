"""Which body an item publishes: the richest HTML first, plain text only when nothing else exists.

Order: content typed HTML/XHTML (RSS content:encoded, Atom content), then an
HTML summary (RSS description, Atom summary), then plain text, then
itunes:summary. Plain text keeps its line breaks.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.parse.feed import parse_feed
from syndicator.parse.sanitize import text_to_html

from .conftest import NOW, build, write_config

URL = "https://feeds.example.org/feed.xml"
NAMESPACES = (
    'xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"'
)
SHOW_NOTES = '&lt;p&gt;Set list:&lt;br clear=all&gt;Intro&lt;br&gt;Theme&lt;/p&gt;&lt;img src="/cover.jpg"&gt;'
PLAIN = "Set list:\nIntro\nTheme"


def podcast(item: str) -> str:
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" {NAMESPACES}><channel><title>Show</title>'
        f"<link>https://show.example.org/</link><itunes:summary>The show</itunes:summary>"
        f"<item><title>Episode 4</title><link>https://show.example.org/4</link>{item}</item></channel></rss>"
    )


def body(document: str) -> tuple[str, str]:
    entry = parse_feed(document.encode(), URL, {}, NOW).entries[0]
    return entry.summary, entry.content


HTML_NOTES = '<p>Set list:<br>Intro<br>Theme</p><img src="https://show.example.org/cover.jpg">'


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (f"<description>{SHOW_NOTES}</description><itunes:summary>{PLAIN}</itunes:summary>", (HTML_NOTES, "")),
        (f"<itunes:summary>{PLAIN}</itunes:summary><description>{SHOW_NOTES}</description>", (HTML_NOTES, "")),
        (
            "<itunes:summary>Set list:</itunes:summary><description>Set list:&lt;br clear=all&gt;Intro</description>",
            ("Set list:<br>Intro", ""),
        ),
        (f"<itunes:summary>{PLAIN}</itunes:summary><content:encoded>{SHOW_NOTES}</content:encoded>", ("", HTML_NOTES)),
        (f"<itunes:summary>{PLAIN}</itunes:summary>", ("<p>Set list:<br>\nIntro<br>\nTheme</p>", "")),
    ],
    ids=[
        "description-then-itunes",
        "itunes-then-description",
        "br-without-end-tag",
        "content-encoded",
        "itunes-summary-alone",
    ],
)
def test_the_richest_html_body_wins_over_itunes_summary(item: str, expected: tuple[str, str]) -> None:
    assert body(podcast(item)) == expected


def atom(entry: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>'
        '<id>urn:a</id><updated>2026-11-01T00:00:00Z</updated><link href="https://a.example.org/"/>'
        f"<entry><id>urn:a:1</id><title>t</title><updated>2026-11-01T00:00:00Z</updated>{entry}</entry></feed>"
    )


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            '<content type="text">Plain\ncopy</content>'
            '<summary type="html">&lt;p&gt;&lt;b&gt;Rich&lt;/b&gt;&lt;/p&gt;</summary>',
            ("<p><b>Rich</b></p>", ""),
        ),
        (
            '<content type="html">&lt;p&gt;&lt;b&gt;Rich&lt;/b&gt;&lt;/p&gt;</content><summary>An abstract</summary>',
            ("<p>An abstract</p>", "<p><b>Rich</b></p>"),
        ),
        (
            '<content type="text">Plain\ncopy</content><summary>An abstract</summary>',
            ("<p>An abstract</p>", "<p>Plain<br>\ncopy</p>"),
        ),
    ],
    ids=["html-summary-over-text-content", "text-abstract-kept-beside-html", "text-only"],
)
def test_atom_html_content_or_summary_comes_before_plain_text(entry: str, expected: tuple[str, str]) -> None:
    assert body(atom(entry)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("one\ntwo", "<p>one<br>\ntwo</p>"),
        ("one\r\ntwo\r\n\r\nthree", "<p>one<br>\ntwo</p><p>three</p>"),
        ("  a   b \n\n\n  \n c < d ", "<p>a b</p><p>c &lt; d</p>"),
        ("", ""),
    ],
    ids=["line-break", "crlf-and-paragraph", "spaces-and-blank-lines", "empty"],
)
def test_plain_text_keeps_its_line_breaks(text: str, expected: str) -> None:
    assert text_to_html(text) == expected


def test_the_front_page_shows_the_html_show_notes(server: HTTPServer, tmp_path: Path) -> None:
    item = f"<itunes:summary>{PLAIN}</itunes:summary><description>{SHOW_NOTES}</description>"
    server.expect_request("/show.xml").respond_with_data(
        podcast(item + "<pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate>")
    )
    config = write_config(tmp_path, [{"name": "Show", "feed": server.url_for("/show.xml")}])
    assert build(config).exit_code == 0
    index = (tmp_path / "public" / "index.html").read_text()
    assert "&lt;br" not in index and "Set list:<br>Intro<br>Theme" in index
    assert '<img src="https://show.example.org/cover.jpg">' in index


def test_a_content_stub_gives_way_to_a_fuller_html_description() -> None:
    stub = '<content:encoded>&lt;h4&gt;&lt;a href="/4.mp3"&gt;Listen&lt;/a&gt;&lt;/h4&gt;</content:encoded>'
    full = (
        '<description>&lt;h4&gt;&lt;a href="/4.mp3"&gt;Listen&lt;/a&gt;&lt;/h4&gt;'
        "&lt;p&gt;Guests and the whole conversation.&lt;/p&gt;</description>"
    )
    summary, content = body(podcast(full + stub))
    assert "Guests and the whole conversation." in summary and content == ""
    picture = '<content:encoded>&lt;img src="/big.jpg"&gt;&lt;p&gt;Hi&lt;/p&gt;</content:encoded>'
    assert body(podcast("<description>A longer text without the picture</description>" + picture))[1] != ""


def test_an_html_description_without_markup_keeps_its_paragraphs() -> None:
    item = "<description>First part &amp;amp; more.\n\nSecond part\nnext line</description>"
    assert body(podcast(item)) == ("<p>First part &amp; more.</p><p>Second part<br>\nnext line</p>", "")
    assert body(podcast("<description>One line, R&amp;amp;D</description>")) == ("One line, R&amp;D", "")
