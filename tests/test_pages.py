"""What the published pages say: footer, generator, authors, sites-page wording, "Read more", layout rules."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from syndicator import __version__
from syndicator.configtypes import Config, Site
from syndicator.feedtypes import Entry, SelectedEntry, StoredEntry
from syndicator.health import SiteStatus
from syndicator.site.pageentry import day_heading
from syndicator.site.render import render_site

from .browser import Browser, opened
from .conftest import ATOM, NOW, build, post, rss, tree, write_config


def publish(server: HTTPServer, tmp_path: Path, document: str) -> Path:
    """Serve ``document`` as the one feed of a planet, build it, and return the output folder (every
    entry of the feed's first fetch published: these tests are about how an entry is shown)."""
    server.expect_request("/feed.xml").respond_with_data(document, content_type="application/rss+xml")
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}], new_feed_items="all")
    result = build(config)
    assert result.exit_code == 0, result.output
    return tmp_path / "public"


def test_pages_name_syndicator_and_its_version_without_linking_anywhere(server: HTTPServer, tmp_path: Path) -> None:
    public = publish(server, tmp_path, rss(post(1)))
    footer = (public / "index.html").read_text().split("<footer>")[1]
    assert f"by syndicator {__version__}.</p>" in footer
    assert "<a " not in footer
    generator = ET.parse(public / "feed.xml").getroot().find(f"{ATOM}generator")
    assert generator is not None
    assert (generator.text, generator.attrib) == ("syndicator", {"version": __version__})
    for name, data in tree(public).items():
        assert b"github.com" not in data, name


def test_no_e_mail_address_of_an_author_is_published(server: HTTPServer, tmp_path: Path) -> None:
    named, bare = post(1, day=2), post(2, day=1)
    named["author"] = "jane@example.org (Jane Doe)"
    bare["author"] = "bare@example.org"
    public = publish(server, tmp_path, rss(named, bare))
    for name, data in tree(public).items():
        assert b"@example.org" not in data, name
    index = (public / "index.html").read_text()
    metas = [part.split("</p>")[0] for part in index.split('<p class="meta">')[1:]]
    # the bare address: the site name only
    assert [" · <bdi>Jane Doe</bdi> · " in meta for meta in metas] == [True, False]
    authors = [
        e.findtext(f"{ATOM}author/{ATOM}name") for e in ET.parse(public / "feed.xml").getroot().findall(f"{ATOM}entry")
    ]
    assert authors == ["Jane Doe", None]  # no author is claimed for the site: it is named in atom:source


def test_an_address_stored_by_an_earlier_version_is_not_published(tmp_path: Path) -> None:
    """Snapshots written before authors were cleaned in parse may hold an address; render removes it too."""
    site = Site("Blog", "https://blog.example.org/feed.xml")
    entries = [
        SelectedEntry(
            site,
            StoredEntry(
                site.feed, Entry(id=str(n), title=f"Post {n}", author=author), first_seen=NOW - timedelta(hours=n)
            ),
        )
        for n, author in enumerate(["jane@example.org (Jane Doe)", "bare@example.org"])
    ]
    config = Config(path=tmp_path / "sites.yaml", title="Planet", link="https://planet.example.org/", sites=(site,))
    render_site(config, entries, [SiteStatus(site, None, False, 2)], NOW, tmp_path / "public")
    feed = json.loads((tmp_path / "public" / "feed.json").read_text())
    assert [item.get("authors") for item in feed["items"]] == [[{"name": "Jane Doe"}], None]


def articles(index_html: str) -> dict[str, str]:
    """The front page's entries as {title: the article's HTML}."""
    found = {}
    for article in index_html.split('<article class="entry">')[1:]:
        title = article.split('rel="noopener noreferrer">', 1)[1].split("</a>", 1)[0]
        found[title] = article.split("</article>")[0]
    return found


