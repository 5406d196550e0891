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
  :meth:`Store._keep_first_date`.
* ``aliases``: other names of seen entries (identity.alias_keys, and ids a
  publisher switched to), per source. An entry whose id is new but one of
  whose alias keys names a seen entry is stored under that entry's id, so
  a change of identifier style (a guid appearing, http becoming https, a
  move to another host) does not show a post twice. The first id wins.
* ``outbox`` and ``deliveries`` (schema 8): the events of new and changed
  entries and one pending delivery of each to every destination named in
  :attr:`Store.outbox`, all written in the save's transaction (so a
  destination added later gets the events after it, not the backlog), and
  their webhook deliveries (:mod:`deliveries`). Not part of a state file
  (:data:`TABLES`).

Times are stored as ISO 8601 UTC text.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock, Timeout

from syndicator.errors import CacheLockedError, StoreError
from syndicator.model import Check, Enclosure, Entry, FeedHints, Habits, SourceState, StoredEntry, content_hash, newest
from syndicator.state import cachefiles
from syndicator.state.schema import OUTBOX_TABLES, stored_version
from syndicator.urls import shown

SCHEMA_VERSION = 8
DATABASE = "state.sqlite"
LOCK = "syndicator.lock"
#: Rows asked for by one query (SQLite allows 32,766 parameters since 3.32, 999 before).
_ROWS_PER_QUERY = 900
_Value = TypeVar("_Value")
#: The tables that hold the state of the sources (:meth:`Store.dump`), in the order they load. Not the
#: deliveries' ``outbox`` and ``deliveries`` (schema 8): a state file carries no webhook traffic.
TABLES = ("sources", "entries", "seen", "aliases")
#: The ``meta`` key counting writes of sources and entries (:meth:`Store.generation`).
GENERATION_KEY = "generation"

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
_DATETIME_FIELDS = {"last_attempt", "last_success", "last_change", "next_attempt"}
_STATE_FIELDS = [f.name for f in fields(SourceState)]
#: The columns of ``sources`` quoted (``interval`` is a keyword of PostgreSQL's).
_STATE_COLUMNS = ", ".join(f'"{name}"' for name in _STATE_FIELDS)
_UPDATE_SET = ", ".join(f'"{name}" = excluded."{name}"' for name in _STATE_FIELDS if name != "url")
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

    def __init__(self, connection: Any, lock: FileLock | None = None, path: Path | str | None = None) -> None:
        self._db = connection  # sqlite3.Connection, or pgstate.Connection
        self._lock = lock
        self.path = path or Path(DATABASE)
        #: The webhook URLs (sites.yaml's ``deliveries``) each new or changed entry a save stores is
        #: written for: an ``outbox`` event and a pending delivery per URL. Empty (a planet without
        #: deliveries): nothing is written and nothing is paid. Set by the drivers.
        self.outbox: tuple[str, ...] = ()

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
        lock = FileLock(str(cache / LOCK), timeout=0, mode=cachefiles.FILE_MODE)
        try:
            lock.acquire()
        except Timeout:
            raise CacheLockedError(
                f"{cache}: another syndicator build or serve is using this cache; "
                "wait for the build to finish, or stop the serve"
            ) from None
        except OSError as e:
            raise StoreError(f"{cache / LOCK}: cannot lock the cache folder: {e.strerror or e}") from e
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
            _migrate(connection, path)
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
        """The columns of ``table`` and its rows, read lazily (list of str, iterator of tuples).

        Raises:
            ValueError: ``table`` is not one of :data:`TABLES`.
        """
        if table not in TABLES:
            raise ValueError(f"not a table of the state: {table!r}")
        cursor = self._db.execute(f"SELECT * FROM {table}")  # noqa: S608 - a name from TABLES
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
            with _transaction(self._db):
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
                    while chunk := list(itertools.islice(pending, _ROWS_PER_QUERY)):
                        self._db.executemany(statement, chunk)
                        written += len(chunk)
                self._db.execute(_NEXT_GENERATION, (GENERATION_KEY,))
        except (sqlite3.DatabaseError, ValueError) as error:
            raise StoreError(f"{self.path}: cannot load the state: {error}") from error
        return written

    # --- reading ---------------------------------------------------------------

    def states(self) -> dict[str, SourceState]:
        """Every stored source state, keyed by configured URL."""
        rows = self._db.execute(f"SELECT {_STATE_COLUMNS} FROM sources")  # noqa: S608 - our names
        return {row[0]: _state_from_row(row) for row in rows}

    def states_of(self, urls: Iterable[str]) -> dict[str, SourceState]:
        """The stored states of ``urls`` (those that have one), keyed by configured URL: a worker reads
        only the sources it claimed."""
        found: dict[str, SourceState] = {}
        for chunk in _chunks(sorted(set(urls))):
            rows = self._db.execute(
                f"SELECT {_STATE_COLUMNS} FROM sources WHERE url IN "  # noqa: S608 - our names
                f"({', '.join('?' * len(chunk))})",
                chunk,
            )
            found.update((row[0], _state_from_row(row)) for row in rows)
        return found

    def generation(self) -> int:
        """How many times sources or entries were written since the database was made (int).

        Every :meth:`save` adds one, so two equal readings mean nothing a
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
            with _transaction(self._db):
                self._db.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
        except sqlite3.OperationalError as error:
            raise StoreError(f"cannot write the state database: {error}") from error

    def snapshots(self, sources: Iterable[str], complete: int | None = None) -> dict[str, list[StoredEntry]]:
        """The stored snapshot of each source, entries in document order.

        Args:
            sources: configured URLs; unknown ones map to an empty list.
            complete: load in full only the ``complete`` newest entries of
                each snapshot (:func:`model.newest`, the ranking selection
                uses); the others come with their id, link and date alone
                (title, text and media empty). None: every entry in full.
        Returns:
            {url: [StoredEntry, ...]}, each with its first-seen time (UTC).
        """
        result: dict[str, list[StoredEntry]] = {url: [] for url in sources}
        if complete is None:
            rows = self._db.execute(
                "SELECT e.source, e.data, s.first_seen, s.changed FROM entries e "
                "JOIN seen s ON s.source = e.source AND s.id = e.id "
                "ORDER BY e.source, e.position"
            )
            for source, data, first_seen, changed in rows:
                if source in result:
                    result[source].append(
                        StoredEntry(
                            source, _entry_from_json(data), datetime.fromisoformat(first_seen), _moment(changed)
                        )
                    )
            return result
        result.update(self.light_snapshots(result))
        chosen = [(source, position) for source, stored in result.items() for position in newest(stored, complete)]
        full = self.complete([result[source][position] for source, position in chosen])
        for (source, position), stored_entry in zip(chosen, full, strict=True):
            result[source][position] = stored_entry
        return result

    def light_snapshots(self, sources: Iterable[str]) -> Iterator[tuple[str, list[StoredEntry]]]:
        """(url, snapshot) of each of ``sources`` that has entries, one source at a time, entries
        in document order with their id, link and dates alone (title, text and media empty).

        One query, read as it goes: a caller that keeps only what it needs of
        each snapshot never holds them all. Finish iterating before writing.
        """
        wanted = set(sources)
        rows = self._db.execute(
            "SELECT e.source, e.id, json_extract(e.data, '$.link'), json_extract(e.data, '$.date'), "
            "s.first_seen, s.changed FROM entries e JOIN seen s ON s.source = e.source AND s.id = e.id "
            "ORDER BY e.source, e.position"
        )
        current: str | None = None
        stored: list[StoredEntry] = []
        for source, entry_id, link, date, first_seen, changed in rows:
            if source != current:
                if current in wanted and stored:
                    yield current, stored
                current, stored = source, []
            if source in wanted:
                entry = Entry(id=entry_id, link=link if isinstance(link, str) else None, date=_moment(date))
                stored.append(StoredEntry(source, entry, datetime.fromisoformat(first_seen), _moment(changed)))
        if current in wanted and stored:
            yield current, stored

    def complete(self, chosen: Sequence[StoredEntry]) -> list[StoredEntry]:
        """``chosen`` (light entries of :meth:`light_snapshots`) with each entry read in full, in the same order.

        A build reads every snapshot light, selects, then reads in full only
        the entries it publishes. An entry no longer stored is returned as it was.
        """
        pairs = sorted({(stored.source, stored.entry.id) for stored in chosen})
        full: dict[tuple[str, str], Entry] = {}
        for chunk in _chunks(pairs, _ROWS_PER_QUERY // 2):  # two parameters a row
            rows = self._db.execute(
                "SELECT source, id, data FROM entries WHERE (source, id) IN "
                f"(VALUES {', '.join(['(?, ?)'] * len(chunk))})",
                [value for pair in chunk for value in pair],
            )
            for source, entry_id, data in rows:
                full[(source, entry_id)] = _entry_from_json(data)
        return [replace(stored, entry=full.get((stored.source, stored.entry.id), stored.entry)) for stored in chosen]

    def aliases(self, source: str) -> dict[str, str]:
        """The recorded aliases of one source: {alias key: entry id}."""
        rows = self._db.execute("SELECT key, id FROM aliases WHERE source = ?", (source,))
        return dict(rows.fetchall())

    # --- writing ---------------------------------------------------------------

    def save(self, state: SourceState, entries: Iterable[Entry] | None, now: datetime) -> None:
        """Write one source observation in a single transaction.

        Args:
            state: the new state of the source (replaces the stored row).
            entries: the new snapshot, or None to keep the stored one (a 304,
                an unchanged body, or a failure). Each entry is stored under
                the id it resolves to (see the module docstring on aliases).
            now: the build's clock (UTC), recorded as first-seen of new ids
                and as the change time of edited ones.
        Raises:
            StoreError: the database cannot be written (disk full, I/O error,
                a damaged file); the transaction is rolled back.
        """
        try:
            self._save(state, entries, now)
        except (sqlite3.OperationalError, sqlite3.InternalError) as e:  # disk full, I/O error, a damaged file
            raise StoreError(f"{self.path}: cannot write the state database: {e}") from e

    def _save(self, state: SourceState, entries: Iterable[Entry] | None, now: datetime) -> None:
        values = [_to_db(getattr(state, name), name) for name in _STATE_FIELDS]
        placeholders = ", ".join("?" for _ in _STATE_FIELDS)
        with _transaction(self._db):
            # An upsert, never INSERT OR REPLACE: REPLACE deletes the row first,
            # and the foreign key's ON DELETE CASCADE would take the snapshot with it.
            self._db.execute(
                f"INSERT INTO sources ({_STATE_COLUMNS}) VALUES ({placeholders}) "  # noqa: S608
                f"ON CONFLICT(url) DO UPDATE SET {_UPDATE_SET}",
                values,
            )
            self._db.execute(_NEXT_GENERATION, (GENERATION_KEY,))
            if entries is None:
                return
            self._db.execute("DELETE FROM entries WHERE source = ?", (state.url,))
            entries = list(entries)
            known = self._known(state.url, entries)
            rows: list[tuple[str, str, int, str]] = []
            aliases: list[tuple[str, str, str]] = []
            new: list[tuple[str, str, str, str, str | None]] = []
            events: list[tuple[str, str, str, str, str, str]] = []
            # A source's first snapshot is its baseline, not news: a new planet, or a site just added, does
            # not send its whole backlog to every destination.
            baseline = (
                bool(self.outbox)
                and self._db.execute("SELECT 1 FROM seen WHERE source = ? LIMIT 1", (state.url,)).fetchone() is None
            )
            for position, (entry, resolved) in enumerate(zip(entries, self._resolve(known, entries), strict=True)):
                resolved = self._keep_first_date(known, resolved)
                rows.append((state.url, resolved.id, position, _entry_to_json(resolved)))
                event = self._remember(state.url, known, resolved, now, new)
                if event is not None and self.outbox and not baseline:
                    events.append(_event(state.url, resolved, *event, now))
                keys = entry.aliases + ((f"id:{entry.id}",) if entry.id != resolved.id else ())
                aliases.extend((state.url, key, resolved.id) for key in keys)
            self._db.executemany("INSERT INTO entries (source, id, position, data) VALUES (?, ?, ?, ?)", rows)
            self._db.executemany(
                "INSERT INTO seen (source, id, first_seen, content_hash, first_date) VALUES (?, ?, ?, ?, ?)", new
            )
            self._db.executemany(
                "INSERT INTO aliases (source, key, id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", aliases
            )
            # The events and their deliveries, in the entry's transaction: committed together or not at all
            # ("commit before fan-out").
            for outbox_row in events:
                (outbox_id,) = self._db.execute(
                    "INSERT INTO outbox (source, entry_id, version, kind, payload, "
                    "created) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                    outbox_row,
                ).fetchone()
                self._db.executemany(
                    "INSERT INTO deliveries (outbox_id, url, state, attempts, next_try) VALUES (?, ?, 'pending', 0, ?)",
                    [(outbox_id, url, outbox_row[5]) for url in self.outbox],
                )

    def _known(self, source: str, entries: list[Entry]) -> _Known:
        """What the store knows of the ids and alias keys ``entries`` could resolve to, and of the ids
        those keys name: a query or two for the whole snapshot, not several per entry."""
        keys = {key for entry in entries for key in (f"id:{entry.id}", *entry.aliases)}
        ids = {entry.id for entry in entries}
        for key in keys:
            kind, _, bare = key.partition(":")
            if kind in ("uri", "link"):
                ids.update((f"https:{bare}", f"http:{bare}"))
        known = _Known({}, {})
        for chunk in _chunks(sorted(keys)):
            rows = self._db.execute(
                f"SELECT key, id FROM aliases WHERE source = ? AND key IN ({', '.join('?' * len(chunk))})",
                (source, *chunk),
            )
            known.aliases.update((key, str(entry_id)) for key, entry_id in rows)
        ids.update(known.aliases.values())
        for chunk in _chunks(sorted(ids)):
            rows = self._db.execute(
                "SELECT id, first_date, content_hash FROM seen WHERE source = ? AND id IN "
                f"({', '.join('?' * len(chunk))})",
                (source, *chunk),
            )
            known.seen.update((entry_id, (first_date, digest)) for entry_id, first_date, digest in rows)
        return known

    @staticmethod
    def _resolve(known: _Known, entries: list[Entry]) -> list[Entry]:
        """Each entry under the id of the seen entry it is an alias of, else as it is.

        Exact ids claim first, then ids a publisher switched to, then alias
        keys in order; a seen entry is claimed by one entry at most.
        """
        resolved: list[Entry | None] = [e if e.id in known.seen else None for e in entries]
        claimed = {e.id for e in resolved if e is not None}
        for keys_of in (lambda e: (f"id:{e.id}",), lambda e: e.aliases):
            for index, entry in enumerate(entries):
                if resolved[index] is not None:
                    continue
                for key in keys_of(entry):
                    target = known.alias(key)
                    if target is not None and target not in claimed:
                        resolved[index] = replace(entry, id=target)
                        claimed.add(target)
                        break
        return [r if r is not None else e for r, e in zip(resolved, entries, strict=True)]

    @staticmethod
    def _keep_first_date(known: _Known, entry: Entry) -> Entry:
        """A seen entry whose only date moved forward, with its first date back (README, "Edits").

        Sites that regenerate their feed rewrite the one date of every entry
        (an Atom ``updated``, a JSON Feed ``date_modified``, a pubDate) to
        the time of the rewrite; taken at its word, every old post would
        float to the top. An entry already seen keeps its first date and the
        new one becomes its ``updated`` time, as an edit's does. An entry
        with a publication date apart from its updated date, or whose date
        moved back (a correction), is stored as the feed gives it; a new
        entry is dated by its own date. The first date is the earliest date
        stored for the entry (``seen.first_date``).
        """
        if entry.date is None or (entry.updated is not None and entry.updated != entry.date):
            return entry
        first_date = known.seen.get(entry.id, (None, None))[0]
        if first_date is None:
            return entry
        first = datetime.fromisoformat(first_date)
        return replace(entry, date=first, updated=entry.date) if entry.date > first else entry

    def _remember(
        self, source: str, known: _Known, entry: Entry, now: datetime, new: list[tuple[str, str, str, str, str | None]]
    ) -> tuple[str, str] | None:
        """Record first-seen and first date for a new id (a row added to ``new``, for one
        insert of them all); mark an edit when the content hash changes; keep the earliest
        date as the first date.

        Returns:
            the entry's event, ("new" or "changed", its content hash), or None (unchanged; or a
            hash recorded for the first time on an entry stored before hashes were kept).
        """
        digest = content_hash(entry.title, entry.link, entry.summary, entry.content)
        date = entry.date.isoformat() if entry.date else None
        if entry.id not in known.seen:
            new.append((source, entry.id, now.isoformat(), digest, date))
            return "new", digest
        first_date, stored_digest = known.seen[entry.id]
        if entry.date is not None and (first_date is None or entry.date < datetime.fromisoformat(first_date)):
            self._db.execute("UPDATE seen SET first_date = ? WHERE source = ? AND id = ?", (date, source, entry.id))
        if stored_digest != digest:
            changed = now.isoformat() if stored_digest is not None else None
            self._db.execute(
                "UPDATE seen SET content_hash = ?, changed = COALESCE(?, changed) WHERE source = ? AND id = ?",
                (digest, changed, source, entry.id),
            )
            if stored_digest is not None:
                return "changed", digest
        return None


def _event(source: str, entry: Entry, kind: str, version: str, now: datetime) -> tuple[str, str, str, str, str, str]:
    """An ``outbox`` row (source, entry id, version, kind, payload, created) of one new or changed entry;
    the payload is the JSON body every webhook is sent, byte for byte (:mod:`deliveries`)."""
    payload = {
        "source": source,
        "id": entry.id,
        "title": entry.title,
        "link": entry.link,
        "date": entry.date.isoformat() if entry.date else None,
        "version": version,
        "kind": kind,
    }
    return (
        source,
        entry.id,
        version,
        kind,
        json.dumps(payload, ensure_ascii=False, separators=(",", ":")),
        outbox_time(now),
    )


def outbox_time(moment: datetime) -> str:
    """A time of the outbox and deliveries tables: UTC ISO 8601 with microseconds, fixed width, so
    that their text order is time order in both databases."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


