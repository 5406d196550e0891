"""Titles, sanitizing, relative URLs and truncation: one small feed per rule."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from syndicator.parse.feed import parse_feed
from syndicator.parse.sanitize import clean_html, html_to_text, truncate_html

from .conftest import NOW, rss

URL = "https://feeds.example.org/feed.xml"


def parse(document: str | bytes, url: str = URL, content_type: str = "application/xml"):
    body = document.encode("utf-8") if isinstance(document, str) else document
    return parse_feed(body, url, {"content-type": content_type}, NOW)


def atom(entries: str, base: str = "", feed_link: str = "https://blog.example.org/") -> str:
    base_attr = f' xml:base="{base}"' if base else ""
    return (
        f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"{base_attr}>'
        f"<title>T</title><id>urn:feed</id><updated>2026-11-01T00:00:00Z</updated>"
        f'<link rel="alternate" href="{feed_link}"/>{entries}</feed>'
    )


def atom_entry(title: str = "<title>x</title>", content: str = "", link: str = "/p/1", eid: str = "urn:e:1") -> str:
    return (
        f"<entry><id>{eid}</id>{title}<updated>2026-11-01T00:00:00Z</updated>"
        f'<link rel="alternate" href="{link}"/>{content}</entry>'
    )


@pytest.mark.parametrize(
    ("element", "expected"),
    [
        ("<title>AT&amp;T</title>", "AT&T"),
        ("<title><![CDATA[AT&T]]></title>", "AT&T"),
        ("<title>AT&amp;amp;T</title>", "AT&T"),  # RSS titles are HTML in practice: decoded once more
        ("<title>&lt;b&gt;Bold&lt;/b&gt; news</title>", "Bold news"),
        ("<title>Using &lt;div&gt; tags</title>", "Using <div> tags"),
        ("<title>Caf&eacute; &ldquo;ok&rdquo;</title>", "Café “ok”"),
    ],
    ids=["amp", "cdata", "double-escaped", "markup-stripped", "angle-literal", "html-entities"],
)
def test_rss_title_is_plain_text_decoded_once(element: str, expected: str) -> None:
    document = rss({"link": "https://blog.example.org/1"}).replace("<item>", "<item>" + element, 1)
    assert parse(document).entries[0].title == expected


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ('<title type="text">a &lt;b&gt; c &amp;amp; d</title>', "a <b> c &amp; d"),
        (
            '<title type="html">AT&amp;amp;T &lt;script&gt;x()&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;</title>',
            "AT&T bold",
        ),
        ('<title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">A <b>b</b></div></title>', "A b"),
    ],
    ids=["text-literal", "html-stripped", "xhtml-stripped"],
)
def test_atom_title_follows_its_type(title: str, expected: str) -> None:
    assert parse(atom(atom_entry(title=title))).entries[0].title == expected


HOSTILE = [
    "<script>alert(1)</script>",
    "<style>body{display:none}</style>",
    '<iframe src="https://evil.example/"></iframe>',
    '<object data="x.swf"></object>',
    '<embed src="x.swf">',
    '<form action="https://evil.example/"><input></form>',
    '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
    '<base href="https://evil.example/">',
    '<img src="x.png" onerror="alert(1)">',
    '<a href="javascript:alert(1)">j</a>',
    '<a href="JaVaScRiPt:alert(1)">j</a>',
    '<a href="&#106;avascript:alert(1)">j</a>',
    '<a href=" vbscript:msgbox(1)">v</a>',
    '<a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;">d</a>',
    '<img src="data:image/png;base64,AAAA">',
    '<img src="javascript:alert(1)">',
    '<svg onload="alert(1)"><circle/></svg>',
    '<p style="position:fixed">s</p>',
    '<video src="https://media.example/v.mp4" poster="https://media.example/p.png"></video>',
    '<audio src="https://media.example/a.mp3"></audio>',
    '<math><mi xlink:href="javascript:alert(1)">m</mi></math>',
    '<div onclick="alert(1)" onmouseover="x()">d</div>',
    '<link rel="stylesheet" href="https://evil.example/x.css">',
]


@pytest.mark.parametrize("fragment", HOSTILE)
def test_sanitizer_removes_active_content(fragment: str) -> None:
    from .outputs import html_problems

    cleaned = clean_html(fragment, "https://blog.example.org/post")
    assert html_problems(cleaned) == []
    assert "alert" not in re.sub(r">[^<]*<", "><", f">{cleaned}<")  # never inside markup
    assert not re.search(r"(?i)<(video|audio|source)\b", cleaned)


def test_sanitizer_keeps_text_markup_and_marks_outbound_links() -> None:
    cleaned = clean_html('<p>Hi <a href="https://x.example/">there</a> <img src="https://i.example/a.png" alt="a"></p>')
    assert cleaned == (
        '<p>Hi <a href="https://x.example/" rel="noopener noreferrer">there</a> '
        '<img src="https://i.example/a.png" alt="a"></p>'
    )


def test_mailto_survives_in_links_only() -> None:
    cleaned = clean_html(
        '<a href="mailto:jo@example.org">mail</a><blockquote cite="mailto:jo@example.org">q'
        '</blockquote><q cite="MAILTO:jo@example.org">c</q><img src="mailto:jo@example.org">'
    )
    assert cleaned == (
        '<a href="mailto:jo@example.org" rel="noopener noreferrer">mail</a><blockquote>q</blockquote><q>c</q><img>'
    )


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ('<svg><a xlink:href="javascript:x()"><text x="0">Hello</text></a></svg> world', "Hello world"),
        ("<math><maction>Hi</maction> <mi>there</mi></math><svg><script>alert(1)</script></svg>", "Hi there"),
        ("<SVG><set attributeName=onclick to=x()></set><text>Shown</text></SVG>", "Shown"),
    ],
    ids=["svg-link-text", "mathml-text", "upper-case"],
)
def test_title_keeps_the_text_of_svg_and_mathml(title: str, expected: str) -> None:
    assert html_to_text(title) == expected
    document = atom(atom_entry(title=f'<title type="html">{title.replace("&", "&amp;").replace("<", "&lt;")}</title>'))
    assert parse(document).entries[0].title == expected


def test_content_and_summary_are_sanitized_in_parse() -> None:
    item = {
        "link": "https://blog.example.org/1",
        "title": "t",
        "description": "&lt;p onclick='x()'&gt;Hi&lt;script&gt;alert(1)&lt;/script&gt;&lt;/p&gt;",
        "content:encoded": "<![CDATA[<p>Body<iframe src='https://evil.example/'></iframe></p>]]>",
    }
    entry = parse(rss(item)).entries[0]
    assert entry.summary == "<p>Hi</p>"
    assert entry.content == "<p>Body</p>"


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            atom(
                atom_entry(
                    content='<content type="html">&lt;a href="img/1"&gt;x&lt;/a&gt;</content>',
                    link="https://elsewhere.example/post/",
                ),
                base="https://base.example/dir/",
            ),
            "https://base.example/dir/img/1",
        ),
        (
            atom(
                atom_entry(
                    content='<content type="html">&lt;a href="img/1"&gt;x&lt;/a&gt;</content>',
                    link="https://entry.example/posts/7/",
                )
            ),
            "https://entry.example/posts/7/img/1",
        ),
        (
            rss({"title": "t", "description": '&lt;a href="img/1"&gt;x&lt;/a&gt;'}, link="https://home.example/blog/"),
            "https://home.example/blog/img/1",
        ),
        (
            rss({"title": "t", "description": '&lt;a href="img/1"&gt;x&lt;/a&gt;'}, link=""),
            "https://feeds.example.org/img/1",
        ),
    ],
    ids=["xml-base", "entry-link", "feed-link", "fetch-url"],
)
def test_relative_urls_resolve_in_order(document: str, expected: str) -> None:
    entry = parse(document).entries[0]
    assert f'href="{expected}"' in (entry.content or entry.summary)


def test_relative_entry_link_resolves_against_feed_link_then_fetch_url() -> None:
    with_feed_link = parse(rss({"title": "t", "link": "/p/1"}, link="https://home.example/blog/"))
    assert with_feed_link.entries[0].link == "https://home.example/p/1"
    assert parse(rss({"title": "t", "link": "p/1"}, link="")).entries[0].link == "https://feeds.example.org/p/1"


def test_relative_xml_base_resolves_like_a_link() -> None:
    document = atom(atom_entry(link="post", content='<content type="html">&lt;img src="i.png"&gt;</content>'))
    entry = parse(document.replace("<entry>", '<entry xml:base="/blog/">')).entries[0]
    assert entry.link == "https://blog.example.org/blog/post"
    assert 'src="https://blog.example.org/blog/i.png"' in entry.content
    entry = parse(
        document.replace("<entry>", '<entry xml:base="/blog/">').replace(
            '<link rel="alternate" href="https://blog.example.org/"/>', ""
        )
    ).entries[0]
    assert entry.link == "https://feeds.example.org/blog/post"


class _Balance(HTMLParser):
    VOID = {"br", "img", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.text = ""

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        assert self.stack and self.stack.pop() == tag, f"unbalanced </{tag}>"

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        self.text += data


def test_truncation_cuts_on_a_word_and_keeps_markup_balanced() -> None:
    fragment = clean_html("<p>One <b>two three</b> four <a href='https://x.example/'>five six</a></p>\n<p>seven</p>")
    for limit in range(1, 40):
        cut = truncate_html(fragment, limit)
        checker = _Balance()
        checker.feed(cut)
        assert checker.stack == [], cut
        words = checker.text.replace("…", "").split()
        assert all(w in {"One", "two", "three", "four", "five", "six", "seven"} for w in words), cut
        assert len(" ".join(words)) <= limit
    assert truncate_html(fragment, 1000) == fragment
    assert truncate_html(fragment, 12) == "<p>One <b>two …</b></p>"


# --- authors: names only, never e-mail addresses -------------------------------------


@pytest.mark.parametrize(
    ("element", "expected"),
    [
        ("<author>jane@example.org (Jane Doe)</author>", "Jane Doe"),
        ("<author>Jane Doe &lt;jane@example.org&gt;</author>", "Jane Doe"),
        ("<author>jane@example.org</author>", None),
        ("<author>Jane Doe</author>", "Jane Doe"),
        ("<dc:creator>Jane Doe (jane@example.org)</dc:creator>", "Jane Doe"),
        ("<dc:creator>mailto:jane@example.org</dc:creator>", None),
    ],
    ids=["rss-email-then-name", "name-then-email", "email-only", "name-only", "dc-creator", "mailto-only"],
)
def test_rss_author_is_published_as_a_name_only(element: str, expected: str | None) -> None:
    document = rss({"link": "https://blog.example.org/1"}).replace("<item>", "<item>" + element, 1)
    assert parse(document).entries[0].author == expected


@pytest.mark.parametrize(
    ("author", "expected"),
    [
        ("<author><name>Bob</name><email>bob@example.org</email></author>", "Bob"),
        ("<author><email>bob@example.org</email></author>", None),
        ("<author><name>bob@example.org</name></author>", None),
    ],
    ids=["name-and-email", "email-only", "name-is-an-email"],
)
def test_atom_author_is_published_as_a_name_only(author: str, expected: str | None) -> None:
    assert parse(atom(atom_entry().replace("</entry>", author + "</entry>"))).entries[0].author == expected


def test_json_feed_authors_are_published_as_names_only() -> None:
    item = (
        '{"id": "1", "url": "https://blog.example.org/1", "content_text": "x", "authors": '
        '[{"name": "Dana <dana@example.org>"}, {"name": "eve@example.org"}, {"name": "Fay"}]}'
    )
    document = '{"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [' + item + "]}"
    assert parse(document, content_type="application/feed+json").entries[0].author == "Dana, Fay"
