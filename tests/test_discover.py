"""Feed discovery on pages: advertised feeds are found and ranked, hostile pages take linear time, and a build
tries the advertised feeds best first, as ``discover`` lists them (loopback server, real CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.parse.discover import MAX_FOLLOWED, find_alternates

from .conftest import NOW_ISO, build, post, rss, write_config

PAGE = "https://blog.example.org/about/"
FEED = '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'


def test_feeds_in_links_are_found_relative_to_base() -> None:
    page = (
        f'<html><head><base href="https://cdn.example.org/x/">{FEED}'
        '<link rel="alternate" type="application/atom+xml" href="atom.xml" title="Atom">'
        '<link rel="stylesheet" href="style.css"></head><body></body></html>'
    )
    assert find_alternates(page, PAGE) == ["https://cdn.example.org/feed.xml", "https://cdn.example.org/x/atom.xml"]


def test_links_in_comments_and_scripts_are_not_advertised() -> None:
    page = (
        f"<html><head><!-- {FEED} --><script>document.write('{FEED}')</script>"
        '<link rel="alternate" type="application/feed+json" href="/feed.json"></head></html>'
    )
    assert find_alternates(page, PAGE) == ["https://blog.example.org/feed.json"]


# Each of these pages took html.parser quadratic time when fed whole (minutes for 1 MB).
@pytest.mark.parametrize(
    "junk",
    ["<!--x <a ", "<a ", "<a href='x ", "<a", "<?x "],
    ids=["unclosed-comments", "unclosed-tags", "unclosed-quotes", "bare-tag-starts", "pis"],
)
def test_hostile_pages_are_read(junk: str) -> None:
    page = "<!DOCTYPE html><html><head>" + junk * (200_000 // len(junk)) + ">-->" + FEED
    assert find_alternates(page, PAGE) == ["https://blog.example.org/feed.xml"]


# --- which advertised feed comes first, and what a build follows ----------------------------------------

RSS, ATOM = "application/rss+xml", "application/atom+xml"


def links(*feeds: tuple[str, str, str]) -> str:
    """An HTML page advertising ``feeds``, each (type, href, title)."""
    tags = "".join(f'<link rel="alternate" type="{kind}" href="{href}" title="{title}">' for kind, href, title in feeds)
    return f"<!DOCTYPE html><html><head><title>A blog</title>{tags}</head><body><p>Hi</p></body></html>"


#: What WordPress advertises on a post's page: the site's feed, the site's comments feed, the post's comments feed.
POST_PAGE = links(
    (RSS, "/feed/", "Blog &raquo; Feed"),
    (RSS, "/comments/feed/", "Blog &raquo; Comments Feed"),
    (RSS, "/2026/11/hello/feed/", "Blog &raquo; Hello world Comments Feed"),
)


@pytest.mark.parametrize(
    ("page", "body", "expected"),
    [
        pytest.param(
            "https://a.org/2026/11/hello/",
            POST_PAGE,
            ["https://a.org/feed/", "https://a.org/comments/feed/", "https://a.org/2026/11/hello/feed/"],
            id="wordpress-post-page-site-feed-first",
        ),
        pytest.param(
            "https://a.org/post/",
            links(
                (RSS, "/category/rust/feed/", "Rust"),
                (RSS, "/?feed=comments-rss2", ""),
                (RSS, "/tag/py/feed", "Py"),
                (RSS, "/feed.xml", "Blog"),
                (ATOM, "/feeds/posts/default/-/Go", "Go"),
                (RSS, "/?cat=3&feed=rss2", ""),
            ),
            [
                "https://a.org/feed.xml",
                "https://a.org/category/rust/feed/",
                "https://a.org/tag/py/feed",
                "https://a.org/feeds/posts/default/-/Go",
                "https://a.org/?cat=3&feed=rss2",
                "https://a.org/?feed=comments-rss2",
            ],
            id="site-then-category-tag-label-then-comments",
        ),
        pytest.param(
            "https://a.org/",
            links(
                ("application/xml", "/feed.xml", "RSS"),
                (ATOM, "/atom.xml", "Atom"),
                (RSS, "/kommentare/feed", "Kommentare"),
                (RSS, "/rss", "RSS"),
            ),
            ["https://a.org/atom.xml", "https://a.org/rss", "https://a.org/feed.xml", "https://a.org/kommentare/feed"],
            id="feed-types-before-generic-ones",
        ),
        pytest.param(
            "https://a.org/topics/rust/",
            links((RSS, "/feed/", "All"), (RSS, "/topics/rust/comments.xml", "C"), (RSS, "/topics/rust/feed/", "Rust")),
            ["https://a.org/topics/rust/feed/", "https://a.org/feed/", "https://a.org/topics/rust/comments.xml"],
            id="a-topic-page-s-own-feed-but-never-its-comments",
        ),
        pytest.param(
            "https://a.org/x/",
            links((RSS, "/a.xml", "A"), (ATOM, "/a.xml", "Comments")),
            ["https://a.org/a.xml"],
            id="a-repeat-counts-as-first-advertised",
        ),
    ],
)
def test_rank(page: str, body: str, expected: list[str]) -> None:
    assert find_alternates(body, page) == expected


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def wordpress(server: HTTPServer) -> None:
    """A WordPress post page on ``server`` with its three feeds: the site's posts, and two of comments."""
    server.expect_request("/2026/11/hello/").respond_with_data(POST_PAGE, content_type="text/html")
    server.expect_request("/feed/").respond_with_data(rss(post(1), post(2, day=2)), content_type=RSS)
    comments = rss({**post(7), "title": "By: Jane"}, title="Comments on: Hello world")
    server.expect_request("/2026/11/hello/feed/").respond_with_data(comments, content_type=RSS)
    server.expect_request("/comments/feed/").respond_with_data(comments, content_type=RSS)


