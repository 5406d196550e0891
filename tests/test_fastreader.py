"""The lxml fast path gives the very feed feedparser gives, or steps aside.

Every document is parsed twice through :func:`parse.parse_feed`: once as
shipped (fast path first) and once with the fast path switched off, and the
two ParsedFeeds must be equal: the same entries, ids, titles, links, dates,
authors, enclosures, images and sanitized content. The real-world corpus
(``../shared/corpus``) is the main evidence; the documents below pin the
feedparser habits the fast path follows, and the ones it leaves to feedparser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from syndicator.errors import FeedError
from syndicator.parse import fastreader
from syndicator.parse.feed import parse_feed

from .conftest import NOW
from .test_corpus_parse import CORPUS

DATA = Path(__file__).parent / "data"


def _parse(body: bytes, monkeypatch: pytest.MonkeyPatch, fast: bool) -> tuple[Any, bool]:
    """(ParsedFeed or the error's kind and message, whether the fast path read it)."""
    took: list[bool] = []
    real = fastreader.read

    def spy(prepared: str, budget: Any) -> Any:
        document = real(prepared, budget) if fast else None
        took.append(document is not None)
        return document

    with monkeypatch.context() as patch:
        patch.setattr(fastreader, "read", spy)
        try:
            result: Any = parse_feed(body, "https://example.org/blog/feed", {}, NOW)
        except FeedError as error:
            result = (error.kind, error.message)
    return result, any(took)


def both(body: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, bool]:
    """(fast result, feedparser result, whether the fast path was taken)."""
    fast, took = _parse(body, monkeypatch, True)
    slow, _ = _parse(body, monkeypatch, False)
    return fast, slow, took


def _corpus_files() -> list[Path]:
    folder = CORPUS / "feeds"
    return sorted(path for path in folder.iterdir() if path.is_file()) if folder.is_dir() else []


CORPUS_FILES = _corpus_files()


@pytest.mark.skipif(not CORPUS_FILES, reason=f"corpus not found at {CORPUS} (set SYNDICATOR_CORPUS)")
def test_the_whole_corpus_parses_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    differ, fast = [], 0
    for path in CORPUS_FILES:
        quick, slow, took = both(path.read_bytes(), monkeypatch)
        fast += took
        if quick != slow:
            differ.append(path.name)
    assert differ == []
    # The fast path must stay the common path: 200 of the corpus's 283 XML feeds when this was written.
    assert fast >= 190, f"only {fast} corpus feeds took the fast path"


XML_DATA = sorted(path for path in DATA.iterdir() if path.suffix in (".xml", ".rss", ".atom"))


@pytest.mark.parametrize("path", XML_DATA, ids=[path.name for path in XML_DATA])
def test_the_project_s_own_test_feeds_parse_the_same_either_way(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    quick, slow, _ = both(path.read_bytes(), monkeypatch)
    assert quick == slow


RSS = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
     xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:media="http://search.yahoo.com/mrss/"
     xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:atom="http://www.w3.org/2005/Atom">
<channel><title>A channel</title><link>https://example.org/</link>
<itunes:owner><itunes:name>The Owner</itunes:name><itunes:email>owner@example.org</itunes:email></itunes:owner>
{items}
</channel></rss>"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://example.org/base/">
<title type="text">An &lt;Atom&gt; feed</title><id>tag:example.org,2025:feed</id>
<link rel="alternate" href="/home"/>
{items}
</feed>"""

#: Documents that hold the feedparser habits the fast path must follow, each read by the fast path.
FOLLOWED = {
    "guid stands in for the link": RSS.format(
        items="""
        <item><guid>https://example.org/p/1</guid><title>One</title></item>
        <item><guid isPermaLink="false">post-2</guid><title>Two</title><description>x</description></item>"""
    ),
    "a second description is content": RSS.format(
        items="""
        <item><title>T</title><link>https://example.org/a</link>
        <description>first &lt;b&gt;summary&lt;/b&gt;</description><description>second, &lt;p&gt;longer&lt;/p&gt;
        text</description></item>"""
    ),
    "content before and after the description": RSS.format(
        items="""
        <item><title>A</title><link>https://example.org/a</link>
        <content:encoded><![CDATA[<p>Full <img src="/i.png"> text</p>]]></content:encoded>
        <description>Short</description></item>
        <item><title>B</title><link>https://example.org/b</link><description>Short</description>
        <content:encoded><![CDATA[<p>Full text, much longer than the summary</p>]]></content:encoded></item>"""
    ),
    "media:title before the title, media:description deep inside": RSS.format(
        items="""
        <item><media:title>Media title</media:title><title>Real title</title><link>https://example.org/m</link>
        <description>The description</description>
        <media:group><media:content url="https://cdn.example.org/v.mp4" type="video/mp4" duration="61">
        <media:description>Deep description</media:description>
        <media:thumbnail url="https://cdn.example.org/t.jpg" width="640" height="360"/></media:content>
        </media:group></item>"""
    ),
    "authors in every form": RSS.format(
        items="""
        <item><title>1</title><link>https://example.org/1</link><author>jo@example.org (Jo Writer)</author></item>
        <item><title>2</title><link>https://example.org/2</link><dc:creator>Dee</dc:creator>
        <dc:creator>Second</dc:creator><itunes:author>The Show</itunes:author></item>
        <item><title>3</title><link>https://example.org/3</link></item>"""
    ),
    "repairs of text: UTF-8 read as Latin-1, C1 controls, markup in an RSS title": RSS.format(
        items="""
        <item><title>Caf\u00c3\u00a9 \u0093quoted\u0094 &lt;em&gt;now&lt;/em&gt;</title>
        <link>https://example.org/c?a=1&amp;b=2</link><pubDate>Mon, 06 Jan 2025 10:00:00 GMT</pubDate>
        <dc:creator>JosÃ©  writer</dc:creator>
        </item>"""
    ),
    "enclosures, itunes duration and image": RSS.format(
        items="""
        <item><title>Episode</title><link>https://example.org/e</link>
        <enclosure url="/audio/e.mp3" length="12345" type="audio/mpeg"/><itunes:duration>1:02:03</itunes:duration>
        <itunes:image href="https://example.org/cover.jpg"/><source url="https://other.example/feed">Other</source>
        <title>A late second title</title></item>"""
    ),
    "atom with xml:base, html and text bodies, several authors": ATOM.format(
        items="""
        <entry xml:base="/posts/"><title type="html">&lt;b&gt;Bold&lt;/b&gt; title</title>
        <id>tag:example.org,2025:1</id><link href="one.html"/><link rel="enclosure" href="a.ogg" type="audio/ogg"/>
        <updated>2025-01-06T10:00:00Z</updated><published>2025-01-05T10:00:00Z</published>
        <author><name>First</name><email>first@example.org</email></author><author><name>Second</name></author>
        <summary>Plain &lt;not markup&gt;</summary>
        <content type="html">&lt;p&gt;See &lt;a href="rel/link"&gt;this&lt;/a&gt;&lt;/p&gt;</content></entry>
        <entry><title>No link: the id is one</title><id>https://example.org/by-id</id>
        <updated>2025-01-07T10:00:00Z</updated><content>text content
        on lines</content></entry>"""
    ),
    "XHTML content, summary and title": ATOM.format(
        items="""
        <entry><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">A <b>bold</b> title</div></title>
        <id>x</id><link href="/x"/><updated>2025-01-07T10:00:00Z</updated><content type="xhtml">
        <div xmlns="http://www.w3.org/1999/xhtml"><p>Hi<br/>there &amp; <a href="/y?a=1&amp;b=2" rel="NoFollow"
        title='say "hi"'>here</a> &lt;ok&gt;<!-- gone --><![CDATA[<kept as text>]]></p>
        <p lang="fr" xml:lang="fr">café <em>bien</em></p><img src="i.png" alt=""/></div></content></entry>
        <entry><title>Two divs</title><id>y</id><summary type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">a</div>
        <div xmlns="http://www.w3.org/1999/xhtml">b</div></summary><content type="xhtml">
        <xhtml:div xmlns:xhtml="http://www.w3.org/1999/xhtml"><xhtml:p class="c">prefixed</xhtml:p>
        </xhtml:div></content></entry>
        <entry><title>Unwrapped</title><id>z</id><content type="xhtml">text <div>unqualified</div> tail
        </content></entry>"""
    ),
}


