"""What a moved planet's readers see: the sites page in plain words (the maintainer's details one setting
away, the diagnosis in ``syndicator status``), ``syndicator preview`` on loopback, and the old planet's
feeds (old_feeds: rss20.xml, rss10.xml, atom.xml, foafroll.xml) with the entries of feed.xml.

Through the real CLI (CliRunner, and a subprocess for preview's Ctrl-C) and feeds on 127.0.0.1.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from calendar import timegm
from collections.abc import Callable
from pathlib import Path

import feedparser
import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.drivers.preview import is_loopback

from .browser import Browser, axe_source, opened, serve
from .conftest import ATOM, build, loopback_server, post, rss, write_config

FIRST = "2026-11-20T12:00:00Z"
LATER = "2026-11-24T12:00:00Z"
#: The words of the scheduler and of the CLI that readers are not to be told.
MAINTAINERS_WORDS = ("habits", "syndicator discover", "sites.yaml", "HTTP 500", "HTTP 404", "interval", "Next check")


def troubled_planet(tmp_path: Path, server: HTTPServer, **settings: object) -> Path:
    """Six sites built on FIRST, all fine (Moved by a permanent redirect to /new.xml); by LATER Broken
    answers 500, Missing 404 and Gone 410, and Later is listed but not checked yet. Returns sites.yaml."""
    for name in ("ok", "broken", "missing", "gone"):
        server.expect_oneshot_request(f"/{name}.xml").respond_with_data(rss(post(1, day=2, host=f"{name}.example.org")))
    server.expect_request("/ok.xml").respond_with_data(rss(post(1, day=2, host="ok.example.org")))
    server.expect_request("/moved.xml").respond_with_data("", status=301, headers={"Location": "/new.xml"})
    server.expect_request("/new.xml").respond_with_data(rss(post(1, day=3, host="moved.example.org")))
    names = {"Ok": "ok", "Broken": "broken", "Missing": "missing", "Gone": "gone", "Moved": "moved"}
    sites = [{"name": name, "feed": server.url_for(f"/{path}.xml")} for name, path in names.items()]
    settings = {"retries": 0, "host_gap": 0, **settings}
    assert build(write_config(tmp_path, sites, **settings), now=FIRST).exit_code == 0
    server.expect_request("/broken.xml").respond_with_data("oops", status=500)
    server.expect_request("/missing.xml").respond_with_data("no", status=404)
    server.expect_request("/gone.xml").respond_with_data("", status=410)
    later = [*sites, {"name": "Later", "feed": server.url_for("/later.xml")}]
    config = write_config(tmp_path, later, **settings)
    chosen = [argument for name in names for argument in ("--site", name)]
    result = build(config, "--force", *chosen, now=LATER)
    assert result.exit_code == 0, result.output
    return config


def main_text(page: Path) -> str:
    """The <main> of a page, as HTML text."""
    found = re.search(r"<main>(.*)</main>", page.read_text(encoding="utf-8"), re.S)
    assert found is not None
    return found[1]


def cells(page: Path) -> dict[str, dict[str, str]]:
    """{site name: {column label: cell text without tags}} of the sites table."""
    table = {}
    for row in re.findall(r"<tr class=[^>]*>(.*?)</tr>", main_text(page), re.S):
        name = re.sub(r"<[^>]*>", "", re.findall(r'<td class="site"[^>]*>(.*?)</td>', row)[0])
        labelled = re.findall(r'<td[^>]* data-label="([^"]*)">(.*?)</td>', row)
        table[name] = {label: re.sub(r"<[^>]*>", "", text) for label, text in labelled}
    return table


# --- the sites page speaks to readers -------------------------------------------------------------


def test_a_site_whose_feed_never_worked_is_not_available_yet(tmp_path: Path, server: HTTPServer) -> None:
    server.expect_request("/ok.xml").respond_with_data(rss(post(1)))
    server.expect_request("/never.xml").respond_with_data("not found", status=404)
    sites = [{"name": "Ok", "feed": server.url_for("/ok.xml")}, {"name": "Never", "feed": server.url_for("/never.xml")}]
    assert build(write_config(tmp_path, sites)).exit_code == 0
    table = cells(tmp_path / "public" / "sites.html")
    assert table["Never"]["Status"] == "not available yet: its feed could not be read so far"
    assert table["Ok"]["Status"] == "available"


def test_the_sites_page_tells_readers_in_plain_words(tmp_path: Path, server: HTTPServer) -> None:
    troubled_planet(tmp_path, server)
    page = tmp_path / "public" / "sites.html"
    table = cells(page)
    assert list(table) == ["Broken", "Gone", "Later", "Missing", "Moved", "Ok"]  # by name, as readers look them up
    assert {name: row["Status"] for name, row in table.items()} == {
        "Broken": "temporarily unavailable since 2026-11-20",
        "Gone": "gone since 2026-11-20: the feed was removed by its publisher",
        "Later": "waiting for its first check",
        "Missing": "temporarily unavailable since 2026-11-20",
        "Moved": "available; its feed moved to a new address",
        "Ok": "available",
    }
    assert table["Ok"] == {
        "Feed": "feed of Ok",  # "of Ok" visually hidden: said by screen readers
        "Last post": "2026-11-02",
        "Last checked": "2026-11-24",
        "Status": "available",
    }
    assert (table["Later"]["Last post"], table["Later"]["Last checked"]) == ("none yet", "not yet")
    text = main_text(page)
    assert f'<a href="{server.url_for("/new.xml")}" rel="noopener noreferrer nofollow">feed<span' in text
    assert '<p class="totals">6 sites. 2 of them are temporarily unavailable. 1 is gone.</p>' in text
    assert [word for word in MAINTAINERS_WORDS if word in text] == []
    assert "T12:" not in text  # days, not times: a check again the same day changes no page


def test_the_diagnosis_stays_in_status(tmp_path: Path, server: HTTPServer) -> None:
    config = troubled_planet(tmp_path, server)
    result = CliRunner().invoke(main, ["status", "--config", str(config), "--now", LATER], catch_exceptions=False)
    blocks: dict[str, list[str]] = {}
    for line in result.stdout.splitlines()[:-1]:  # the last line: the totals
        if not line.startswith(" "):
            blocks[line.split("  [")[0]] = []
        blocks[list(blocks)[-1]].append(line)
    assert list(blocks) == ["Ok", "Broken", "Missing", "Gone", "Moved", "Later"]
    assert "  failing: http_404 x1: HTTP 404" in blocks["Missing"]
    assert (
        "  what to do: the feed may have moved: `syndicator discover` on the site's home page finds its feeds"
        in blocks["Missing"]
    )
    assert "  what to do: gone: remove or edit its entry in sites.yaml" in blocks["Gone"]
    assert [name for name, lines in blocks.items() if any("what to do" in line for line in lines)] == [
        "Missing",
        "Gone",
    ]  # a server error (Broken) has nothing to do but wait


def test_sites_page_details_puts_the_maintainers_details_back(tmp_path: Path, server: HTTPServer) -> None:
    troubled_planet(tmp_path, server, sites_page_details=True)
    text = main_text(tmp_path / "public" / "sites.html")
    assert "`syndicator discover` on the site&#39;s home page" in text
    assert "HTTP 500" in text and "<th>Next check</th>" in text and "<th>Entries</th>" in text
    assert "temporarily unavailable" not in text
    names = [re.sub(r"<[^>]*>", "", name) for name in re.findall(r'<td class="site" dir="auto">(.*?)</td>', text)]
    assert names[:3] == ["Broken", "Missing", "Gone"]  # sites in trouble first, in sites.yaml order


def test_sites_page_details_must_be_true_or_false(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    result = build(write_config(tmp_path, [{"name": "A", "feed": "a.xml"}], sites_page_details="yes"))
    assert result.exit_code == 2
    assert "sites_page_details: must be true or false" in result.stderr


@pytest.fixture(scope="module")
def both_sites_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sites page of one troubled planet for readers and with the maintainer's details, each built."""
    folders = {}
    for kind, settings in (("readers", {}), ("details", {"sites_page_details": True})):
        folder = tmp_path_factory.mktemp(kind)
        with loopback_server() as http:
            troubled_planet(folder, http, **settings)
        folders[kind] = folder / "public"
    return folders


