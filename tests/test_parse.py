"""parse: bytes + headers -> ParsedFeed, for every supported format and the failures."""

from __future__ import annotations

import html.parser
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from syndicator.errors import NotAFeedError, ParseError
from syndicator.feedtypes import Entry, ParsedFeed
from syndicator.parse.feed import parse_feed

from .conftest import DATA, NOW, build, write_config

FETCH_URL = "https://fetch.example.org/feeds/feed"


def parse(name: str, now: datetime = NOW, content_type: str = "") -> ParsedFeed:
    headers = {"content-type": content_type} if content_type else {}
    return parse_feed((DATA / name).read_bytes(), FETCH_URL, headers, now)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def summary(entry: Entry) -> tuple[Any, ...]:
    return entry.id, entry.title, entry.link, entry.author, entry.date


#: file -> (format, feed title, feed link, [(id, title, link, author, date)])
FORMATS = [
    pytest.param(
        "rss20.xml",
        "rss20",
        "RSS 2.0 Example",
        "https://rss.example.org/",
        [
            (
                "tag:rss.example.org,2026:1",
                "Guid & pubDate",
                "https://rss.example.org/posts/1",
                "Alice",
                utc(2026, 11, 2, 8),
            ),
            (
                "https://rss.example.org/posts/2",
                "No guid, link only",
                "https://rss.example.org/posts/2",
                None,
                utc(2026, 11, 3, 9, 30),
            ),
            (
                "https://rss.example.org/posts/3",
                "Only dc:date",
                "https://rss.example.org/posts/3",
                None,
                utc(2026, 11, 4, 13),
            ),
        ],
        id="rss-2.0",
    ),
    pytest.param(
        "atom10.xml",
        "atom10",
        "Atom 1.0 Example",
        "https://atom.example.org/blog/",
        [
            (
                "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a",
                "Published & updated both",
                "https://atom.example.org/blog/posts/both",
                "Bob",
                utc(2026, 11, 1, 9),
            ),
            (
                "tag:atom.example.org,2026:updated-only",
                "Updated only",
                "https://atom.example.org/blog/posts/updated-only",
                None,
                utc(2026, 11, 3, 7),
            ),
        ],
        id="atom-1.0",
    ),
    pytest.param(
        "atom03.xml",
        "atom03",
        "Atom 0.3 Example",
        "https://atom03.example.org/",
        [
            (
                "tag:atom03.example.org,2026:1",
                "Issued and modified",
                "https://atom03.example.org/1",
                None,
                utc(2026, 11, 3),
            ),
        ],
        id="atom-0.3-issued",
    ),
    pytest.param(
        "rss10.rdf",
        "rss10",
        "RSS 1.0 Example",
        "https://rdf.example.org/",
        [
            ("https://rdf.example.org/a", "RDF item", "https://rdf.example.org/a", "Carol", utc(2026, 10, 31, 23, 30)),
        ],
        id="rss-1.0",
    ),
    pytest.param(
        "rss091.xml",
        "rss091u",
        "RSS 0.91 Example",
        "https://old.example.org/",
        [
            ("https://old.example.org/cafe", "Café opening", "https://old.example.org/cafe", None, None),
        ],
        id="rss-0.91-latin1-undated",
    ),
    pytest.param(
        "jsonfeed11.json",
        "json11",
        "JSON Feed 1.1 Example",
        "https://json.example.org/",
        [
            ("json-1", "Published and modified", "https://json.example.org/posts/1", "Dana, Eve", utc(2026, 11, 2, 7)),
            ("json-2", "Modified only", "https://json.example.org/posts/2", None, utc(2026, 11, 4)),
        ],
        id="json-feed-1.1",
    ),
    pytest.param(
        "jsonfeed10.json",
        "json1",
        "JSON Feed 1.0 Example",
        "https://json10.example.org/",
        [
            (
                "https://json10.example.org/a",
                "Version one",
                "https://json10.example.org/a",
                "Frank",
                utc(2026, 11, 1, 12),
            ),
        ],
        id="json-feed-1.0",
    ),
    pytest.param(
        "bozo_entries.xml",
        "rss20",
        "Undefined\u00a0entity",
        "https://bozo.example.org/",
        [
            ("https://bozo.example.org/1", "Still\u00a0readable", "https://bozo.example.org/1", None, utc(2026, 11, 1)),
        ],
        id="bozo-with-entries-accepted",
    ),
]


@pytest.mark.parametrize(("name", "version", "title", "link", "expected"), FORMATS)
def test_formats(name: str, version: str, title: str, link: str, expected: list[tuple[Any, ...]]) -> None:
    feed = parse(name)
    assert feed.format == version
    assert (feed.title, feed.link) == (title, link)
    assert [summary(e) for e in feed.entries][: len(expected)] == expected
    for entry in feed.entries:
        assert entry.date is None or entry.date.utcoffset() == timedelta(0)
        assert entry.link is None or entry.link.startswith(("http://", "https://"))