def test_discover_build_and_add_agree_on_a_post_page_s_site_feed(server: HTTPServer, tmp_path: Path) -> None:
    wordpress(server)
    page = server.url_for("/2026/11/hello/")
    listed = cli("discover", page, "--timeout", "5")
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines() == [
        server.url_for(path) for path in ("/feed/", "/comments/feed/", "/2026/11/hello/feed/")
    ]
    config = write_config(tmp_path, [{"name": "Blog", "feed": page}], host_gap=0, retries=0, timeout=5)
    assert build(config).exit_code == 0
    index = (tmp_path / "public" / "index.html").read_text(encoding="utf-8")
    assert "Post 1" in index and "By: Jane" not in index
    paths = [request.path for request, _ in server.log]
    assert "/2026/11/hello/feed/" not in paths and "/comments/feed/" not in paths
    other = tmp_path / "other.yaml"
    other.write_text("title: T\nlink: https://planet.example.org/\n", encoding="utf-8")
    added = cli("add", page, "--config", str(other), "--timeout", "5")
    assert added.exit_code == 0, added.output
    assert server.url_for("/feed/") in other.read_text(encoding="utf-8")


def test_every_advertised_feed_is_tried_until_one_reads(server: HTTPServer, tmp_path: Path) -> None:
    # liferea#903: the first two advertised feeds redirect back to HTML pages, the third is the feed.
    server.expect_request("/").respond_with_data(
        links((RSS, "/a.xml", "A"), (RSS, "/b.xml", "B"), (RSS, "/c.xml", "C")), content_type="text/html"
    )
    server.expect_request("/a.xml").respond_with_data("", status=302, headers={"Location": "/"})
    server.expect_request("/b.xml").respond_with_data("", status=301, headers={"Location": "/about"})
    server.expect_request("/about").respond_with_data("<html><head></head></html>", content_type="text/html")
    server.expect_request("/c.xml").respond_with_data(rss(post(3)), content_type=RSS)
    config = write_config(tmp_path, [{"name": "Home", "feed": server.url_for("/")}], host_gap=0, retries=0, timeout=5)
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "Post 3" in (tmp_path / "public" / "index.html").read_text(encoding="utf-8")
    assert f"followed the feed it advertises, {server.url_for('/c.xml')}" in result.stderr
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert (report["requests"], report["parsed"], report["failed"]) == (6, 1, 0)  # page, 2 + 2 redirected, 1


def test_at_most_max_followed_feeds_are_tried_and_the_best_one_s_failure_is_reported(
    server: HTTPServer, tmp_path: Path
) -> None:
    feeds = [(RSS, f"/f{n}.xml", f"F{n}") for n in range(MAX_FOLLOWED + 2)]
    server.expect_request("/").respond_with_data(links(*feeds), content_type="text/html")
    for _, href, _ in feeds:
        server.expect_request(href).respond_with_data("<html><head></head></html>", content_type="text/html")
    server.expect_request("/ok.xml").respond_with_data(rss(post(1)), content_type=RSS)
    config = write_config(
        tmp_path,
        [{"name": "OK", "feed": server.url_for("/ok.xml")}, {"name": "Home", "feed": server.url_for("/")}],
        host_gap=0,
        retries=0,
        timeout=5,
    )
    assert build(config).exit_code == 0
    asked = [request.path for request, _ in server.log if request.path.startswith("/f")]
    assert asked == [href for _, href, _ in feeds[:MAX_FOLLOWED]]
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert report["failed_by_class"] == {"not_a_feed": 1}
    rows = json.loads(cli("status", "--config", str(config), "--json", "--now", NOW_ISO).stdout)
    (home,) = [row for row in rows if row["name"] == "Home"]
    assert home["discovered"] == server.url_for("/f0.xml")


def test_a_server_in_trouble_is_not_asked_for_the_next_feed(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/").respond_with_data(
        links((RSS, "/a.xml", "A"), (RSS, "/b.xml", "B")), content_type="text/html"
    )
    server.expect_request("/a.xml").respond_with_data("busy", status=503)
    server.expect_request("/b.xml").respond_with_data(rss(post(3)), content_type=RSS)
    server.expect_request("/ok.xml").respond_with_data(rss(post(1)), content_type=RSS)
    config = write_config(
        tmp_path,
        [{"name": "OK", "feed": server.url_for("/ok.xml")}, {"name": "Home", "feed": server.url_for("/")}],
        host_gap=0,
        retries=0,
        timeout=5,
    )
    assert build(config).exit_code == 0
    assert "/a.xml" in [request.path for request, _ in server.log]
    assert "/b.xml" not in [request.path for request, _ in server.log]
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert report["failed_by_class"] == {"http_5xx": 1}
