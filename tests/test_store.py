"""store: SQLite state on disk, one transaction per source, a lock per cache folder."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.configtypes import Site
from syndicator.errors import CacheLockedError, StoreError
from syndicator.feedtypes import Entry
from syndicator.model import Check, SourceState
from syndicator.poll.path import save
from syndicator.site.selection import select_entries
from syndicator.state.schema import SCHEMA_VERSION
from syndicator.state.store import DATABASE, Store

from .conftest import ATOM, NOW, NOW_ISO, atom_entries, build, post, rss, write_config

URL = "https://blog.example.org/feed.xml"


def state(**changes: object) -> SourceState:
    return replace(SourceState(url=URL, fetch_url=URL), **changes)  # type: ignore[arg-type]


def entry(n: int, **changes: object) -> Entry:
    base = Entry(
        id=f"https://blog.example.org/{n}",
        title=f"Post {n}",
        link=f"https://blog.example.org/{n}",
        author="Alice",
        date=NOW - timedelta(days=n),
        updated=NOW - timedelta(days=n, hours=-1),
        summary="<p>s</p>",
        content="<p>c</p>",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def read_db(cache: Path, query: str) -> list[tuple[object, ...]]:
    """Run a read-only query against the cache's database with the sqlite3 module."""
    with sqlite3.connect(f"file:{cache / DATABASE}?mode=ro", uri=True) as db:
        return db.execute(query).fetchall()


def test_new_database_is_wal_with_a_schema_version(tmp_path: Path) -> None:
    with Store.open(tmp_path / "cache"):
        pass
    assert read_db(tmp_path / "cache", "PRAGMA journal_mode") == [("wal",)]
    assert read_db(tmp_path / "cache", "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (str(SCHEMA_VERSION),)
    ]


def test_state_and_snapshot_round_trip(tmp_path: Path) -> None:
    saved = state(
        etag='W/"1"',
        last_modified="Sun, 01 Nov 2026 10:00:00 GMT",
        last_attempt=NOW,
        last_success=NOW,
        last_change=NOW,
        title="Blog",
        failures=0,
        history=(Check(NOW - timedelta(hours=1), 3600.0, True, 2), Check(NOW, 3600.0, True, 10, overflowed=True)),
    )
    entries = [entry(1), entry(2, date=None, author=None, link=None, updated=None)]
    with Store.open(tmp_path) as store:
        save(store, saved, entries, NOW)
    with Store.open(tmp_path) as store:
        assert store.states() == {URL: saved}
        stored = store.snapshots([URL, "https://other.example.org/"])
    assert [s.entry for s in stored[URL]] == entries
    assert [s.first_seen for s in stored[URL]] == [NOW, NOW]
    assert stored["https://other.example.org/"] == []
    assert stored[URL][0].first_seen.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "outcome",
    [
        pytest.param(
            state(last_attempt=NOW + timedelta(hours=1), last_success=NOW + timedelta(hours=1)), id="not-modified"
        ),
        pytest.param(
            state(
                last_attempt=NOW + timedelta(hours=1),
                last_success=NOW,
                failures=1,
                error_kind="http_5xx",
                error_message="HTTP 500",
            ),
            id="failed",
        ),
    ],
)
def test_saving_state_without_entries_keeps_the_snapshot(tmp_path: Path, outcome: SourceState) -> None:
    with Store.open(tmp_path) as store:
        save(store, state(last_success=NOW), [entry(1), entry(2)], NOW)
        save(store, outcome, None, NOW + timedelta(hours=1))
        assert store.states()[URL] == outcome
        assert [s.entry.id for s in store.snapshots([URL])[URL]] == [entry(1).id, entry(2).id]


def test_new_snapshot_replaces_the_old_and_first_seen_is_kept(tmp_path: Path) -> None:
    later = NOW + timedelta(days=2)
    with Store.open(tmp_path) as store:
        save(store, state(), [entry(1), entry(2)], NOW)
        save(store, state(), [entry(3), entry(1, title="Post 1, edited")], later)
        stored = store.snapshots([URL])[URL]
    assert [(s.entry.title, s.first_seen) for s in stored] == [("Post 3", later), ("Post 1, edited", NOW)]


