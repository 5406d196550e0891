"""No flood on a site's first fetch (docs/first-fetch.md), through the real CLI and loopback feeds.

A site's first fetch publishes its ``new_feed_items`` newest entries (default 3) and stores the
rest; an undated entry of a first fetch ranks below every dated entry and is never shown as
today's; an undated entry first seen in a later fetch is new, dated by that fetch.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

from syndicator.configtypes import Config
from syndicator.state import statefile
from syndicator.state.store import Store

from .conftest import NOW, build, entry_titles, post, rss, write_config

#: The planet's default share of a first fetch.
DEFAULT = Config.__dataclass_fields__["new_feed_items"].default
_ARTICLE = re.compile(r'<article class="entry".*?<bdi>(?P<site>[^<]*)</bdi>.*?<time datetime="(?P<at>[^"]+)"', re.S)


def at(hours: float) -> str:
    """The clock ``hours`` after NOW, as ``--now`` takes it."""
    return (NOW + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def front_page(output: Path) -> list[tuple[str, datetime]]:
    """(site name, published date) of each entry of the front page, top first."""
    html = (output / "index.html").read_text(encoding="utf-8")
    return [(m["site"], datetime.fromisoformat(m["at"].replace("Z", "+00:00"))) for m in _ARTICLE.finditer(html)]


def json_titles(output: Path) -> list[str]:
    return [item["title"] for item in json.loads((output / "feed.json").read_text(encoding="utf-8"))["items"]]


def undated(n: int, host: str = "old.example.org") -> dict[str, str]:
    """An RSS item number ``n`` without any date."""
    return {
        "title": f"Old {n}",
        "link": f"https://{host}/{n}",
        "guid": f"https://{host}/{n}",
        "description": f"Old {n}",
    }


def stored(tmp_path: Path, feed: str) -> int:
    """How many entries the state holds of ``feed``."""
    with Store.open(tmp_path / "cache") as store:
        return len(store.snapshots([feed])[feed])


Serve = Callable[[str, list[dict[str, str]]], str]


@pytest.fixture
def serve_feed(server: HTTPServer) -> Serve:
    """``serve_feed(path, items)``: the loopback server answers ``path`` with an RSS document of
    ``items`` from now on (a later call replaces them); returns the feed's URL."""
    bodies: dict[str, str] = {}

    def serve(path: str, items: list[dict[str, str]]) -> str:
        if path not in bodies:
            server.expect_request(path).respond_with_handler(
                lambda _request: Response(bodies[path], content_type="application/rss+xml")
            )
        bodies[path] = rss(*items)
        return server.url_for(path)

    return serve


def test_the_default_share_is_small() -> None:
    assert 1 <= DEFAULT <= 5  # a new site shows, but cannot fill a front page


def test_a_first_fetch_publishes_only_its_newest_entries_and_stores_the_rest(serve_feed: Serve, tmp_path: Path) -> None:
    feed = serve_feed("/blog.xml", [post(n, day=n) for n in range(1, 9)])
    config = write_config(tmp_path, [{"name": "Blog", "feed": feed}])
    result = build(config)
    assert result.exit_code == 0, result.output
    newest = [f"Post {n}" for n in range(8, 8 - DEFAULT, -1)]
    assert entry_titles(tmp_path / "public" / "feed.xml") == newest
    assert json_titles(tmp_path / "public") == newest
    assert [site for site, _ in front_page(tmp_path / "public")] == ["Blog"] * DEFAULT
    assert stored(tmp_path, feed) == 8  # nothing stored is lost
    # a later fetch: its new post is published, the held ones never are
    serve_feed("/blog.xml", [post(n, day=n) for n in range(1, 10)])
    result = build(config, "--force", now=at(2))
    assert result.exit_code == 0, result.output
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 9", *newest]


@pytest.mark.parametrize("value", ["all", 0])
def test_new_feed_items_all_publishes_a_whole_first_fetch(serve_feed: Serve, tmp_path: Path, value: Any) -> None:
    feed = serve_feed("/blog.xml", [post(n, day=n) for n in range(1, 9)])
    config = write_config(tmp_path, [{"name": "Blog", "feed": feed}], new_feed_items=value)
    assert build(config).exit_code == 0
    assert entry_titles(tmp_path / "public" / "feed.xml") == [f"Post {n}" for n in range(8, 3, -1)]  # items_per_feed


def test_a_site_sets_its_own_share_of_its_first_fetch(serve_feed: Serve, tmp_path: Path) -> None:
    one = serve_feed("/one.xml", [post(n, day=n, host="one.example.org") for n in range(1, 6)])
    four = serve_feed("/four.xml", [post(n, day=n, host="four.example.org") for n in range(11, 16)])
    sites = [{"name": "One", "feed": one, "new_feed_items": 1}, {"name": "Four", "feed": four}]
    config = write_config(tmp_path, sites, new_feed_items=4)
    assert build(config).exit_code == 0
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 15", "Post 14", "Post 13", "Post 12", "Post 5"]


@pytest.mark.parametrize("value", [-1, "some", 1.5, True, 100_001])
def test_a_bad_new_feed_items_is_one_line_naming_the_field(tmp_path: Path, value: Any) -> None:
    config = write_config(
        tmp_path, [{"name": "Blog", "feed": "https://blog.example.org/feed", "new_feed_items": value}]
    )
    result = build(config)
    assert result.exit_code != 0
    assert "sites[0].new_feed_items" in result.output and "or all" in result.output
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def five_dated_sites(serve_feed: Serve) -> list[dict[str, str]]:
    """Five dated sites on the loopback server, five posts each in November 2026."""
    return [
        {
            "name": f"Dated {s}",
            "feed": serve_feed(f"/dated{s}.xml", [post(10 * s + n, day=n + s) for n in range(5)]),
        }
        for s in range(1, 6)
    ]


