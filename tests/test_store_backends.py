"""The store's contract on both backends: SQLite in the cache folder and PostgreSQL (``state: postgresql://...``).

Each test runs three times: on SQLite on disk, on a new database of a real
PostgreSQL server this run starts (tests/postgres.py; skipped, saying why,
where none is installed), and on one holding a state as the code before the
replay of the migrations made it (tests/pgsnapshot.py). The CLI tests build, report and build again
conditionally with ``--state`` against a loopback feed server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.errors import StoreError
from syndicator.feedtypes import Entry
from syndicator.model import Check, SourceState
from syndicator.poll.path import save
from syndicator.state import statefile
from syndicator.state.store import GENERATION_KEY, TABLES, Store

from .conftest import NOW, build, post, rss, write_config
from .pgsnapshot import make_old_state
from .postgres import pg_database, postgres_url  # noqa: F401 - fixtures

URL = "https://blog.example.org/feed.xml"
OTHER = "https://other.example.org/feed.xml"
Opener = Callable[[], Store]


@pytest.fixture(params=["sqlite", "postgresql", "postgresql-snapshot"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the store under test: SQLite in tmp_path, or a fresh PostgreSQL database (same one each call),
    or one whose state the code before the replay of the migrations made (tests/pgsnapshot.py)."""
    if request.param == "sqlite":
        yield lambda: Store.open(tmp_path / "cache")
        return
    url = request.getfixturevalue("pg_database")
    if request.param == "postgresql-snapshot":
        make_old_state(url)
    yield lambda: Store.open(tmp_path / "cache", url)


def state(url: str = URL, **changes: object) -> SourceState:
    return replace(SourceState(url=url, fetch_url=url), **changes)  # type: ignore[arg-type]


def entry(n: int, **changes: object) -> Entry:
    base = Entry(
        id=f"https://blog.example.org/{n}",
        title=f"Post {n}",
        link=f"https://blog.example.org/{n}",
        author="Alice",
        date=NOW - timedelta(days=n),
        updated=NOW - timedelta(days=n, hours=-1),
        summary="<p>50% off</p>",
        content="<p>c ? d</p>",
    )  # % and ? survive the rewrite of parameters
    return replace(base, **changes)  # type: ignore[arg-type]


def test_state_and_snapshot_round_trip(open_store: Opener) -> None:
    saved = state(
        etag='W/"1"',
        last_modified="Sun, 01 Nov 2026 10:00:00 GMT",
        last_attempt=NOW,
        last_success=NOW,
        last_change=NOW,
        title="Blog",
        interval=5400.0,
        reason="learnt",
        body_size=12_345_678_901,
        history=(Check(NOW - timedelta(hours=1), 3600.0, True, 2),),
    )
    entries = [entry(1), entry(2, date=None, author=None, link=None, updated=None)]
    with open_store() as store:
        save(store, saved, entries, NOW)
    with open_store() as store:
        assert store.states() == {URL: saved}
        stored = store.snapshots([URL, OTHER])
    assert [s.entry for s in stored[URL]] == entries
    assert [s.first_seen for s in stored[URL]] == [NOW, NOW]
    assert stored[OTHER] == []


def test_a_new_snapshot_replaces_the_old_keeps_first_seen_and_marks_edits(open_store: Opener) -> None:
    later = NOW + timedelta(days=2)
    with open_store() as store:
        save(store, state(), [entry(1), entry(2)], NOW)
        save(store, state(), [entry(3), entry(1, title="Post 1, edited")], later)
        stored = store.snapshots([URL])[URL]
        save(store, state(failures=1, error_kind="http_5xx"), None, later)  # a failure keeps the snapshot
        kept = store.snapshots([URL])[URL]
    assert [(s.entry.title, s.first_seen, s.changed) for s in stored] == [
        ("Post 3", later, None),
        ("Post 1, edited", NOW, later),
    ]
    assert kept == stored


def test_an_entry_under_a_new_id_keeps_its_identity_through_its_alias(open_store: Opener) -> None:
    with open_store() as store:
        save(store, state(), [entry(1, aliases=("link:example.org/1",))], NOW)
        save(store, state(), [entry(1, id="urn:uuid:1", aliases=("link:example.org/1",))], NOW + timedelta(hours=1))
        stored = store.snapshots([URL])[URL]
        assert store.aliases(URL)["link:example.org/1"] == entry(1).id
    assert [s.entry.id for s in stored] == [entry(1).id] and stored[0].first_seen == NOW