def test_json_feed_is_recognised_by_content_type_too() -> None:
    body = b'  \n{"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": []}'
    assert parse_feed(body, FETCH_URL, {"content-type": "application/feed+json"}, NOW).format == "json11"


# --- what is not a feed ----------------------------------------------------------


def test_html_page_with_200_is_not_a_feed_and_names_advertised_feeds() -> None:
    with pytest.raises(NotAFeedError) as caught:
        parse("html_page.html", content_type="text/html")
    assert caught.value.kind == "not_a_feed"
    assert caught.value.alternates == ["https://fetch.example.org/feed/rss.xml", "https://html.example.org/atom.xml"]
    assert caught.value.url == FETCH_URL


@pytest.mark.parametrize(
    ("body", "words"),
    [
        pytest.param((DATA / "malformed.xml").read_bytes(), "not a readable feed", id="malformed-xml-no-entries"),
        pytest.param((DATA / "truncated.xml").read_bytes(), "not a readable feed", id="truncated-inside-first-item"),
        pytest.param(b"", "not a feed", id="empty-body"),
        pytest.param(b"this is plain text", "not a readable feed", id="plain-text"),
        pytest.param(
            b'{"version": "https://jsonfeed.org/version/1.1", "items": [', "invalid JSON Feed", id="truncated-json-feed"
        ),
        pytest.param(b'{"rss": {"channel": {"item": []}}}', "JSON Feed", id="rss-in-json"),
        pytest.param(b'{"version": "2", "items": []}', "not a JSON Feed", id="json-without-jsonfeed-version"),
    ],
)
def test_documents_that_are_not_feeds_raise_parse_error(body: bytes, words: str) -> None:
    with pytest.raises(ParseError, match=words) as caught:
        parse_feed(body, FETCH_URL, {}, NOW)
    assert caught.value.kind in ("parse", "not_a_feed")


# --- identity ----------------------------------------------------------------------


def test_identity_falls_back_from_guid_to_link_to_fingerprint() -> None:
    entries = {e.title: e for e in parse("rss20.xml").entries}
    assert entries["Guid & pubDate"].id == "tag:rss.example.org,2026:1"
    assert entries["No guid, link only"].id == "https://rss.example.org/posts/2"
    fingerprint = entries["No guid, no link, no date"].id
    assert fingerprint.startswith("urn:sha256:")


def test_fingerprint_does_not_depend_on_fetch_time() -> None:
    early = {e.title: e.id for e in parse("rss20.xml", now=NOW).entries}
    late = {e.title: e.id for e in parse("rss20.xml", now=NOW + timedelta(days=3)).entries}
    assert early["No guid, no link, no date"] == late["No guid, no link, no date"]


def test_repeated_guids_are_not_trusted() -> None:
    feed = parse("duplicate_guids.xml")
    assert [e.title for e in feed.entries] == ["One", "Two"]
    assert [e.id for e in feed.entries] == ["https://dup.example.org/one", "https://dup.example.org/two"]


# --- dates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("guid", "date"),
    [
        pytest.param("pubdate-over-dc-date", utc(2026, 11, 2, 10), id="pubDate-before-dc:date"),
        pytest.param("pubdate-over-atom-updated", utc(2026, 11, 2, 11), id="pubDate-before-updated"),
        pytest.param("dc-date-only", utc(2026, 11, 4, 13), id="dc:date-alone"),
        pytest.param("offset-converted-to-utc", utc(2026, 11, 2, 20), id="offset-to-utc"),
        pytest.param("23-hours-ahead-is-kept", utc(2026, 12, 1, 11), id="within-a-day-ahead"),
        # Without a usable date of their own, and no dated item after them: the document's oldest date.
        pytest.param("25-hours-ahead-is-not", None, id="more-than-a-day-ahead"),
        pytest.param("before-1995-is-not", None, id="epoch"),
        pytest.param("no-date", None, id="undated"),
    ],
)
def test_date_fallbacks(guid: str, date: datetime | None) -> None:
    entries = {e.id: e for e in parse("rss_dates.xml").entries}
    assert entries[guid].date == (date or utc(2026, 11, 2, 10) - timedelta(seconds=1))  # just before the oldest
    assert (entries[guid].date_note is None) == (date is not None)


def test_untrusted_dates_say_why() -> None:
    entries = {e.title: e for e in parse("rss20.xml").entries}
    oldest = entries["Guid & pubDate"].date
    assert oldest is not None and entries["Far in the future"].date == oldest - timedelta(seconds=1)  # none after it
    assert "future" in (entries["Far in the future"].date_note or "")
    assert entries["Unreadable date"].date == oldest - timedelta(seconds=1)
    assert "unreadable" in (entries["Unreadable date"].date_note or "")


def test_json_feed_prefers_date_published_and_falls_back_to_date_modified() -> None:
    entries = {e.id: e for e in parse("jsonfeed11.json").entries}
    assert entries["json-1"].date == utc(2026, 11, 2, 7)
    assert entries["json-1"].updated == utc(2026, 11, 6, 8)
    assert entries["json-2"].date == utc(2026, 11, 4)