def test_read_more_only_when_the_page_shows_less_than_the_entry_holds(server: HTTPServer, tmp_path: Path) -> None:
    items = {
        "Complete": {"description": "A short and complete summary."},
        "Cut": {"description": "word " * 200},
        "Excerpt": {
            "description": "The excerpt.",
            "content:encoded": "<![CDATA[<p>The excerpt.</p><p>And the rest of the post.</p>]]>",
        },
        "Same text": {"description": "All of it.", "content:encoded": "<![CDATA[<p>All of it.</p>]]>"},
        "Picture": {
            "description": "A photo.",
            "content:encoded": '<![CDATA[<p>A photo.</p><img src="https://blog.example.org/a.jpg">]]>',
        },
    }
    document = rss(*[{**post(n), "title": title, **fields} for n, (title, fields) in enumerate(items.items())])
    public = publish(server, tmp_path, document)
    shown = {title: "Read more" in article for title, article in articles((public / "index.html").read_text()).items()}
    assert shown == {"Complete": False, "Cut": True, "Excerpt": True, "Same text": False, "Picture": True}


DENIED = (
    "access denied: the server refuses syndicator (a login, a bot challenge or a rate wall); it is asked "
    "less and less often, at most a week apart; check the URL in a browser, or ask the publisher to let the "
    "syndicator User-Agent through"
)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        pytest.param(410, "HTTP 410 — gone: remove or edit its entry in sites.yaml", id="410"),
        pytest.param(403, f"HTTP 403 — {DENIED}", id="403"),
        pytest.param(401, f"HTTP 401 — {DENIED}", id="401"),
        pytest.param(500, "HTTP 500", id="500-no-advice"),
    ],
)
def test_sites_page_says_a_feed_never_worked_and_what_to_do(
    server: HTTPServer, tmp_path: Path, status: int, message: str
) -> None:
    server.expect_request("/ok.xml").respond_with_data(rss(post(1)))
    server.expect_request("/broken.xml").respond_with_data("no", status=status)
    config = write_config(
        tmp_path,
        [
            {"name": "Fine", "feed": server.url_for("/ok.xml")},
            {"name": "Broken", "feed": server.url_for("/broken.xml")},
        ],
        retries=0,
        sites_page_details=True,
    )
    assert build(config).exit_code == 0
    sites_html = (tmp_path / "public" / "sites.html").read_text()
    (row,) = [row for row in sites_html.split("<tr")[1:] if ">Broken<" in row]
    assert f'<span class="badge">never worked</span> <span class="error">{message}</span>' in row
    assert "last seen" not in sites_html


# --- narrow screens ------------------------------------------------------------------------

WIDE_SUMMARY = (
    "<![CDATA[<p>See https://ci.example.org/builds/1234567890/artifacts/logs/"
    "test-output-very-long-name-without-breaks-0123456789abcdef.txt for details.</p>"
    "<pre><code>def test_something_really_long_name(argument_one, argument_two, argument_three): pass"
    "</code></pre><table><tr>"
    + "<th>Column</th>" * 8
    + "</tr><tr>"
    + "<td>12345678901234</td>" * 8
    + "</tr></table>]]>"
)
#: A phone's width and a desktop's (CSS px); the stylesheet's narrow layout applies below 40rem (640 px).
WIDTHS = (390, 1280)


@pytest.fixture
def wide_planet(server: HTTPServer, tmp_path: Path) -> Path:
    """A planet whose feed has an unbreakable title, a long URL, code and a wide table, and whose
    broken site's error names a long URL; returns the output folder."""
    item = {**post(1), "title": "Unbreakable" * 12, "description": WIDE_SUMMARY}
    server.expect_request("/feed.xml").respond_with_data(rss(item), content_type="application/rss+xml")
    long_feed = "https://blog.example.org/" + "a-very-long-feed-path-" * 4 + "feed.xml"
    server.expect_request("/page").respond_with_data(
        f'<html><head><link rel="alternate" type="application/rss+xml" href="{long_feed}"></head></html>',
        content_type="text/html",
    )
    config = write_config(
        tmp_path,
        [
            {"name": "A Blog With A Fairly Long Name", "feed": server.url_for("/feed.xml")},
            {"name": "Broken", "feed": server.url_for("/page")},
        ],
        host_gap=0,
    )
    assert build(config).exit_code == 0
    return tmp_path / "public"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", ["index.html", "sites.html"])