@pytest.mark.parametrize("kind", ["readers", "details"])
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_both_sites_pages_keep_the_themes_accessibility(
    browser: Browser, both_sites_pages: dict[str, Path], kind: str, width: int, dark: bool
) -> None:
    """In headless Chromium: axe-core finds nothing serious, our structure and contrast checks pass, nothing
    scrolls sideways."""
    with serve(browser, both_sites_pages[kind]) as url, opened(browser, url + "sites.html", width, dark) as tab:
        problems = tab.check("structure") + tab.check("contrast")
        violations = tab.axe(axe_source())
        facts = tab.check("facts")
        assert [line for line in tab.console if "/favicon.ico" not in line] == []  # a planet without an icon
    assert problems == []
    assert [v["id"] for v in violations if v["impact"] in ("serious", "critical")] == []
    assert facts["scroll_width"] <= width


# --- syndicator preview ---------------------------------------------------------------------------


def small_planet(tmp_path: Path, **settings: object) -> Path:
    """A planet of one local feed, built; returns its sites.yaml."""
    (tmp_path / "a.xml").write_text(rss(post(1), post(2, day=2)), encoding="utf-8")
    config = write_config(tmp_path, [{"name": "A", "feed": "a.xml", "link": "https://a.example.org/"}], **settings)
    result = build(config)
    assert result.exit_code == 0, result.output
    return config


