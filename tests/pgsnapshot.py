"""PostgreSQL states as syndicator made them before one schema served both backends, for the tests.

Until then PostgreSQL did not replay the store's migrations: an empty database got :data:`SNAPSHOT_7`,
the tables of schema version 7 created at once (pgstate's ``SCHEMA``, copied here as it was), then the
later migrations in PostgreSQL's words (:data:`OUTBOX_8`, version 8), then the workers' tables
(pgstate's ``WORKER_MIGRATIONS``, unchanged since). :func:`make_old_state` makes such a database, so the
tests can hold the replay to it: the same tables, and a state of it opens and needs nothing.
"""

from __future__ import annotations

import psycopg

from syndicator.state.pgstate import WORKER_MIGRATIONS, WORKER_VERSION_KEY
from syndicator.state.schema import statements

#: The state's tables at schema version 7, as pgstate's ``SCHEMA`` created them.
SNAPSHOT_7 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (
    url TEXT PRIMARY KEY,
    fetch_url TEXT NOT NULL,
    etag TEXT,
    last_modified TEXT,
    validators_url TEXT,
    body_hash TEXT,
    body_size BIGINT,
    title TEXT,
    link TEXT,
    last_attempt TEXT,
    last_success TEXT,
    last_change TEXT,
    failures INTEGER NOT NULL DEFAULT 0,
    error_kind TEXT,
    error_message TEXT,
    next_attempt TEXT,
    "interval" DOUBLE PRECISION,
    reason TEXT,
    history TEXT,
    hints TEXT,
    hold TEXT,
    snapshot_hash TEXT,
    failed_body_hash TEXT,
    failed_body_kind TEXT,
    failed_body_message TEXT,
    discovered TEXT,
    habits TEXT
);
CREATE TABLE IF NOT EXISTS entries (
    source TEXT NOT NULL REFERENCES sources(url) ON DELETE CASCADE,
    id TEXT NOT NULL,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (source, id)
);
CREATE TABLE IF NOT EXISTS seen (
    source TEXT NOT NULL,
    id TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    content_hash TEXT,
    changed TEXT,
    first_date TEXT,
    PRIMARY KEY (source, id)
);
CREATE TABLE IF NOT EXISTS aliases (
    source TEXT NOT NULL,
    key TEXT NOT NULL,
    id TEXT NOT NULL,
    PRIMARY KEY (source, key)
)
"""
#: Migration 8 as pgstate's ``MIGRATIONS`` had it: schema.OUTBOX_TABLES with BIGSERIAL and BIGINT.
OUTBOX_8 = """
    CREATE TABLE IF NOT EXISTS outbox (
        id BIGSERIAL PRIMARY KEY,
        source TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        version TEXT NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        created TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS deliveries (
        outbox_id BIGINT NOT NULL REFERENCES outbox(id) ON DELETE CASCADE,
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


def make_old_state(url: str, version: int = 8, workers: bool = True) -> None:
    """Make, in the empty database ``url``, the state the code before the replay made: the snapshot
    of version 7, then for ``version`` 8 the outbox, and with ``workers`` the workers' tables (their
    last version), with the versions in ``meta`` as that code recorded them."""
    assert version in (7, 8)
    scripts = [SNAPSHOT_7] + ([OUTBOX_8] if version == 8 else [])
    versions = {"schema_version": str(version)}
    if workers:
        scripts += [WORKER_MIGRATIONS[n] for n in sorted(WORKER_MIGRATIONS)]
        versions[WORKER_VERSION_KEY] = str(max(WORKER_MIGRATIONS))
    with psycopg.connect(url, autocommit=True) as db:
        for script in scripts:
            for statement in statements(script):
                db.execute(statement)
        for key, value in versions.items():
            db.execute("INSERT INTO meta (key, value) VALUES (%s, %s)", (key, value))
