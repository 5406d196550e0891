"""What both state backends share of the schema: the deliveries' outbox tables and the reading of
the stored schema version. :mod:`state.store` (SQLite) and :mod:`state.pgstate` (PostgreSQL) import
it; neither imports the other at load time.
"""

from __future__ import annotations

from typing import Any

from syndicator.errors import StoreError

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
