"""A build that changed nothing a page shows leaves the published site as it is (sitekey)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from pytest_httpserver import HTTPServer

from syndicator.config.load import load_config
from syndicator.rules import Filters, Rule
from syndicator.site.sitekey import site_key

from .conftest import NOW, build, post, rss, tree, write_config


def report(tmp_path: Path) -> dict[str, object]:
    return json.loads((tmp_path / "cache" / "report.json").read_text())  # type: ignore[no-any-return]


def marker_identity(tmp_path: Path) -> tuple[int, int]:
    info = (tmp_path / "public" / ".syndicator-output").stat()
    return info.st_ino, info.st_mtime_ns


def one_site(server: HTTPServer, tmp_path: Path, **settings: object) -> Path:
    server.expect_request("/feed.xml").respond_with_data(rss(post(1), post(2)), headers={"ETag": '"v1"'})
    return write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}], **settings)


def test_a_build_with_nothing_due_leaves_the_site_as_it_is(server: HTTPServer, tmp_path: Path) -> None:
    config = one_site(server, tmp_path)
    assert build(config).exit_code == 0
    assert report(tmp_path)["rendered"] is True
    before, mark = tree(tmp_path / "public"), marker_identity(tmp_path)
    again = build(config, now="2026-11-30T12:05:00Z")  # minutes later: nothing due
    assert again.exit_code == 0
    assert report(tmp_path)["sources_due"] == 0 and report(tmp_path)["rendered"] is False
    assert report(tmp_path)["entries"] == 2
    assert "2 entries unchanged" in again.stdout and "written" not in again.stdout
    assert tree(tmp_path / "public") == before and marker_identity(tmp_path) == mark


def test_a_fetch_a_setting_or_a_template_renders_again(server: HTTPServer, tmp_path: Path) -> None:
    config = one_site(server, tmp_path)
    build(config)
    before = tree(tmp_path / "public")
    build(config, "--force", now="2026-11-30T12:05:00Z")  # a 200 with the same body: the state changed,
    assert report(tmp_path)["rendered"] is False  # so the site was rendered again, to the same bytes:
    assert tree(tmp_path / "public") == before  # nothing was written
    config.write_text(config.read_text().replace("Planet Test", "Planet Renamed"))
    build(config, now="2026-11-30T12:06:00Z")
    assert report(tmp_path)["rendered"] is True
    assert "Planet Renamed" in (tmp_path / "public" / "index.html").read_text()
    templates = tmp_path / "theme"
    templates.mkdir()
    build(config, "--templates", str(templates), now="2026-11-30T12:07:00Z")  # another template folder,
    assert report(tmp_path)["rendered"] is False  # empty: rendered again, to the same bytes
    build(config, "--templates", str(templates), now="2026-11-30T12:08:00Z")
    assert report(tmp_path)["rendered"] is False
    (templates / "style.css").write_text("body { color: #123; }\n")
    build(config, "--templates", str(templates), now="2026-11-30T12:09:00Z")
    assert report(tmp_path)["rendered"] is True
    assert (tmp_path / "public" / "style.css").read_text() == "body { color: #123; }\n"


def test_a_site_deleted_or_replaced_by_hand_is_written_again(server: HTTPServer, tmp_path: Path) -> None:
    config = one_site(server, tmp_path)
    build(config)
    written = set(tree(tmp_path / "public"))
    shutil.rmtree(tmp_path / "public")
    build(config, now="2026-11-30T12:05:00Z")
    assert report(tmp_path)["rendered"] is True and set(tree(tmp_path / "public")) == written
    os.utime(tmp_path / "public" / ".syndicator-output", ns=(1, 1))  # another publish wrote the folder,
    build(config, now="2026-11-30T12:06:00Z")  # so it is rendered again, and every file is as rendered
    assert report(tmp_path)["rendered"] is False
    assert (tmp_path / "public" / ".syndicator-output").stat().st_mtime_ns == 1
    published = tree(tmp_path / "public")
    (tmp_path / "public" / "sites.html").unlink()  # one page deleted by hand
    build(config, now="2026-11-30T12:07:00Z")
    assert report(tmp_path)["rendered"] is True and tree(tmp_path / "public").keys() == published.keys()
    page = tmp_path / "public" / "index.html"
    before = page.stat()
    page.write_text("x" * before.st_size)  # one page edited by hand, its size and modification time kept
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))
    build(config, now="2026-11-30T12:07:30Z")
    assert report(tmp_path)["rendered"] is True and "Planet Test" in page.read_text()
    (tmp_path / "public" / "index.html").write_text("defaced")  # one page edited by hand
    build(config, now="2026-11-30T12:08:00Z")
    assert report(tmp_path)["rendered"] is True and "Planet Test" in (tmp_path / "public" / "index.html").read_text()
    build(config, now="2026-11-30T12:09:00Z")
    assert report(tmp_path)["rendered"] is False


def test_a_template_in_a_subfolder_of_the_theme_renders_again(server: HTTPServer, tmp_path: Path) -> None:
    config = one_site(server, tmp_path)
    partials = tmp_path / "theme" / "partials"
    partials.mkdir(parents=True)
    (tmp_path / "theme" / "index.html").write_text('<p>{% include "partials/banner.html" %}</p>\n')
    (partials / "banner.html").write_text("Hello")
    build(config, "--templates", str(tmp_path / "theme"))
    assert (tmp_path / "public" / "index.html").read_text() == "<p>Hello</p>\n"
    build(config, "--templates", str(tmp_path / "theme"), now="2026-11-30T12:05:00Z")
    assert report(tmp_path)["rendered"] is False
    (partials / "banner.html").write_text("Goodbye")
    build(config, "--templates", str(tmp_path / "theme"), now="2026-11-30T12:06:00Z")
    assert report(tmp_path)["rendered"] is True
    assert (tmp_path / "public" / "index.html").read_text() == "<p>Goodbye</p>\n"
    before = (partials / "banner.html").stat()
    (partials / "banner.html").write_text("Welcome")  # same size, and the modification time put back
    os.utime(partials / "banner.html", ns=(before.st_atime_ns, before.st_mtime_ns))
    build(config, "--templates", str(tmp_path / "theme"), now="2026-11-30T12:07:00Z")
    assert report(tmp_path)["rendered"] is True
    assert (tmp_path / "public" / "index.html").read_text() == "<p>Welcome</p>\n"


def test_a_build_that_publishes_nothing_reports_nothing_rendered(server: HTTPServer, tmp_path: Path) -> None:
    config = one_site(server, tmp_path)
    (tmp_path / "theme").mkdir()
    (tmp_path / "theme" / "index.html").write_text("{% if %}\n")  # a template error: exit 6
    result = build(config, "--templates", str(tmp_path / "theme"))
    assert result.exit_code == 6, result.output
    assert report(tmp_path)["rendered"] is False and report(tmp_path)["entries"] == 2
    assert not (tmp_path / "public").exists()


def test_a_site_turning_stale_changes_the_key(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, [{"name": "Blog", "feed": "https://blog.example.org/feed"}]))
    key = site_key(config, None, 7, [False], NOW)
    assert site_key(config, None, 7, [False], NOW) == key
    assert site_key(config, None, 7, [True], NOW) != key
    assert site_key(config, None, 8, [False], NOW) != key
    assert site_key(replace(config, title="Other"), None, 7, [False], NOW) != key


def test_a_build_with_nothing_due_loads_no_http_feed_or_template_library(server: HTTPServer, tmp_path: Path) -> None:
    config = one_site(server, tmp_path)
    build(config)
    script = textwrap.dedent(f"""
        import sys
        from syndicator.cli import main
        try:
            main(["build", "-q", "--config", {str(config)!r}, "--now", "2026-11-30T12:05:00Z"])
        except SystemExit as end:
            assert end.code in (0, None), end.code
        loaded = sorted(name for name in ("requests", "feedparser", "lxml", "jinja2", "nh3") if name in sys.modules)
        print(",".join(loaded) or "none")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.splitlines()[-1] == "none", done.stderr
    assert report(tmp_path)["rendered"] is False


def test_filters_are_part_of_the_key_and_an_age_rule_makes_the_clock_part_of_it(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, [{"name": "Blog", "feed": "https://blog.example.org/feed"}]))
    key = site_key(config, None, 7, [False], NOW)
    assert site_key(config, None, 7, [False], NOW + timedelta(hours=1)) == key  # no rule reads the clock
    site = replace(config.sites[0], filters=Filters(drop=(Rule(keyword=("crypto",)),)))
    assert site_key(replace(config, sites=(site,)), None, 7, [False], NOW) != key
    aged = replace(config, filters=Filters(drop=(Rule(older_than=86400.0),)))
    assert site_key(aged, None, 7, [False], NOW) != key
    assert site_key(aged, None, 7, [False], NOW + timedelta(hours=1)) != site_key(aged, None, 7, [False], NOW)
