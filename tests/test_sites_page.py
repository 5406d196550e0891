"""The sites page as the maintainer's health dashboard (sites_page_details: true): totals, failing and stale
sites first, last post; and text in any direction."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from syndicator.cli import main

from .conftest import NOW_ISO, build, post, rss, write_config


def rows(public: Path) -> list[tuple[str, str, str]]:
    """(row class, site name, last post cell) of each row of sites.html, in page order."""
    html = (public / "sites.html").read_text(encoding="utf-8")
    found = re.findall(
        r'<tr class="([^"]*)">\s*<td class="site" dir="auto">(?:<a [^>]*>)?<bdi>([^<]*)</bdi>(?:</a>)?</td>.*?'
        r'<td data-label="Last post">(.*?)</td>',
        html,
        re.S,
    )
    return [(kind, name, re.sub(r"<[^>]*>", "", last)) for kind, name, last in found]


LATER = "2026-12-05T12:00:00Z"


def troubled_planet(tmp_path: Path) -> Path:
    """A: ok, inactive; B: failing (stops parsing), stale and inactive; C: stale (not fetched for 5 days);
    D: never fetched. Inactive: no post for 31 days (A's is from 2026-11-03, B's from 11-04, C's from 11-05)."""
    for name, day in (("a", 3), ("b", 4), ("c", 5), ("d", 6)):
        (tmp_path / f"{name}.xml").write_text(rss(post(day, day=day, host=f"{name}.example.org")), encoding="utf-8")
    sites = [{"name": name, "feed": f"{name.lower()}.xml"} for name in ("A", "B", "C")]
    config = write_config(tmp_path, sites)
    assert build(config).exit_code == 0
    (tmp_path / "b.xml").write_text("<rss><channel><item>", encoding="utf-8")
    config = write_config(
        tmp_path, [*sites, {"name": "D", "feed": "d.xml"}], activity_threshold="31d", sites_page_details=True
    )
    result = build(config, "--site", "A", "--site", "B", now=LATER)
    assert result.exit_code == 0, result.output
    return config


def test_status_failing_lists_the_sites_in_trouble_and_totals(tmp_path: Path) -> None:
    config = troubled_planet(tmp_path)
    result = CliRunner().invoke(
        main, ["status", "--config", str(config), "--failing", "--now", LATER], catch_exceptions=False
    )
    assert result.exit_code == 8, result.output  # a site fails (a stale one that did not fail does not count)
    assert result.stderr.startswith("syndicator: error: 1 site is failing, more than the 0 allowed")
    lines = result.stdout.splitlines()
    assert [line for line in lines if not line.startswith(" ")] == [
        "B  [failing, stale]",
        "C  [ok, stale]",
        "4 sites: 2 ok, 1 failing, 1 new, 2 stale",
    ]
    everything = CliRunner().invoke(main, ["status", "--config", str(config), "--now", LATER]).stdout
    assert [line.split("  [")[0] for line in everything.splitlines() if "  [" in line] == ["A", "B", "C", "D"]


def test_failing_and_stale_sites_come_first_with_totals(tmp_path: Path) -> None:
    troubled_planet(tmp_path)
    public = tmp_path / "public"
    assert rows(public) == [
        ("failing stale inactive", "B", "2026-11-04 inactive"),
        ("ok stale", "C", "2026-11-05"),
        ("ok inactive", "A", "2026-11-03 inactive"),
        ("new", "D", "none"),
    ]
    totals = re.search(r'<p class="totals">(.*?)</p>', (public / "sites.html").read_text(encoding="utf-8"))
    assert totals is not None
    assert totals[1].startswith(
        "4 sites: 2 ok, 1 failing, 2 without a success for 4 days or more, "
        "1 not fetched yet, 2 without a post for 31 days or more · 3 entries held."
    )
    opml = (public / "opml.xml").read_text(encoding="utf-8")
    assert opml.count("<outline") == 0  # local files are not listed; order of opml.xml is sites.yaml's anyway


def test_right_to_left_titles_and_names_get_their_own_direction(tmp_path: Path) -> None:
    item = {
        "title": "مرحبا بالعالم",
        "link": "https://urdu.example.org/1",
        "guid": "https://urdu.example.org/1",
        "pubDate": "Mon, 02 Nov 2026 10:00:00 +0000",
        "description": "خبر عاجل!",
        "dc:creator": "علي",
    }
    (tmp_path / "ar.xml").write_text(rss(item), encoding="utf-8")
    config = write_config(tmp_path, [{"name": "أخبار", "feed": "ar.xml", "link": "https://urdu.example.org/"}])
    assert build(config).exit_code == 0
    index = (tmp_path / "public" / "index.html").read_text(encoding="utf-8")
    assert (
        '<h2 dir="auto"><a href="https://urdu.example.org/1" rel="noopener noreferrer">مرحبا بالعالم</a></h2>' in index
    )
    assert '<bdi>أخبار</bdi></a> · <bdi>علي</bdi> · <a class="permalink"' in index
    assert '<div class="summary" dir="auto">' in index
    sites = (tmp_path / "public" / "sites.html").read_text(encoding="utf-8")
    assert (
        '<td class="site" dir="auto"><a href="https://urdu.example.org/" rel="noopener noreferrer">'
        "<bdi>أخبار</bdi></a></td>" in sites
    )


def test_the_page_and_status_name_a_sites_trouble_alike(tmp_path: Path, server: HTTPServer) -> None:
    server.expect_request("/gone.xml").respond_with_data("", status=410)
    server.expect_request("/denied.xml").respond_with_data("", status=403)
    server.expect_request("/broken.xml").respond_with_data("", status=500)
    (tmp_path / "ok.xml").write_text(rss(post(1)), encoding="utf-8")
    config = write_config(
        tmp_path,
        [
            {"name": "Ok", "feed": "ok.xml"},
            *({"name": name.title(), "feed": server.url_for(f"/{name}.xml")} for name in ("gone", "denied", "broken")),
        ],
        retries=0,
        sites_page_details=True,
    )
    assert build(config).exit_code == 0
    public = tmp_path / "public"
    kinds = {name: kind for kind, name, _ in rows(public)}
    # never a success: stale ("never worked") as well
    assert kinds == {"Ok": "ok", "Gone": "gone stale", "Denied": "denied stale", "Broken": "failing stale"}
    assert [name for _, name, _ in rows(public)][-1] == "Ok"  # the sites in trouble come first
    totals = re.search(r'<p class="totals">(.*?)</p>', (public / "sites.html").read_text(encoding="utf-8"))
    assert totals is not None and totals[1].startswith("4 sites: 1 ok, 1 failing, 1 denied, 1 gone, ")
    status = CliRunner().invoke(main, ["status", "--config", str(config), "--now", NOW_ISO]).stdout.splitlines()
    assert status[-1] == "4 sites: 1 ok, 1 failing, 1 denied, 1 gone, 3 stale"