def fetch(url: str) -> tuple[int, bytes]:
    """GET ``url`` with no proxy: (status, body)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_preview_serves_the_output_folder_on_loopback_until_ctrl_c(tmp_path: Path) -> None:
    config = small_planet(tmp_path)
    syndicator = Path(sys.executable).with_name("syndicator")
    process = subprocess.Popen(
        [str(syndicator), "preview", "--config", str(config), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        found = re.fullmatch(r"Serving (.+) at (http://127\.0\.0\.1:\d+/) \(Ctrl-C to stop\)\n", first)
        assert found is not None, first + (process.stderr.read() if process.poll() is not None else "")  # type: ignore[union-attr]
        assert found[1] == str(tmp_path / "public")
        url = found[2]
        assert fetch(url + "index.html") == (200, (tmp_path / "public" / "index.html").read_bytes())
        assert fetch(url)[1] == (tmp_path / "public" / "index.html").read_bytes()
        assert fetch(url + "feed.xml")[0] == 200
        assert fetch(url + ".syndicator-output")[0] == 404  # what a build did not publish is not served
        assert fetch(url + "nothing.html")[0] == 404
        process.send_signal(signal.SIGINT)  # Ctrl-C
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert out == "stopped\n" and "Traceback" not in err


def test_preview_of_a_folder_without_a_site_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["preview", "--output", str(tmp_path / "empty")], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stderr == (
        f"syndicator: error: {tmp_path / 'empty'}: no site to preview (no index.html); run syndicator build first\n"
    )


def test_preview_on_a_taken_port_is_one_line(tmp_path: Path) -> None:
    config = small_planet(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["preview", "--config", str(config), "--port", str(port)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"syndicator: error: 127.0.0.1:{port}: cannot listen there (")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True), ("0.0.0.0", False)],
)
def test_only_loopback_addresses_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# --- the old planet's feeds -----------------------------------------------------------------------

OLD = ["rss20.xml", "rss10.xml", "atom.xml", "foafroll.xml"]


def old_planet(tmp_path: Path, server: HTTPServer, **settings: object) -> Path:
    """Two sites on loopback, one with a guid that is no link and a script in a post; built with
    ``old_feeds`` set to every old file. Returns the output folder."""
    hostile = {**post(3, day=3, host="b.example.org"), "description": "&lt;p&gt;Hi&lt;script&gt;x()&lt;/script&gt;"}
    named = {**post(4, day=4, host="b.example.org"), 'guid isPermaLink="false"': "episode-4"}
    del named["guid"]
    a = "a.example.org"
    server.expect_request("/a.xml").respond_with_data(rss(post(1, host=a), post(2, day=2, host=a)))
    server.expect_request("/b.xml").respond_with_data(rss(hostile, named))
    sites = [
        {"name": "Site A", "feed": server.url_for("/a.xml"), "link": "https://a.example.org/"},
        {"name": "Site B", "feed": server.url_for("/b.xml")},
    ]
    result = build(write_config(tmp_path, sites, old_feeds=OLD, host_gap=0, **settings))
    assert result.exit_code == 0, result.output
    return tmp_path / "public"


def published_dates(parsed: feedparser.FeedParserDict) -> list[int]:
    """Each entry's date, seconds since the epoch (RSS 1.0's dc:date is feedparser's ``updated``)."""
    return [timegm(entry.get("published_parsed") or entry.updated_parsed) for entry in parsed.entries]


def test_the_old_feeds_carry_the_entries_of_the_atom_feed(tmp_path: Path, server: HTTPServer) -> None:
    public = old_planet(tmp_path, server)
    ours = feedparser.parse((public / "feed.xml").read_bytes())
    assert len(ours.entries) == 4
    documents = {name: feedparser.parse((public / name).read_bytes()) for name in OLD[:3]}
    assert {name: (d.bozo, d.version) for name, d in documents.items()} == {
        "rss20.xml": (False, "rss20"),
        "rss10.xml": (False, "rss10"),
        "atom.xml": (False, "atom10"),
    }
    for name, document in documents.items():
        assert [e.link for e in document.entries] == [e.link for e in ours.entries], name
        assert published_dates(document) == published_dates(ours), name
    rss20, rss10 = documents["rss20.xml"], documents["rss10.xml"]
    assert [e.id for e in rss20.entries] == [e.id for e in ours.entries]
    assert [e.title for e in rss20.entries] == [f"{e.source.title}: {e.title}" for e in ours.entries]
    assert [e.title for e in rss10.entries] == [e.title for e in rss20.entries]
    assert [e.summary for e in rss20.entries] == [e.content[0].value for e in ours.entries]
    atom = (public / "atom.xml").read_text(encoding="utf-8")
    assert atom == (public / "feed.xml").read_text(encoding="utf-8").replace(
        'href="https://planet.example.org/feed.xml"', 'href="https://planet.example.org/atom.xml"'
    )
    assert "feed.xml" not in atom