def test_pages_fit_the_screen_and_keep_dates_on_one_line(
    browser: Browser, wide_planet: Path, page: str, width: int
) -> None:
    """In headless Chromium (tests/browser.py): nothing scrolls sideways, no date wraps."""
    with opened(browser, (wide_planet / page).as_uri(), width) as tab:
        layout = tab.check("facts")
        assert tab.console == []
    assert layout["viewport"] == width
    assert layout["scroll_width"] <= width  # nothing scrolls sideways
    assert layout["time_lines"] == 1


def test_every_cell_of_the_sites_table_is_labelled_for_narrow_screens(wide_planet: Path) -> None:
    """On a narrow screen the header row is hidden and each cell shows its data-label instead."""
    sites_html = (wide_planet / "sites.html").read_text()
    assert '<div class="table-scroll">\n<table class="sites">' in sites_html
    headers = re.findall(r"<th>([^<]*)</th>", sites_html)
    for row in re.findall(r"<tr class=[^>]*>(.*?)</tr>", sites_html, re.S):
        cells = re.findall(r"<td( [^>]*)?>", row)
        assert cells[0] == ' class="site" dir="auto"'
        labels = [re.search(r'data-label="([^"]*)"', cell)[1] for cell in cells[1:]]  # type: ignore[index]
        assert labels == headers[1:]


@pytest.mark.parametrize("page", ["index.html", "sites.html"])
def test_pages_keep_a_policy_that_forbids_scripts(wide_planet: Path, page: str) -> None:
    text = (wide_planet / page).read_text()
    (policy,) = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text)
    assert {"default-src 'none'", "script-src 'none'", "style-src 'self'"} <= set(policy.split("; "))
    assert "<script" not in text and " style=" not in text


# --- the default theme: day headings and the subscriptions ---------------------------------


def render_planet(tmp_path: Path, sites: list[Site], dates: list[datetime], **settings: Any) -> str:
    """index.html of a planet whose first site has one entry, "Post N", at each of ``dates`` (UTC)."""
    tmp_path.mkdir(exist_ok=True)
    entries = [
        SelectedEntry(
            sites[0], StoredEntry(sites[0].feed, Entry(id=str(n), title=f"Post {n}", date=date), first_seen=date)
        )
        for n, date in enumerate(dates)
    ]
    config = Config(
        path=tmp_path / "sites.yaml", title="Planet", link="https://planet.example.org/", sites=tuple(sites), **settings
    )
    render_site(config, entries, [SiteStatus(site, None, False, 0) for site in sites], NOW, tmp_path / "public")
    return (tmp_path / "public" / "index.html").read_text(encoding="utf-8")


def front_page_outline(index: str) -> list[str]:
    """The day headings ("day 2026-11-29 Sunday 29 November 2026") and entry titles of a front page, in order."""
    found = re.findall(
        r'<h2 class="day"><time datetime="([^"]*)">([^<]*)</time></h2>|<h2 dir="auto">([^<]*)</h2>', index
    )
    return [f"day {day} {heading}" if day else title for day, heading, title in found]


@pytest.mark.parametrize(
    ("timezone", "outline"),
    [
        pytest.param(
            "UTC",
            [
                "day 2026-11-30 Monday 30 November 2026",
                "Post 0",
                "day 2026-11-29 Sunday 29 November 2026",
                "Post 1",
                "Post 2",
                "day 2026-11-28 Saturday 28 November 2026",
                "Post 3",
            ],
            id="UTC",
        ),
        # 03:00 UTC on the 30th is still the evening of the 29th in New York; in Tokyo 18:00 UTC on the 29th is
        # the 30th already, and 23:30 UTC on the 28th the 29th.
        pytest.param(
            "America/New_York",
            [
                "day 2026-11-29 Sunday 29 November 2026",
                "Post 0",
                "Post 1",
                "Post 2",
                "day 2026-11-28 Saturday 28 November 2026",
                "Post 3",
            ],
            id="New_York",
        ),
        pytest.param(
            "Asia/Tokyo",
            [
                "day 2026-11-30 Monday 30 November 2026",
                "Post 0",
                "Post 1",
                "day 2026-11-29 Sunday 29 November 2026",
                "Post 2",
                "Post 3",
            ],
            id="Tokyo",
        ),
    ],
)
def test_the_front_page_groups_entries_under_the_day_they_were_posted_in_the_planets_timezone(
    tmp_path: Path, timezone: str, outline: list[str]
) -> None:
    dates = [
        datetime(2026, 11, 30, 3, 0, tzinfo=UTC),
        datetime(2026, 11, 29, 18, 0, tzinfo=UTC),
        datetime(2026, 11, 29, 9, 0, tzinfo=UTC),
        datetime(2026, 11, 28, 23, 30, tzinfo=UTC),
    ]
    index = render_planet(tmp_path, [Site("Blog", "https://blog.example.org/feed.xml")], dates, timezone=timezone)
    assert front_page_outline(index) == outline


