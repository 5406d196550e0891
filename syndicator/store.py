"""Durable per-source state in SQLite: the last-known-good copy of every feed.

The database lives at ``<cache>/state.sqlite`` (WAL mode) next to a lock
file, ``<cache>/syndicator.lock``, that keeps two builds from using one cache
at once. Each source observation is written in one transaction
(:meth:`Store.save`), so a build killed at any moment leaves every source
either as it was or fully updated.

Tables (schema version in ``meta``):

* ``sources``: one row per configured feed URL: fetch URL, validators and the
  URL they belong to, body hash and size, feed title and link, last attempt,
  success and change, consecutive failures, last error (kind and message),
  next attempt.
* ``entries``: the snapshot, i.e. the entries of the last good document of
  each source, as JSON, in document order.
* ``seen``: every entry id ever seen per source with its first-seen time,
  so an undated entry keeps its date across builds and documents.

Times are stored as ISO 8601 UTC text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from .errors import CacheLockedError, StoreError
from .model import Entry, SourceState, StoredEntry

SCHEMA_VERSION = 1
DATABASE = "state.sqlite"
LOCK = "syndicator.lock"

_MIGRATIONS: dict[int, str] = {
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
}
_DATETIME_FIELDS = {"last_attempt", "last_success", "last_change", "next_attempt"}
_STATE_FIELDS = [f.name for f in fields(SourceState)]


class Store:
    """The state database of one cache folder.

    Use as a context manager: ``with Store.open(cache) as store: ...``.
    Opening takes the cache lock and creates or migrates the schema.

    Raises:
        CacheLockedError: another process holds the lock.
        StoreError: the database is from a newer syndicator or unreadable.
    """

    def __init__(self, connection: sqlite3.Connection, lock: FileLock | None = None) -> None:
        self._db = connection
        self._lock = lock

    @classmethod
    def open(cls, cache: Path) -> Store:
        """Lock ``cache`` (a folder, created if missing) and open its database."""
        cache = Path(cache)
        try:
            cache.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{cache}: cannot create the cache folder: {e.strerror or e}") from e
        lock = FileLock(str(cache / LOCK), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise CacheLockedError(f"{cache}: another syndicator build is using this cache; "
                                   "wait for it to finish") from None
        try:
            connection = sqlite3.connect(cache / DATABASE, isolation_level=None)
            _migrate(connection, cache / DATABASE)
        except BaseException:
            lock.release()
            raise
        return cls(connection, lock)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database and release the cache lock."""
        self._db.close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # --- reading ---------------------------------------------------------------

    def states(self) -> dict[str, SourceState]:
        """Every stored source state, keyed by configured URL."""
        rows = self._db.execute(f"SELECT {', '.join(_STATE_FIELDS)} FROM sources")
        return {row[0]: _state_from_row(row) for row in rows}

    def snapshots(self, sources: Iterable[str]) -> dict[str, list[StoredEntry]]:
        """The stored snapshot of each source, entries in document order.

        Args:
            sources: configured URLs; unknown ones map to an empty list.
        Returns:
            {url: [StoredEntry, ...]}, each with its first-seen time (UTC).
        """
        result: dict[str, list[StoredEntry]] = {url: [] for url in sources}
        rows = self._db.execute(
            "SELECT e.source, e.data, s.first_seen FROM entries e "
            "JOIN seen s ON s.source = e.source AND s.id = e.id "
            "ORDER BY e.source, e.position")
        for source, data, first_seen in rows:
            if source in result:
                result[source].append(StoredEntry(source, _entry_from_json(data),
                                                  datetime.fromisoformat(first_seen)))
        return result

    # --- writing ---------------------------------------------------------------

    def save(self, state: SourceState, entries: Iterable[Entry] | None, now: datetime,
             content_hashes: dict[str, str] | None = None) -> None:
        """Write one source observation in a single transaction.

        Args:
            state: the new state of the source (replaces the stored row).
            entries: the new snapshot, or None to keep the stored one (a 304,
                an unchanged body, or a failure).
            now: the build's clock (UTC), recorded as first-seen of new ids.
            content_hashes: optional {entry id: hash of visible content}.
        """
        values = [_to_db(getattr(state, name), name) for name in _STATE_FIELDS]
        placeholders = ", ".join("?" for _ in _STATE_FIELDS)
        # An upsert, not INSERT OR REPLACE: REPLACE deletes the old row first, and the
        # ON DELETE CASCADE of entries.source would then wipe the stored snapshot.
        updates = ", ".join(f"{name} = excluded.{name}" for name in _STATE_FIELDS[1:])
        with _transaction(self._db):
            self._db.execute(f"INSERT INTO sources ({', '.join(_STATE_FIELDS)}) VALUES ({placeholders}) "
                             f"ON CONFLICT (url) DO UPDATE SET {updates}", values)
            if entries is None:
                return
            self._db.execute("DELETE FROM entries WHERE source = ?", (state.url,))
            seen_at = now.isoformat()
            for position, entry in enumerate(entries):
                self._db.execute("INSERT INTO entries (source, id, position, data) VALUES (?, ?, ?, ?)",
                                 (state.url, entry.id, position, _entry_to_json(entry)))
                self._db.execute("INSERT OR IGNORE INTO seen (source, id, first_seen) VALUES (?, ?, ?)",
                                 (state.url, entry.id, seen_at))
                if content_hashes and entry.id in content_hashes:
                    self._db.execute("UPDATE seen SET content_hash = ? WHERE source = ? AND id = ?",
                                     (content_hashes[entry.id], state.url, entry.id))


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as e:
        raise StoreError(f"{path}: not a usable state database ({e}); move it aside to start afresh") from e
    version = int(row[0]) if row else 0
    if version > SCHEMA_VERSION:
        raise StoreError(f"{path}: schema version {version} is newer than this syndicator "
                         f"understands ({SCHEMA_VERSION}); upgrade syndicator")
    for target in range(version + 1, SCHEMA_VERSION + 1):
        with _transaction(db):
            for statement in _MIGRATIONS[target].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                       (str(target),))


def _to_db(value: Any, name: str) -> Any:
    if name in _DATETIME_FIELDS and value is not None:
        return value.isoformat()
    return value


def _state_from_row(row: tuple[Any, ...]) -> SourceState:
    values = {name: (datetime.fromisoformat(value) if name in _DATETIME_FIELDS and value else value)
              for name, value in zip(_STATE_FIELDS, row, strict=True)}
    return SourceState(**values)


def _entry_to_json(entry: Entry) -> str:
    data = asdict(entry)
    for key in ("date", "updated"):
        if data[key] is not None:
            data[key] = data[key].isoformat()
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _entry_from_json(text: str) -> Entry:
    data = json.loads(text)
    for key in ("date", "updated"):
        if data.get(key):
            data[key] = datetime.fromisoformat(data[key])
    known = {f.name for f in fields(Entry)}
    return Entry(**{k: v for k, v in data.items() if k in known})