def test_rss20_xml_follows_the_rss_2_specification(tmp_path: Path, server: HTTPServer) -> None:
    public = old_planet(tmp_path, server)
    channel = ET.parse(public / "rss20.xml").getroot().find("channel")
    assert channel is not None
    assert [channel.findtext(name) for name in ("title", "link", "description")] == [
        "Planet Test",
        "https://planet.example.org/",
        "Planet Test",
    ]
    items = channel.findall("item")
    guids = {item.findtext("link"): item.find("guid") for item in items}
    permalink = guids["https://a.example.org/posts/1"]
    assert permalink is not None and (permalink.get("isPermaLink"), permalink.text) == ("true", permalink.text)
    assert permalink.text == "https://a.example.org/posts/1"
    named = guids["https://b.example.org/posts/4"]
    assert named is not None and named.get("isPermaLink") == "false"
    rfc822 = r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} [\d:]{8} GMT"
    for item in items:
        assert re.fullmatch(rfc822, item.findtext("pubDate") or ""), item.findtext("pubDate")
        source = item.find("source")
        assert source is not None and source.get("url", "").startswith("http://127.0.0.1:")
    assert items[0].findtext("pubDate") == "Wed, 04 Nov 2026 10:04:00 GMT"
    assert re.fullmatch(rfc822, channel.findtext("lastBuildDate") or "")
    text = (public / "rss20.xml").read_text(encoding="utf-8")
    assert "&lt;p&gt;Hi&lt;/p&gt;" in text and "x()" not in text and "&lt;script" not in text  # sanitized as feed.xml


def test_foafroll_xml_lists_the_sites_and_their_feeds(tmp_path: Path, server: HTTPServer) -> None:
    public = old_planet(tmp_path, server)
    rdf, foaf, rss1 = (
        "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}",
        "{http://xmlns.com/foaf/0.1/}",
        "{http://purl.org/rss/1.0/}",
    )
    group = ET.parse(public / "foafroll.xml").getroot().find(f"{foaf}Group")
    assert group is not None and group.findtext(f"{foaf}name") == "Planet Test"
    members = [
        (
            member.findtext(f"{foaf}Agent/{foaf}name"),
            member.find(f"{foaf}Agent/{foaf}weblog/{foaf}Document").get(f"{rdf}about"),  # type: ignore[union-attr]
            member.find(f".//{rss1}channel").get(f"{rdf}about"),  # type: ignore[union-attr]
        )
        for member in group.findall(f"{foaf}member")
    ]
    assert members == [
        ("Site A", "https://a.example.org/", server.url_for("/a.xml")),
        ("Site B", "https://blog.example.org/", server.url_for("/b.xml")),  # no link: its feed's home page
    ]


def test_atom_xml_names_no_hub_the_planet_does_not_tell(tmp_path: Path, server: HTTPServer) -> None:
    public = old_planet(tmp_path, server, hub="https://hub.example.org/")
    hubs: Callable[[str], list[str | None]] = lambda name: [  # noqa: E731
        link.get("href")
        for link in ET.parse(public / name).getroot().findall(f"{ATOM}link")
        if link.get("rel") == "hub"
    ]
    assert hubs("feed.xml") == ["https://hub.example.org/"]
    assert hubs("atom.xml") == []


def test_without_old_feeds_none_is_written(tmp_path: Path) -> None:
    small_planet(tmp_path)
    assert [name for name in OLD if (tmp_path / "public" / name).exists()] == []


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            ["rss20.xml", "rss30.xml"], "old_feeds[1]: 'rss30.xml' is not one of rss20.xml, rss10.xml", id="unknown"
        ),
        pytest.param(["rss20.xml", "rss20.xml"], "old_feeds[1]: 'rss20.xml' is listed twice", id="twice"),
        pytest.param("rss20.xml", "old_feeds: must be a list of the old planet's files: rss20.xml", id="not-a-list"),
    ],
)
def test_a_bad_old_feeds_is_one_line_naming_it(tmp_path: Path, value: object, problem: str) -> None:
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    result = build(write_config(tmp_path, [{"name": "A", "feed": "a.xml"}], old_feeds=value))
    assert result.exit_code == 2
    assert problem in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "public").exists()
