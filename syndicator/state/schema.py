"""The state's schema: the SQLite migrations (:data:`MIGRATIONS`, up to :data:`SCHEMA_VERSION`) and
their runner (:func:`migrate`), the deliveries' outbox tables both backends create, the reading of
the stored schema version, and the store's transaction (:class:`transaction`).

:mod:`state.store` (SQLite) and :mod:`state.pgstate` (PostgreSQL, which creates the tables of
:data:`SCHEMA_VERSION` 7 at once and applies the later migrations) import it; neither imports the
other at load time. It holds no row of state (:mod:`state.rows`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from syndicator.errors import StoreError

#: The version of the ``sources``, ``entries``, ``seen``, ``aliases`` and outbox tables, the same in
#: both backends (the ``meta`` key ``schema_version``).
SCHEMA_VERSION = 8

#: The outbox of the deliveries (:mod:`deliveries`), both backends; PostgreSQL writes BIGSERIAL and BIGINT.
OUTBOX_TABLES = """
    CREATE TABLE IF NOT EXISTS outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        version TEXT NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        created TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS deliveries (
        outbox_id INTEGER NOT NULL REFERENCES outbox(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        next_try TEXT NOT NULL,
        last_error TEXT,
        delivered_at TEXT,
        PRIMARY KEY (outbox_id, url)
    );
    CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (state, next_try)
"""


def stored_version(row: Any, where: str) -> int:
    """The schema version a ``meta`` row holds (0 for no row).

    Raises:
        StoreError: the value is not a whole number: the state is damaged (``where`` names it).
    """
    if row is None:
        return 0
    try:
        return int(row[0])
    except (TypeError, ValueError):
        raise StoreError(f"{where}: a damaged state: its schema version is {row[0]!r}, not a number") from None


#: The SQLite migrations: {version: statements} (PostgreSQL: :data:`pgstate.MIGRATIONS`).
MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE sources (
        url TEXT PRIMARY KEY,
        fetch_url TEXT NOT NULL,
        etag TEXT,
        last_modified TEXT,
        validators_url TEXT,
        body_hash TEXT,
        body_size INTEGER,
        title TEXT,
        link TEXT,
        last_attempt TEXT,
        last_success TEXT,
        last_change TEXT,
        failures INTEGER NOT NULL DEFAULT 0,
        error_kind TEXT,
        error_message TEXT,
        next_attempt TEXT
    );
    CREATE TABLE entries (
        source TEXT NOT NULL REFERENCES sources(url) ON DELETE CASCADE,
        id TEXT NOT NULL,
        position INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (source, id)
    );
    CREATE TABLE seen (
        source TEXT NOT NULL,
        id TEXT NOT NULL,
        first_seen TEXT NOT NULL,
        content_hash TEXT,
        PRIMARY KEY (source, id)
    );
    """,
    2: """
    ALTER TABLE seen ADD COLUMN changed TEXT;
    CREATE TABLE aliases (
        source TEXT NOT NULL,
        key TEXT NOT NULL,
        id TEXT NOT NULL,
        PRIMARY KEY (source, key)
    );
    """,
    3: """
    ALTER TABLE sources ADD COLUMN interval REAL;
    ALTER TABLE sources ADD COLUMN reason TEXT;
    ALTER TABLE sources ADD COLUMN history TEXT;
    ALTER TABLE sources ADD COLUMN hints TEXT;
    ALTER TABLE sources ADD COLUMN hold TEXT;
    ALTER TABLE sources ADD COLUMN snapshot_hash TEXT;
    ALTER TABLE sources ADD COLUMN failed_body_hash TEXT
    """,
    4: """
    ALTER TABLE sources ADD COLUMN failed_body_kind TEXT;
    ALTER TABLE sources ADD COLUMN failed_body_message TEXT
    """,
    5: """
    ALTER TABLE sources ADD COLUMN discovered TEXT
    """,
    6: """
    ALTER TABLE seen ADD COLUMN first_date TEXT;
    UPDATE seen SET first_date = (SELECT json_extract(e.data, '$.date') FROM entries e
                                  WHERE e.source = seen.source AND e.id = seen.id)
    """,
    7: """
    ALTER TABLE sources ADD COLUMN habits TEXT
    """,
    8: OUTBOX_TABLES,
}


class transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception."""

    def __init__(self, db: Any) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Set the SQLite connection's pragmas (WAL, foreign keys) and apply the migrations after the
    stored version, each in its own transaction.

    Raises:
        StoreError: the database is unusable (it is closed) or from a newer syndicator.
    """
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as e:
        advice = (
            "check the permissions of it and of the cache folder"
            if isinstance(e, sqlite3.OperationalError)
            else "move it aside to start afresh"
        )
        db.close()
        raise StoreError(f"{path}: not a usable state database ({e}); {advice}") from e
    version = stored_version(row, str(path))
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: schema version {version} is newer than this syndicator "
            f"understands ({SCHEMA_VERSION}); upgrade syndicator"
        )
    for target in range(version + 1, SCHEMA_VERSION + 1):
        with transaction(db):
            for statement in MIGRATIONS[target].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(target),))
