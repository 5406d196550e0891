"""The state's schema, one for both backends: its tables as migrations written in SQLite's dialect
(:data:`MIGRATIONS`, up to :data:`SCHEMA_VERSION`), the one runner that brings a database of either
backend up to date (:func:`migrate`), the reading of a stored version, and the store's transaction
(:class:`transaction`).

SQLite runs the migrations as written. PostgreSQL replays the same ones through the rewrites of its
dialect (:func:`pgstate.ddl`: its types where SQLite's ``INTEGER`` and ``REAL`` say too little, the
keyword ``interval`` quoted as a column name), so a version number means the same ``sources``,
``entries``, ``seen``, ``aliases`` and outbox tables, with the same columns in the same order, in both
(a state file moves ``SELECT *`` of them between the backends). PostgreSQL states made before the
replay (by a snapshot of version 7 created at once, then migration 8) have exactly the tables the
replay makes, so they are at their version and need nothing (``tests/pgsnapshot.py`` keeps that
snapshot; ``tests/test_schema.py`` holds the replay to it).

The runner takes any list of migrations under its own ``meta`` key: PostgreSQL's workers' tables
(:data:`pgstate.WORKER_MIGRATIONS`) go through it too. :mod:`state.store` and :mod:`state.pgstate`
import this module; neither imports the other at load time. It holds no row of state (:mod:`state.rows`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from syndicator.errors import StoreError

#: The ``meta`` key holding the version of the store's tables (:data:`SCHEMA_VERSION`).
VERSION_KEY = "schema_version"

#: The outbox of the deliveries (:mod:`deliveries`), migration 8; PostgreSQL's ids are BIGSERIAL and BIGINT.
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


#: The store's migrations, both backends (PostgreSQL through :func:`pgstate.ddl`): {version: statements}.
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
    9: """
    ALTER TABLE seen ADD COLUMN backlog TEXT
    """,
    10: """
    CREATE TABLE IF NOT EXISTS archive (
        planet TEXT NOT NULL,
        source TEXT NOT NULL,
        id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        date TEXT NOT NULL,
        digest TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (planet, source, id)
    );
    CREATE INDEX IF NOT EXISTS archive_order ON archive (planet, seq)
    """,
}


#: The version of the ``sources``, ``entries``, ``seen``, ``aliases`` and outbox tables, the same in
#: both backends (the ``meta`` key :data:`VERSION_KEY`): the last of :data:`MIGRATIONS`.
SCHEMA_VERSION = max(MIGRATIONS)
#: Records a version (the ``meta`` values are text in both databases).
_RECORD = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"


class transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception."""

    def __init__(self, db: Any) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")


def migrate(
    db: Any,
    where: str | Path,
    lock: str | None = None,
    *,
    key: str = VERSION_KEY,
    migrations: Mapping[int, str] = MIGRATIONS,
    dialect: Callable[[str], str] | None = None,
) -> None:
    """Bring the tables of ``migrations`` in ``db`` to their last version, in one transaction: read
    the version stored under ``key`` in ``meta`` (created if missing; 0 for none), apply each migration
    after it in order, record the last. A database at the last version is left as it is.

    Args:
        db: a ``sqlite3.Connection`` in autocommit mode (``isolation_level=None``), whose pragmas are
            set first (WAL, synchronous NORMAL, foreign keys), or a :class:`pgstate.Connection`.
        where: the database as messages name it (a path; a URL without its password).
        lock: a statement run first in the transaction that takes the lock a second process migrating
            the same database waits on (PostgreSQL's advisory lock, :data:`pgstate.SCHEMA_LOCK`);
            None: the transaction's own (SQLite's ``BEGIN IMMEDIATE`` locks the file).
        key: the ``meta`` key holding these tables' version.
        migrations: {version: statements}, the versions from 1 without a gap, the statements separated
            by ``;`` (:func:`statements`).
        dialect: rewrites each statement for the backend (:func:`pgstate.ddl`); None: run as written.

    Raises:
        StoreError: the database is unusable (SQLite: not a database, unreadable, closed), its version
            is damaged or newer than the last of ``migrations``, or a statement failed (PostgreSQL).
        sqlite3.Error: a migration's statement failed in SQLite (nothing of it is kept).
    """
    row = _begin(db, str(where), lock, key)
    try:
        version = stored_version(row, str(where))
        latest = max(migrations)
        if version > latest:
            raise StoreError(
                f"{where}: {key.replace('_', ' ')} {version} is newer than this syndicator "
                f"understands ({latest}); upgrade syndicator"
            )
        for target in range(version + 1, latest + 1):
            for statement in statements(migrations[target]):
                db.execute(dialect(statement) if dialect else statement)
        if version < latest:
            db.execute(_RECORD, (key, str(latest)))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _begin(db: Any, where: str, lock: str | None, key: str) -> Any:
    """Set a SQLite connection's pragmas, begin the migration's transaction, take ``lock``, create
    ``meta`` if missing and read the row of ``key`` in it (None for none).

    Raises:
        StoreError: SQLite found no usable database (the connection is closed), or PostgreSQL failed.
    """
    try:
        if isinstance(db, sqlite3.Connection):
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
        db.execute("BEGIN IMMEDIATE")
        if lock:
            db.execute(lock)
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        return db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.DatabaseError as e:
        advice = (
            "check the permissions of it and of the cache folder"
            if isinstance(e, sqlite3.OperationalError)
            else "move it aside to start afresh"
        )
        db.close()
        raise StoreError(f"{where}: not a usable state database ({e}); {advice}") from e


def statements(script: str) -> list[str]:
    """The statements of a migration: ``script`` split at each ``;`` outside a ``$body$`` quoted
    function body (PostgreSQL's), the blank ones dropped."""
    parts: list[str] = []
    for number, part in enumerate(script.split("$body$")):
        if number % 2:  # inside a body: glued to the statement around it
            parts[-1] += f"$body${part}$body$"
            continue
        pieces = part.split(";")
        if parts and number:
            parts[-1] += pieces.pop(0)
        parts.extend(pieces)
    return [statement for statement in parts if statement.strip()]