def test_a_failed_save_changes_nothing(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        save(store, state(title="Old"), [entry(1)], NOW)
        with pytest.raises(sqlite3.IntegrityError):  # two entries with one id: a bug, and it must roll back
            save(store, state(title="New"), [entry(2), entry(2)], NOW)
        assert store.states()[URL].title == "Old"
        assert [s.entry.id for s in store.snapshots([URL])[URL]] == [entry(1).id]


def test_second_open_of_one_cache_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    first = Store.open(tmp_path)
    try:
        with pytest.raises(CacheLockedError, match="another syndicator build or serve is using this cache"):
            Store.open(tmp_path)
    finally:
        first.close()
    Store.open(tmp_path).close()


def test_database_from_a_newer_syndicator_is_refused(tmp_path: Path) -> None:
    with Store.open(tmp_path):
        pass
    with sqlite3.connect(tmp_path / DATABASE) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer"):
        Store.open(tmp_path)
    Store.open(tmp_path / "elsewhere").close()  # the lock was released despite the error
    with pytest.raises(StoreError):
        Store.open(tmp_path)


def test_corrupt_database_is_a_store_error_with_exit_code_5(server: HTTPServer, tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / DATABASE).write_bytes(b"this is not a database" * 100)
    server.expect_request("/feed.xml").respond_with_data(rss(post(1)))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    result = build(config)
    assert result.exit_code == 5
    assert "not a usable state database" in result.stderr
    assert server.log == []


# --- through the build ---------------------------------------------------------------


def published(feed_xml: Path) -> dict[str, str]:
    """{entry title: published} from an Atom file."""
    return {e.findtext(f"{ATOM}title") or "": e.findtext(f"{ATOM}published") or "" for e in atom_entries(feed_xml)}


def test_undated_entry_keeps_its_first_seen_date_across_builds(server: HTTPServer, tmp_path: Path) -> None:
    undated = {"title": "Undated", "link": "https://blog.example.org/undated", "description": "no date"}
    future = {
        "title": "From the future",
        "link": "https://blog.example.org/future",
        "pubDate": "Fri, 01 Jan 2100 00:00:00 GMT",
    }
    # No item has a usable date (among dated items an undated one borrows a date: test_entry_dates).
    server.expect_oneshot_request("/feed.xml").respond_with_data(rss(undated, future))
    newer = {"title": "Undated, newer", "link": "https://blog.example.org/undated-2"}
    server.expect_oneshot_request("/feed.xml").respond_with_data(rss(undated, future, newer))
    config = write_config(tmp_path, [{"name": "Blog", "feed": server.url_for("/feed.xml")}])
    assert build(config, now="2026-11-30T12:00:00Z").exit_code == 0
    result = build(config, "--force", now="2026-12-02T08:00:00Z")
    assert result.exit_code == 0, result.output
    dates = published(tmp_path / "public" / "feed.xml")
    assert dates["Undated"] == "2026-11-30T12:00:00Z"
    assert dates["From the future"] == "2026-11-30T12:00:00Z"
    assert dates["Undated, newer"] == "2026-12-02T08:00:00Z"
    titles = list(dates)
    assert titles.index("Undated, newer") < titles.index("Undated")


def serve_until_hang(server: HTTPServer, release: threading.Event, quick: dict[str, str]) -> list[str]:
    """Serve ``quick`` {path: RSS} at once and /hang.xml only once ``release`` is set.

    Returns the list the paths of hanging requests are appended to.
    """
    arrived: list[str] = []

    def hang(request: Request) -> Response:
        arrived.append(request.path)
        release.wait(30)
        return Response(rss(post(9, host="c.example.org")), content_type="application/rss+xml")

    for path, document in quick.items():
        server.expect_request(path).respond_with_data(document)
    server.expect_request("/hang.xml").respond_with_handler(hang)
    return arrived


def start_build_until_stuck(
    tmp_path: Path, config: Path, arrived: list[str], committed: int, stderr: int = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    """Run the CLI build in a subprocess; return once it waits on /hang.xml with
    ``committed`` sources stored (polled for at most ~20 s)."""
    command = [
        sys.executable,
        "-c",
        "from syndicator.cli import main; main()",
        "build",
        "--config",
        str(config),
        "--now",
        NOW_ISO,
    ]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=stderr)
    for _ in range(200):
        if "/hang.xml" in arrived and _committed(tmp_path / "cache") == committed:
            return process
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    process.wait(10)
    pytest.fail(f"the build never got stuck with {committed} sources committed")


def test_a_build_killed_midway_leaves_consistent_state(
    server: HTTPServer, tmp_path: Path, release: threading.Event
) -> None:
    arrived = serve_until_hang(
        server,
        release,
        {
            "/a.xml": rss(post(1, host="a.example.org"), post(2, host="a.example.org")),
            "/b.xml": rss(post(3, host="b.example.org")),
        },
    )
    sites = [{"name": name, "feed": server.url_for(f"/{name.lower()}.xml")} for name in ("A", "B", "Hang")]
    config = write_config(tmp_path, sites, timeout=30, workers=1)
    process = start_build_until_stuck(tmp_path, config, arrived, committed=2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)
    cache = tmp_path / "cache"
    assert read_db(cache, "PRAGMA integrity_check") == [("ok",)]
    assert read_db(cache, "SELECT url, failures FROM sources ORDER BY url") == [
        (sites[0]["feed"], 0),
        (sites[1]["feed"], 0),
    ]
    assert read_db(cache, "SELECT source, COUNT(*) FROM entries GROUP BY source ORDER BY source") == [
        (sites[0]["feed"], 2),
        (sites[1]["feed"], 1),
    ]
    assert read_db(
        cache,
        "SELECT COUNT(*) FROM entries e LEFT JOIN seen s ON s.source = e.source AND s.id = e.id WHERE s.id IS NULL",
    ) == [(0,)]
    assert not (tmp_path / "public").exists()
    release.set()
    result = build(config)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("3 sites: 1 feed due, 1 requested (1 changed, ")  # the source the kill interrupted
    assert ", 0 failed)" in result.stdout
    assert read_db(cache, "SELECT COUNT(*) FROM sources WHERE last_success IS NOT NULL") == [(3,)]


def _committed(cache: Path) -> int:
    """Sources committed so far by a build running in another process (0 before the table exists)."""
    if not (cache / DATABASE).exists():
        return 0
    try:
        return int(read_db(cache, "SELECT COUNT(*) FROM sources")[0][0])  # type: ignore[call-overload]
    except sqlite3.OperationalError:  # not created yet, or the first transaction is still open
        return 0


def test_ctrl_c_stops_a_build_at_once_and_keeps_what_finished(
    server: HTTPServer, tmp_path: Path, release: threading.Event
) -> None:
    """SIGINT while a fetch hangs: exit 130 without waiting for the fetch, the
    finished sources committed and the cache unlocked for the next build."""
    arrived = serve_until_hang(server, release, {"/a.xml": rss(post(1, host="a.example.org"))})
    sites = [{"name": name, "feed": server.url_for(f"/{name.lower()}.xml")} for name in ("A", "Hang")]
    config = write_config(tmp_path, sites, timeout=30, workers=1)
    process = start_build_until_stuck(tmp_path, config, arrived, committed=1, stderr=subprocess.PIPE)
    try:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=15)  # the hanging fetch would hold it 30 s
    finally:
        process.kill()
        process.wait(10)
    release.set()
    assert process.returncode == 130
    assert b"interrupted" in stderr
    assert read_db(tmp_path / "cache", "SELECT url FROM sources WHERE last_success IS NOT NULL") == [
        (sites[0]["feed"],)
    ]
    assert build(config).exit_code == 0  # the lock was released


