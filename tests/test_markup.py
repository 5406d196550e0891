"""Linear scans of hostile markup (syndicator/parse/markup.py).

Each scan gives the answer of the backtracking regex it replaces (checked
on generated small texts, where the old regex is still quick) and gives it
on hostile texts that the old regex took minutes or hours over. No test
here measures time: each asserts the outcome.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from syndicator.parse.feed import root_element
from syndicator.parse.markup import (
    holds_element,
    html_deeper_than,
    markup_opens,
    most_attributes_over,
    prolog_end,
    strip_tags,
    tags_named,
    xml_shape,
)

# The regexes markup.py replaced, as they were in parse/feed.py.
OLD_ELEMENT = re.compile(r"<([A-Za-z][A-Za-z0-9]*)\b[^<>]*>.*?</\1\s*>", re.S)
OLD_PROLOG = re.compile(r"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>]|\[.*?\])*>)", re.S | re.I)
OLD_ROOT = re.compile(r"<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)")


def old_root_element(text: str) -> str:
    position = 0
    while match := OLD_PROLOG.match(text, position):
        position = match.end()
    match = OLD_ROOT.match(text[position:].lstrip())
    return match.group(2).lower() if match else ""


TOKENS = [
    "<",
    ">",
    "[",
    "]",
    "?",
    "!",
    "-",
    "/",
    " ",
    "\n",
    "a",
    "b",
    "<!--",
    "-->",
    "<?",
    "?>",
    "<?xml ?>",
    "<!DOCTYPE",
    "<!doctype",
    "<rss>",
    "</rss>",
    "<b>",
    "</b>",
    "<b x='1'>",
    "</b >",
    "<B>",
    "</a>",
    "<a_b>",
    "<b\n>",
    "<br/>",
    "<![CDATA[",
    "]]>",
    "x:feed",
]
texts = st.lists(st.sampled_from(TOKENS), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_holds_element_answers_as_the_old_regex(text: str) -> None:
    assert holds_element(text) == bool(OLD_ELEMENT.search(text))


@settings(max_examples=400, deadline=None)
@given(texts)
def test_root_element_answers_as_the_old_prolog_regex(text: str) -> None:
    assert root_element(text) == old_root_element(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<b>" * 100_000, False),
        ("<b>" * 100_000 + "</b>", True),
        ("<b>x " * 100_000 + "</i>", False),
        ("</b>" + "<b>" * 100_000, False),
    ],
    ids=["many-starts", "many-starts-then-end", "other-end", "end-before-starts"],
)
def test_holds_element_on_many_unclosed_starts(text: str, expected: bool) -> None:
    assert holds_element(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<?xml version="1.0"?>\n<!DOCTYPE rss [<!ENTITY a "b">]>\n<!-- c -->\n<rss>', "rss"),
        ("<!DOCTYPE x " + "[]" * 50_000, ""),
        ("<!DOCTYPE x " + "[]" * 50_000 + "><feed>", "feed"),
        ("<!--" * 100_000, ""),
        ("<?" * 100_000, ""),
        ("\n" * 100_000 + "<rdf:RDF>", "rdf"),
    ],
    ids=["ordinary", "brackets-unclosed", "brackets-closed", "comments", "instructions", "blank-lines"],
)
def test_root_element_after_hostile_prologs(text: str, expected: str) -> None:
    assert root_element(text) == expected


def test_prolog_end_stops_at_an_unclosed_construct() -> None:
    assert prolog_end("  <?xml?><!-- a --> <rss>") == len("  <?xml?><!-- a --> ")
    assert prolog_end("<?xml?><!-- never closed <rss>") == len("<?xml?>")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<rss><channel><item><title>t</title></item></channel></rss>", (8, 4)),
        ("<a/><b x='1'/><c></c>", (4, 1)),
        ("<a><!-- <b><c><d> --><![CDATA[<e><f>]]><?pi <g>?></a>", (2, 1)),
        ("<a>" + "<b>" * 50 + "</b>" * 50 + "</a>", (102, 51)),
        ("</x></y><a>", (3, 1)),
        ("<a><!-- unclosed <b><c><d>", (1, 1)),
    ],
    ids=["rss", "empty-elements", "comments-cdata-pi-skipped", "nested", "stray-end-tags", "unclosed-comment"],
)
def test_xml_shape_counts_tags_and_depth(text: str, expected: tuple[int, int]) -> None:
    assert xml_shape(text, 1_000, 1_000) == expected


def test_xml_shape_stops_past_a_limit() -> None:
    tags, depth = xml_shape("<a>" * 100_000, 10**9, 500)
    assert depth == 501 and tags == 501
    tags, depth = xml_shape("<a/>" * 100_000, 1_000, 10**9)
    assert tags == 1_001 and depth == 0


@pytest.mark.parametrize(
    ("fragment", "deeper"),
    [
        ("<div>" * 300, True),
        ("<div>" * 200 + "</div>" * 200 + "<div>" * 200, False),
        ("<p>" * 1_000 + "<li>" * 1_000 + "<br>" * 1_000 + "<a href=x>" * 1_000, False),
        ("<b id=1>" * 300, True),
        ("<script>" + "<div>" * 1_000 + "</script>", False),
        ("<!--" + "<div>" * 1_000 + "-->", False),
        ("<div/>" * 1_000, False),
    ],
    ids=["deep", "shallow-repeated", "flat-elements", "formatting", "in-script", "in-comment", "self-closed"],
)
def test_html_deeper_than(fragment: str, deeper: bool) -> None:
    assert html_deeper_than(fragment, 256) is deeper


def test_strip_tags_keeps_text_only() -> None:
    text = strip_tags("<p>One <b>two</b></p><script>var x = '<b>';</script><!-- c --><style>p{}</style>three<br")
    assert text.split() == ["One", "two", "three"]


def test_tags_named_skips_comments_and_scripts() -> None:
    page = (
        '<head><!-- <link rel="alternate" href="/old.xml"> --><script>"<link href=/js.xml>"</script>'
        '<LINK rel="alternate" href="/a.xml"><base href="/b/"><link rel=x <link rel="alternate" href="/c.xml">'
    )
    assert list(tags_named(page, ("link", "base"))) == [
        '<LINK rel="alternate" href="/a.xml">',
        '<base href="/b/">',
        '<link rel="alternate" href="/c.xml">',
    ]


def test_tags_named_on_a_hostile_page() -> None:
    link = '<link rel="alternate" href="/feed.xml">'
    assert list(tags_named("<html><head>" + "<!--x <a " * 100_000 + "-->" + link, ("link",))) == [link]
    assert list(tags_named("<html><head>" + "<!--x <a " * 100_000 + link, ("link",))) == []  # all one comment
    assert list(tags_named("<html><head>" + "<a href='x " * 100_000 + link, ("link",))) == [link]


def test_markup_opens_leaves_out_cdata_sections_and_comments() -> None:
    assert markup_opens("<a><![CDATA[<b><c>]]><!-- <x> --><d>") == 4  # a, the CDATA and comment openings, d
    assert markup_opens("<a><![CDATA[<b><c>") == 2  # an unclosed section runs to the end


@pytest.mark.parametrize(
    ("text", "xml", "over"),
    [
        ("<feed" + "".join(f' a{n}="v"' for n in range(11)) + ">", True, True),
        ("<feed" + "".join(f' a{n}="v"' for n in range(10)) + ">", True, False),
        ("<p" + "".join(f'a{n}="1"' for n in range(11)) + ">", False, True),  # HTML needs no space after a value
        ("<p" + " a" * 11 + ">", False, True),  # nor a value
        ('<img title="' + "many words " * 50 + '">', False, False),  # words of a quoted value are no attributes
        ("<![CDATA[" + "prose words " * 50 + "]]>", True, False),  # nor the words of a CDATA section
        ("<!-- <x" + " a" * 11 + "> -->", True, False),
    ],
)
def test_most_attributes_over_counts_the_attributes_of_one_tag(text: str, xml: bool, over: bool) -> None:
    assert most_attributes_over(text, 10, xml=xml) is over