@dataclass
class _Known:
    """What one save reads of a source's history: ``seen`` {id: (first date, content hash)} and
    ``aliases`` {key: id}, for the ids and keys of the entries being saved."""

    seen: dict[str, tuple[str | None, str | None]]
    aliases: dict[str, str]

    def alias(self, key: str) -> str | None:
        """The seen id an alias key names: recorded, or for a URL key, a seen id equal
        to that URL under either scheme (entries stored before aliases were kept)."""
        if key in self.aliases:
            return self.aliases[key]
        kind, _, bare = key.partition(":")
        if kind in ("uri", "link"):
            return next((f"{scheme}:{bare}" for scheme in ("https", "http") if f"{scheme}:{bare}" in self.seen), None)
        return None


def _chunks(values: list[_Value], size: int = _ROWS_PER_QUERY) -> Iterator[list[_Value]]:
    """``values`` in lists of at most ``size`` (one query's parameters)."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception."""

    def __init__(self, db: Any) -> None:
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
        with _transaction(db):
            for statement in _MIGRATIONS[target].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(target),))


def _to_db(value: Any, name: str) -> Any:
    if value is None:
        return None
    if name in _DATETIME_FIELDS:
        return value.isoformat()
    if name == "history":
        return json.dumps(
            [[c.at.isoformat(), c.elapsed, int(c.changed), c.new_entries, int(c.overflowed)] for c in value]
        )
    if name == "hints":
        return json.dumps(_flat(value), separators=(",", ":"))
    if name == "habits":
        data = _flat(value)
        for key in ("at", "newest", "oldest"):
            data[key] = data[key] and data[key].isoformat()
        return json.dumps(data, separators=(",", ":"))
    return value