def old_undated_site(serve_feed: Serve, count: int = 50) -> dict[str, str]:
    return {"name": "Old undated", "feed": serve_feed("/old.xml", [undated(n) for n in range(count, 0, -1)])}


def count_undated_on_front_page(output: Path) -> tuple[int, int]:
    """(entries of "Old undated" on the front page, how many of them sit above a dated site's entry)."""
    page = front_page(output)
    names = [site for site, _ in page]
    last_dated = max((i for i, name in enumerate(names) if name != "Old undated"), default=-1)
    mine = [i for i, name in enumerate(names) if name == "Old undated"]
    return len(mine), sum(1 for i in mine if i < last_dated)


def test_an_old_undated_site_added_to_a_planet_does_not_flood_its_front_page(
    serve_feed: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dated = five_dated_sites(serve_feed)
    config = write_config(tmp_path, dated)
    assert build(config).exit_code == 0
    old = old_undated_site(serve_feed)
    config = write_config(tmp_path, [*dated, old])
    result = build(config, now=at(2))
    assert result.exit_code == 0, result.output
    shown, above = count_undated_on_front_page(tmp_path / "public")
    with capsys.disabled():
        print(f"\nfirst fetch of a 50-entry undated site: {shown} on the front page, {above} above a dated entry")
    assert (shown, above) == (DEFAULT, 0)
    page = front_page(tmp_path / "public")
    oldest_dated = min(when for site, when in page if site != "Old undated")
    assert all(when < oldest_dated for site, when in page if site == "Old undated")  # not today's
    assert stored(tmp_path, old["feed"]) == 50


def test_undated_sites_of_a_planets_first_build_rank_below_every_dated_one(serve_feed: Serve, tmp_path: Path) -> None:
    config = write_config(tmp_path, [old_undated_site(serve_feed), *five_dated_sites(serve_feed)])
    assert build(config).exit_code == 0
    assert count_undated_on_front_page(tmp_path / "public") == (DEFAULT, 0)
    titles = entry_titles(tmp_path / "public" / "feed.xml")
    assert titles[-DEFAULT:] == ["Old 50", "Old 49", "Old 48"][:DEFAULT]  # its newest, in document order


def test_an_undated_entry_of_a_later_fetch_is_new(serve_feed: Serve, tmp_path: Path) -> None:
    dated = five_dated_sites(serve_feed)
    config = write_config(tmp_path, [*dated, old_undated_site(serve_feed)])
    assert build(config).exit_code == 0
    old = [undated(n) for n in range(51, 0, -1)]  # "Old 51" appears
    serve_feed("/old.xml", old)
    assert build(config, "--force", now=at(3)).exit_code == 0
    page = front_page(tmp_path / "public")
    assert page[0] == ("Old undated", NOW + timedelta(hours=3))  # first seen by this fetch: today's news
    assert entry_titles(tmp_path / "public" / "feed.xml")[0] == "Old 51"
    assert count_undated_on_front_page(tmp_path / "public")[0] == DEFAULT + 1


def as_schema_8(data: bytes) -> bytes:
    """A state file (gzip'd JSON lines) as a syndicator of schema 8 wrote it: no ``seen.backlog``."""
    lines = [json.loads(line) for line in gzip.decompress(data).decode().splitlines()]
    out, drop = [], None
    for line in lines:
        if isinstance(line, dict) and "schema" in line:
            line["schema"] = 8
        elif isinstance(line, dict):
            drop = line["columns"].index("backlog") if line["table"] == "seen" else None
            if drop is not None:
                line["columns"].pop(drop)
        elif drop is not None:
            line.pop(drop)
        out.append(json.dumps(line))
    return gzip.compress("\n".join(out).encode())


def test_entries_stored_before_the_rule_stay_published(serve_feed: Serve, tmp_path: Path) -> None:
    feed = serve_feed("/blog.xml", [post(n, day=n) for n in range(1, 9)])
    first = tmp_path / "first"
    first.mkdir()
    assert build(write_config(first, [{"name": "Blog", "feed": feed}], snapshot=True)).exit_code == 0
    assert len(entry_titles(first / "public" / "feed.xml")) == DEFAULT
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "state.json.gz").write_bytes(as_schema_8((first / "public" / statefile.NAME).read_bytes()))
    config = write_config(moved, [{"name": "Blog", "feed": feed}], restore_from="state.json.gz")
    result = build(config, now=at(0.1))  # restored: the feed is not due, the stored entries are published
    assert result.exit_code == 0, result.output
    assert entry_titles(moved / "public" / "feed.xml") == [f"Post {n}" for n in range(8, 3, -1)]  # items_per_feed


def test_serve_publishes_only_the_newest_entries_of_a_first_fetch(serve_feed: Serve, tmp_path: Path) -> None:
    from .test_serve import Clock, in_process, page

    feed = serve_feed("/blog.xml", [post(n, day=n) for n in range(8, 0, -1)])
    config = write_config(tmp_path, [{"name": "Blog", "feed": feed}], new_feed_items=2)
    with in_process(config, Clock()) as serve:
        serve.wait_for(lambda: "Post 8" in page(tmp_path, "feed.xml"), "the first fetch published")
        assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 8", "Post 7"]
    assert stored(tmp_path, feed) == 8
