"""The deliveries' outbox as stored (both backends): the SQL that reads, claims and records deliveries.

The tables are :data:`schema.OUTBOX_TABLES`: ``outbox`` (one event per entry
version stored new or changed) and ``deliveries`` (one row per event and
destination: pending, delivered or dead). :meth:`store.Store.write_intents` writes
them with the entries; this module is what a delivery loop
(:mod:`push.deliveries`) calls to read the due ones (:func:`due`), claim one
before its POST (:func:`take`), record its outcome (:func:`delivered`,
:func:`dead`, :func:`retry`), count them (:func:`totals`) and delete the
events no destination waits for (:func:`prune`). It decides nothing: what
is due when, the retries and how long events are kept are the loop's.

Times are aware datetimes, stored as :func:`entries.outbox_time` text (UTC,
fixed width, so text order is time order). Each call is one statement, its
own transaction. Raises StoreError when the state cannot be read or written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from syndicator.state import pgstate
from syndicator.state.entries import outbox_time
from syndicator.state.store import Store

__all__ = ["clock", "dead", "delivered", "due", "prune", "retry", "take", "totals"]


def clock(store: Store) -> datetime:
    """The clock of a delivery loop (aware UTC): a PostgreSQL state's server clock (the one clock of every
    loop sharing it: due times and delivery leases; :meth:`pgstate.Connection.now`), else this machine's."""
    db = store._db
    return db.now() if isinstance(db, pgstate.Connection) else datetime.now(UTC)


def due(store: Store, url: str, now: datetime, limit: int) -> list[tuple[Any, ...]]:
    """The pending deliveries to ``url`` due at ``now``, oldest first, at most ``limit``: rows of (outbox id,
    url, attempts, next try as stored, source, entry id, version, payload)."""
    rows: list[tuple[Any, ...]] = store._db.execute(
        "SELECT d.outbox_id, d.url, d.attempts, d.next_try, o.source, o.entry_id, o.version, o.payload "
        "FROM deliveries d JOIN outbox o ON o.id = d.outbox_id "
        "WHERE d.state = 'pending' AND d.url = ? AND d.next_try <= ? "
        "ORDER BY d.next_try, d.outbox_id LIMIT ?",
        (url, outbox_time(now), limit),
    ).fetchall()
    return rows


def take(store: Store, outbox_id: int, url: str, next_try: str, until: datetime) -> bool:
    """Claim one delivery read by :func:`due` before its POST: move its next try to ``until`` if it is still
    pending at the ``next_try`` read (a compare-and-set). False: another loop took it (or it ended)."""
    claimed = store._db.execute(
        "UPDATE deliveries SET next_try = ? WHERE outbox_id = ? AND url = ? AND state = 'pending' AND next_try = ?",
        (outbox_time(until), outbox_id, url, next_try),
    )
    return bool(claimed.rowcount == 1)


def delivered(store: Store, outbox_id: int, url: str, attempts: int, now: datetime) -> None:
    """Record a delivery answered 2xx at ``now``, after ``attempts`` POSTs in all: it is never sent again."""
    store._db.execute(
        "UPDATE deliveries SET state = 'delivered', attempts = ?, delivered_at = ?, last_error = NULL "
        "WHERE outbox_id = ? AND url = ?",
        (attempts, outbox_time(now), outbox_id, url),
    )


def dead(store: Store, outbox_id: int, url: str, attempts: int, error: str) -> None:
    """Record a delivery that failed for the last time (a dead letter), with what went wrong."""
    store._db.execute(
        "UPDATE deliveries SET state = 'dead', attempts = ?, last_error = ? WHERE outbox_id = ? AND url = ?",
        (attempts, error, outbox_id, url),
    )


def retry(store: Store, outbox_id: int, url: str, attempts: int, at: datetime, error: str) -> str:
    """Record a failed delivery to try again at ``at``; returns that time as stored."""
    next_try = outbox_time(at)
    store._db.execute(
        "UPDATE deliveries SET attempts = ?, next_try = ?, last_error = ? WHERE outbox_id = ? AND url = ?",
        (attempts, next_try, error, outbox_id, url),
    )
    return next_try


def totals(store: Store, urls: Sequence[str]) -> dict[str, int]:
    """The deliveries to the destinations ``urls`` in each state: {"pending": n, "delivered": n, "dead": n}
    (0 for none). Those of a destination no longer listed are left out: they are never tried again."""
    found = {"pending": 0, "delivered": 0, "dead": 0}
    if urls:
        rows = store._db.execute(
            f"SELECT state, COUNT(*) FROM deliveries WHERE url IN ({', '.join('?' * len(urls))}) "  # noqa: S608
            "GROUP BY state",
            tuple(urls),
        )
        found.update((str(state), int(count)) for state, count in rows)
    return found


def prune(store: Store, urls: Sequence[str], written_before: datetime, dead_since: datetime) -> int:
    """Delete, with their deliveries, the events written before ``written_before`` that none of ``urls`` waits
    for: each of their deliveries to those destinations is delivered, or dead and the event written before
    ``dead_since`` (deliveries to other destinations do not hold an event). Returns the events deleted."""
    listed = list(urls) or [""]  # no destination: nothing holds an event
    deleted = store._db.execute(
        "DELETE FROM outbox WHERE id IN (SELECT o.id FROM outbox o WHERE o.created < ? AND NOT EXISTS "  # noqa: S608
        f"(SELECT 1 FROM deliveries d WHERE d.outbox_id = o.id AND d.url IN ({', '.join('?' * len(listed))}) "
        "AND (d.state = 'pending' OR (d.state = 'dead' AND o.created > ?))))",
        (outbox_time(written_before), *listed, outbox_time(dead_since)),
    ).rowcount
    return int(deleted or 0)
