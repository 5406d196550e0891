"""Feed discovery on pages: advertised feeds are found, and hostile pages take linear time."""

from __future__ import annotations

import pytest

from syndicator.discover import find_alternates

PAGE = "https://blog.example.org/about/"
FEED = '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'


def test_feeds_in_links_are_found_relative_to_base() -> None:
    page = (f'<html><head><base href="https://cdn.example.org/x/">{FEED}'
            '<link rel="alternate" type="application/atom+xml" href="atom.xml" title="Atom">'
            '<link rel="stylesheet" href="style.css"></head><body></body></html>')
    assert find_alternates(page, PAGE) == ["https://cdn.example.org/feed.xml", "https://cdn.example.org/x/atom.xml"]


def test_links_in_comments_and_scripts_are_not_advertised() -> None:
    page = (f'<html><head><!-- {FEED} --><script>document.write(\'{FEED}\')</script>'
            '<link rel="alternate" type="application/feed+json" href="/feed.json"></head></html>')
    assert find_alternates(page, PAGE) == ["https://blog.example.org/feed.json"]


# Each of these pages took html.parser quadratic time when fed whole (minutes for 1 MB).
@pytest.mark.parametrize("junk", ["<!--x <a ", "<a ", "<a href='x ", "<a", "<?x "],
                         ids=["unclosed-comments", "unclosed-tags", "unclosed-quotes", "bare-tag-starts", "pis"])
def test_hostile_pages_are_read(junk: str) -> None:
    page = "<!DOCTYPE html><html><head>" + junk * (200_000 // len(junk)) + ">-->" + FEED
    assert find_alternates(page, PAGE) == ["https://blog.example.org/feed.xml"]
