"""Categories (tags): read from every format by both XML readers alike, normalised once, bounded.

The normaliser (:mod:`parse.categories`) is tested on hostile input; each format is parsed through
:func:`parse.parse_feed` twice, with the fast reader and with feedparser alone
(:func:`tests.test_fastreader.both`), and both readings must give the same categories.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from syndicator.parse import feedreader
from syndicator.parse.categories import CATEGORY_MAX_CHARS, MAX_CATEGORIES, RAW_SEEN, normalised
from syndicator.parse.encoding import prepare_xml
from syndicator.parse.feed import parse_feed
from syndicator.parse.limits import Budget

from .conftest import NOW
from .test_fastreader import ATOM, RSS, both

# --- the normaliser -----------------------------------------------------------------


def test_categories_are_plain_text_on_one_line() -> None:
    assert normalised(["  <b>Bold</b>\tnews ", "Web &amp;amp; Co", "a\u0000b\u200bc", "x\n\n  y", "\u202eevil"]) == (
        "Bold news",
        "Web &amp; Co",
        "abc",
        "x y",
        "evil",
    )


def test_each_category_once_whatever_its_case_and_accents_the_first_spelling_kept() -> None:
    assert normalised(["Café", "cafe", "CAFÉ", "Cafe\u0301", "Python", "PYTHON", "python "]) == ("Café", "Python")


def test_empty_and_non_text_values_are_dropped() -> None:
    assert normalised(["", "   ", "<br>", "\x01", 7, None, {"term": "x"}, ["y"], "kept"]) == ("kept",)


def test_a_long_category_is_cut() -> None:
    (only,) = normalised(["word " * 10_000])
    assert len(only) <= CATEGORY_MAX_CHARS
    assert only.startswith("word word")
    assert only == only.strip()


def test_at_most_so_many_categories_and_only_the_first_raw_values_are_read() -> None:
    read = 0

    def values() -> Iterator[str]:
        nonlocal read
        for n in range(100_000):
            read += 1
            yield "same" if n % 2 else f"tag {n}"

    expected = ("tag 0", "same", *(f"tag {n}" for n in range(2, 2 * MAX_CATEGORIES - 2, 2)))
    assert len(expected) == MAX_CATEGORIES
    assert normalised(values()) == expected
    assert read <= RAW_SEEN

    read = 0
    assert normalised("same" for _ in range(100_000) if (read := read + 1)) == ("same",)
    assert read == RAW_SEEN


# --- every format, both XML readers -------------------------------------------------


def _categories(document: str, monkeypatch: pytest.MonkeyPatch, fast: bool = True) -> list[tuple[str, ...]]:
    quick, slow, took = both(document.encode("utf-8"), monkeypatch)
    assert took is fast
    assert quick == slow
    return [entry.categories for entry in quick.entries]


def test_rss_categories_are_their_text_and_the_domain_is_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    document = RSS.format(
        items="""<item><title>A</title><link>https://example.org/a</link>
        <category domain="https://example.org/tags">Python</category><category>Web &amp; HTTP</category>
        <category>python</category><category domain="only-a-domain"/></item>
        <item><title>B</title><link>https://example.org/b</link></item>"""
    )
    assert _categories(document, monkeypatch) == [("Python", "Web & HTTP"), ()]


def test_atom_categories_show_the_label_else_the_term(monkeypatch: pytest.MonkeyPatch) -> None:
    document = ATOM.format(
        items="""<entry><title>A</title><id>a</id><link href="/a"/><updated>2025-01-06T10:00:00Z</updated>
        <category term="py" scheme="https://example.org/s" label="Python"/><category term="web"/>
        <category term="" label="Only a label"/><category scheme="https://example.org/nothing"/></entry>"""
    )
    assert _categories(document, monkeypatch) == [("Python", "web", "Only a label")]


def test_dc_subject_and_media_category_are_categories(monkeypatch: pytest.MonkeyPatch) -> None:
    document = RSS.format(
        items="""<item><title>A</title><link>https://example.org/a</link><dc:subject>Science</dc:subject>
        <media:category scheme="urn:example">Space</media:category>
        <media:group><media:category>Rockets</media:category></media:group></item>"""
    )
    assert _categories(document, monkeypatch) == [("Science", "Space", "Rockets")]


