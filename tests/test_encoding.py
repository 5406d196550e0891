"""Bytes in any encoding, broken XML, control characters and HTML pages served as feeds."""

from __future__ import annotations

import sys
import types

import feedparser.encodings
import pytest

from syndicator.errors import NotAFeedError, ParseError
from syndicator.parse import fastreader
from syndicator.parse.encoding import decode, prepare_xml
from syndicator.parse.feed import parse_feed
from syndicator.parse.limits import Budget

from .conftest import NOW

URL = "https://feeds.example.org/feed.xml"
TITLES = ["Café crème", "Ünïcödé “quotes”", "Plain"]


def rss_bytes(encoding: str, declared: str | None = None, titles: list[str] = TITLES) -> bytes:
    declaration = f'<?xml version="1.0" encoding="{declared}"?>' if declared else ""
    items = "".join(
        f"<item><title>{t}</title><link>https://blog.example.org/{i}</link></item>" for i, t in enumerate(titles)
    )
    text = f'{declaration}<rss version="2.0"><channel><title>F</title><link>https://blog.example.org/</link>{items}</channel></rss>'
    return text.encode(encoding)


def titles(body: bytes, content_type: str = "application/rss+xml") -> list[str]:
    return [e.title for e in parse_feed(body, URL, {"content-type": content_type}, NOW).entries]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (rss_bytes("utf-8", "utf-8"), ""),
        (rss_bytes("utf-8", "iso-8859-1"), ""),  # declaration disagrees with the bytes
        (rss_bytes("utf-8"), "text/xml; charset=windows-1252"),  # header disagrees with the bytes
        (rss_bytes("cp1252", "iso-8859-1"), ""),  # "Latin-1" with windows-1252 quotes
        (rss_bytes("cp1252"), ""),  # no declaration at all
        (b"\xef\xbb\xbf" + rss_bytes("utf-8", "utf-8"), ""),
        (rss_bytes("utf-16", "utf-16"), ""),  # with its byte-order mark
        (rss_bytes("utf-16-le", "utf-16"), ""),  # without one
    ],
    ids=[
        "utf8",
        "declared-latin1-is-utf8",
        "header-wrong",
        "windows-1252",
        "undeclared-1252",
        "bom",
        "utf16-bom",
        "utf16-no-bom",
    ],
)
def test_every_encoding_ends_as_correct_text(body: bytes, content_type: str) -> None:
    assert titles(body, content_type) == TITLES


def test_declared_gb2312_with_gbk_bytes() -> None:
    chinese = ["中文标题", "镕基"]  # 镕 is in GBK, not in GB2312
    assert titles(rss_bytes("gbk", "gb2312", chinese)) == chinese


def test_a_stray_byte_spoils_one_character_only() -> None:
    body = rss_bytes("utf-8", "utf-8").replace(b"Plain", b"Pl\xe4in")  # a Latin-1 byte in UTF-8
    assert titles(body) == ["Café crème", "Ünïcödé “quotes”", "Pläin"]
    spoiled = rss_bytes("utf-8", "utf-8").replace(b"Plain", b"Pl\x81in")  # undefined everywhere
    assert titles(spoiled)[:2] == TITLES[:2]
    assert titles(spoiled)[2] in ("Pl\ufffdin", "Plin")


def test_result_does_not_depend_on_an_encoding_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    bodies = [
        rss_bytes("cp1252"),
        rss_bytes("utf-8", "iso-8859-1"),
        rss_bytes("utf-8", "utf-8").replace(b"Plain", b"Pl\xe4in"),
    ]
    without = [titles(b) for b in bodies]
    fake = types.ModuleType("chardet")
    fake.detect = lambda data: {"encoding": "koi8-r", "confidence": 1.0}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "chardet", fake)
    monkeypatch.setattr(feedparser.encodings, "chardet", fake, raising=False)
    monkeypatch.setattr(
        feedparser.encodings, "lazy_chardet_encoding", lambda data: fake.detect(data)["encoding"], raising=False
    )
    assert [titles(b) for b in bodies] == without


def test_forbidden_control_characters_never_survive() -> None:
    body = rss_bytes("utf-8", "utf-8", ["Esc\x1bape", "Ref&#27;ed &#x1B;x", "Null\x00ish", "Tab\tok"])
    assert titles(body) == ["Escape", "Refed x", "Nullish", "Tab ok"]


def test_html_entities_undefined_in_xml_do_not_fail_the_feed() -> None:
    body = rss_bytes("utf-8", "utf-8", ["a&nbsp;b", "&ldquo;quoted&rdquo; &hellip;", "AT&T and &unknown; &#8217;"])
    assert titles(body) == ["a\u00a0b", "“quoted” …", "AT&T and &unknown; ’"]  # a no-break space is kept


def test_prepare_xml_leaves_cdata_and_comments_alone() -> None:
    text = "<rss><![CDATA[a &nbsp; & b]]><!-- &nbsp; --> &nbsp; & </rss>"
    assert prepare_xml(text) == (
        '<?xml version="1.0" encoding="utf-8"?>\n<rss><![CDATA[a &nbsp; & b]]><!-- &nbsp; --> &#160; &amp; </rss>'
    )


