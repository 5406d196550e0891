"""The planet's own settings: who runs it, how it shows times, how much it shows; a site's face and extra."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from .conftest import ATOM, build, entry_titles, post, rss, write_config


def planet(tmp_path: Path, posts: int = 5, site: dict[str, object] | None = None, **settings: object) -> Path:
    """A planet of one local feed with ``posts`` posts (Nov 1, 2, ...; 10:0n UTC), built; returns public/.
    Every post of the feed's first fetch is published unless ``new_feed_items`` is given: these tests
    are about the pages, not about a site's first fetch (tests/test_first_fetch.py)."""
    settings.setdefault("new_feed_items", "all")
    tmp_path.mkdir(exist_ok=True)
    item = [post(n, day=n) for n in range(posts, 0, -1)]
    for entry in item:
        entry["content:encoded"] = "<![CDATA[<p>" + "Full text. " * 80 + "</p>]]>"
    (tmp_path / "a.xml").write_text(rss(*item), encoding="utf-8")
    config = write_config(tmp_path, [{"name": "Site A", "feed": "a.xml", **(site or {})}], **settings)
    result = build(config)
    assert result.exit_code == 0, result.output
    return tmp_path / "public"


@pytest.mark.parametrize(
    ("setting", "value", "problem"),
    [
        ("timezone", "Mars/Olympus", "'Mars/Olympus' is not a time zone; use an IANA name such as Europe/Berlin"),
        ("date_format", "no percent", "must be a strftime format of at most 100 characters"),
        ("date_format", "%99999999Y", "'%9' is not one of the codes allowed"),
        ("date_format", "%Q %Y", "'%Q' is not one of the codes allowed"),
        ("date_format", "%s", "'%s' is not one of the codes allowed"),
        ("favicon", "img/%2e%2e/%2e%2e/x.png", "is neither an http(s) URL nor a relative path"),
        ("logo", "#", "is neither an http(s) URL nor a relative path"),
        ("feed_content", "teaser", "must be one of full, summary"),
        ("page_entries", 0, "must be a whole number from 1 to 10000"),
        ("activity_threshold", "1h", "must be at least 1 day"),
        ("logo", "javascript:alert(1)", "is not an http(s) URL"),
        ("favicon", "../secret.ico", "is neither an http(s) URL nor a relative path"),
        ("description", "x" * 1001, "must be at most 1000 characters"),
        ("new_feed_items", -1, "must be a whole number from 0 to 100,000, or all, not -1"),
        ("new_feed_items", "none", "must be a whole number from 0 to 100,000, or all"),
    ],
)
def test_a_bad_page_setting_is_one_line_naming_it(tmp_path: Path, setting: str, value: object, problem: str) -> None:
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    config = write_config(tmp_path, [{"name": "A", "feed": "a.xml"}], **{setting: value})
    result = build(config)
    assert result.exit_code == 2
    assert re.fullmatch(rf"syndicator: error: {re.escape(str(config))}:\d+: {setting}: .*\n", result.stderr)
    assert problem in result.stderr


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("face", "data:image/png;base64,AAAA", "is not an http(s) URL"),
        ("face", "/etc/faces/a.png", "is neither an http(s) URL nor a relative path"),
        ("extra", ["a", "b"], "must be a mapping of names to values"),
    ],
)
def test_a_bad_site_field_is_one_line_naming_it(tmp_path: Path, field: str, value: object, problem: str) -> None:
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    config = write_config(tmp_path, [{"name": "A", "feed": "a.xml", field: value}])
    result = build(config)
    assert result.exit_code == 2
    assert f"sites[0].{field}: " in result.stderr and problem in result.stderr


def test_times_show_in_the_planets_zone_and_format(tmp_path: Path) -> None:
    public = planet(
        tmp_path, posts=1, timezone="Europe/Berlin", date_format="%d.%m.%Y %H:%M %Z", sites_page_details=True
    )
    index = (public / "index.html").read_text(encoding="utf-8")
    assert '<time datetime="2026-11-01T10:01:00Z">01.11.2026 11:01 CET</time>' in index
    assert (
        'Newest post <time datetime="2026-11-01T10:01:00Z">01.11.2026 11:01 CET</time>' in index
    )  # the newest entry's
    sites = (public / "sites.html").read_text(encoding="utf-8")
    assert '<time datetime="2026-11-01T10:01:00Z">2026-11-01</time>' in sites  # last post: a date


def test_the_front_page_shows_page_entries_and_the_feeds_keep_feed_entries(tmp_path: Path) -> None:
    public = planet(tmp_path, posts=5, page_entries=2)
    index = (public / "index.html").read_text(encoding="utf-8")
    assert index.count('<article class="entry">') == 2 and "Post 5" in index and "Post 3" not in index
    assert len(entry_titles(public / "feed.xml")) == 5
    assert len(json.loads((public / "feed.json").read_text())["items"]) == 5


