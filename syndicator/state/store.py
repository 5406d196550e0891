"""Durable per-source state in SQLite: the last-known-good copy of every feed.

The database lives at ``<cache>/state.sqlite`` (WAL mode) next to a lock
file, ``<cache>/syndicator.lock``, that keeps two builds from using one cache
at once. Each source observation is written in one transaction
(:meth:`Store.transaction`, :func:`poll.path.save`), so a build killed at
any moment leaves every source either as it was or fully updated.

Tables (schema version in ``meta``):

* ``sources``: one row per configured feed URL: fetch URL, validators and the
  URL they belong to, body hash and size, feed title and link, last attempt,
  success and change, consecutive failures, last error (kind and message),
  next attempt; since schema 2 also the schedule (interval, reason, change
  history as JSON), the last document's hints (JSON), the hold fingerprint
  of a 410 source, the snapshot hash and the last invalid body's
  hash; since schema 4 the kind and message of that body's failure; since
  schema 5 the feed URL discovered on the page the configured URL serves.
* ``entries``: the snapshot, i.e. the entries of the last good document of
  each source, as JSON, in document order.
* ``seen``: every entry id ever seen per source with its first-seen time,
  so an undated entry keeps its date across builds and documents, the hash
  of its visible content and when that content last changed (an edit
  updates the entry in place; it never comes back as new); since schema 6
  also the entry's first date (the earliest date stored for it), see
  :func:`poll.known.keep_first_date`; since schema 9 its ``backlog``: NULL
  for an entry that came after its source's first fetch (or was stored
  before schema 9), ``shown`` or ``held`` for one of the first fetch that
  is published or never is (:func:`poll.known.backlog`).
* ``aliases``: other names of seen entries (identity.alias_keys, and ids a
  publisher switched to), per source. An entry whose id is new but one of
  whose alias keys names a seen entry is stored under that entry's id, so
  a change of identifier style (a guid appearing, http becoming https, a
  move to another host) does not show a post twice. The first id wins.
* ``outbox`` and ``deliveries`` (schema 8): the events of new and changed
  entries and one pending delivery of each to every destination named in
  :attr:`Store.outbox`, all written in the save's transaction (so a
  destination added later gets the events after it, not the backlog), and
  their webhook deliveries (:mod:`push.deliveries`). Not part of a state file
  (:data:`TABLES`).

Times are stored as ISO 8601 UTC text.

This module opens the state (SQLite in the cache, or PostgreSQL through
:mod:`state.pgstate`), reads and writes the source rows and the ``meta``
values, and moves whole tables for a state file. A save (:func:`poll.path.save`)
is read | decide | write in one :meth:`Store.transaction`: the store reads what
is known (:meth:`Store.read_known`) and writes the source's row and the intents
that :func:`poll.known.intents` decided (new, changed, aliases, first dates,
baseline, events) (:meth:`Store.write_state`, :meth:`Store.write_intents`);
it decides nothing. Elsewhere: the schema and its migrations
(:mod:`state.schema`), the row formats (:mod:`state.rows`), the snapshot reads
(:mod:`state.snapshots`).
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from syndicator.errors import CacheLockedError, StoreError
from syndicator.feedtypes import StoredEntry
from syndicator.model import SourceState
from syndicator.saves import Intents, Known, Router
from syndicator.state import archive, cachefiles, locks, snapshots
from syndicator.state import entries as stored_entries
from syndicator.state.rows import ROWS_PER_QUERY, STATE_COLUMNS, STATE_FIELDS, UPDATE_SET, chunks, state_from_row, to_db
from syndicator.state.schema import SCHEMA_VERSION, migrate, stored_version, transaction
from syndicator.urls import shown

DATABASE = "state.sqlite"
LOCK = "syndicator.lock"
#: The tables of the sources' state and the planets' archives (:meth:`Store.dump`), in the order they load.
#: Not the deliveries' ``outbox`` and ``deliveries`` (schema 8): a state file carries no webhook traffic.
TABLES = ("sources", "entries", "seen", "aliases", "archive")
#: The ``meta`` key counting writes of sources and entries (:meth:`Store.generation`).
GENERATION_KEY = "generation"
#: The generation counter's increment (meta values are text in both databases).
_NEXT_GENERATION = (
    "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) "
    "DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)"
)


class Store:
    """The state database of one cache folder.

    Use as a context manager: ``with Store.open(cache) as store: ...``.
    Opening takes the cache lock and creates or migrates the schema.

    Raises:
        CacheLockedError: another process holds the lock.
        StoreError: the database is from a newer syndicator or unreadable.
    """

    def __init__(self, connection: Any, lock: locks.Lock | None = None, path: Path | str | None = None) -> None:
        self._db = connection  # sqlite3.Connection, or pgstate.Connection
        self._lock = lock
        self.path = path or Path(DATABASE)
        #: Who is sent each new or changed entry a save stores (:data:`saves.Router`: the webhook URLs of
        #: the planets that publish it): an ``outbox`` event and a pending delivery per URL, no event when
        #: it names none. None (no planet has deliveries): nothing is written and nothing is paid. Set by
        #: the drivers.
        self.outbox: Router | None = None

    @classmethod
    def connect(cls, url: str) -> Store:
        """Open the state in the PostgreSQL database ``url`` (``postgresql://...``; see pgstate.py).

        No lock is taken: several workers share one database, and each
        source's save is one transaction.

        Raises:
            StoreError: psycopg is missing, the server cannot be reached, or the schema is newer.
        """
        from syndicator.state import pgstate  # here: a SQLite state never loads psycopg

        return cls(pgstate.connect(url), path=shown(url))

    @classmethod
    def open(cls, cache: Path, state: str | None = None) -> Store:
        """Lock ``cache`` (a folder, created if missing) and open its database, or the PostgreSQL
        database ``state`` names (``postgresql://...``, :meth:`connect`) when given."""
        cache = Path(cache)
        cachefiles.make_folder(cache)
        cachefiles.prepare(cache / LOCK)
        try:
            lock = locks.take(cache / LOCK, cachefiles.FILE_MODE)
        except OSError as e:
            raise StoreError(f"{cache / LOCK}: cannot lock the cache folder: {e.strerror or e}") from e
        if lock is None:
            raise CacheLockedError(
                f"{cache}: another syndicator build or serve is using this cache; "
                "wait for the build to finish, or stop the serve"
            )
        try:
            if state is not None:
                store = cls.connect(state)
                store._lock = lock
                return store
            path = cache / DATABASE
            cachefiles.prepare(path, cachefiles.COMPANIONS)
            try:
                connection = sqlite3.connect(path, isolation_level=None)
            except sqlite3.Error as e:
                raise StoreError(f"{path}: cannot open the state database ({e}); check its permissions") from e
            migrate(connection, path)
        except BaseException:
            lock.release()
            raise
        return cls(connection, lock, path)

    @classmethod
    def open_second(cls, cache: Path, state: str | None = None) -> Store:
        """A second connection to the state a locked :meth:`open` already opened (and migrated), for a
        thread of the same process (the deliveries): without the lock; SQLite waits up to 10 s for the
        other connection's transaction. PostgreSQL: :meth:`connect`.

        Raises:
            StoreError: the database cannot be opened.
        """
        if state is not None:
            return cls.connect(state)
        path = Path(cache) / DATABASE
        try:
            connection = sqlite3.connect(path, isolation_level=None, timeout=10)
            connection.execute("PRAGMA foreign_keys=ON")
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{path}: not a usable state database ({e})") from e
        return cls(connection, path=path)

    @classmethod
    def open_readonly(cls, cache: Path, state: str | None = None) -> Store | None:
        """Open ``cache``'s database to read, without the lock (a build may run); or the
        PostgreSQL database ``state`` names, when given (read as any worker reads it).

        Returns:
            the Store, or None when the cache holds no database yet.
        Raises:
            StoreError: the database is unreadable or of another schema version.
        """
        if state is not None:
            return cls.connect(state)
        path = Path(cache) / DATABASE
        if not path.is_file():
            return None
        try:
            connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
            row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{path}: not a usable state database ({e})") from e
        if stored_version(row, str(path)) != SCHEMA_VERSION:
            connection.close()
            raise StoreError(
                f"{path}: schema version {row[0] if row else 0} is not {SCHEMA_VERSION}; "
                "run `syndicator build` with this version first"
            )
        return cls(connection, path=path)

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

    # --- the whole state, as rows (statefile.py) ---------------------------------

    def dump(self, table: str) -> tuple[list[str], Iterator[tuple[Any, ...]]]:
        """The columns of ``table`` and its rows, read lazily (list of str, iterator of tuples), in the
        order of their first three columns (each table's key: the state file is the same for the same rows).

        Raises:
            ValueError: ``table`` is not one of :data:`TABLES`.
        """
        if table not in TABLES:
            raise ValueError(f"not a table of the state: {table!r}")
        cursor = self._db.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3")  # noqa: S608 - a name from TABLES
        return [column[0] for column in cursor.description], iter(cursor)

    def count(self, table: str) -> int:
        """The number of rows of ``table`` (int).

        Raises:
            ValueError: ``table`` is not one of :data:`TABLES`.
        """
        if table not in TABLES:
            raise ValueError(f"not a table of the state: {table!r}")
        return int(self._db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608 - from TABLES

    def load(self, tables: Iterable[tuple[str, list[str], Iterable[Sequence[Any]]]]) -> int:
        """Fill an empty state with rows, in one transaction: all of them or none.

        Args:
            tables: (table name, its columns, rows) for tables of :data:`TABLES`,
                sources first (entries refer to them).
        Returns:
            the number of rows written.
        Raises:
            StoreError: the state is not empty, a table or column is unknown,
                or a row does not fit (the database is left as it was).
        """
        written = 0
        try:
            with transaction(self._db):
                if self._db.execute("SELECT 1 FROM sources LIMIT 1").fetchone() is not None:
                    raise StoreError(f"{self.path}: the state is not empty; nothing was loaded")
                for table, columns, rows in tables:
                    known = self.dump(table)[0]
                    if not columns or any(column not in known for column in columns):
                        raise StoreError(f"{table}: unknown columns {sorted(set(columns) - set(known))}")
                    statement = (
                        f"INSERT INTO {table} ({', '.join(columns)}) "  # noqa: S608 - checked names
                        f"VALUES ({', '.join('?' * len(columns))})"
                    )
                    pending = iter(rows)
                    while chunk := list(itertools.islice(pending, ROWS_PER_QUERY)):
                        self._db.executemany(statement, chunk)
                        written += len(chunk)
                self._db.execute(_NEXT_GENERATION, (GENERATION_KEY,))
        except (sqlite3.DatabaseError, ValueError) as error:
            raise StoreError(f"{self.path}: cannot load the state: {error}") from error
        return written

    # --- reading ---------------------------------------------------------------

    def states(self) -> dict[str, SourceState]:
        """Every stored source state, keyed by configured URL."""
        rows = self._db.execute(f"SELECT {STATE_COLUMNS} FROM sources")  # noqa: S608 - our names
        return {row[0]: state_from_row(row) for row in rows}

    def states_of(self, urls: Iterable[str]) -> dict[str, SourceState]:
        """The stored states of ``urls`` (those that have one), keyed by configured URL: a worker reads
        only the sources it claimed."""
        found: dict[str, SourceState] = {}
        for chunk in chunks(sorted(set(urls))):
            rows = self._db.execute(
                f"SELECT {STATE_COLUMNS} FROM sources WHERE url IN "  # noqa: S608 - our names
                f"({', '.join('?' * len(chunk))})",
                chunk,
            )
            found.update((row[0], state_from_row(row)) for row in rows)
        return found

    def generation(self) -> int:
        """How many times sources or entries were written since the database was made (int).

        Every save adds one (:meth:`write_state`), so two equal readings mean nothing a
        render reads from the store changed in between.
        """
        return int(self.value(GENERATION_KEY) or 0)

    def value(self, key: str) -> str | None:
        """A value kept for the whole cache (the ``meta`` table), or None."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def keep(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key`` for the whole cache, in its own transaction.

        Raises:
            StoreError: the database cannot be written.
        """
        try:
            with transaction(self._db):
                self._db.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
        except sqlite3.OperationalError as error:
            raise StoreError(f"cannot write the state database: {error}") from error

    def snapshots(self, sources: Iterable[str], complete: int | None = None) -> dict[str, list[StoredEntry]]:
        """The stored snapshot of each source, in full or its ``complete`` newest entries in full
        (:func:`state.snapshots.snapshots`)."""
        return snapshots.snapshots(self._db, sources, complete)

    def light_snapshots(
        self, sources: Iterable[str], fields: Iterable[str] = ()
    ) -> Iterator[tuple[str, list[StoredEntry]]]:
        """(url, snapshot) of each of ``sources`` that has entries, light but for ``fields``, read as it goes
        (:func:`state.snapshots.light_snapshots`). Finish iterating before writing."""
        return snapshots.light_snapshots(self._db, sources, fields)

    def complete(self, chosen: Sequence[StoredEntry]) -> list[StoredEntry]:
        """``chosen`` (light entries) read in full, in the same order (:func:`state.snapshots.in_full`)."""
        return snapshots.in_full(self._db, chosen)

    def archived(self, planet: str, sources: frozenset[str] | None = None) -> list[archive.Archived]:
        """``planet``'s archive in publication order, of ``sources`` only if given (:func:`archive.archived`)."""
        return list(archive.archived(self._db, planet, sources))

    def archive(self, planet: str, published: Sequence[tuple[StoredEntry, datetime]], before: datetime | None) -> int:
        """Archive one publication of ``planet`` and drop its entries dated before ``before`` (None: keep all),
        in one transaction (:func:`state.archive.record`, :func:`state.archive.prune`); rows written or dropped."""
        with self.transaction():
            return archive.record(self._db, planet, published) + (
                archive.prune(self._db, planet, before) if before else 0
            )

    def aliases(self, source: str) -> dict[str, str]:
        """The recorded aliases of one source: {alias key: entry id}."""
        rows = self._db.execute("SELECT key, id FROM aliases WHERE source = ?", (source,))
        return dict(rows.fetchall())

    # --- writing ---------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (``with store.transaction(): ...``): all that is written inside it
        is stored, or none of it (rolled back on any exception, which goes on).

        A save (:func:`poll.path.save`) reads what is known, decides and writes in one.

        Raises:
            StoreError: the database cannot be written (disk full, I/O error, a damaged file); the
                transaction is rolled back.
        """
        try:
            with transaction(self._db):
                yield
        except (sqlite3.OperationalError, sqlite3.InternalError) as e:  # disk full, I/O error, a damaged file
            raise StoreError(f"{self.path}: cannot write the state database: {e}") from e

    def write_state(self, state: SourceState) -> None:
        """Write ``state`` as its source's row (replacing the stored one) and count a write
        (:meth:`generation`), in the caller's :meth:`transaction`."""
        values = [to_db(getattr(state, name), name) for name in STATE_FIELDS]
        placeholders = ", ".join("?" for _ in STATE_FIELDS)
        # An upsert, never INSERT OR REPLACE: REPLACE deletes the row first,
        # and the foreign key's ON DELETE CASCADE would take the snapshot with it.
        self._db.execute(
            f"INSERT INTO sources ({STATE_COLUMNS}) VALUES ({placeholders}) "  # noqa: S608
            f"ON CONFLICT(url) DO UPDATE SET {UPDATE_SET}",
            values,
        )
        self._db.execute(_NEXT_GENERATION, (GENERATION_KEY,))

    def read_known(self, source: str, keys: Iterable[str], ids: Iterable[str]) -> Known:
        """What is stored of ``source``'s alias ``keys`` and entry ``ids`` (the ones
        :func:`poll.known.lookups` names), in the caller's :meth:`transaction`
        (:func:`state.entries.read_known`)."""
        return stored_entries.read_known(self._db, source, keys, ids)

    def write_intents(self, source: str, intents: Intents, now: datetime) -> None:
        """Replace ``source``'s snapshot and record ``intents`` (decided by :func:`poll.known.intents`),
        in the caller's :meth:`transaction`: each event gets a pending delivery to every URL
        :attr:`outbox` names for it; ``now`` (UTC) is the events' time (:func:`state.entries.write`)."""
        stored_entries.write(self._db, source, intents, self.outbox, now)
