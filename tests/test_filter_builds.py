"""Filters through the real CLI (docs/filters.md): a build publishes what they let through, a changed filter
changes the next build's output with no request, and ``syndicator filter test`` agrees with that build."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from pytest_httpserver import HTTPServer

from syndicator.cli import main
from syndicator.config.load import load_config
from syndicator.config.union import planet_named
from syndicator.errors import ConfigError
from syndicator.feedtypes import Entry
from syndicator.model import SourceState
from syndicator.poll.path import save
from syndicator.rules import Filters, Rule
from syndicator.state.store import Store

from .conftest import NOW, NOW_ISO, build, entry_titles, post, rss, tree, write_config

LATER = "2026-11-30T12:05:00Z"  # minutes after NOW: no feed is due again


def feed(server: HTTPServer) -> str:
    """Four posts, the newest about crypto, the second by a spammer."""
    items = [post(n, day=n) for n in (1, 2, 3, 4)]
    items[3]["title"] = "Post 4 on Crypto"
    items[1]["dc:creator"] = "Spam Mer"
    server.expect_request("/feed.xml").respond_with_data(rss(*reversed(items)), headers={"ETag": '"v1"'})
    return server.url_for("/feed.xml")


def planet(tmp_path: Path, url: str, filters: dict[str, Any] | None = None) -> Path:
    settings: dict[str, Any] = {"items_per_feed": 2, "new_feed_items": "all"}
    if filters is not None:
        settings["filters"] = filters
    return write_config(tmp_path, [{"name": "Blog", "feed": url}], **settings)


def published(tmp_path: Path) -> list[str]:
    return entry_titles(tmp_path / "public" / "feed.xml")


def database(tmp_path: Path) -> dict[str, bytes]:
    """The state database and the build's report as bytes (a reader adds an -shm file, which holds no state)."""
    return {name: data for name, data in tree(tmp_path / "cache").items() if not name.endswith(("-shm", "-wal"))}


def filter_test(config: Path, *args: str, now: str = LATER) -> Result:
    return CliRunner().invoke(main, ["filter", "test", "--config", str(config), "--now", now, *args])


def kept_and_published(result: Result) -> list[str]:
    """The titles the dry run says the next build publishes, in its order."""
    lines = [line for line in result.stdout.splitlines() if line.startswith("KEEP ")]
    return [line.split("  ")[3] for line in lines if "not published" not in line]


