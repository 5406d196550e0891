"""The tables of the push database (``<cache>/push.sqlite``, :mod:`pushstate`) and their migrations.

What each table holds, and who writes it, is :mod:`pushstate`'s docstring;
this module creates the tables in a new file and brings a file of an older
schema version up to date (the columns added since, :data:`_ADDED`). It
reads and writes no row but the schema version in ``meta``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from syndicator.errors import StoreError

__all__ = ["SCHEMA_VERSION", "prepare"]

#: The schema version this syndicator reads and writes (a newer file is refused).
SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS subscriptions (
    source TEXT PRIMARY KEY,
    topic TEXT NOT NULL,
    hub TEXT NOT NULL,
    hubs TEXT NOT NULL,
    token TEXT NOT NULL UNIQUE,
    secret TEXT NOT NULL,
    mode TEXT NOT NULL,
    state TEXT NOT NULL,
    requested TEXT,
    verified TEXT,
    lease_seconds INTEGER,
    lease_expires TEXT,
    next_action TEXT,
    failures INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    last_notification TEXT,
    last_push TEXT,
    missed INTEGER NOT NULL DEFAULT 0,
    notifications INTEGER NOT NULL DEFAULT 0,
    rejected INTEGER NOT NULL DEFAULT 0,
    duplicates INTEGER NOT NULL DEFAULT 0,
    replays INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL,
    received TEXT NOT NULL,
    content_type TEXT NOT NULL,
    body BLOB NOT NULL,
    processed TEXT,
    verdict TEXT,
    body_hash TEXT
);
CREATE INDEX IF NOT EXISTS notifications_pending ON notifications (processed, id);
CREATE TABLE IF NOT EXISTS examined (
    source TEXT PRIMARY KEY,
    hubs TEXT NOT NULL,
    topic TEXT,
    at TEXT NOT NULL
)
"""
#: Columns added since version 1, by version: {version: [(table, column definition)]}; a file of an older
#: version gets them (``ALTER TABLE ... ADD COLUMN``) when it is opened.
_ADDED = {
    2: [
        ("subscriptions", "duplicates INTEGER NOT NULL DEFAULT 0"),
        ("subscriptions", "replays INTEGER NOT NULL DEFAULT 0"),
        ("notifications", "body_hash TEXT"),
    ]
}


def prepare(db: sqlite3.Connection, path: Path) -> None:
    """Create the tables of ``db`` (the file at ``path``) if they are missing, and migrate a file of an
    older schema version.

    Raises:
        StoreError: the file's schema version is newer than this syndicator understands.
        sqlite3.Error: the file cannot be read or written (the caller names it).
    """
    db.executescript(_SCHEMA)
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is not None and int(row[0]) > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: schema version {row[0]} is newer than this syndicator understands "
            f"({SCHEMA_VERSION}); upgrade syndicator"
        )
    _migrate(db, int(row[0]) if row is not None else SCHEMA_VERSION)


def _migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring a file of schema ``version`` to :data:`SCHEMA_VERSION` (the tables exist: ``_SCHEMA`` ran)."""
    for added in range(version + 1, SCHEMA_VERSION + 1):
        for table, column in _ADDED.get(added, []):
            present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            if column.split()[0] not in present:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
