"""Publishing into a git checkout: a build that changed nothing a reader sees writes no file, a change
rewrites only the files that show it, the state file does not churn, and a checkout in the way is
refused before anything is fetched."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
from pathlib import Path

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.site.publish import publish
from syndicator.state import statefile

from .conftest import build, post, rss, write_config

FEEDS = 3


def files(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file below ``folder`` (hidden ones included, .git aside): {path: (bytes, mtime ns, inode)}."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(folder).parts:
            info = path.stat()
            found[str(path.relative_to(folder))] = (path.read_bytes(), info.st_mtime_ns, info.st_ino)
    return found


def serve_feeds(server: HTTPServer, posts: dict[int, int]) -> list[str]:
    """FEEDS feeds, feed n holding posts[n] posts, each with an ETag of that count: a request
    carrying it is answered 304. ``posts`` can be changed between builds."""

    def handler(request: Request) -> Response:
        number = int(request.path[2])
        etag = f'"{number}-{posts[number]}"'
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304, headers={"ETag": etag})
        host = f"blog{number}.example.org"
        items = [post(n, day=n, host=host) for n in range(1, posts[number] + 1)]
        return Response(rss(*items), content_type="application/rss+xml", headers={"ETag": etag})

    for number in range(FEEDS):
        server.expect_request(f"/f{number}.xml").respond_with_handler(handler)
    return [server.url_for(f"/f{number}.xml") for number in range(FEEDS)]


def planet(server: HTTPServer, tmp_path: Path, posts: dict[int, int], **settings: object) -> Path:
    urls = serve_feeds(server, posts)
    sites = [{"name": f"Site {n}", "feed": url} for n, url in enumerate(urls)]
    return write_config(tmp_path, sites, **settings)


def test_builds_whose_feeds_all_answer_304_leave_every_file_as_it_was(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, {0: 3, 1: 2, 2: 4})
    assert build(config, "--force").exit_code == 0
    public = tmp_path / "public"
    before = files(public)
    assert {"index.html", "sites.html", "feed.xml", "feed.json", "opml.xml", ".syndicator-output"} <= before.keys()
    folder = public.stat()
    server.clear_log()
    for hour in (13, 18):  # hours later, every feed asked again: each answers 304
        result = build(config, "--force", now=f"2026-11-30T{hour}:00:00Z")
        assert result.exit_code == 0, result.output
        assert [status for _, response in server.log for status in [response.status_code]] == [304] * FEEDS
        server.clear_log()
        assert files(public) == before  # bytes, modification times and inodes
        assert public.stat().st_ino == folder.st_ino  # the folder itself was not swapped
    assert "3 feeds due, 3 requested (0 changed, 3 unchanged" in result.stdout and "entries unchanged" in result.stdout


ARCHIVE_FILES = ("index.html", "feed.xml", "feed.json")


def test_one_changed_feed_rewrites_only_the_files_that_show_it(server: HTTPServer, tmp_path: Path) -> None:
    posts = {0: 3, 1: 2, 2: 4}
    config = planet(server, tmp_path, posts)
    assert build(config, "--force").exit_code == 0
    public = tmp_path / "public"
    before = files(public)
    posts[1] = 3  # Site 1 publishes a post
    result = build(config, "--force", now="2026-11-30T13:00:00Z")
    assert result.exit_code == 0, result.output
    after = files(public)
    assert after.keys() == before.keys()
    rewritten = {name for name in after if after[name] != before[name]}
    # and of the archive, only what shows Site 1's new post: its month, the months' counts, Site 1's page and feeds
    archive = {"archive/2026-11.html", "archive/index.html", *(f"sites/site-1/{name}" for name in ARCHIVE_FILES)}
    # and of the search's index, the documents file and the files of the new post's words ("post", "summary", "of")
    search = {name for name in rewritten if name.startswith("search/")}
    assert "search/d-0.js" in search and len(search) <= 6
    assert rewritten - search == {"index.html", "sites.html", "feed.xml", "feed.json", *archive}
    for name in rewritten:
        assert after[name][0] != before[name][0], name  # each one's bytes changed
    assert "https://blog1.example.org/posts/3" in after["feed.xml"][0].decode()
    assert 'Newest post <time datetime="2026-11-04T10:04:00Z">' in after["index.html"][0].decode()  # the newest entry's


def test_the_state_file_is_the_same_bytes_after_builds_that_changed_no_entry(
    server: HTTPServer, tmp_path: Path
) -> None:
    posts = {0: 3, 1: 2, 2: 4}
    config = planet(server, tmp_path, posts, snapshot=True)
    assert build(config, "--force").exit_code == 0
    published = tmp_path / "public" / statefile.NAME
    first = published.read_bytes()
    mtime = published.stat().st_mtime_ns
    assert build(config, "--force", now="2026-11-30T13:00:00Z").exit_code == 0  # all 304
    assert published.read_bytes() == first and published.stat().st_mtime_ns == mtime
    database = tmp_path / "cache" / "state.sqlite"
    with sqlite3.connect(database) as db:  # the checks moved the state: times, schedule, history
        checked = db.execute("SELECT COUNT(*) FROM sources WHERE last_attempt LIKE '2026-11-30T13%'").fetchone()[0]
    assert checked == FEEDS
    posts[2] = 5  # one feed changes: the file changes, and holds the new entry and its source's new state
    assert build(config, "--force", now="2026-11-30T14:00:00Z").exit_code == 0
    changed = published.read_bytes()
    assert changed != first
    lines = [json.loads(line) for line in gzip.decompress(changed).decode().splitlines()]
    assert "https://blog2.example.org/posts/5" in json.dumps(lines)
    head = next(n for n, line in enumerate(lines) if isinstance(line, dict) and line.get("table") == "sources")
    column = lines[head]["columns"].index("last_attempt")
    rows = lines[head + 1 : head + 1 + lines[head]["rows"]]
    attempts = {row[0].rsplit("/", 1)[1]: row[column] for row in rows}
    assert attempts == {  # the changed source as it is now; the others as the last written file had them
        "f0.xml": "2026-11-30T12:00:00+00:00",
        "f1.xml": "2026-11-30T12:00:00+00:00",
        "f2.xml": "2026-11-30T14:00:00+00:00",
    }


def test_a_state_file_kept_through_304s_restores_the_planet(server: HTTPServer, tmp_path: Path) -> None:
    config = planet(server, tmp_path, {0: 3, 1: 2, 2: 4}, snapshot=True)
    assert build(config, "--force").exit_code == 0
    assert build(config, "--force", now="2026-11-30T13:00:00Z").exit_code == 0
    kept = tmp_path / "kept.json.gz"
    kept.write_bytes((tmp_path / "public" / statefile.NAME).read_bytes())
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    config.rename(fresh / "sites.yaml")
    server.clear_log()
    result = build(fresh / "sites.yaml", "--force", "--restore-from", str(kept), now="2026-11-30T14:00:00Z")
    assert result.exit_code == 0, result.output
    assert [response.status_code for _, response in server.log] == [304] * FEEDS  # conditional from the start
    assert json.loads((fresh / "cache" / "report.json").read_text())["restored"] is True
    feed = (fresh / "public" / "feed.xml").read_text()
    assert feed.count("<entry>") == 3 + 2 + 3  # the 4-entry site's first fetch published its 3 newest (new_feed_items)


def test_a_checkout_holding_the_old_planets_files_is_refused_before_any_request(
    server: HTTPServer, tmp_path: Path
) -> None:
    config = planet(server, tmp_path, {0: 3, 1: 2, 2: 4})
    public = tmp_path / "public"
    (public / ".git").mkdir(parents=True)
    (public / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    old = ["index.html", "opml.xml", "page2.html", "page3.html", "sites.html", "style.css", "feed.xml"]
    for name in [*old, "rss20.xml", "CNAME"]:
        (public / name).write_text("the old planet's")
    result = build(config, "--force")
    assert result.exit_code == 6
    line = result.stderr.strip()
    assert "\n" not in line
    assert line.endswith(
        "a git checkout holding files syndicator did not write and would replace: feed.xml, index.html, "
        "opml.xml, page2.html, page3.html and 2 more (7 in all); remove them (git rm) and commit, then build "
        "again; other files are kept"
    ), line
    assert server.log == []  # not one request
    assert not (tmp_path / "cache" / "state.sqlite").exists()  # nothing stored
    assert all((public / name).read_text() == "the old planet's" for name in old)
    os.rename(public / ".git", tmp_path / "git")  # not a checkout: every file is in the way, named
    result = build(config, "--force")
    assert result.exit_code == 6 and server.log == []
    assert "refusing to publish into a folder syndicator did not write (no .syndicator-output file; it holds " in (
        result.stderr
    )
    assert "CNAME, feed.xml, index.html, opml.xml, page2.html and 4 more (9 in all)" in result.stderr


def test_an_unchanged_file_is_never_linked_from_outside_the_output(tmp_path: Path) -> None:
    output, elsewhere = tmp_path / "public", tmp_path / "elsewhere"
    publish(output, {"index.html": "1", "img/logo.svg": "<svg/>"})
    kept = (output / "index.html").stat().st_ino
    elsewhere.mkdir()
    (elsewhere / "logo.svg").write_text("<svg/>")
    shutil.rmtree(output / "img")
    (output / "img").symlink_to(elsewhere, target_is_directory=True)  # the same bytes, through a link out
    assert publish(output, {"index.html": "1", "img/logo.svg": "<svg/>"}) == [output / "img/logo.svg"]
    assert (elsewhere / "logo.svg").stat().st_nlink == 1  # written anew, not linked from elsewhere
    assert not (output / "img").is_symlink() and (output / "img" / "logo.svg").read_text() == "<svg/>"
    assert (output / "index.html").stat().st_ino == kept