def test_light_snapshots_and_completion(open_store: Opener) -> None:
    entries = [entry(3), entry(1), entry(5, date=None), entry(2)]
    with open_store() as store:
        save(store, state(), entries, NOW)
        save(store, state(OTHER), [entry(7)], NOW)
        full = store.snapshots([URL, OTHER])
        light = dict(store.light_snapshots([URL, OTHER]))
        assert [s.entry.id for s in light[URL]] == [e.id for e in entries]
        assert [s.entry.link for s in light[URL]] == [e.link for e in entries]
        assert [s.date for s in light[URL]] == [s.date for s in full[URL]]
        assert all(s.entry.title == "" for s in light[URL])
        assert store.complete([light[URL][1], light[OTHER][0]]) == [full[URL][1], full[OTHER][0]]


def test_light_snapshots_carry_the_fields_filters_read(open_store: Opener) -> None:
    """A light snapshot carries only the fields a filter needs (site/filters.py), read as the full one."""
    entries = [entry(1, categories=("Python", "Sponsored"), language="en-GB"), entry(2), entry(3, author=None)]
    fields = ("title", "author", "summary", "content", "language", "categories")
    with open_store() as store:
        save(store, state(), entries, NOW)
        full = store.snapshots([URL])[URL]
        light = dict(store.light_snapshots([URL], fields))[URL]
        for name in fields:
            assert [getattr(s.entry, name) for s in light] == [getattr(s.entry, name) for s in full], name
        assert light[0].entry.categories == ("Python", "Sponsored") and light[1].entry.categories == ()
        only = dict(store.light_snapshots([URL], ["categories"]))[URL]
        assert only[0].entry.categories == ("Python", "Sponsored") and only[0].entry.title == ""
        with pytest.raises(ValueError, match="enclosures"):
            list(store.light_snapshots([URL], ["enclosures"]))


def test_meta_values_and_the_generation_counter(open_store: Opener) -> None:
    with open_store() as store:
        assert store.value("x") is None and store.generation() == 0
        store.keep("x", "1")
        store.keep("x", "two")
        save(store, state(), [entry(1)], NOW)
        save(store, state(), None, NOW)
        assert store.value("x") == "two" and store.generation() == 2
        assert store.value(GENERATION_KEY) == "2"


def test_a_failed_save_changes_nothing(open_store: Opener) -> None:
    with open_store() as store:
        save(store, state(title="Old"), [entry(1)], NOW)
        with pytest.raises((StoreError, Exception)):  # two entries with one id: a bug, and it must roll back
            save(store, state(title="New"), [entry(2), entry(2)], NOW)
        assert store.states()[URL].title == "Old"
        assert [s.entry.id for s in store.snapshots([URL])[URL]] == [entry(1).id]
        save(store, state(title="Newer"), [entry(3)], NOW)  # and the store still works
        assert store.states()[URL].title == "Newer"


def test_the_state_dumps_and_loads_whole(open_store: Opener, tmp_path: Path) -> None:
    with open_store() as store:
        save(store, state(), [entry(1), entry(2)], NOW)
        data = tmp_path / "state.json.gz"
        statefile.write(store, data, "https://planet.example.org/", tmp_path.as_uri())
        counts = {table: store.count(table) for table in TABLES}
    target = tmp_path / "other"
    with Store.open(target) as copy:  # PostgreSQL's state restores into SQLite, and the reverse below
        statefile.load(copy, data.read_bytes(), str(data), "https://planet.example.org/", tmp_path.as_uri())
        assert {table: copy.count(table) for table in TABLES} == counts
        assert [s.entry for s in copy.snapshots([URL])[URL]] == [entry(1), entry(2)]


def test_a_newer_schema_is_refused(pg_database: str, tmp_path: Path) -> None:
    import psycopg

    with Store.open(tmp_path / "cache", pg_database):
        pass
    with psycopg.connect(pg_database, autocommit=True) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="newer than this syndicator"):
        Store.open(tmp_path / "cache", pg_database)