def test_feed_content_summary_makes_lighter_feeds(tmp_path: Path) -> None:
    full = planet(tmp_path / "full", posts=2)
    light = planet(tmp_path / "light", posts=2, feed_content="summary")
    assert (light / "feed.xml").stat().st_size < (full / "feed.xml").stat().st_size / 2
    entry = ET.parse(light / "feed.xml").getroot().find(f"{ATOM}entry")
    assert entry is not None and entry.find(f"{ATOM}content") is None
    summary = entry.findtext(f"{ATOM}summary") or ""
    assert summary == "Summary of post 2"  # the front page's summary, not the 1 KB of content
    item = json.loads((light / "feed.json").read_text())["items"][0]
    assert item["content_html"] == summary
    assert ET.parse(full / "feed.xml").getroot().find(f"{ATOM}entry/{ATOM}content") is not None


def test_owner_description_logo_favicon_and_faces_are_shown(tmp_path: Path) -> None:
    public = planet(
        tmp_path,
        posts=1,
        site={"face": "https://a.example.org/me.png", "link": "https://a.example.org/"},
        owner="The Example Team",
        description="Posts from our members",
        logo="images/logo.svg",
        favicon="https://planet.example.org/favicon.ico",
    )
    index = (public / "index.html").read_text(encoding="utf-8")
    assert '<link rel="icon" href="https://planet.example.org/favicon.ico">' in index
    assert '<img class="logo" src="images/logo.svg" alt="" height="48">' in index
    assert '<p class="description" dir="auto">Posts from our members</p>' in index
    assert "Run by <bdi>The Example Team</bdi>." in index
    assert '<img class="face" src="https://a.example.org/me.png" alt="" width="32" height="32"' in index
    assert '<img class="face" src="https://a.example.org/me.png"' in (public / "sites.html").read_text()
    feed = ET.parse(public / "feed.xml").getroot()
    assert feed.findtext(f"{ATOM}subtitle") == "Posts from our members"
    assert feed.findtext(f"{ATOM}logo") == "https://planet.example.org/images/logo.svg"
    assert feed.findtext(f"{ATOM}icon") == "https://planet.example.org/favicon.ico"
    assert feed.findtext(f"{ATOM}author/{ATOM}name") == "The Example Team"
    document = json.loads((public / "feed.json").read_text())
    assert (document["description"], document["authors"]) == ("Posts from our members", [{"name": "The Example Team"}])


def test_extra_reaches_the_templates(tmp_path: Path) -> None:
    theme = tmp_path / "theme"
    theme.mkdir()
    (theme / "index.html").write_text(
        "{% for e in front_entries %}[{{ e.site.extra.mastodon }}|{{ e.site.extra.tags|join(',') }}]{% endfor %}",
        encoding="utf-8",
    )
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    config = write_config(
        tmp_path,
        [{"name": "A", "feed": "a.xml", "extra": {"mastodon": "@a@example.social", "tags": ["python", "<b>"]}}],
    )
    assert build(config, "--templates", str(theme)).exit_code == 0
    assert (tmp_path / "public" / "index.html").read_text() == "[@a@example.social|python,&lt;b&gt;]"


def test_older_entries_are_on_pages_of_page_entries_each(tmp_path: Path) -> None:
    public = planet(tmp_path, posts=5, page_entries=2)
    pages = {name: (public / name).read_text(encoding="utf-8") for name in ("index.html", "page2.html", "page3.html")}
    titles = {name: re.findall(r'rel="noopener noreferrer">(Post \d)</a></h2>', text) for name, text in pages.items()}
    assert titles == {"index.html": ["Post 5", "Post 4"], "page2.html": ["Post 3", "Post 2"], "page3.html": ["Post 1"]}
    assert not (public / "page4.html").exists()
    nav = {name: re.search(r'<nav class="pages"[^>]*>(.*?)</nav>', text) for name, text in pages.items()}
    assert nav["index.html"] and nav["index.html"][1] == '<a href="page2.html" rel="next">Older entries</a>'
    assert nav["page2.html"] and nav["page2.html"][1] == (
        '<a href="index.html" rel="prev">Newer entries</a> · <a href="page3.html" rel="next">Older entries</a>'
    )
    assert nav["page3.html"] and nav["page3.html"][1] == '<a href="page2.html" rel="prev">Newer entries</a>'
    one_page = planet(tmp_path / "one", posts=2, page_entries=5)
    assert '<nav class="pages"' not in (one_page / "index.html").read_text() and not (one_page / "page2.html").exists()


def test_the_sites_page_says_when_each_site_is_checked_next_and_why(tmp_path: Path, server: HTTPServer) -> None:
    server.expect_request("/b.xml").respond_with_data(rss(post(1, host="b.example.org")))
    (tmp_path / "a.xml").write_text(rss(post(2)), encoding="utf-8")
    sites = [{"name": "A", "feed": "a.xml"}, {"name": "B", "feed": server.url_for("/b.xml")}]
    assert build(write_config(tmp_path, sites, sites_page_details=True)).exit_code == 0
    cells = re.findall(r'<td data-label="Next check">(.*?)</td>', (tmp_path / "public" / "sites.html").read_text())
    assert cells[0] == "every build"  # A: a local file
    assert re.fullmatch(
        r'<time datetime="2026-1[12]-\d\dT\d\d:\d\d:\d\dZ">2026-1[12]-\d\d \d\d:\d\d UTC</time> '
        r'<span class="note">[^<]+</span>',
        cells[1],
    ), cells[1]