def test_a_dropped_entry_leaves_room_for_the_next_one(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(tmp_path, feed(server), {"drop": [{"keyword": "crypto"}]})
    assert build(config).exit_code == 0
    assert published(tmp_path) == ["Post 3", "Post 2"]  # two a feed, the newest dropped


def test_a_changed_filter_changes_the_next_build_with_no_request(server: HTTPServer, tmp_path: Path) -> None:
    url = feed(server)
    config = planet(tmp_path, url, {"drop": [{"keyword": "crypto"}]})
    assert build(config).exit_code == 0
    requests = len(server.log)
    assert requests == 1 and published(tmp_path) == ["Post 3", "Post 2"]
    planet(tmp_path, url, {"drop": [{"author": "spam mer"}], "keep": [{"link": "*/posts/[234]"}]})
    again = build(config, now=LATER)
    assert again.exit_code == 0, again.output
    assert len(server.log) == requests  # nothing was due: the stored history was filtered again
    assert published(tmp_path) == ["Post 4 on Crypto", "Post 3"]
    report = json.loads((tmp_path / "cache" / "report.json").read_text())
    assert report["sources_due"] == 0 and report["rendered"] is True
    planet(tmp_path, url)  # no filters at all
    build(config, now="2026-11-30T12:06:00Z")
    assert len(server.log) == requests and published(tmp_path) == ["Post 4 on Crypto", "Post 3"]
    planet(tmp_path, url, {"drop": [{"older_than": "27d"}]})  # Nov 3 and older, at Nov 30
    build(config, now="2026-11-30T12:07:00Z")
    assert published(tmp_path) == ["Post 4 on Crypto"]


def test_a_sites_own_filter_is_applied_with_no_request(server: HTTPServer, tmp_path: Path) -> None:
    url = feed(server)
    config = planet(tmp_path, url)
    build(config)
    site = {"name": "Blog", "feed": url, "filters": {"keep": [{"keyword": ["post 1", "post 2"]}]}}
    write_config(tmp_path, [site], items_per_feed=2, new_feed_items="all")
    build(config, now=LATER)
    assert len(server.log) == 1 and published(tmp_path) == ["Post 2", "Post 1"]


def test_filter_test_agrees_with_the_next_build(server: HTTPServer, tmp_path: Path) -> None:
    url = feed(server)
    config = planet(tmp_path, url, {"drop": [{"author": "Spam Mer"}]})
    assert build(config).exit_code == 0
    cache = database(tmp_path)
    tried = filter_test(config)
    assert tried.exit_code == 0, tried.output
    lines = tried.stdout.splitlines()
    assert lines[0] == "KEEP  2026-11-04  Blog  Post 4 on Crypto  (kept: no rule of filters.drop (line 7) drops it)"
    assert lines[2] == "DROP  2026-11-02  Blog  Post 2  (dropped by filters.drop[0] (line 7): author 'Spam Mer')"
    assert "not published: older than the newest the planet shows" in lines[3]
    assert lines[-1] == "4 stored entries: 3 kept, 1 dropped; the next build publishes 2 of them"
    assert kept_and_published(tried) == published(tmp_path) == ["Post 4 on Crypto", "Post 3"]
    trying = filter_test(config, "--drop", "keyword: crypto", "--drop", "{link: '*/3'}")
    assert kept_and_published(trying) == ["Post 1"]
    assert "(dropped by --drop 'keyword: crypto': keyword 'crypto')" in trying.stdout
    assert len(server.log) == 1 and database(tmp_path) == cache  # no request, nothing written
    planet(tmp_path, url, {"drop": [{"author": "Spam Mer"}, {"keyword": "crypto"}, {"link": "*/3"}]})
    assert build(config, now=LATER).exit_code == 0
    assert published(tmp_path) == kept_and_published(trying) and len(server.log) == 1


def test_filter_test_on_a_sites_rules(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(tmp_path, feed(server))
    build(config)
    tried = filter_test(config, "--site", "Blog", "--keep", "keyword: post 1")
    assert kept_and_published(tried) == ["Post 1"]
    assert "(dropped: matches no rule of --keep 'keyword: post 1')" in tried.stdout
    nobody = filter_test(config, "--site", "Nobody")
    assert nobody.exit_code == 2 and "no site is named 'Nobody'" in nobody.stderr


def test_filter_test_refuses_a_rule_it_cannot_read(tmp_path: Path) -> None:
    config = planet(tmp_path, "https://blog.example.org/feed.xml")
    for rule, message in (
        ("colour: red", "--drop: colour: unknown kind; expected category"),
        ("[x", "--drop: invalid YAML"),
        ("older_than: soon", "--drop: older_than: 'soon' is not a duration"),
    ):
        result = filter_test(config, "--drop", rule)
        assert result.exit_code == 2 and f"syndicator: error: {message}" in result.stderr, result.stderr


def test_filter_test_judges_categories_of_the_stored_entries(tmp_path: Path) -> None:
    """Categories come from the feeds (parse); here they are stored as a fetch would store them."""
    url = "https://blog.example.org/feed.xml"
    config = planet(tmp_path, url, {"keep": [{"category": "Python"}]})
    entries = [
        Entry(id=f"{url}#{n}", title=f"Post {n}", date=NOW - timedelta(days=n), categories=categories)
        for n, categories in ((1, ("python", "web")), (2, ("rust",)), (3, ()), (4, ("Python",)))
    ]
    with Store.open(tmp_path / "cache") as store:
        save(store, replace(SourceState(url=url, fetch_url=url), last_success=NOW), entries, NOW, new_items=0)
    tried = filter_test(config, now=NOW_ISO)
    assert tried.exit_code == 0, tried.output
    assert kept_and_published(tried) == ["Post 1", "Post 4"]
    assert "DROP  2026-11-28  Blog  Post 2  (dropped: matches no rule of filters.keep (line 7))" in tried.stdout
    assert "KEEP  2026-11-29  Blog  Post 1  (kept by filters.keep[0] (line 7): category 'Python')" in tried.stdout


def test_filter_test_names_a_planet_of_the_file(tmp_path: Path) -> None:
    config = load_config(planet(tmp_path, "https://blog.example.org/feed.xml"))
    python = replace(config, name="python", filters=Filters(keep=(Rule(category=("python",)),)))
    many = replace(config, planets=(python,))
    assert planet_named(many, "python").filters == python.filters and planet_named(many, "main") is many
    with pytest.raises(ConfigError, match="no planet named 'rust' in .* \\(its planets: main, python\\)"):
        planet_named(many, "rust")
    result = filter_test(tmp_path / "sites.yaml", "--planet", "python")
    assert (
        result.exit_code == 2 and "no planet named 'python'" in result.stderr and "(its planets: main)" in result.stderr
    )


def test_language_rules_in_a_build_read_the_sites_language_first(server: HTTPServer, tmp_path: Path) -> None:
    english = rss(post(1, day=1), post(2, day=2), extra="<language>en-GB</language>")
    french = rss(post(3, day=3, host="fr.example.org"), extra="<language>fr</language>")
    server.expect_request("/en.xml").respond_with_data(english)
    server.expect_request("/fr.xml").respond_with_data(french)
    sites = [
        {"name": "English", "feed": server.url_for("/en.xml")},
        {"name": "French", "feed": server.url_for("/fr.xml")},
    ]
    config = write_config(tmp_path, sites, new_feed_items="all", filters={"keep": [{"language": "en"}]})
    assert build(config).exit_code == 0
    assert published(tmp_path) == ["Post 2", "Post 1"]
    sites[1]["language"] = "en-US"  # the site says better than its feed
    write_config(tmp_path, sites, new_feed_items="all", filters={"keep": [{"language": "en"}]})
    assert build(config, now=LATER).exit_code == 0
    assert published(tmp_path) == ["Post 3", "Post 2", "Post 1"] and len(server.log) == 2


def test_filter_test_says_an_entry_is_a_copy_of_a_post_another_site_carries(server: HTTPServer, tmp_path: Path) -> None:
    """Two feeds carry one post (same link): the build publishes it once, credited to the first site, and
    the dry run says why the other is not published (not that it is too old)."""
    shared = post(1, day=3)
    server.expect_request("/a.xml").respond_with_data(rss(shared), content_type="application/rss+xml")
    server.expect_request("/b.xml").respond_with_data(rss(shared), content_type="application/rss+xml")
    sites = [{"name": "First", "feed": server.url_for("/a.xml")}, {"name": "Second", "feed": server.url_for("/b.xml")}]
    config = write_config(tmp_path, sites, new_feed_items="all")
    assert build(config).exit_code == 0
    assert published(tmp_path) == ["Post 1"]
    lines = [line for line in filter_test(config).stdout.splitlines() if line.startswith("KEEP ")]
    assert lines == [
        "KEEP  2026-11-03  First  Post 1  (kept: no filters)",
        "KEEP  2026-11-03  Second  Post 1  (kept: no filters; not published: a copy of a post First carries)",
    ], lines