# --- text, links and sanitizing --------------------------------------------------------


def test_titles_are_plain_text_with_entities_decoded_once() -> None:
    assert parse("atom10.xml").title == "Atom 1.0 Example"
    assert [e.title for e in parse("atom10.xml").entries][0] == "Published & updated both"


def test_relative_urls_in_content_become_absolute() -> None:
    (entry, _) = parse("atom10.xml").entries
    assert 'href="https://atom.example.org/blog/other"' in entry.content
    assert 'src="https://atom.example.org/blog/pic.png"' in entry.content


def test_plain_text_content_is_escaped() -> None:
    entries = {e.id: e for e in parse("jsonfeed11.json").entries}
    assert "&lt;text&gt;" in entries["json-2"].content
    assert "<text>" not in entries["json-2"].content


class Markup(html.parser.HTMLParser):
    """Collects the elements and attributes of an HTML fragment or page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.extend((name, value or "") for name, value in attrs)


FORBIDDEN_TAGS = {
    "script",
    "style",
    "iframe",
    "frame",
    "frameset",
    "form",
    "input",
    "object",
    "embed",
    "meta",
    "base",
    "svg",
}


def assert_harmless(fragment: str) -> None:
    """No element, attribute or URL that could run code or restyle a page."""
    markup = Markup(fragment)
    assert FORBIDDEN_TAGS.isdisjoint(markup.tags), markup.tags
    for name, value in markup.attributes:
        assert not name.startswith("on"), name
        assert name != "style"
        assert not value.strip().lower().startswith(("javascript:", "data:", "vbscript:")), value


def test_hostile_content_is_sanitized() -> None:
    (entry,) = parse("hostile.xml").entries
    assert_harmless(entry.summary)
    assert_harmless(entry.content)
    assert "Hi" in entry.summary and "Styled" in entry.content
    assert 'href="https://good.example.org/ok"' in entry.content
    assert entry.link is None  # a javascript: link is dropped, not published


# --- through the build: a 200 that is not a feed is a failure ---------------------------


@pytest.mark.parametrize(
    ("name", "content_type", "kind_words"),
    [
        pytest.param("html_page_no_feeds.html", "text/html", "an HTML page, not a feed", id="html-page"),
        pytest.param("malformed.xml", "application/rss+xml", "not a readable feed", id="malformed-xml"),
        pytest.param("truncated.xml", "application/rss+xml", "not a readable feed", id="truncated-xml"),
    ],
)
def test_build_treats_a_200_that_is_not_a_feed_as_a_failure(
    server: HTTPServer, tmp_path: Path, name: str, content_type: str, kind_words: str
) -> None:
    server.expect_request("/bad").respond_with_data((DATA / name).read_bytes(), content_type=content_type)
    server.expect_request("/good").respond_with_data((DATA / "rss10.rdf").read_bytes())
    sites = [{"name": "Good", "feed": server.url_for("/good")}, {"name": "Bad", "feed": server.url_for("/bad")}]
    result = build(write_config(tmp_path, sites, sites_page_details=True))
    assert result.exit_code == 0, result.output
    assert "2 requested (1 changed, 0 unchanged, 1 failed)" in result.stdout
    assert "site 'Bad' has never been fetched successfully" in result.stderr
    assert kind_words in result.stderr
    sites = (tmp_path / "public" / "sites.html").read_text()
    assert kind_words in sites


def test_a_truncated_download_keeps_the_last_good_copy(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_oneshot_request("/feed.xml").respond_with_data((DATA / "rss10.rdf").read_bytes())
    server.expect_request("/feed.xml").respond_with_data((DATA / "truncated.xml").read_bytes())
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    assert build(config).exit_code == 0
    result = build(config, "--force", now="2026-11-30T13:00:00Z")
    assert result.exit_code == 0, result.output
    assert "1 failed), 0 skipped, 1 stale copy used, 1 entry written" in result.stdout
    assert "RDF item" in (tmp_path / "public" / "index.html").read_text()


def test_a_guid_is_a_link_only_when_it_is_an_absolute_web_url() -> None:
    """RSS 2.0 makes a guid a permalink by default; ``12345`` must not become a made-up URL."""
    document = b"""<rss version="2.0"><channel><title>t</title><link>https://news.example.org/blog/</link>
    <item><title>numeric</title><guid>12345</guid></item>
    <item><title>web</title><guid>https://news.example.org/p/1</guid></item>
    <item><title>relative</title><guid>/p/2</guid></item>
    <item><title>linked</title><link>/p/3</link><guid>abc</guid></item>
    </channel></rss>"""
    entries = {e.title: e for e in parse_feed(document, "https://news.example.org/feed", {}, NOW).entries}
    assert entries["numeric"].link is None and entries["numeric"].id == "12345"
    assert entries["web"].link == "https://news.example.org/p/1"
    assert entries["relative"].link is None
    assert entries["linked"].link == "https://news.example.org/p/3"