def test_an_unreachable_server_is_one_line_without_the_password(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(StoreError) as raised:
        Store.open(tmp_path / "cache", "postgresql://me:hunter2@127.0.0.1:9/nowhere")
    assert "hunter2" not in str(raised.value) and "cannot connect" in str(raised.value)
    assert "\n" not in str(raised.value)


# --- the CLI on a PostgreSQL state ---------------------------------------------------------------------------------


def test_build_and_status_on_a_postgresql_state(server: HTTPServer, tmp_path: Path, pg_database: str) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1), post(2)), headers={"ETag": '"v1"'})
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}], state=pg_database)
    first = build(config)
    assert first.exit_code == 0, first.output
    assert not (tmp_path / "cache" / "state.sqlite").exists()  # the state is in PostgreSQL
    assert "Post 2" in (tmp_path / "public" / "index.html").read_text(encoding="utf-8")
    again = build(config, "--force")
    assert again.exit_code == 0, again.output
    assert server.log[-1][0].headers.get("If-None-Match") == '"v1"'  # the validators came back from PostgreSQL
    env = {key: value for key, value in os.environ.items() if key != "SYNDICATOR_STATE"}
    shown = subprocess.run(
        [sys.executable, "-c", "from syndicator.cli import main; main()", "status", "--json", "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)[0]["etag"] == '"v1"'


def test_the_state_url_comes_from_the_option_the_environment_or_sites_yaml(tmp_path: Path) -> None:
    config = write_config(tmp_path, [{"name": "A", "feed": "https://example.org/a.xml"}])
    env = {**os.environ, "SYNDICATOR_STATE": "mysql://nope"}
    result = subprocess.run(
        [sys.executable, "-c", "from syndicator.cli import main; main()", "build", "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "syndicator: error: SYNDICATOR_STATE: 'mysql://nope' is not a postgresql:// "
        "URL (leave it out for the SQLite state in the cache folder)"
    )
    bad = write_config(
        tmp_path, [{"name": "A", "feed": "https://example.org/a.xml"}], state="postgresql://u:secret@x/db\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from syndicator.cli import main; main()",
            "build",
            "--config",
            str(bad),
            "--state",
            "sqlite:///x",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "SYNDICATOR_STATE"},
    )
    assert result.returncode == 2 and "secret" not in result.stderr


def test_a_build_without_fetching_publishes_from_the_shared_state(
    server: HTTPServer, tmp_path: Path, pg_database: str
) -> None:
    server.expect_request("/a.xml").respond_with_data(rss(post(1), post(2)))
    for folder in ("poller", "renderer"):
        (tmp_path / folder).mkdir()
    poller = write_config(tmp_path / "poller", [{"name": "A", "feed": server.url_for("/a.xml")}], state=pg_database)
    assert build(poller).exit_code == 0
    requests_before = len(server.log)
    # Another machine: its own folder and cache, the same state; it renders and fetches nothing.
    renderer = write_config(tmp_path / "renderer", [{"name": "A", "feed": server.url_for("/a.xml")}], state=pg_database)
    result = build(renderer, "--no-fetch")
    assert result.exit_code == 0, result.output
    assert len(server.log) == requests_before
    assert "Post 2" in (tmp_path / "renderer" / "public" / "index.html").read_text(encoding="utf-8")
    assert "0 requested" in result.stdout


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("postgresql://u:hunter2@[::1/db", "'postgresql://u:***@[::1/db' is not a usable URL (Invalid IPv6 URL)"),
        ("postgresql://u:hunter2@db.example:99999/db", "is not a usable URL (Port out of range 0-65535)"),
        ("postgresql://u:hun%zzter2@127.0.0.1:1/db", 'cannot connect: invalid percent-encoded token: "***"'),
        (
            "postgresql://u:hun@ter2@127.0.0.1:1/db",
            "'postgresql://u:***@127.0.0.1:1/db' is not a usable URL (its user "
            "or password holds a raw '@'; write it %40)",
        ),
        (
            "postgresql://u:h/hunter2@ss@db.example:x/db",
            "is not a usable URL (Port could not be cast to integer value as '***')",
        ),
    ],
)
def test_a_state_url_that_cannot_be_used_is_one_line_without_its_password(
    tmp_path: Path, value: str, shown: str
) -> None:
    config = write_config(tmp_path, [{"name": "A", "feed": "https://example.org/a.xml"}])
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from syndicator.cli import main; main()",
            "status",
            "--config",
            str(config),
            "--state",
            value,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "SYNDICATOR_STATE"},
    )
    assert result.returncode in (2, 5), result.stderr
    assert len(result.stderr.splitlines()) == 1 and shown in result.stderr, result.stderr
    assert "hunter2" not in result.stderr and "zzter2" not in result.stderr and "ter2" not in result.stderr
    assert "'h'" not in result.stderr


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://me:hun@ter2@127.0.0.1:9/nowhere",  # libpq ends the password at its first '@'
        "postgresql://me:hun@ter2@nohost.invalid/nowhere",
        "postgresql://me:a@b/c@127.0.0.1:9/nowhere",
    ],
)
def test_a_password_holding_a_raw_at_sign_is_masked_in_part_too(tmp_path: Path, url: str) -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(StoreError) as raised:
        Store.open(tmp_path / "cache", url)  # below the config's check, which refuses such a URL
    message = str(raised.value)
    assert "cannot connect" in message, message
    for piece in ("hun", "ter2", "a@b", "b/c", "c@"):
        assert piece not in message, message


