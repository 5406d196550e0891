"""The PostgreSQL fixtures (tests/postgres.py) give a real server: transactions, row locks, one database a test."""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg
import pytest

# The fixtures are imported, not defined in conftest.py; pytest finds them in this module, and
# ruff reads each test's argument of the same name as a redefinition (F811).
from .postgres import pg_database, postgres_url  # noqa: F401

#: Every wait in these tests is bounded: a lock not granted in 5 s fails the statement instead of hanging.
BOUNDED = "SET lock_timeout = '5s'; SET statement_timeout = '10s'"


def connect(url: str) -> psycopg.Connection:
    conn = psycopg.connect(url, connect_timeout=10)
    conn.execute(BOUNDED)
    conn.commit()
    return conn


def test_a_committed_row_is_seen_by_another_connection(pg_database: str) -> None:
    with connect(pg_database) as writer, connect(pg_database) as reader:
        writer.execute("CREATE TABLE entries (id serial PRIMARY KEY, title text NOT NULL)")
        writer.commit()
        writer.execute("INSERT INTO entries (title) VALUES (%s)", ("Hello",))
        assert reader.execute("SELECT title FROM entries").fetchall() == []  # not committed yet
        reader.commit()
        writer.commit()
        assert reader.execute("SELECT title FROM entries").fetchall() == [("Hello",)]
        reader.commit()


def test_skip_locked_skips_a_row_locked_by_another_connection(pg_database: str) -> None:
    claim = "SELECT id FROM jobs WHERE NOT done ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"
    with connect(pg_database) as first, connect(pg_database) as second:
        first.execute("CREATE TABLE jobs (id int PRIMARY KEY, done boolean NOT NULL DEFAULT false)")
        first.execute("INSERT INTO jobs (id) VALUES (1), (2)")
        first.commit()

        assert first.execute(claim).fetchall() == [(1,)]  # locked until first's transaction ends
        assert second.execute(claim).fetchall() == [(2,)]  # 1 skipped, not waited for
        third = connect(pg_database)
        with third:
            assert third.execute(claim).fetchall() == []  # both taken
            third.rollback()
            with pytest.raises(psycopg.errors.LockNotAvailable):
                third.execute("SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT")
            third.rollback()
        first.execute("UPDATE jobs SET done = true WHERE id = 1")
        first.commit()
        second.rollback()  # 2 released, not done
        assert second.execute(claim).fetchall() == [(2,)]
        second.rollback()


#: The names of the databases earlier rounds were given.
seen: list[str] = []


@pytest.mark.parametrize("round_", [1, 2, 3])
def test_each_test_gets_its_own_empty_database(
    pg_database: str,
    postgres_url: str,
    round_: int,
) -> None:
    url = urlsplit(pg_database)
    assert url.scheme == "postgresql" and url.hostname == "127.0.0.1" and url.port
    name = url.path.lstrip("/")
    assert name not in seen
    with connect(pg_database) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == (name,)
        tables = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
        assert tables.fetchall() == []
        conn.execute("CREATE TABLE left_behind (x int)")  # the next round must not see it
        conn.commit()
    with connect(postgres_url) as admin:
        names = {row[0] for row in admin.execute("SELECT datname FROM pg_database")}
        assert name in names
        assert not names & set(seen)  # the earlier rounds' databases were dropped
    seen.append(name)
