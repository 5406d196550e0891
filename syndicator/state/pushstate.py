"""Durable WebSub state: subscriptions and the inbox of notifications (``<cache>/push.sqlite``).

``syndicator serve`` keeps two tables here, apart from the feeds' state
(``state.sqlite``, :mod:`store`):

* ``subscriptions``: one row per source that advertises a hub: the topic,
  the hub asked and the hubs advertised, the callback token (the secret
  path segment of the callback URL), the HMAC secret, the mode we asked
  for and the lifecycle state, the lease, and what push has done (last
  notification, last verified push, counts).
* ``examined``: the sources whose whole document ``serve`` has read for
  the hubs it advertises, and what it found (a feed unchanged since the
  cache last saw it answers 304, or a body not parsed again, so it is
  asked once without validators).
* ``notifications``: the inbox. A verified notification is written here,
  and committed, before the hub gets its 2xx (seed 003: durable
  acknowledgement); the serve loop parses and stores it afterwards and
  marks it processed. A crash in between processes it again at the next
  start, which stores nothing twice (entry identity, :mod:`store`).

Why a file of its own: the callback handlers run on the HTTP server's
threads, each write a few rows, and must never wait for a poll's
transaction; the secrets stay out of the state a planet publishes
(:mod:`statefile`); and ``syndicator build`` never opens it.

The tables' definitions and their migrations are :mod:`pushschema`'s.
Every method is safe to call from any thread (one connection, one lock).
Times are UTC datetimes, stored as ISO 8601 text.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from syndicator.errors import StoreError
from syndicator.state import cachefiles, pushschema

DATABASE = "push.sqlite"
#: Seconds a write waits for another writer of the file (the serve loop, a callback thread).
BUSY_TIMEOUT = 10.0
#: Processed notifications kept (newest first) for status and replay; older ones are deleted.
KEEP_PROCESSED = 1000

_TIMES = {"requested", "verified", "lease_expires", "next_action", "last_notification", "last_push"}


@dataclass(frozen=True)
class Subscription:
    """One source's WebSub subscription (WebSub sections 5 and 6).

    Attributes:
        source: the configured feed URL it serves.
        topic: the topic URL (the feed's advertised self URL).
        hub: the hub the subscription was asked of.
        hubs: every hub the feed advertised (tuple of str), to try in turn.
        token: the callback's unguessable path segment (str).
        secret: the ``hub.secret`` sent with the request (str): notifications
            must be signed with it.
        mode: what we last asked the hub for: ``subscribe`` or ``unsubscribe``.
        state: ``pending`` (to be asked), ``requested`` (asked, awaiting
            verification), ``live`` (verified, lease running), ``renewing``
            (live, a renewal awaiting verification), ``failed`` (a request
            refused or never verified; asked again after a backoff),
            ``denied`` (the hub said so), ``unsubscribing`` (to be asked to
            end), ``unsubscribe_sent`` (awaiting its verification).
        requested: when the last request was sent (UTC).
        verified: when the hub last verified our intent (UTC).
        lease_seconds: the lease the hub granted (seconds).
        lease_expires: when it ends (UTC).
        next_action: when the subscription needs work again: a renewal, a
            retry, a check for a verification that never came (UTC).
        failures: consecutive failed requests or verifications (int).
        error: the last failure, one line.
        last_notification: when any notification for it last arrived (UTC).
        last_push: when a verified notification was last stored (UTC).
        missed: polls since the last verified push that found a change no
            push had delivered (int).
        notifications: verified notifications stored (int).
        rejected: notifications discarded: unsigned or badly signed (int).
        duplicates: verified notifications whose exact body had already been processed (int).
        replays: verified notifications that brought nothing newer than the stored entries, only older or
            unorderable versions of them (int; seed 003: a later-arriving notification may describe an older
            representation).
    """

    source: str
    topic: str
    hub: str
    hubs: tuple[str, ...]
    token: str
    secret: str
    mode: str = "subscribe"
    state: str = "pending"
    requested: datetime | None = None
    verified: datetime | None = None
    lease_seconds: int | None = None
    lease_expires: datetime | None = None
    next_action: datetime | None = None
    failures: int = 0
    error: str | None = None
    last_notification: datetime | None = None
    last_push: datetime | None = None
    missed: int = 0
    notifications: int = 0
    rejected: int = 0
    duplicates: int = 0
    replays: int = 0

    def live(self, now: datetime) -> bool:
        """True while a verified subscription's lease runs (a renewal that failed does not count)."""
        return self.state in ("live", "renewing") and self.lease_expires is not None and self.lease_expires > now


@dataclass(frozen=True)
class Notification:
    """A verified notification in the inbox: the exact body a hub delivered, its content type and the
    body's SHA-256 (hex; "" for one received before version 2 of the file)."""

    id: int
    token: str
    received: datetime
    content_type: str
    body: bytes
    body_hash: str = ""


_COLUMNS = [f.name for f in fields(Subscription)]


class PushState:
    """The push database of one cache folder; see the module docstring.

    Raises (from every method):
        StoreError: the database cannot be used (damaged, disk full, newer schema).
    """

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = connection
        self._lock = threading.Lock()
        self.path = path
        try:  # a file of version 1 opened read-only (status) lacks the columns added since: they read as 0
            present = {row[1] for row in connection.execute("PRAGMA table_info(subscriptions)")}
        except sqlite3.Error as e:
            raise StoreError(f"{path}: not a usable push database ({e})") from e
        self._columns = [name for name in _COLUMNS if name in present or not present]
        self._select = f"SELECT {', '.join(self._columns)} FROM subscriptions"

    @classmethod
    def open(cls, cache: Path) -> PushState:
        """Open (create, migrate) ``<cache>/push.sqlite``; the caller holds the cache lock."""
        path = Path(cache) / DATABASE
        cachefiles.prepare(path, cachefiles.COMPANIONS)  # it holds the hubs' secrets: 0600, never a link
        try:
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # an acknowledged notification survives a power cut
            pushschema.prepare(db, path)
        except sqlite3.Error as e:
            raise StoreError(f"{path}: not a usable push database ({e}); move it aside to start afresh") from e
        return cls(db, path)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                raise StoreError(f"{self.path}: {e}") from e

    def value(self, key: str) -> str | None:
        """A value kept in the meta table, or None."""
        rows = self._run("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def keep(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key`` in the meta table."""
        self._run("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # --- subscriptions -----------------------------------------------------------

    def subscriptions(self) -> dict[str, Subscription]:
        """Every subscription, {source URL: Subscription}."""
        rows = self._run(self._select)
        return {row[0]: _from_row(row, self._columns) for row in rows}

    def subscription(self, source: str) -> Subscription | None:
        """The subscription of ``source``, or None."""
        rows = self._run(f"{self._select} WHERE source = ?", (source,))
        return _from_row(rows[0], self._columns) if rows else None

    def by_token(self, token: str) -> Subscription | None:
        """The subscription whose callback path segment is ``token``, or None."""
        rows = self._run(f"{self._select} WHERE token = ?", (token,))
        return _from_row(rows[0], self._columns) if rows else None

    def save(self, subscription: Subscription) -> None:
        """Insert or replace ``subscription`` (committed when this returns)."""
        values = tuple(_to_db(name, getattr(subscription, name)) for name in _COLUMNS)
        marks = ", ".join("?" for _ in _COLUMNS)
        self._run(f"INSERT OR REPLACE INTO subscriptions ({', '.join(_COLUMNS)}) VALUES ({marks})", values)  # noqa: S608

    def update(self, token: str, **changes: Any) -> Subscription | None:
        """Change some fields of the subscription with callback ``token`` atomically; return it changed, or None."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                rows = self._db.execute(f"{self._select} WHERE token = ?", (token,)).fetchall()
                if not rows:
                    self._db.execute("ROLLBACK")
                    return None
                changed = replace(_from_row(rows[0], self._columns), **changes)
                sets = ", ".join(f"{name} = ?" for name in changes)
                self._db.execute(
                    f"UPDATE subscriptions SET {sets} WHERE token = ?",  # noqa: S608
                    (*(_to_db(name, getattr(changed, name)) for name in changes), token),
                )
                self._db.execute("COMMIT")
                return changed
            except sqlite3.Error as e:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StoreError(f"{self.path}: {e}") from e

    def delete(self, source: str) -> None:
        """Forget the subscription of ``source``."""
        self._run("DELETE FROM subscriptions WHERE source = ?", (source,))

    def examined(self) -> set[str]:
        """The sources whose document was read for the hubs it advertises (set of URLs)."""
        return {row[0] for row in self._run("SELECT source FROM examined")}

    def forget_examined(self, source: str) -> None:
        """Forget that ``source``'s document was read for hubs: ``serve`` reads its next one whole."""
        self._run("DELETE FROM examined WHERE source = ?", (source,))

    def mark_examined(self, source: str, hubs: tuple[str, ...], topic: str | None, now: datetime) -> None:
        """Record what ``source``'s document advertised (hub URLs, topic) when it was read."""
        self._run(
            "INSERT OR REPLACE INTO examined (source, hubs, topic, at) VALUES (?, ?, ?, ?)",
            (source, json.dumps(list(hubs)), topic, now.isoformat()),
        )

    # --- the inbox ---------------------------------------------------------------

    def receive(self, token: str, body: bytes, content_type: str, now: datetime) -> int:
        """Store a verified notification and count it on its subscription, in one transaction.

        Returns:
            the notification's id; it is committed (durable) when this returns.
        """
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                cursor = self._db.execute(
                    "INSERT INTO notifications (token, received, content_type, body, body_hash) VALUES (?, ?, ?, ?, ?)",
                    (token, now.isoformat(), content_type, body, hashlib.sha256(body).hexdigest()),
                )
                self._db.execute(
                    "UPDATE subscriptions SET notifications = notifications + 1, last_notification = ? WHERE token = ?",
                    (now.isoformat(), token),
                )
                self._db.execute("COMMIT")
                return int(cursor.lastrowid or 0)
            except sqlite3.Error as e:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StoreError(f"{self.path}: {e}") from e

    def reject(self, token: str, now: datetime) -> None:
        """Count a notification discarded for its signature (unsigned or badly signed)."""
        self._run(
            "UPDATE subscriptions SET rejected = rejected + 1, last_notification = ? WHERE token = ?",
            (now.isoformat(), token),
        )

    def pending(self, limit: int = 100) -> list[Notification]:
        """The oldest unprocessed notifications, at most ``limit``, oldest first."""
        rows = self._run(
            "SELECT id, token, received, content_type, body, body_hash FROM notifications "
            "WHERE processed IS NULL ORDER BY id LIMIT ?",
            (limit,),
        )
        return [
            Notification(row[0], row[1], datetime.fromisoformat(row[2]), row[3], bytes(row[4]), row[5] or "")
            for row in rows
        ]

    def seen_before(self, notification: Notification) -> bool:
        """True when a notification with the same body for the same callback was processed before this one
        (among the :data:`KEEP_PROCESSED` kept): a duplicate delivery or a replay (seed 003)."""
        if not notification.body_hash:
            return False
        return bool(
            self._run(
                "SELECT 1 FROM notifications WHERE token = ? AND body_hash = ? AND id < ? "
                "AND processed IS NOT NULL AND verdict != 'failed' LIMIT 1",
                (notification.token, notification.body_hash, notification.id),
            )
        )

    def processed(self, notification: int, verdict: str, now: datetime) -> None:
        """Mark a notification processed with its ``verdict`` (``stored``, ``duplicate``, ``replay``, ``unparsable``,
        ``failed``, ``orphan``).

        Its body is dropped (the entries are in the state now), and only the
        newest :data:`KEEP_PROCESSED` processed rows are kept.
        """
        self._run(
            "UPDATE notifications SET processed = ?, verdict = ?, body = X'' WHERE id = ?",
            (now.isoformat(), verdict, notification),
        )
        if notification % 100 == 0:
            self._run(
                "DELETE FROM notifications WHERE processed IS NOT NULL AND id <= ?", (notification - KEEP_PROCESSED,)
            )

    def iter_verdicts(self) -> Iterator[tuple[str, int]]:
        """(verdict, count) of the processed notifications kept."""
        yield from (
            (row[0], row[1])
            for row in self._run(
                "SELECT verdict, COUNT(*) FROM notifications WHERE processed IS NOT NULL GROUP BY verdict"
            )
        )


def open_readonly(cache: Path) -> PushState | None:
    """The push database of ``cache`` opened to read (``syndicator status``), or None when there is none.

    Raises:
        StoreError: the file is not a usable database.
    """
    path = Path(cache) / DATABASE
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
        db.execute("SELECT 1 FROM subscriptions LIMIT 1").fetchall()
    except sqlite3.Error as e:
        raise StoreError(f"{path}: not a usable push database ({e})") from e
    return PushState(db, path)


def _to_db(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in _TIMES:
        return value.isoformat()
    if name == "hubs":
        return json.dumps(list(value))
    return value


def _from_row(row: tuple[Any, ...], columns: list[str]) -> Subscription:
    values: dict[str, Any] = {}
    for name, value in zip(columns, row, strict=True):
        if value is not None and name in _TIMES:
            value = datetime.fromisoformat(value)
        elif name == "hubs":
            value = tuple(json.loads(value))
        values[name] = value
    return Subscription(**values)
