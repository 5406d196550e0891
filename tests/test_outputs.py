"""Published files: valid Atom 1.0, JSON Feed 1.1, safe HTML pages; the discover command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.site.pageentry import atom_id, shorten

from .conftest import NOW_ISO, post, rss
from .outputs import atom_problems, html_problems, run_build

HOSTILE_ITEM = {
    "title": "Esc\x1bape &lt;script&gt;alert(1)&lt;/script&gt; AT&amp;T &amp;amp; &nbsp;x",
    "link": "javascript:alert(1)",
    "guid isPermaLink='false'": "not a uri {1}",
    "pubDate": "Tue, 03 Nov 2026 10:00:00 GMT",
    "description": (
        "&lt;p onclick='x()'&gt;Hi&lt;script&gt;alert(2)&lt;/script&gt;&lt;img src='/rel.png'&gt;"
        "&lt;iframe src='https://evil.example/'&gt;&lt;/iframe&gt;&lt;a href='data:x'&gt;d&lt;/a&gt;"
        "&lt;video src='https://media.example/v.mp4'&gt;&lt;/video&gt;]]&gt; &amp;#27;&lt;/p&gt;"
    ),
    "author": "Mallory &lt;b&gt;",
}


def publish(server: HTTPServer, tmp_path: Path, *items: dict[str, str], **settings: object) -> Path:
    server.expect_request("/feed.xml").respond_with_data(rss(*items), content_type="application/rss+xml")
    sites = [{"name": "Blog <b>", "feed": server.url_for("/feed.xml"), "link": "https://blog.example.org/"}]
    return run_build(tmp_path, sites, NOW_ISO, **settings)


@pytest.mark.parametrize(
    "items",
    [
        [post(1, day=1), post(2, day=2)],
        [HOSTILE_ITEM, post(3, day=3), {"title": "", "description": "only text, no link or date"}],
    ],
    ids=["ordinary", "hostile"],
)
def test_outputs_are_valid_and_safe(server: HTTPServer, tmp_path: Path, items: list[dict[str, str]]) -> None:
    output = publish(server, tmp_path, *items)
    assert atom_problems((output / "feed.xml").read_bytes()) == []
    for page in ("index.html", "sites.html"):
        text = (output / page).read_text(encoding="utf-8")
        assert html_problems(text) == [], page
        assert '<meta charset="utf-8">' in text
        assert "default-src 'none'" in text and "script-src 'none'" in text
    feed = json.loads((output / "feed.json").read_text(encoding="utf-8"))
    assert feed["version"] == "https://jsonfeed.org/version/1.1"
    for entry in feed["items"]:
        assert isinstance(entry["id"], str) and ("content_html" in entry or "content_text" in entry)
        assert html_problems(entry["content_html"]) == []
        assert entry["date_published"].endswith("Z")


def test_hostile_entry_is_rendered_harmless(server: HTTPServer, tmp_path: Path) -> None:
    output = publish(server, tmp_path, HOSTILE_ITEM)
    index = (output / "index.html").read_text(encoding="utf-8")
    assert "&lt;script" not in index  # markup in an RSS title is stripped, never shown or run
    assert ">Escape AT&amp;T &amp; \u00a0x<" in index  # the no-break space is kept
    assert 'src="https://blog.example.org/rel.png"' in index
    assert "javascript:" not in index and "\x1b" not in index
    atom = (output / "feed.xml").read_text(encoding="utf-8")
    assert "urn:uuid:" in atom  # a guid that is not a URI gets a stable urn:uuid


def test_titles_are_escaped_exactly_once(server: HTTPServer, tmp_path: Path) -> None:
    output = publish(server, tmp_path, post(1) | {"title": "AT&amp;T &lt;3"})
    index = (output / "index.html").read_text(encoding="utf-8")
    assert ">AT&amp;T &lt;3<" in index and "&amp;amp;" not in index
    assert '<title type="text">AT&amp;T &lt;3</title>' in (output / "feed.xml").read_text(encoding="utf-8")
    assert json.loads((output / "feed.json").read_text())["items"][0]["title"] == "AT&T <3"


def test_front_page_summary_is_cut_to_the_configured_length(server: HTTPServer, tmp_path: Path) -> None:
    long_text = "&lt;p&gt;" + " ".join(f"word{n}" for n in range(100)) + " &lt;b&gt;bold end&lt;/b&gt;&lt;/p&gt;"
    output = publish(server, tmp_path, post(1) | {"description": long_text}, summary_chars=60)
    index = (output / "index.html").read_text(encoding="utf-8")
    assert "word8 word9 …</p>" in index and "word10" not in index
    assert "word99" in (output / "feed.xml").read_text()  # the feeds carry the whole text


def test_atom_id_keeps_uris_and_replaces_others() -> None:
    assert atom_id("https://blog.example.org/1", "https://f") == "https://blog.example.org/1"
    assert atom_id("tag:blog.example.org,2026:1", "https://f") == "tag:blog.example.org,2026:1"
    made = atom_id("1234", "https://f")
    assert made.startswith("urn:uuid:") and made == atom_id("1234", "https://f") != atom_id("1234", "https://g")
    assert atom_id("a b", "https://f").startswith("urn:uuid:")
    for scripted in ("javascript:alert(1)", "VBScript:x", "data:text/html,x"):
        assert atom_id(scripted, "https://f") == atom_id(scripted, "https://f") != scripted
        assert atom_id(scripted, "https://f").startswith("urn:uuid:")


PAGE = """<!doctype html><html><head>
<link rel="alternate" type="application/atom+xml" href="/atom.xml">
<link rel="alternate" type="application/rss+xml" href="{feed}">
</head><body>hi</body></html>"""


def test_discover_prints_the_feeds_a_page_advertises(server: HTTPServer) -> None:
    server.expect_request("/").respond_with_data(PAGE.format(feed="/rss.xml"), content_type="text/html")
    result = CliRunner().invoke(main, ["discover", server.url_for("/")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [server.url_for("/atom.xml"), server.url_for("/rss.xml")]


def test_discover_of_a_feed_prints_the_feed(server: HTTPServer) -> None:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)), content_type="application/rss+xml")
    result = CliRunner().invoke(main, ["discover", server.url_for("/feed.xml")], catch_exceptions=False)
    assert result.exit_code == 0 and result.stdout == server.url_for("/feed.xml") + "\n"


def test_discover_of_a_page_without_feeds_fails(server: HTTPServer) -> None:
    server.expect_request("/").respond_with_data("<html><head></head><body>x</body></html>", content_type="text/html")
    result = CliRunner().invoke(main, ["discover", server.url_for("/")], catch_exceptions=False)
    assert result.exit_code == 1
    assert "advertises no feed" in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("ftp://x/", id="ftp"),
        pytest.param("example.org", id="no-scheme"),
        pytest.param("file:///etc/passwd", id="file"),
        pytest.param("http://127.0.0.1:99999/", id="bad-port"),
        pytest.param("http://127.0.0.1/a b", id="space"),
    ],
)
def test_discover_refuses_a_url_that_is_not_http_as_a_usage_error(server: HTTPServer, url: str) -> None:
    result = CliRunner().invoke(main, ["discover", url], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "Invalid value for 'URL'" in result.stderr and result.stdout == ""
    assert server.log == []


def test_build_names_the_feed_it_followed_from_a_page(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/").respond_with_data(PAGE.format(feed="/rss.xml"), content_type="text/html")
    server.expect_request("/atom.xml").respond_with_data(rss(post(2)), content_type="application/rss+xml")
    server.expect_request("/rss.xml").respond_with_data(rss(post(1)), content_type="application/rss+xml")
    sites = [{"name": "Page", "feed": server.url_for("/")}, {"name": "Feed", "feed": server.url_for("/rss.xml")}]
    output = run_build(tmp_path, sites, NOW_ISO, sites_page_details=True)
    sites_page = (output / "sites.html").read_text(encoding="utf-8")
    atom = server.url_for("/atom.xml")  # a page at the site's root has no feed of its own: the first advertised
    link = f'<a href="{atom}" rel="noopener noreferrer nofollow">{atom}</a>'
    assert f"followed the feed it advertises, {link}: put that URL in sites.yaml" in sites_page


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        pytest.param("A" * 2_000_000, "A" * 299 + "…", id="one-huge-word-is-cut-hard"),
        pytest.param(" ".join(["word"] * 400_000), " ".join(["word"] * 59) + " …", id="cut-on-a-word-boundary"),
        pytest.param("x" * 300, "x" * 300, id="300-characters-fit"),
    ],
)
def test_long_titles_are_capped_in_every_output(server: HTTPServer, tmp_path: Path, title: str, shown: str) -> None:
    huge_summary = " ".join(["text"] * 200_000)  # about 1 MB: front-page summaries are capped too
    output = publish(server, tmp_path, post(1) | {"title": title, "description": huge_summary})
    assert len(shown) <= 300
    atom = (output / "feed.xml").read_text(encoding="utf-8")
    assert f'<title type="text">{shown}</title>' in atom
    assert json.loads((output / "feed.json").read_text())["items"][0]["title"] == shown
    index = (output / "index.html").read_text(encoding="utf-8")
    assert f'rel="noopener noreferrer">{shown}</a></h2>' in index
    assert len(index.encode()) < 20_000


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("a title", "a title", id="fits"),
        pytest.param("0123456789", "0123456789", id="exactly-the-limit"),
        pytest.param("one two three", "one two …", id="word-boundary"),
        pytest.param("one two  three", "one two …", id="boundary-at-the-cut"),
        pytest.param("x twelvetwelve", "x twelvet…", id="a-long-word-is-cut-inside"),
    ],
)
def test_shorten(text: str, shown: str) -> None:
    assert shorten(text, 10) == shown
    assert len(shorten(text, 10)) <= 10


def test_long_author_is_capped(server: HTTPServer, tmp_path: Path) -> None:
    output = publish(server, tmp_path, post(1) | {"author": "Ann " * 100_000})
    (item,) = json.loads((output / "feed.json").read_text())["items"]
    assert len(item["authors"][0]["name"]) <= 100 and item["authors"][0]["name"].endswith(" …")