def test_rss_1_0_dc_subject_is_a_category(monkeypatch: pytest.MonkeyPatch) -> None:
    document = """<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
        xmlns:dc="http://purl.org/dc/elements/1.1/">
        <channel rdf:about="https://example.org/"><title>R</title><link>https://example.org/</link></channel>
        <item rdf:about="https://example.org/1"><title>One</title><link>https://example.org/1</link>
        <dc:subject>Linux</dc:subject><dc:subject>Kernel</dc:subject></item></rdf:RDF>"""
    assert _categories(document, monkeypatch, fast=False) == [("Linux", "Kernel")]


PODCAST = RSS.replace(
    "{items}",
    """<itunes:category text="Technology"><itunes:category text="Podcasting"/></itunes:category>
    <itunes:category text="Arts"/><category>Channel directory</category>
    <itunes:keywords>cheap, keywords, search</itunes:keywords>
    {items}""",
)


def test_an_episode_takes_its_show_s_itunes_categories_nested_ones_too(monkeypatch: pytest.MonkeyPatch) -> None:
    document = PODCAST.format(
        items="""<item><title>Episode 1</title><link>https://example.org/1</link>
        <enclosure url="https://example.org/1.mp3" length="1" type="audio/mpeg"/>
        <itunes:keywords>not, a, category</itunes:keywords></item>
        <item><title>Episode 2</title><link>https://example.org/2</link><category>Interview</category>
        <itunes:category text="History"/></item>"""
    )
    assert _categories(document, monkeypatch) == [("Technology", "Podcasting", "Arts"), ("Interview", "History")]


def test_a_blog_s_channel_category_is_not_given_to_its_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    document = RSS.format(items="<item><title>A</title><link>https://example.org/a</link></item>").replace(
        "<title>A channel</title>", "<title>A channel</title><category>Blogs</category>"
    )
    assert _categories(document, monkeypatch) == [()]


def test_a_category_inside_an_element_the_fast_path_skips_is_left_to_feedparser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    document = RSS.format(
        items="""<item><title>A</title><link>https://example.org/a</link>
        <categories><category>Wrapped</category></categories></item>"""
    )
    assert _categories(document, monkeypatch, fast=False) == [("Wrapped",)]


def test_json_feed_tags_are_categories() -> None:
    document = b"""{"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [
        {"id": "1", "url": "https://example.org/1", "content_text": "x", "tags": ["Go", "go", " Rust  ", 3, ""]},
        {"id": "2", "url": "https://example.org/2", "content_text": "y", "tags": "not a list"}]}"""
    feed = parse_feed(document, "https://example.org/feed.json", {}, NOW)
    assert [entry.categories for entry in feed.entries] == [("Go", "Rust"), ()]


# --- hostile feeds ----------------------------------------------------------------------


def test_an_entry_with_100_000_categories_keeps_a_few(monkeypatch: pytest.MonkeyPatch) -> None:
    many = "".join(f'<category term="c{n}"/>' for n in range(60_000))
    document = ATOM.format(items=f"<entry><title>A</title><id>a</id><link href='/a'/>{many}</entry>")
    assert _categories(document, monkeypatch) == [tuple(f"c{n}" for n in range(MAX_CATEGORIES))]
    json_tags = ", ".join(f'"t{n}"' for n in range(100_000))
    document_json = (
        '{"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": '
        f'[{{"id": "1", "url": "https://example.org/1", "content_text": "x", "tags": [{json_tags}]}}]}}'
    )
    (entry,) = parse_feed(document_json.encode(), "https://example.org/feed.json", {}, NOW).entries
    assert entry.categories == tuple(f"t{n}" for n in range(MAX_CATEGORIES))


def test_feedparser_keeps_no_more_than_so_many_raw_categories() -> None:
    many = "".join(f"<dc:subject>s{n % 5000}</dc:subject>" for n in range(50_000))
    document = RSS.format(items=f"<item><title>A</title><link>https://example.org/a</link>{many}</item>")
    parsed = feedreader.read(prepare_xml(document), "https://example.org/feed", Budget("https://example.org/feed", 60))
    assert len(parsed.entries[0]["tags"]) == feedreader.TAGS_KEPT
