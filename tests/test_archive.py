"""The archive: every entry a planet published stays on its month's page and in its site's and
categories' pages and feeds after it leaves the feed; RFC 5005 archived feeds reach every one; the
retention setting and ``archive: false``. Through the real CLI with feeds on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from pytest_httpserver import HTTPServer

from syndicator.site.archivepages import CHUNK

from .conftest import ATOM, build, post, rss, write_config
from .postgres import pg_database, postgres_url  # noqa: F401 - fixtures

FH = "{http://purl.org/syndication/history/1.0}"


def item(n: int, day: int, month: int = 11, *categories: str) -> dict[str, str]:
    """RSS item ``n`` of 2026-``month``-``day`` with ``categories`` (each a <category>)."""
    made = post(n, day=day, month=month)
    for index, category in enumerate(categories):
        made[f'category domain="d{index}"'] = category  # conftest.rss writes <category domain="d0">text</category>
    return made


def serve(server: HTTPServer, *items: dict[str, str]) -> None:
    server.clear()
    server.expect_request("/feed.xml").respond_with_data(rss(*items))


def planet(tmp_path: Path, server: HTTPServer, **settings: object) -> Path:
    sites = [{"name": "Łukasz's Notes", "feed": server.url_for("/feed.xml")}]
    return write_config(tmp_path, sites, items_per_feed=3, new_feed_items=0, host_gap=0, retries=0, **settings)


def chain(folder: Path) -> list[str]:
    """The entry ids of a site's or category's Atom feed and every archive document before it."""
    ids: list[str] = []
    path: Path | None = folder / "feed.xml"
    while path is not None:
        root = ET.parse(path).getroot()
        ids.extend(entry.findtext(f"{ATOM}id") or "" for entry in root.findall(f"{ATOM}entry"))
        prev = [link.get("href") for link in root.findall(f"{ATOM}link") if link.get("rel") == "prev-archive"]
        path = folder / prev[0].rsplit("/", 1)[1] if prev else None
    return ids


def json_chain(folder: Path) -> list[str]:
    ids: list[str] = []
    name: str | None = "feed.json"
    while name:
        document = json.loads((folder / name).read_text(encoding="utf-8"))
        ids.extend(entry["id"] for entry in document["items"])
        name = document.get("next_url", "").rsplit("/", 1)[-1] or None
    return ids


def test_an_entry_that_left_the_feed_stays_on_its_month_and_in_its_site_and_category(
    tmp_path: Path, server: HTTPServer
) -> None:
    config = planet(tmp_path, server)
    serve(server, item(1, 2, 10, "Python"), item(2, 3, 11, "Python", "Web"), item(3, 4, 11))
    assert build(config, now="2026-11-05T12:00:00Z").exit_code == 0
    serve(server, item(4, 6, 11), item(5, 7, 11), item(6, 8, 11))  # posts 1-3 fall off the feed
    result = build(config, "--force", now="2026-11-09T12:00:00Z")
    assert result.exit_code == 0, result.output
    public = tmp_path / "public"
    assert "Post 1" not in (public / "feed.xml").read_text(encoding="utf-8")
    october = (public / "archive" / "2026-10.html").read_text(encoding="utf-8")
    november = (public / "archive" / "2026-11.html").read_text(encoding="utf-8")
    assert "Post 1" in october and "Post 2" not in october
    assert all(f"Post {n}<" in november for n in range(2, 7))
    months = (public / "archive" / "index.html").read_text(encoding="utf-8")
    assert '<a href="2026-11.html">November 2026</a> <span class="count">5 posts</span>' in months
    site = public / "sites" / "lukasz-s-notes"  # transliterated, readable
    assert chain(site) == [f"https://blog.example.org/posts/{n}" for n in (6, 5, 4, 3, 2, 1)]
    python = public / "categories" / "python"
    assert chain(python) == ["https://blog.example.org/posts/2", "https://blog.example.org/posts/1"]
    assert json_chain(python) == chain(python)
    assert "Post 2" in (public / "categories" / "web" / "index.html").read_text(encoding="utf-8")
    # linked: the front page's date to the post's place in the archive, the sites page to the site's page
    front = (public / "index.html").read_text(encoding="utf-8")
    anchor = re.search(r'href="archive/2026-11.html#(e-[0-9a-f]{12})"', front)
    assert anchor is not None and f'id="{anchor[1]}"' in november
    assert 'href="sites/lukasz-s-notes/index.html"' in (public / "sites.html").read_text(encoding="utf-8")
    assert 'href="../style.css"' in october and 'href="../../style.css"' in (site / "index.html").read_text("utf-8")


def test_a_changed_entry_is_updated_in_place(tmp_path: Path, server: HTTPServer) -> None:
    config = planet(tmp_path, server)
    serve(server, item(1, 2))
    assert build(config, now="2026-11-05T12:00:00Z").exit_code == 0
    changed = {**item(1, 2), "title": "Post 1, corrected"}
    serve(server, changed)
    assert build(config, "--force", now="2026-11-06T12:00:00Z").exit_code == 0
    november = (tmp_path / "public" / "archive" / "2026-11.html").read_text(encoding="utf-8")
    assert "Post 1, corrected" in november and "Post 1<" not in november
    assert len(chain(tmp_path / "public" / "sites" / "lukasz-s-notes")) == 1


def test_feeds_of_more_than_one_chunk_are_archived_feeds_that_reach_every_entry(
    tmp_path: Path, server: HTTPServer
) -> None:
    total = CHUNK + 7
    config = write_config(
        tmp_path,
        [{"name": "Busy", "feed": server.url_for("/feed.xml")}],
        items_per_feed=total,
        new_feed_items=0,
        host_gap=0,
    )
    serve(server, *(item(n, 1 + n % 28) for n in range(1, total + 1)))
    assert build(config, now="2026-11-30T12:00:00Z").exit_code == 0
    site = tmp_path / "public" / "sites" / "busy"
    assert sorted(chain(site)) == sorted(f"https://blog.example.org/posts/{n}" for n in range(1, total + 1))
    assert len(chain(site)) == total  # each once
    archived = ET.parse(site / "feed-1.xml").getroot()
    assert archived.find(f"{FH}archive") is not None and len(archived.findall(f"{ATOM}entry")) == CHUNK
    current = [link.get("href") for link in archived.findall(f"{ATOM}link") if link.get("rel") == "current"]
    assert current == ["https://planet.example.org/sites/busy/feed.xml"]
    subscription = ET.parse(site / "feed.xml").getroot()
    assert subscription.find(f"{FH}archive") is None and len(subscription.findall(f"{ATOM}entry")) == 7


def test_archive_days_keeps_only_the_recent_posts(tmp_path: Path, server: HTTPServer) -> None:
    config = planet(tmp_path, server, archive_days=30)
    serve(server, item(1, 2, 9), item(2, 20, 11))
    assert build(config, now="2026-11-30T12:00:00Z").exit_code == 0
    public = tmp_path / "public" / "archive"
    assert sorted(path.name for path in public.iterdir()) == ["2026-11.html", "index.html"]


def test_archive_false_publishes_no_archive(tmp_path: Path, server: HTTPServer) -> None:
    config = planet(tmp_path, server, archive=False)
    serve(server, item(1, 2, 11, "Python"))
    assert build(config, now="2026-11-30T12:00:00Z").exit_code == 0
    public = tmp_path / "public"
    assert not (public / "archive").exists() and not (public / "sites").exists()
    assert not (public / "categories").exists()
    front = (public / "index.html").read_text(encoding="utf-8")
    assert "archive/" not in front and "Archive" not in front


def test_a_build_that_changed_nothing_writes_no_archive_file(tmp_path: Path, server: HTTPServer) -> None:
    config = planet(tmp_path, server)
    serve(server, item(1, 2, 11, "Python"), item(2, 3, 11))
    assert build(config, now="2026-11-05T12:00:00Z").exit_code == 0
    public = tmp_path / "public"
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in public.rglob("*") if p.is_file()}
    assert build(config, "--force", now="2026-11-05T13:00:00Z").exit_code == 0
    after = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in public.rglob("*") if p.is_file()}
    assert after == before
    assert any("archive" in str(p) for p in after)


def test_a_planet_restored_from_its_published_state_keeps_its_archive(tmp_path: Path, server: HTTPServer) -> None:
    """A CI planet (a cache lost between runs, restore_from its own published state file) loses no post."""
    config = planet(tmp_path, server, snapshot=True, restore_from="public/syndicator-state.json.gz")
    serve(server, item(1, 2, 10))
    assert build(config, now="2026-11-05T12:00:00Z").exit_code == 0
    serve(server, item(2, 3, 11))  # post 1 leaves the feed
    assert build(config, "--force", now="2026-11-06T12:00:00Z").exit_code == 0
    shutil.rmtree(tmp_path / "cache")  # the CI cache is lost
    serve(server, item(3, 4, 11))
    result = build(config, "--force", now="2026-11-07T12:00:00Z")
    assert result.exit_code == 0, result.output
    site = tmp_path / "public" / "sites" / "lukasz-s-notes"
    assert chain(site) == [f"https://blog.example.org/posts/{n}" for n in (3, 2, 1)]


def test_a_page_kept_from_the_last_build_is_rendered_again_when_its_template_changes(
    tmp_path: Path, server: HTTPServer
) -> None:
    config = planet(tmp_path, server)
    serve(server, item(1, 2, 11, "Python"))
    assert build(config, now="2026-11-05T12:00:00Z").exit_code == 0
    theme = tmp_path / "theme"
    theme.mkdir()
    bundled = Path(__file__).parent.parent / "templates" / "archive_page.html"
    (theme / "archive_page.html").write_text(bundled.read_text("utf-8").replace("<ol", "<p>THEMED</p><ol"), "utf-8")
    result = build(config, "--force", "--templates", str(theme), now="2026-11-05T13:00:00Z")
    assert result.exit_code == 0, result.output
    public = tmp_path / "public"
    for page in ("archive/2026-11.html", "sites/lukasz-s-notes/index.html", "categories/python/index.html"):
        assert "<p>THEMED</p>" in (public / page).read_text(encoding="utf-8"), page


def test_a_page_of_the_archive_shows_its_own_newest_post_not_the_planets(tmp_path: Path, server: HTTPServer) -> None:
    """A new post changes the footer of its own pages only: the other months' pages stay as they were."""
    config = planet(tmp_path, server)
    serve(server, item(1, 2, 10), item(2, 3, 11))
    assert build(config, now="2026-11-05T12:00:00Z").exit_code == 0
    october = tmp_path / "public" / "archive" / "2026-10.html"
    before = october.read_bytes()
    serve(server, item(1, 2, 10), item(2, 3, 11), item(3, 4, 11))
    assert build(config, "--force", now="2026-11-06T12:00:00Z").exit_code == 0
    assert october.read_bytes() == before
    assert 'Newest post <time datetime="2026-10-02T10:01:00Z">' in before.decode()


def test_the_archive_on_postgresql_keeps_what_left_the_feed(
    tmp_path: Path, server: HTTPServer, pg_database: str
) -> None:
    config = planet(tmp_path, server, state=pg_database, archive_days=365)
    serve(server, item(1, 2, 10, "Python"), item(2, 3, 11))
    assert build(config, now="2026-11-05T12:00:00Z").exit_code == 0
    serve(server, item(3, 4, 11))
    result = build(config, "--force", now="2026-11-06T12:00:00Z")
    assert result.exit_code == 0, result.output
    public = tmp_path / "public"
    assert chain(public / "sites" / "lukasz-s-notes") == [f"https://blog.example.org/posts/{n}" for n in (3, 2, 1)]
    assert "Post 1<" in (public / "archive" / "2026-10.html").read_text(encoding="utf-8")