def test_only_the_newest_entries_of_each_snapshot_are_loaded_in_full(tmp_path: Path) -> None:
    entries = [entry(3), entry(1), entry(5, date=None), entry(2), entry(4)]  # the undated one: first seen, NOW
    other = "https://other.example.org/feed.xml"
    with Store.open(tmp_path) as store:
        # the undated one comes after the source's first snapshot: new, dated by its first-seen time
        save(store, state(), [e for e in entries if e.date is not None], NOW - timedelta(hours=1))
        save(store, state(), entries, NOW)
        save(store, SourceState(url=other, fetch_url=other), [entry(7)], NOW - timedelta(days=1))
        full = store.snapshots([URL, other])
        light = store.snapshots([URL, other], complete=2)
    assert [s.entry.id for s in light[URL]] == [e.id for e in entries]  # every entry, in document order
    assert [s.date for s in light[URL]] == [s.date for s in full[URL]]
    assert [s.entry.link for s in light[URL]] == [e.link for e in entries]
    # entry 5 (undated, first seen NOW) and entry 1 are the two newest: in full; the rest are ids, links and dates
    assert [s.entry == f.entry for s, f in zip(light[URL], full[URL], strict=True)] == [False, True, True, False, False]
    assert light[URL][0].entry.summary == "" and light[URL][0].entry.title == ""
    assert light[other] == full[other]
    assert select_entries([Site("A", URL), Site("B", other)], light, 2) == select_entries(
        [Site("A", URL), Site("B", other)], full, 2
    )


def test_light_entries_are_completed_in_the_order_given(tmp_path: Path) -> None:
    entries = [entry(3), entry(1), entry(2)]
    with Store.open(tmp_path) as store:
        save(store, state(), entries, NOW)
        full = store.snapshots([URL])[URL]
        light = store.snapshots([URL], complete=0)[URL]
        assert all(s.entry.title == "" for s in light)
        chosen = [light[2], light[0]]
        assert store.complete(chosen) == [full[2], full[0]]
        save(store, state(), [entry(1)], NOW)  # entries 2 and 3 leave the snapshot
        assert store.complete(chosen) == chosen  # no longer stored: left as they were