def _flat(value: Any) -> dict[str, Any]:
    """A flat dataclass (fields of numbers, strings, tuples of numbers) as a dict, without asdict's deep copy."""
    return {f.name: getattr(value, f.name) for f in fields(value)}


def _history_from_db(value: str | None) -> tuple[Check, ...]:
    return tuple(
        Check(datetime.fromisoformat(at), float(elapsed), bool(changed), int(new), bool(rest and rest[0]))
        for at, elapsed, changed, new, *rest in json.loads(value or "[]")
    )


def _hints_from_db(value: str) -> FeedHints:
    data = json.loads(value)
    return FeedHints(
        **{**data, "skip_hours": tuple(data.get("skip_hours", ())), "skip_days": tuple(data.get("skip_days", ()))}
    )


def _habits_from_db(value: str) -> Habits:
    data = json.loads(value)
    for key in ("at", "newest", "oldest"):
        data[key] = data[key] and datetime.fromisoformat(data[key])
    return Habits(**{**data, "hours": tuple(data["hours"]), "days": tuple(data["days"])})


#: How each column of ``sources`` becomes a SourceState field: a converter for a value that is not
#: NULL (history: for NULL too), or None for a value taken as it is. Chosen once, not per cell.
_STATE_CONVERTERS: tuple[tuple[str, Callable[[Any], Any] | None], ...] = tuple(
    (
        name,
        _history_from_db
        if name == "history"
        else datetime.fromisoformat
        if name in _DATETIME_FIELDS
        else _hints_from_db
        if name == "hints"
        else _habits_from_db
        if name == "habits"
        else None,
    )
    for name in _STATE_FIELDS
)