def test_a_less_than_sign_that_starts_no_tag_is_text() -> None:
    text = "<rss><t>x < y <= z <3 <<b>a</b> <![CDATA[ a < b ]]> <!-- < --> <é/> </t></rss>"
    assert prepare_xml(text) == (
        '<?xml version="1.0" encoding="utf-8"?>\n<rss><t>x &lt; y &lt;= z &lt;3 '
        "&lt;<b>a</b> <![CDATA[ a < b ]]> <!-- < --> <é/> </t></rss>"
    )
    body = rss_bytes("utf-8", "utf-8", ["a < b", "I <3 feeds", "Plain"])
    assert fastreader.read(prepare_xml(body.decode()), Budget(URL, 10.0)) is not None  # no tolerant parser
    assert titles(body) == ["a < b", "I <3 feeds", "Plain"]


def test_junk_and_whitespace_before_the_declaration_are_dropped() -> None:
    body = b"\n\n  " + rss_bytes("utf-8", "utf-8")
    assert titles(body) == TITLES
    assert titles(b"garbage</channel>\n" + rss_bytes("utf-8", "utf-8")) == TITLES


def test_a_bozo_document_that_yielded_entries_is_accepted() -> None:
    truncated = rss_bytes("utf-8", "utf-8")[:-30]  # cut inside the last item: not well-formed
    assert titles(truncated)[:2] == TITLES[:2]


def test_a_broken_document_without_entries_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as caught:
        parse_feed(b'<?xml version="1.0"?><rss version="2.0"><channel><title>x</ti', URL, {}, NOW)
    assert caught.value.kind == "parse"


PAGE = b"""<!DOCTYPE html><html><head><title>Blog</title>
<link rel="alternate" type="application/rss+xml" title="RSS" href="/feed.rss">
<link rel="alternate" type="application/atom+xml" href="https://blog.example.org/atom.xml">
<link rel="alternate" type="application/feed+json" href="feed.json">
<link rel="alternate" type="application/json" href="/wp-json/wp/v2/pages/2">
<link rel="alternate" type="application/json+oembed" href="/oembed?x">
<link rel="alternate" hreflang="de" href="/de/">
<link rel="stylesheet" href="/style.css">
</head><body><p>Hello</p></body></html>"""


def test_an_html_page_names_the_feeds_it_advertises() -> None:
    with pytest.raises(NotAFeedError) as caught:
        parse_feed(PAGE, "https://blog.example.org/blog/", {"content-type": "text/html"}, NOW)
    # Best first (discover.rank): the feed under the page's own path, then the site's, in the page's order.
    assert caught.value.alternates == [
        "https://blog.example.org/blog/feed.json",
        "https://blog.example.org/feed.rss",
        "https://blog.example.org/atom.xml",
    ]
    assert "https://blog.example.org/blog/feed.json" in str(caught.value)
    assert caught.value.kind == "not_a_feed"


def test_an_xhtml_page_embedding_a_feed_is_still_a_page() -> None:
    page = (
        b'<?xml version="1.0"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x.dtd">'
        b'<html xmlns="http://www.w3.org/1999/xhtml"><body><feed xmlns="http://www.w3.org/2005/Atom">'
        b"<title>t</title><entry><title>e</title><id>urn:x</id></entry></feed></body></html>"
    )
    with pytest.raises(NotAFeedError):
        parse_feed(page, URL, {}, NOW)


def test_decode_prefers_valid_utf8_over_a_wrong_declaration() -> None:
    assert decode("<?xml version='1.0' encoding='iso-8859-1'?><a>é</a>".encode()).endswith("<a>é</a>")
    assert decode("<a>é</a>".encode("cp1252")) == "<a>é</a>"


def test_prepare_xml_rebuilds_the_prolog() -> None:
    text = (
        '<?xml version="1.0" encoding="iso-8859-1" standalone="yes"?>\n<!-- licence -->\n'
        '<?xml-stylesheet href="s.xsl"?>\n<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"\n'
        ' "http://my.netscape.com/publish/formats/rss-0.91.dtd" [<!ENTITY nbsp "&#160;"> <!ENTITY me "Me">\n'
        '<!ENTITY lol2 "&lol;&lol;">]>\n<rss>&nbsp;&me;&lol2;&copy;</rss>'
    )
    assert prepare_xml(text) == (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" '
        '"http://my.netscape.com/publish/formats/rss-0.91.dtd" [\n<!ENTITY nbsp "&#160;">\n]>\n'
        "<rss>&nbsp;&amp;me;&amp;lol2;&#169;</rss>"
    )


def test_a_hostile_prolog_is_rebuilt_short() -> None:
    # feedparser's line-anchored prolog regexes take time quadratic in blank lines and unclosed declarations
    text = '<?xml version="1.0"?><!DOCTYPE rss [' + "\n" * 200_000 + "<!ENTITY a\n" * 50_000 + "]><rss>x</rss>"
    assert prepare_xml(text) == '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE rss>\n<rss>x</rss>'


@pytest.mark.parametrize("label", ["rot13", "base64", "zlib_codec", "hex"])
def test_codecs_that_are_not_text_encodings_are_ignored(label: str) -> None:
    body = '<?xml version="1.0"?><rss>Caf\xe9</rss>'.encode("cp1252")
    assert decode(body, f"text/xml; charset={label}") == '<?xml version="1.0"?><rss>Café</rss>'
