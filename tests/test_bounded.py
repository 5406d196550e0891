"""Bounded work per document: the parse budget, structural limits, field caps, and
every input-caused exception becoming the source's ParseError (syndicator/parse/limits.py).

Hostile inputs here are ones that took minutes or more before (a quadratic
or worse step); each test asserts the outcome, never a time.
"""

from __future__ import annotations

import io
import json
import re
import sys
import time
import xml.sax
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer

from syndicator.dates import DATE_MAX_CHARS, parse_date
from syndicator.errors import ParseError
from syndicator.feedtypes import ParsedFeed
from syndicator.parse import feedreader
from syndicator.parse.authors import author_name
from syndicator.parse.encoding import prepare_xml
from syndicator.parse.feed import parse_feed
from syndicator.parse.limits import (
    AUTHOR_MAX_CHARS,
    DENSE_MIN_TAGS,
    FAST_MAX_TAGS,
    MAX_ATTRIBUTES,
    MAX_DEPTH,
    MAX_TAGS,
    REFERENCES_PER_TAG,
    TITLE_MAX_CHARS,
    Budget,
    check_structure,
)
from syndicator.parse.sanitize import one_line

from .conftest import NOW, build, post, rss, write_config

URL = "https://feeds.example.org/feed.xml"


def parse(document: str | bytes, content_type: str = "application/xml", budget: float = 10.0) -> ParsedFeed:
    body = document.encode("utf-8") if isinstance(document, str) else document
    return parse_feed(body, URL, {"content-type": content_type}, NOW, budget)


def item(inner: str) -> str:
    return rss({"link": "https://blog.example.org/1"}).replace("<item>", "<item>" + inner, 1)


def ticks(start: float = 0.0, step: float = 1.0) -> Iterator[float]:
    """A CPU clock that advances ``step`` seconds each time it is read."""
    now = start
    while True:
        yield now
        now += step


# --- the budget ------------------------------------------------------------------------


def test_a_spent_budget_is_a_too_complex_failure() -> None:
    document = rss(*(post(n) for n in range(50)))
    assert len(parse(document).entries) == 50
    with pytest.raises(ParseError) as caught:
        parse(document, budget=0.0)
    assert caught.value.kind == "too_complex"
    assert "CPU time" in caught.value.message


def test_budget_raises_once_spent_and_names_the_step() -> None:
    clock = ticks()
    budget = Budget(URL, 2.5, clock=lambda: next(clock))  # deadline 2.5; the clock reads 1, 2, 3
    budget.check("one")
    budget.check("two")
    with pytest.raises(ParseError, match="three") as caught:
        budget.check("three")
    assert caught.value.kind == "too_complex" and caught.value.url == URL


def test_the_budget_on_the_thread_clock_raises_once_cpu_time_is_spent() -> None:
    budget = Budget(URL, 0.05)
    budget.check("at once")  # nothing spent yet
    time.sleep(0.1)  # wall time passes, CPU time does not
    budget.check("after sleeping")
    started = time.thread_time()
    with pytest.raises(ParseError, match="busy") as caught:
        while time.thread_time() - started < 5.0:  # bounded: the budget ends it after 0.05 s of CPU time
            budget.check("busy")
    assert caught.value.kind == "too_complex"


def test_the_budget_is_checked_while_feedparser_reads() -> None:
    document = prepare_xml(rss(*(post(n) for n in range(3000))))
    assert len(document) > 4 * feedreader.CHUNK
    reads = 0

    def clock() -> float:
        nonlocal reads
        reads += 1
        return 0.0

    assert len(feedreader.read(document, URL, Budget(URL, 1.0, clock=clock)).entries) == 3000
    assert reads > 4  # once to start, then before every piece
    clock_steps = ticks()
    with pytest.raises(ParseError) as caught:  # spent after the third piece: feedparser never finishes
        feedreader.read(document, URL, Budget(URL, 3.5, clock=lambda: next(clock_steps)))
    assert caught.value.kind == "too_complex"


def test_the_tolerant_parser_is_read_in_pieces_too() -> None:
    broken = prepare_xml(rss(*(post(n) for n in range(3000)))).replace("</channel>", "<description>x < y")
    assert len(feedreader.read(broken, URL, Budget(URL, 10.0)).entries) == 3000
    clock_steps = ticks()
    with pytest.raises(ParseError) as caught:
        feedreader.read(broken, URL, Budget(URL, 6.5, clock=lambda: next(clock_steps)))
    assert caught.value.kind == "too_complex"


