"""Local feed files: a site's ``feed`` may be a path, read with the parse path every feed takes.

The bundled demo planet (examples/demo) is built here through the real CLI,
with no network: it is what the README's first command builds.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.config.load import load_config
from syndicator.fetch import localfile
from syndicator.model import Failed, FetchRequest

from .conftest import NOW_ISO, build, entry_titles, post, rss, write_config

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo"


def demo_copy(tmp_path: Path) -> Path:
    """The demo planet copied into ``tmp_path`` (its sites.yaml publishes beside itself there)."""
    folder = tmp_path / "demo"
    shutil.copytree(DEMO, folder)
    config = folder / "sites.yaml"
    text = config.read_text(encoding="utf-8").replace("output: ../../public", "output: public")
    config.write_text(text.replace("cache: ../../cache", "cache: cache"), encoding="utf-8")
    return config


def published_text(public: Path) -> str:
    return "".join(path.read_text(encoding="utf-8") for path in sorted(public.iterdir()) if path.is_file())


def test_the_demo_planet_builds_without_a_network(tmp_path: Path) -> None:
    config = demo_copy(tmp_path)
    result = build(config)
    assert result.exit_code == 0, result.output
    public = config.parent / "public"
    titles = entry_titles(public / "feed.xml")
    assert len(titles) == 11
    for title in (
        "Episode 24: The night pilot",
        "A ring buffer you can read backwards",
        "Where the towpath ends",
        "First frost, and a sensor that disagrees",
        "A pocket timer in forty lines",
    ):
        assert title in titles  # one of each format: podcast RSS, Atom, RSS 2.0, RSS 1.0, JSON Feed
    index = (public / "index.html").read_text(encoding="utf-8")
    assert 'src="https://media.harbour-radio.example.org/episodes/24-night-pilot.mp3"' in index
    sites = (public / "sites.html").read_text(encoding="utf-8")
    assert sites.count("no public feed") == 5
    assert "0 B downloaded" in result.output


def test_no_local_path_is_published(tmp_path: Path) -> None:
    config = demo_copy(tmp_path)
    assert build(config).exit_code == 0
    public = config.parent / "public"
    text = published_text(public)
    assert "file:" not in text and str(config.parent) not in text
    assert "<outline" not in (public / "opml.xml").read_text(encoding="utf-8")  # nothing a reader could fetch
    items = json.loads((public / "feed.json").read_text(encoding="utf-8"))["items"]
    assert {item["_source"]["feed_url"] for item in items} == {None}


def test_a_path_is_relative_to_the_folder_of_sites_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "feeds").mkdir()
    (tmp_path / "feeds" / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    config = write_config(
        tmp_path, [{"name": "A", "feed": "feeds/a.xml"}, {"name": "B", "feed": str(tmp_path / "feeds" / "a.xml")}]
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    loaded = load_config(config)
    assert [site.feed for site in loaded.sites] == [(tmp_path / "feeds" / "a.xml").as_uri()] * 2
    assert build(config).exit_code == 0
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 1"]


def test_a_local_file_is_read_again_on_every_build(tmp_path: Path) -> None:
    feed = tmp_path / "a.xml"
    feed.write_text(rss(post(1)), encoding="utf-8")
    config = write_config(tmp_path, [{"name": "A", "feed": "a.xml"}])
    assert build(config).exit_code == 0
    feed.write_text(rss(post(2, day=2), post(1)), encoding="utf-8")
    result = build(config, now="2026-11-30T12:01:00Z")  # a minute later: a URL would not be due yet
    assert result.exit_code == 0, result.output
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 2", "Post 1"]
    status = CliRunner().invoke(main, ["status", "--config", str(config), "--now", NOW_ISO])
    assert "next due: every build (a local file)" in status.output


def test_a_missing_file_is_a_config_error_naming_its_line(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    config = write_config(tmp_path, [{"name": "A", "feed": "a.xml"}, {"name": "B", "feed": "b.xml"}])
    result = build(config)
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"syndicator: error: {config}:7: sites[1].feed: 'b.xml' is neither an http(s) "
        "URL nor a file (a path is relative to the folder of sites.yaml)"
    )
    assert not (tmp_path / "public").exists() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize("kind", ["missing", "folder", "pipe"])
def test_what_cannot_be_read_is_a_file_failure_of_its_site(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "feed.xml"
    if kind == "folder":
        path.mkdir()
    elif kind == "pipe":
        if not hasattr(os, "mkfifo"):
            pytest.skip("named pipes need a POSIX system")
        os.mkfifo(path)  # opening it must not wait for a writer
    result = localfile.read(FetchRequest(path.as_uri(), path.as_uri()), 1024)
    assert isinstance(result, Failed) and result.error.kind == "file" and result.requests == 0
    expected = {
        "missing": "cannot read feed.xml: No such file or directory",
        "folder": "cannot read feed.xml: Is a directory",
        "pipe": "feed.xml is not a regular file",
    }
    assert result.error.message == expected[kind]


def test_a_file_that_stops_parsing_keeps_its_last_good_copy(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    (tmp_path / "b.xml").write_text(rss(post(2, host="b.example.org")), encoding="utf-8")
    config = write_config(tmp_path, [{"name": "A", "feed": "a.xml"}, {"name": "B", "feed": "b.xml"}])
    assert build(config).exit_code == 0
    (tmp_path / "b.xml").write_text("<rss><channel><item>", encoding="utf-8")
    result = build(config, now="2026-11-30T13:00:00Z")
    assert result.exit_code == 0, result.output
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 2", "Post 1"]
    status = json.loads(
        CliRunner().invoke(main, ["status", "--config", str(config), "--now", NOW_ISO, "--json"]).output
    )
    assert next(row for row in status if row["name"] == "B")["health"] == "failing"


def test_a_local_file_larger_than_max_bytes_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(rss(post(1), extra="<!--" + "x" * 5000 + "-->"), encoding="utf-8")
    config = write_config(tmp_path, [{"name": "A", "feed": "a.xml"}], max_bytes=2048)
    result = build(config)
    assert result.exit_code == 3, result.output
    assert "larger than max_bytes (2048 bytes)" in result.output


def test_a_page_cannot_point_a_site_at_a_local_file(tmp_path: Path, server: HTTPServer) -> None:
    secret = tmp_path / "secret.xml"
    secret.write_text(rss({"title": "Private notes", "guid": "p1"}), encoding="utf-8")
    page = (
        f'<html><head><link rel="alternate" type="application/rss+xml" href="{secret.as_uri()}">'
        "</head><body>hello</body></html>"
    )
    server.expect_request("/").respond_with_data(page, content_type="text/html")
    server.expect_request("/feed").respond_with_data("", status=302, headers={"Location": secret.as_uri()})
    config = write_config(
        tmp_path,
        [
            {"name": "Page", "feed": server.url_for("/")},
            {"name": "Redirect", "feed": server.url_for("/feed")},
            {"name": "Mine", "feed": "mine.xml"},
        ],
    )
    (tmp_path / "mine.xml").write_text(rss(post(1)), encoding="utf-8")
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "Private notes" not in published_text(tmp_path / "public")
    status = {
        row["name"]: row
        for row in json.loads(
            CliRunner().invoke(main, ["status", "--config", str(config), "--now", NOW_ISO, "--json"]).output
        )
    }
    assert status["Page"]["failure_class"] == "not_a_feed"
    assert status["Redirect"]["failure_class"] == "redirect"
