"""One schema for both backends: SQLite runs schema.MIGRATIONS as written, PostgreSQL replays them through
pgstate.ddl, and both end with the same tables; PostgreSQL states made before the replay (from the old
snapshot, tests/pgsnapshot.py) are the same tables and open needing nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from syndicator.errors import StoreError
from syndicator.state import pgstate
from syndicator.state.schema import MIGRATIONS, SCHEMA_VERSION, VERSION_KEY, migrate, statements
from syndicator.state.store import DATABASE, Store

from .pgsnapshot import make_old_state
from .postgres import pg_database, postgres_url  # noqa: F401 - fixtures

#: The tables of PostgreSQL's workers (pgstate.WORKER_MIGRATIONS), not SQLite's.
WORKER_TABLES = {"source_hosts", "leases", "hosts"}
#: SQLite's declared type: the PostgreSQL types it may be.
COMPATIBLE = {"TEXT": {"text"}, "INTEGER": {"integer", "bigint"}, "REAL": {"double precision"}}


def sqlite_columns(path: Path) -> dict[str, list[tuple[str, str, bool]]]:
    """{table: [(column, declared type, NOT NULL or in the primary key)]} of a SQLite database."""
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            table: [(c[1], c[2], bool(c[3] or c[5])) for c in db.execute(f"PRAGMA table_info({table})")]
            for table in tables
            if not table.startswith("sqlite_")
        }


def pg_columns(url: str) -> dict[str, list[tuple[str, str, bool]]]:
    """{table: [(column, type, NOT NULL)]} of a PostgreSQL database's public schema, in column order."""
    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"
        ).fetchall()
    columns: dict[str, list[tuple[str, str, bool]]] = {}
    for table, column, kind, nullable in rows:
        columns.setdefault(table, []).append((column, kind, nullable == "NO"))
    return columns


def pg_catalogue(url: str) -> dict[str, Any]:
    """Everything of the public schema a migration makes: columns (with defaults), constraints, indexes,
    triggers and functions, by name."""
    with psycopg.connect(url) as db:
        return {
            "columns": db.execute(
                "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, column_default "
                "FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2"
            ).fetchall(),
            "constraints": db.execute(
                "SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) FROM pg_constraint k "
                "JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'public' ORDER BY 1, 2"
            ).fetchall(),
            "indexes": db.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1"
            ).fetchall(),
            "triggers": db.execute(
                "SELECT tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE NOT tgisinternal ORDER BY 1"
            ).fetchall(),
            "functions": db.execute(
                "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p "
                "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1"
            ).fetchall(),
            "sequences": db.execute(
                "SELECT sequence_name, data_type FROM information_schema.sequences "
                "WHERE sequence_schema = 'public' ORDER BY 1"
            ).fetchall(),
        }


def meta(url: str) -> dict[str, str]:
    with psycopg.connect(url) as db:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())


def emptied(url: str) -> str:
    """``url`` with its public schema dropped and made again, empty (a second state in one test's database)."""
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("DROP SCHEMA public CASCADE")
        db.execute("CREATE SCHEMA public")
    return url


def test_the_versions_are_those_of_the_migrations() -> None:
    assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION + 1))
    assert sorted(pgstate.WORKER_MIGRATIONS) == list(range(1, max(pgstate.WORKER_MIGRATIONS) + 1))


def test_postgresqls_words_for_sqlites_ddl() -> None:
    assert pgstate.ddl("ALTER TABLE sources ADD COLUMN interval REAL") == (
        'ALTER TABLE sources ADD COLUMN "interval" DOUBLE PRECISION'
    )
    assert pgstate.ddl("id INTEGER PRIMARY KEY AUTOINCREMENT,") == "id BIGSERIAL PRIMARY KEY,"
    assert pgstate.ddl("body_size INTEGER, failures INTEGER NOT NULL") == "body_size BIGINT, failures INTEGER NOT NULL"
    assert pgstate.ddl("outbox_id INTEGER NOT NULL") == "outbox_id BIGINT NOT NULL"
    assert pgstate.ddl("SELECT json_extract(e.data, '$.date')") == "SELECT json_extract(e.data, '$.date')"


def test_a_migrations_statements_split_outside_function_bodies() -> None:
    script = "CREATE TABLE a (x TEXT);\nCREATE FUNCTION f() AS $body$ BEGIN; END $body$;\n;DROP TABLE a"
    assert [s.strip() for s in statements(script)] == [
        "CREATE TABLE a (x TEXT)",
        "CREATE FUNCTION f() AS $body$ BEGIN; END $body$",
        "DROP TABLE a",
    ]