# --- structural limits ------------------------------------------------------------------


#: A tag left open inside its parent: the document is malformed, so the fast reader declines it and
#: feedparser's limits apply.
MALFORMED = "<description><b>x</description>"


def test_escaped_html_in_a_malformed_feed_is_not_too_dense() -> None:
    escaped = "&lt;p&gt;A &lt;em&gt;word&lt;/em&gt; or two.&lt;/p&gt; " * 30_000  # 180,000 references
    parsed = parse(item(MALFORMED + f"<content:encoded>{escaped}</content:encoded>"))
    assert parsed.entries[0].content.count("<em>") == 30_000


@pytest.mark.parametrize(
    ("document", "words"),
    [
        (item("<x>" * (MAX_DEPTH + 1) + "</x>" * (MAX_DEPTH + 1)), "nested more than"),
        (item(MALFORMED + "<x>word</x>" * (MAX_TAGS // 2 + 1)), "more than 200,000 tags"),
        (item(MALFORMED + "<a/>" * (DENSE_MIN_TAGS + 1)), "more than one tag"),
        (
            item(MALFORMED + "<title>" + "&" * REFERENCES_PER_TAG * (DENSE_MIN_TAGS + 1) + "</title>"),
            "and 160,008 references in",
        ),
        (item("<a/>" * (FAST_MAX_TAGS + 1)), "more than 1,000,000 tags"),
    ],
    ids=["deep", "many-tags", "dense", "dense-references", "too-many-for-lxml"],
)
def test_documents_beyond_the_structural_limits_are_too_complex(document: str, words: str) -> None:
    with pytest.raises(ParseError, match=words) as caught:
        parse(document)
    assert caught.value.kind == "too_complex"


def test_a_dense_well_formed_document_is_read_by_the_fast_reader_but_not_too_many_tags() -> None:
    many = item("<x>word</x>" * (MAX_TAGS // 2 + 1))
    dense = item("<a/>" * (DENSE_MIN_TAGS + 1))
    assert parse(dense).entries[0].link == "https://blog.example.org/1"
    with pytest.raises(ParseError, match="outside XHTML content"):
        parse(many)


def test_documents_within_the_structural_limits_parse() -> None:
    check_structure(item("<x>" * (MAX_DEPTH - 10) + "</x>" * (MAX_DEPTH - 10)), URL)
    check_structure(item("<a/>" + "x" * 20) * (DENSE_MIN_TAGS // 2), URL)
    assert parse(item("<x>" * 500 + "deep" + "</x>" * 500)).entries[0].link == "https://blog.example.org/1"


def full_text_atom(entries: int, paragraphs: int, extra_root: str = "", xhtml: bool = False) -> str:
    """An Atom feed of full-text entries whose HTML content, in CDATA (or with ``xhtml``, as
    ``type="xhtml"`` content), is denser than one ``<`` per 16 characters (short paragraphs of
    inline markup, as a full-text feed writes them)."""

    def body(n: int) -> str:
        return "".join(f"<p>Part {n}.{k}, <em>a</em> <b>b</b> <i>c</i>.</p>\n" for k in range(paragraphs))

    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        f'<feed xmlns="http://www.w3.org/2005/Atom"{extra_root}><title>Full Text</title><id>urn:full</id>'
        '<link href="https://full.example.org/"/><updated>2026-11-29T10:00:00Z</updated>'
        + "".join(
            f"<entry><id>urn:full:{n}</id><title>Entry {n}</title>"
            f'<link href="https://full.example.org/{n}"/>'
            f"<updated>2026-11-{1 + n % 28:02d}T10:00:00Z</updated>"
            + (
                f'<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">{body(n)}</div></content>'
                if xhtml
                else f'<content type="html"><![CDATA[{body(n)}]]></content>'
            )
            + "</entry>"
            for n in range(entries)
        )
        + "</feed>"
    )


def test_html_in_cdata_denser_than_the_tag_limit_parses() -> None:
    document = full_text_atom(30, 90)
    assert document.count("<") > DENSE_MIN_TAGS and len(document) < document.count("<") * 16  # the old guard's refusal
    parsed = parse(document)
    assert len(parsed.entries) == 30 and "<em>a</em>" in parsed.entries[0].content


def test_dense_tags_outside_cdata_are_still_too_complex() -> None:
    document = item(MALFORMED + "<![CDATA[x]]><!-- c -->" + "<a/>" * (DENSE_MIN_TAGS + 1))
    with pytest.raises(ParseError, match="more than one tag") as caught:
        parse(document)
    assert caught.value.kind == "too_complex"


def atom_with_root_attributes(count: int, broken: bool = False) -> str:
    attributes = "".join(f' a{n}="v"' for n in range(count))
    document = full_text_atom(1, 1, extra_root=attributes)
    return document.replace("<b>b</b>", "<b>b</b>]]> a < b <![CDATA[") if broken else document


@pytest.mark.parametrize("broken", [False, True], ids=["well-formed", "malformed"])
def test_an_element_with_too_many_attributes_is_too_complex(broken: bool) -> None:
    with pytest.raises(ParseError, match=f"more than {MAX_ATTRIBUTES} attributes") as caught:
        parse(atom_with_root_attributes(50_000, broken))
    assert caught.value.kind == "too_complex" and caught.value.url == URL


@pytest.mark.parametrize("broken", [False, True], ids=["well-formed", "malformed"])
def test_an_element_at_the_attribute_limit_parses(broken: bool) -> None:
    parsed = parse(atom_with_root_attributes(MAX_ATTRIBUTES - 1, broken))  # and xmlns
    assert [entry.title for entry in parsed.entries] == ["Entry 0"]


def test_the_fast_reader_refuses_an_element_with_too_many_attributes_too() -> None:
    from syndicator.parse import fastreader

    with pytest.raises(ParseError, match="attributes") as caught:
        fastreader.read(prepare_xml(atom_with_root_attributes(MAX_ATTRIBUTES + 1)), Budget(URL))
    assert caught.value.kind == "too_complex"


def test_html_with_a_tag_of_too_many_attributes_is_published_as_text() -> None:
    tag = "&lt;p" + "".join(f" a{n}=&quot;v&quot;" for n in range(MAX_ATTRIBUTES + 1)) + "&gt;"
    parsed = parse(item(f"<description>{tag}kept &lt;b&gt;words&lt;/b&gt;</description>"))
    assert parsed.entries[0].summary == "<p>kept words</p>"
    fine = "&lt;p" + "".join(f" a{n}=&quot;v&quot;" for n in range(10)) + "&gt;kept &lt;b&gt;words&lt;/b&gt;"
    assert parse(item(f"<description>{fine}</description>")).entries[0].summary == "<p>kept <b>words</b></p>"


# --- fields with a natural size ---------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "start"),
    [
        ("&lt;b&gt;word " * 100_000, "<b>word <b>word"),  # element starts without an end tag: kept literally
        ("&lt;b&gt;Bold&lt;/b&gt; " + "word " * 200_000, "Bold word word"),  # markup: stripped
    ],
    ids=["many-starts", "markup"],
)
def test_a_long_title_is_cut(title: str, start: str) -> None:
    entry = parse(item(f"<title>{title}</title>")).entries[0]
    assert entry.title.startswith(start)
    assert TITLE_MAX_CHARS - 10 <= len(entry.title) <= TITLE_MAX_CHARS


@pytest.mark.parametrize(
    "author",
    ["a" * 1_000_000, "<![CDATA[" + "a." * 500_000 + "]]>", "x" * 300_000 + "@" + "y" * 300_000],
    ids=["word-run", "cdata-dots", "no-domain-dot"],
)
def test_a_long_author_is_cut(author: str) -> None:
    entry = parse(item(f"<title>t</title><author>{author}</author>")).entries[0]
    assert entry.author is not None and 0 < len(entry.author) <= AUTHOR_MAX_CHARS


def test_an_address_in_a_long_run_is_still_removed() -> None:
    entry = parse(item("<title>t</title><author>" + "Jane Doe " * 20 + "jane@example.org</author>")).entries[0]
    assert entry.author is not None and "@" not in entry.author and entry.author.startswith("Jane Doe")


def test_a_long_date_is_unreadable_and_its_note_is_short() -> None:
    entry = parse(item("<title>t</title><pubDate>Tue, 12 Mar 2024 10:00:00 GMT " + "1 " * 500_000 + "</pubDate>"))
    first = entry.entries[0]
    assert first.date is None
    assert first.date_note is not None and first.date_note.startswith("unreadable date") and len(first.date_note) < 400


def test_dates_longer_than_the_cap_are_unreadable() -> None:
    assert parse_date("Tue, 12 Mar 2024 10:00:00 GMT" + " " * 100_000) is not None  # white space is squeezed first
    assert parse_date("Tue, 12 Mar 2024 10:00:00 GMT" + " x" * 20) is not None  # unknown words are dropped...
    assert parse_date("Tue, 12 Mar 2024 10:00:00 GMT" + " x" * DATE_MAX_CHARS) is None  # ...but not without end


@pytest.mark.parametrize(
    "summary",
    [
        "&lt;div&gt;" * 5_000 + "deep text",
        "&lt;b id=1&gt;x " * 5_000 + "deep text",
        "&amp;amp; " * 30_000 + "deep text",
    ],
    ids=["deep-divs", "unclosed-formatting", "many-references"],
)
def test_costly_html_is_published_as_escaped_text(summary: str) -> None:
    entry = parse(item(f"<title>t</title><description>{summary}</description>")).entries[0]
    assert entry.summary.startswith("<p>") and entry.summary.endswith("deep text</p>")
    assert "<div" not in entry.summary and "<b" not in entry.summary


# --- exceptions hostile input provokes ---------------------------------------------------


def test_json_nested_beyond_the_recursion_limit_is_too_complex() -> None:
    depth = sys.getrecursionlimit() * 10
    document = '{"version": "https://jsonfeed.org/version/1.1", "items": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(ParseError, match="nested") as caught:
        parse(document, content_type="application/feed+json")
    assert caught.value.kind == "too_complex"


@pytest.mark.parametrize("label", ["rot13", "base64", "zlib", "hex", "x-no-such-charset"])
def test_a_bogus_charset_label_is_ignored(label: str) -> None:
    body = rss(post(1), title="Caf\xe9").encode("cp1252").replace(b'encoding="utf-8"', f'encoding="{label}"'.encode())
    parsed = parse_feed(body, URL, {"content-type": f"application/xml; charset={label}"}, NOW)
    assert parsed.title == "Café" and len(parsed.entries) == 1


def test_a_json_feed_with_an_unreadable_number_is_a_parse_error() -> None:
    document = '{"version": "https://jsonfeed.org/version/1.1", "items": [{"id": ' + "9" * 5_000 + "}]}"
    with pytest.raises(ParseError) as caught:
        parse(document, content_type="application/feed+json")
    assert caught.value.kind == "parse"


def test_entity_bombs_are_not_expanded() -> None:
    lol = "".join(f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10))
    document = item("<title>&lol9;</title>").replace("<rss", f'<!DOCTYPE rss [<!ENTITY lol0 "lol">{lol}]><rss', 1)
    assert parse(document).entries[0].title == "&lol9;"


# --- through the real CLI: a too-complex body is not parsed again -----------------------


def test_a_too_complex_body_is_not_parsed_twice(server: HTTPServer, tmp_path: Path) -> None:
    # 15,000 small elements first, so that refusing it costs milliseconds of CPU time that report.json shows
    hostile = item(("<p>" + "x" * 30 + "</p>") * 15_000 + "<x>" * (MAX_DEPTH + 1) + "</x>" * (MAX_DEPTH + 1))
    server.expect_request("/hostile.xml").respond_with_data(hostile, content_type="application/rss+xml")
    server.expect_request("/good.xml").respond_with_data(rss(post(1)), content_type="application/rss+xml")
    config = write_config(
        tmp_path,
        [
            {"name": "Hostile", "feed": server.url_for("/hostile.xml")},
            {"name": "Good", "feed": server.url_for("/good.xml")},
        ],
        sites_page_details=True,
    )
    report = tmp_path / "cache" / "report.json"
    assert build(config).exit_code == 0
    first = json.loads(report.read_text())
    assert first["failed_by_class"] == {"too_complex": 1} and first["parsed"] == 1 and first["parse_seconds"] > 0
    assert build(config, "--force", now="2026-11-30T13:00:00Z").exit_code == 0
    second = json.loads(report.read_text())
    assert second["failed_by_class"] == {"too_complex": 1}
    assert (second["parsed"], second["unchanged_by_hash"], second["failed"]) == (0, 1, 1)
    assert second["parse_seconds"] == 0.0  # neither body parsed: one unchanged, one known to be too complex
    assert sum(1 for request, _ in server.log if request.path == "/hostile.xml") == 2
    assert "too complex to parse" in (tmp_path / "public" / "sites.html").read_text()


# --- the e-mail address remover: no address survives, a name without one is kept -----------

PIECES = ["a", "B", "1", ".", "@", " ", "mailto:", "MAILTO:", "-", "!", "(", ")", "<", ">", "x.org", "é", "_", ":", "+"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_no_address_survives_the_remover(text: str) -> None:
    name = author_name(text) or ""
    words = re.split(r"""[\s()<>\[\]{},;"]+""", name)
    assert not any("@" in word[1:] or "mailto:" in word.lower() for word in words), name
    if "@" not in text and "mailto:" not in text.lower() and not re.search(r"[()<>]", text):
        assert name == (one_line(text).strip(" ,;:/|-") or "")


def test_addresses_in_long_word_runs_are_removed() -> None:
    assert author_name("a" * 7_000 + "@example.org Jane") == "Jane"
    assert author_name("a" * 500_000 + "@example.org Jane") == "a" * AUTHOR_MAX_CHARS  # read only so far
    assert author_name("Jane " + "a" * 500_000) == "Jane " + "a" * (AUTHOR_MAX_CHARS - 5)


# --- the expat pre-check that spares a malformed document feedparser's strict pass --------


def sax_error(data: bytes) -> str | None:
    """What xml.sax, set up as feedparser sets it up, stops at (str), or None."""
    parser = xml.sax.make_parser()
    parser.setFeature(xml.sax.handler.feature_namespaces, 1)
    parser.setFeature(xml.sax.handler.feature_external_ges, 0)
    source = xml.sax.xmlreader.InputSource()
    source.setByteStream(io.BytesIO(data))
    try:
        parser.parse(source)
    except xml.sax.SAXParseException as error:
        return str(error)
    return None


@pytest.mark.parametrize(
    "document",
    [
        rss(post(1)),
        rss(post(1)).replace("</channel>", "<x:y/></channel>"),
        rss(post(1))[:-40],
        '<?xml version="1.0"?><!DOCTYPE rss SYSTEM "http://example.org/rss.dtd"><rss>&undeclared;</rss>',
        '<?xml version="1.0" standalone="yes"?><rss>&undeclared;</rss>',
        "<rss><a></b></rss>",
        "",
    ],
    ids=["well-formed", "unbound-prefix", "truncated", "external-dtd-entity", "standalone-entity", "mismatch", "empty"],
)
def test_the_pre_check_finds_what_the_sax_parser_finds(document: str) -> None:
    data = document.encode("utf-8")
    error = feedreader._syntax_error(data)
    assert (str(error) if error else None) == sax_error(data)


# --- through the real CLI: a dense full-text feed publishes, an attribute bomb does not stall its neighbours ---


def test_a_full_text_feed_denser_than_the_old_guard_publishes(server: HTTPServer, tmp_path: Path) -> None:
    document = full_text_atom(60, 60)
    assert document.count("<") > DENSE_MIN_TAGS and len(document) < document.count("<") * 16
    server.expect_request("/full.xml").respond_with_data(document, content_type="application/atom+xml")
    config = write_config(tmp_path, [{"name": "Full", "feed": server.url_for("/full.xml")}])
    result = build(config)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert report["failed"] == 0 and report["parsed"] == 1
    page = (tmp_path / "public" / "index.html").read_text()
    assert "Entry 55" in page and "<em>a</em>" in page  # day 28, the newest


def test_a_full_text_xhtml_feed_past_feedparser_s_tag_limits_publishes(server: HTTPServer, tmp_path: Path) -> None:
    document = full_text_atom(150, 180, xhtml=True)
    assert document.count("<") > MAX_TAGS  # refused before the fast reader read XHTML content
    server.expect_request("/xhtml.xml").respond_with_data(document, content_type="application/atom+xml")
    # new_feed_items: all, so that the last entries of the document (past the limits) can be published
    config = write_config(tmp_path, [{"name": "Xhtml", "feed": server.url_for("/xhtml.xml")}], new_feed_items="all")
    result = build(config)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert report["failed"] == 0 and report["parsed"] == 1
    page = (tmp_path / "public" / "index.html").read_text()
    assert "Entry 139" in page and "<em>a</em>" in page  # day 28, the newest


def test_an_attribute_bomb_fails_alone_and_its_neighbour_publishes(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/bomb.xml").respond_with_data(
        atom_with_root_attributes(100_000), content_type="application/atom+xml"
    )
    server.expect_request("/good.xml").respond_with_data(rss(post(1)), content_type="application/rss+xml")
    config = write_config(
        tmp_path,
        [{"name": "Bomb", "feed": server.url_for("/bomb.xml")}, {"name": "Good", "feed": server.url_for("/good.xml")}],
        sites_page_details=True,
    )
    result = build(config)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert report["failed_by_class"] == {"too_complex": 1} and report["parsed"] == 1
    assert "Post 1" in (tmp_path / "public" / "index.html").read_text()
    assert "attributes" in (tmp_path / "public" / "sites.html").read_text()
