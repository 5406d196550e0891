"""Re-planned next checks written to the state, with the intervals they were planned with: one
transaction, on SQLite and PostgreSQL alike (the same SQL; :mod:`pgstate` adapts the placeholders).

What to write is :mod:`poll.replan`'s decision; this module only writes it. Each source is written
only if its next check is still the one that was read (compare and set), so a source another
process saved meanwhile (a worker sharing PostgreSQL) keeps what that process saved.
"""

from __future__ import annotations

from collections.abc import Sequence

from syndicator.model import SourceState
from syndicator.state.rows import to_db
from syndicator.state.store import _NEXT_GENERATION, GENERATION_KEY, Store

__all__ = ["write_replanned"]

_UPDATE = 'UPDATE sources SET next_attempt = ?, "interval" = ?, reason = ? WHERE url = ? AND next_attempt = ?'
_KEEP = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"


def write_replanned(store: Store, changes: Sequence[tuple[SourceState, SourceState]], key: str, value: str) -> int:
    """Write each (state as read, state re-planned) of ``changes`` (its next attempt, interval and reason)
    where the stored next attempt is still the one read, and keep ``value`` under ``key`` in ``meta``,
    in one transaction; a write counts in :meth:`Store.generation` (the sites page shows next checks).

    Returns:
        how many sources were written (int).
    Raises:
        StoreError: the database cannot be written; nothing is.
    """
    written = 0
    db = store._db
    with store.transaction():
        for read, planned in changes:
            cursor = db.execute(
                _UPDATE,
                (
                    to_db(planned.next_attempt, "next_attempt"),
                    planned.interval,
                    planned.reason,
                    planned.url,
                    to_db(read.next_attempt, "next_attempt"),
                ),
            )
            written += max(cursor.rowcount, 0)
        db.execute(_KEEP, (key, value))
        if written:
            db.execute(_NEXT_GENERATION, (GENERATION_KEY,))
    return written