def test_a_damaged_schema_version_is_one_line(pg_database: str) -> None:
    with Store.connect(pg_database) as store:
        store._db.execute("UPDATE meta SET value = 'abc' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="a damaged state: its schema version is 'abc', not a number"):
        Store.connect(pg_database)


def test_nul_characters_and_very_long_entry_ids_are_stored_in_postgresql(
    server: HTTPServer, tmp_path: Path, pg_database: str
) -> None:
    long_guid = "https://blog.example.org/" + "x" * 3000  # beyond PostgreSQL's 2,704-byte index row
    server.expect_request("/a.xml").respond_with_data(
        '<?xml version="1.0"?><rss version="2.0"><channel><title>A</title><link>https://blog.example.org/</link>'
        f"<item><guid>{long_guid}</guid><title>Long</title><link>https://blog.example.org/long</link>"
        "<pubDate>Tue, 01 Dec 2026 10:00:00 GMT</pubDate></item></channel></rss>",
        content_type="application/rss+xml",
    )
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/a.xml")}], state=pg_database)
    result = build(config)
    assert result.exit_code == 0, result.stderr
    assert "Long" in (tmp_path / "public" / "index.html").read_text(encoding="utf-8")
    with Store.connect(pg_database) as store:  # a server's header with a NUL (SQLite keeps it; PostgreSQL cannot)
        source = server.url_for("/a.xml")
        state = store.states()[source]
        save(store, replace(state, etag='"ab\x00cd"', last_modified="Tue,\x00 01 Dec 2026"), None, NOW)
        assert (store.states()[source].etag, store.states()[source].last_modified) == ('"abcd"', "Tue, 01 Dec 2026")


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("postgresql://u:hun#ter2@127.0.0.1:5432/db", "hun#ter2"),
        ("postgresql://u:p@ss@127.0.0.1/db", "p@ss"),
        ("postgresql://127.0.0.1:5432/db?user=u&password=hunter2", "hunter2"),
        ("postgresql://u:hunter2@[::1/db", "hunter2"),
    ],
)
def test_shown_never_shows_a_password(url: str, secret: str) -> None:
    from syndicator.urls import shown

    assert secret not in shown(url) and "***" in shown(url)


def test_an_entrys_language_and_out_of_line_content_are_stored_and_rows_without_them_still_read(
    open_store: Opener,
) -> None:
    kept = [
        entry(
            1,
            language="ar-EG",
            content_src="https://blog.example.org/1.pdf",
            content_type="application/pdf",
            content="",
        ),
        entry(2),
    ]
    with open_store() as store:
        save(store, state(), kept, NOW)
        # A row written before entries kept a language: no "language", "content_src" or "content_type" key.
        data = json.loads(store._db.execute("SELECT data FROM entries WHERE id = ?", (kept[1].id,)).fetchone()[0])
        assert data["language"] is None
        old = {k: v for k, v in data.items() if k not in ("language", "content_src", "content_type")}
        store._db.execute("UPDATE entries SET data = ? WHERE id = ?", (json.dumps(old), kept[1].id))  # autocommit
    with open_store() as store:
        stored = [s.entry for s in store.snapshots([URL])[URL]]
    assert stored == kept
    assert (stored[0].language, stored[0].content_src, stored[1].language) == ("ar-EG", kept[0].content_src, None)