def _state_from_row(row: tuple[Any, ...]) -> SourceState:
    return SourceState(
        **{
            name: value if convert is None or (value is None and name != "history") else convert(value)
            for (name, convert), value in zip(_STATE_CONVERTERS, row, strict=True)
        }
    )


def _entry_to_json(entry: Entry) -> str:
    """An entry as its stored JSON object (aliases live in their own table).

    Field by field rather than ``dataclasses.asdict``, whose deep copy was the
    biggest single cost of storing a snapshot.
    """
    data = {name: getattr(entry, name) for name in _ENTRY_FIELDS}
    for key in ("date", "updated"):
        if data[key] is not None:
            data[key] = data[key].isoformat()
    data["enclosures"] = [
        {name: getattr(enclosure, name) for name in _ENCLOSURE_FIELDS} for enclosure in entry.enclosures
    ]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


_ENTRY_FIELDS = tuple(f.name for f in fields(Entry) if f.name != "aliases")
_ENCLOSURE_FIELDS = tuple(f.name for f in fields(Enclosure))


def _moment(value: object) -> datetime | None:
    """A stored ISO 8601 time as a datetime, None for none (or a value that is no string)."""
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def _entry_from_json(text: str) -> Entry:
    data = json.loads(text)
    for key in ("date", "updated"):
        if data.get(key):
            data[key] = datetime.fromisoformat(data[key])
    data["enclosures"] = _enclosures_from_json(data.get("enclosures"))
    known = {f.name for f in fields(Entry)}
    return Entry(**{k: v for k, v in data.items() if k in known})


def _enclosures_from_json(value: object) -> tuple[Enclosure, ...]:
    """Stored enclosures (a list of objects) as Enclosures; () for rows stored before enclosures were kept."""
    known = {f.name for f in fields(Enclosure)}
    items = value if isinstance(value, list) else []
    return tuple(
        Enclosure(**{k: v for k, v in item.items() if k in known})
        for item in items
        if isinstance(item, dict) and isinstance(item.get("url"), str)
    )