@pytest.mark.parametrize("name", sorted(FOLLOWED))
def test_the_fast_path_follows_feedparser(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    quick, slow, took = both(FOLLOWED[name].encode("utf-8"), monkeypatch)
    assert took, "the fast path stepped aside"
    assert quick == slow


#: Documents the fast path must leave to feedparser.
LEFT = {
    "a DOCTYPE": RSS.format(items="<item><title>&a;</title></item>").replace(
        "<rss ", '<!DOCTYPE rss [<!ENTITY a "b">]>\n<rss ', 1
    ),
    "SVG in XHTML content": ATOM.format(
        items="""<entry><title>X</title><id>x</id><content type="xhtml">
        <div xmlns="http://www.w3.org/1999/xhtml"><svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>
        </div></content></entry>"""
    ),
    "xml:base inside XHTML content": ATOM.format(
        items="""<entry><title>X</title><id>x</id><content type="xhtml">
        <div xmlns="http://www.w3.org/1999/xhtml"><p xml:base="/other/"><a href="a">a</a></p></div></content>
        </entry>"""
    ),
    "markup that was not escaped": RSS.format(
        items="<item><title>X</title><description>a <b>b</b></description></item>"
    ),
    "RSS 1.0": """<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
        <channel rdf:about="https://example.org/"><title>R</title><link>https://example.org/</link></channel>
        <item rdf:about="https://example.org/1"><title>One</title><link>https://example.org/1</link></item>
        </rdf:RDF>""",
    "not well-formed": RSS.format(items="<item><title>Cut off</title><link>https://example.org/x</link>"),
    "an Atom source": ATOM.format(
        items="""<entry><title>S</title><id>s</id><source><author><name>Orig</name>
        </author></source></entry>"""
    ),
    "an element feedparser reads that the fast path does not": RSS.format(
        items="<item><title>G</title><georss:where xmlns:georss='http://www.georss.org/georss'>"
        "<gml:Point xmlns:gml='http://www.opengis.net/gml'><gml:pos>1 2</gml:pos></gml:Point>"
        "</georss:where></item>"
    ),
    "no entries": RSS.format(items=""),
}


@pytest.mark.parametrize("name", sorted(LEFT))
def test_the_fast_path_steps_aside(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    quick, slow, took = both(LEFT[name].encode("utf-8"), monkeypatch)
    assert not took
    assert quick == slow