def test_sqlite_and_postgresql_states_have_the_same_tables_and_columns(tmp_path: Path, pg_database: str) -> None:
    with Store.open(tmp_path / "cache"), Store.connect(pg_database):
        pass
    lite = sqlite_columns(tmp_path / "cache" / DATABASE)
    pg = pg_columns(pg_database)
    assert set(lite) == {"meta", "sources", "entries", "seen", "aliases", "outbox", "deliveries", "archive"}
    assert set(pg) == set(lite) | WORKER_TABLES
    for table, columns in lite.items():
        assert [c[0] for c in pg[table]] == [c[0] for c in columns], table  # the same names, in the same order
        for (name, declared, required), (_, kind, pg_required) in zip(columns, pg[table], strict=True):
            assert kind in COMPATIBLE[declared], (table, name, declared, kind)
            assert pg_required == required, (table, name)
    bigints = {(t, c[0]) for t, columns in pg.items() for c in columns if c[1] == "bigint"}
    assert bigints == {("sources", "body_size"), ("outbox", "id"), ("deliveries", "outbox_id")}
    assert meta(pg_database) == {VERSION_KEY: str(SCHEMA_VERSION), pgstate.WORKER_VERSION_KEY: "2"}


def test_a_replayed_postgresql_state_is_the_one_the_old_snapshot_made_brought_up_to_date(pg_database: str) -> None:
    with Store.connect(pg_database):
        pass
    replayed = pg_catalogue(pg_database)
    make_old_state(emptied(pg_database))
    assert meta(pg_database) == {VERSION_KEY: "8", pgstate.WORKER_VERSION_KEY: "2"}
    with Store.connect(pg_database):  # at version 8: the migrations after it, and nothing else
        pass
    assert pg_catalogue(pg_database) == replayed
    assert meta(pg_database) == {VERSION_KEY: str(SCHEMA_VERSION), pgstate.WORKER_VERSION_KEY: "2"}


def test_an_old_snapshot_at_version_7_gets_the_outbox_and_the_workers_tables(pg_database: str) -> None:
    with Store.connect(pg_database):
        pass
    replayed = pg_catalogue(pg_database)
    make_old_state(emptied(pg_database), version=7, workers=False)
    with Store.connect(pg_database):
        pass
    assert pg_catalogue(pg_database) == replayed
    assert meta(pg_database) == {VERSION_KEY: str(SCHEMA_VERSION), pgstate.WORKER_VERSION_KEY: "2"}


@pytest.mark.parametrize("start", range(SCHEMA_VERSION))
def test_a_sqlite_state_at_any_version_migrates_to_the_tables_of_a_new_one(tmp_path: Path, start: int) -> None:
    with Store.open(tmp_path / "new"):
        pass
    (tmp_path / "old").mkdir()
    with sqlite3.connect(tmp_path / "old" / DATABASE, isolation_level=None) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for version in range(1, start + 1):
            db.executescript(MIGRATIONS[version])
        if start:
            db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(start),))
    with Store.open(tmp_path / "old"):
        pass
    assert sqlite_columns(tmp_path / "old" / DATABASE) == sqlite_columns(tmp_path / "new" / DATABASE)


def test_a_failed_migration_keeps_nothing_of_it(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / DATABASE, isolation_level=None)
    broken = {1: "CREATE TABLE a (x TEXT)", 2: "CREATE TABLE b (y TEXT); CREATE TABLE a (z TEXT)"}
    with pytest.raises(sqlite3.OperationalError, match="already exists"):
        migrate(db, tmp_path, migrations=broken)
    assert db.execute("SELECT name FROM sqlite_master").fetchall() == []  # not even meta
    migrate(db, tmp_path, key="other_version", migrations={1: broken[1]})
    assert db.execute("SELECT * FROM meta").fetchall() == [("other_version", "1")]
    with pytest.raises(StoreError, match=r"other version 1 is newer than this syndicator understands \(0\)"):
        migrate(db, "here", key="other_version", migrations={0: ""})
    db.close()


def test_a_newer_postgresql_state_is_refused_with_the_version_this_syndicator_understands(pg_database: str) -> None:
    with Store.connect(pg_database) as store:
        store._db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    newer = rf"schema version 99 is newer than this syndicator understands \({SCHEMA_VERSION}\); upgrade syndicator"
    with pytest.raises(StoreError, match=newer):
        Store.connect(pg_database)
