"""Images in content as a page without script shows them: lazy-loading undone, noscript unwrapped, each once.

Through the real sanitizer (nh3), and once through the real CLI build:
no markup ever comes out as visible words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.parse.images import largest_candidate, reveal_images
from syndicator.parse.sanitize import clean_html, html_to_text

from .conftest import build, post, rss, write_config
from .xss_dom import parse_page, visible_text

BASE = "https://blog.example.org/posts/1"
CDN = "https://cdn.example.org"


def images(fragment: str) -> list[str]:
    """The src of each image the sanitized fragment shows, in order."""
    return re.findall(r'<img src="([^"]*)"', clean_html(fragment, BASE))


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        (f'<img src="data:," data-src="{CDN}/a.png"><noscript><img src="{CDN}/a.png"></noscript>', [f"{CDN}/a.png"]),
        (f'<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-lazy-src="{CDN}/b.jpg">', [f"{CDN}/b.jpg"]),
        (f'<img src="" data-original="{CDN}/c.jpg">', [f"{CDN}/c.jpg"]),
        (f'<img data-src="{CDN}/d.jpg">', [f"{CDN}/d.jpg"]),
        (f'<img src="/img/blank.gif" data-src="{CDN}/e.jpg">', [f"{CDN}/e.jpg"]),
        (
            f'<img src="{CDN}/lazy-placeholder.svg"'
            f' data-srcset="{CDN}/s.jpg 320w, {CDN}/l.jpg 1024w, {CDN}/m.jpg 640w">',
            [f"{CDN}/l.jpg"],
        ),
        ('<img src="data:," data-lazy-srcset="small.jpg 1x, big.jpg 2x">', ["https://blog.example.org/posts/big.jpg"]),
        (f'<img srcset="{CDN}/only.jpg">', [f"{CDN}/only.jpg"]),
        (f'<img src="{CDN}/real.jpg" data-src="{CDN}/other.jpg">', [f"{CDN}/real.jpg"]),  # a real src stays
        (f'<noscript><img src="{CDN}/f.jpg"></noscript>', [f"{CDN}/f.jpg"]),  # the only real copy is kept
        (f'<img src="data:,"><noscript><img src="{CDN}/g.jpg"></noscript>', [f"{CDN}/g.jpg"]),
        (
            f'<noscript><img src="http://cdn.example.org/h.jpg"></noscript><img src="data:," data-src="{CDN}/h.jpg">',
            [f"{CDN}/h.jpg"],
        ),  # fallback first, and under the other scheme: still the same image
        (f'<noscript><img src="{CDN}/i.jpg"></noscript><noscript><img src="{CDN}/i.jpg"></noscript>', [f"{CDN}/i.jpg"]),
        (f'<img src="{CDN}/j.jpg"><img src="{CDN}/j.jpg">', [f"{CDN}/j.jpg", f"{CDN}/j.jpg"]),  # as written
    ],
    ids=[
        "data-src-and-noscript",
        "data-lazy-src",
        "data-original",
        "no-src",
        "named-placeholder",
        "data-srcset-widest",
        "lazy-srcset-densest",
        "srcset-only",
        "real-src-kept",
        "noscript-only",
        "placeholder-then-noscript",
        "noscript-first",
        "two-noscripts",
        "repeats-outside-kept",
    ],
)
def test_each_image_is_shown_once_with_its_real_source(fragment: str, expected: list[str]) -> None:
    assert images(fragment) == expected


def test_noscript_markup_is_never_shown_as_text() -> None:
    fragment = (
        f'<p>Intro <img src="data:," data-src="{CDN}/a.png" alt="A &amp; B">'
        f'<noscript><img src="{CDN}/a.png" alt="A &amp; B"></noscript> and <noscript><em>more</em>'
        "</noscript></p>"
    )
    cleaned = clean_html(fragment, BASE)
    assert cleaned == f'<p>Intro <img src="{CDN}/a.png" alt="A &amp; B"> and <em>more</em></p>'
    assert html_to_text(fragment) == "Intro and more"


@pytest.mark.parametrize("element", ["iframe", "noembed", "noframes"])
def test_raw_text_fallbacks_are_dropped_not_shown(element: str) -> None:
    fragment = f"<p>Before</p><{element}><p>fallback <b>text</b></p></{element}><p>After</p>"
    assert clean_html(fragment, BASE) == "<p>Before</p><p>After</p>"
    assert "fallback" not in html_to_text(fragment) and "<" not in html_to_text(fragment)


def test_a_placeholder_without_a_source_is_dropped_unless_it_has_alt_text() -> None:
    assert clean_html('<p>x<img src="data:,">y</p>', BASE) == "<p>xy</p>"
    assert clean_html('<p>x<img src="data:," alt="chart">y</p>', BASE) == '<p>x<img alt="chart">y</p>'


def test_an_image_tag_broken_by_an_angle_bracket_is_left_to_the_sanitizer() -> None:
    fragment = f'<img alt="a > b" src="data:," data-src="{CDN}/k.jpg">'
    assert reveal_images(fragment) == fragment


@pytest.mark.parametrize(
    ("srcset", "expected"),
    [
        ("a.jpg 100w, b.jpg 300w, c.jpg 200w", "b.jpg"),
        ("a.jpg, b.jpg 2x", "b.jpg"),
        (
            "https://x.example/w_100,h_100/a.jpg 1x, https://x.example/w_200,h_200/a.jpg 2x",
            "https://x.example/w_200,h_200/a.jpg",
        ),
        ("a.jpg,b.jpg 2x, c.jpg,", "a.jpg,b.jpg"),  # a comma inside a URL is part of it; one after it ends it
        ("data:image/gif;base64,AAAA 1x, real.jpg 0.5x", "real.jpg"),
        ("a.jpg 3x, b.jpg 10w", "b.jpg"),
        (" , ,", None),
        ("a.jpg 1e999999w, b.jpg nonsense", "a.jpg"),
    ],
    ids=[
        "widths",
        "densities",
        "commas-in-urls",
        "no-space",
        "placeholder-skipped",
        "width-beats-density",
        "empty",
        "odd-numbers",
    ],
)
def test_largest_candidate(srcset: str, expected: str | None) -> None:
    assert largest_candidate(srcset) == expected


@pytest.mark.parametrize(
    "fragment",
    [
        f'<img src="data:," data-src="{CDN}/a.png">' * 20_000,
        "<noscript>" * 50_000 + "x",
        f'<noscript><img src="{CDN}/n.png"></noscript>' * 20_000,
        '<img src="data:," ' + 'a="1" ' * 100_000 + ">",
        '<img src="data:," data-srcset="' + "a.jpg 1x," * 100_000 + '">',
        '<img src="data:," data-srcset="' + "," * 200_000 + '">',
        '<img alt="' + "<img " * 50_000,
    ],
    ids=["many-lazy", "many-noscript", "many-fallbacks", "many-attributes", "long-srcset", "commas", "unclosed"],
)
def test_hostile_image_markup_is_handled_in_linear_work(fragment: str) -> None:
    """Each of these would take minutes with a scan that rescans from many positions."""
    out = reveal_images(fragment)
    assert "<noscript" not in out.lower()


def test_lazy_images_show_as_images_on_the_front_page(server: HTTPServer, tmp_path: Path) -> None:
    item = post(1)
    item["description"] = (
        '<![CDATA[<p>Look: <img src="data:," data-src="https://cdn.example.org/a.png" '
        'alt="a cat"><noscript><img src="https://cdn.example.org/a.png" alt="a cat">'
        "</noscript></p>]]>"
    )
    server.expect_request("/feed.xml").respond_with_data(rss(item), content_type="application/rss+xml")
    result = build(write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}]))
    assert result.exit_code == 0, result.output
    article = next(parse_page((tmp_path / "public" / "index.html").read_text()).iter("article"))
    assert "<" not in visible_text(article) and "Look:" in visible_text(article)
    assert [img.get("src") for img in article.iter("img")] == ["https://cdn.example.org/a.png"]