@pytest.mark.parametrize(
    ("day", "heading"),
    [
        ("2026-11-30", "Monday 30 November 2026"),
        ("2027-01-01", "Friday 1 January 2027"),
        ("2028-02-29", "Tuesday 29 February 2028"),
    ],
)
def test_day_headings_name_the_week_day_and_month_in_english(day: str, heading: str) -> None:
    assert day_heading(day) == heading


def sidebar(index: str) -> list[str]:
    """The subscriptions sidebar's list items, in order."""
    aside = index.split('<aside class="subscriptions" aria-labelledby="subscriptions">', 1)[1].split("</aside>")[0]
    return re.findall(r"<li>(.*?)</li>", aside)


def test_the_sidebar_lists_every_subscription_by_name_with_its_face_home_page_and_feed(tmp_path: Path) -> None:
    sites = [
        Site(
            "zebra notes",
            "https://zebra.example.org/feed.xml",
            link="https://zebra.example.org/",
            face="faces/zebra.png",
        ),
        Site("Apple <Blog>", "https://apple.example.org/feed.xml"),
        Site("مدونة", (tmp_path / "feed.xml").as_uri(), link="https://rtl.example.org/"),
    ]
    items = sidebar(render_planet(tmp_path, sites, [NOW]))
    assert items == [
        # sorted by name, whatever the case; a name is escaped and isolated (<bdi>), a site without a link not linked
        '<bdi>Apple &lt;Blog&gt;</bdi> <a class="feed" href="https://apple.example.org/feed.xml" '
        'rel="noopener noreferrer">feed<span class="visually-hidden"> of <bdi>Apple &lt;Blog&gt;</bdi></span></a>',
        '<img class="face" src="faces/zebra.png" alt="" width="24" height="24" loading="lazy"> '
        '<a href="https://zebra.example.org/" rel="noopener noreferrer"><bdi>zebra notes</bdi></a> '
        '<a class="feed" href="https://zebra.example.org/feed.xml" rel="noopener noreferrer">feed'
        '<span class="visually-hidden"> of <bdi>zebra notes</bdi></span></a>',
        # a local file: no feed link (its path is never published)
        '<a href="https://rtl.example.org/" rel="noopener noreferrer"><bdi>مدونة</bdi></a>',
    ]
    assert "file:" not in (tmp_path / "public" / "index.html").read_text(encoding="utf-8")


def test_the_sidebar_is_on_the_front_page_only(tmp_path: Path) -> None:
    index = render_planet(tmp_path, [Site("Blog", "https://blog.example.org/feed.xml")], [NOW])
    assert '<aside class="subscriptions"' in index
    assert "<aside" not in (tmp_path / "public" / "sites.html").read_text(encoding="utf-8")


def test_the_logo_is_the_icon_when_no_favicon_is_set(tmp_path: Path) -> None:
    site = Site("Blog", "https://blog.example.org/feed.xml")
    assert '<link rel="icon" href="logo.svg">' in render_planet(tmp_path / "a", [site], [NOW], logo="logo.svg")
    assert '<link rel="icon" href="fav.ico">' in render_planet(
        tmp_path / "b", [site], [NOW], logo="logo.svg", favicon="fav.ico"
    )
    assert 'rel="icon"' not in render_planet(tmp_path / "c", [site], [NOW])
