"""The state in PostgreSQL: the store's SQL on a psycopg 3 connection (``state: postgresql://...``).

:class:`store.Store` is written in one dialect, SQLite's, with ``?``
parameters; the SQLite connection runs it as it is (no layer on the
build's hot path). For PostgreSQL, :class:`Connection` stands in for
``sqlite3.Connection`` with the few methods the store calls (``execute``,
``executemany``, ``close``) and rewrites each statement once (cached):

* ``?`` parameters become ``%s`` (and a literal ``%`` becomes ``%%``);
* ``json_extract(X, '$.key')`` becomes ``(X::json ->> 'key')``;
* ``BEGIN IMMEDIATE`` becomes ``BEGIN`` (PostgreSQL locks rows, not the file).

The schema (:data:`SCHEMA`) is the SQLite schema at
:data:`schema.SCHEMA_VERSION` 7 created at once; later versions add their
migration to both (:data:`MIGRATIONS`). That version number is the store's,
shared by both backends: it means the same ``sources``, ``entries``,
``seen`` and ``aliases`` tables in SQLite and here.

The tables of many workers sharing one database (:mod:`claims`: ``leases``,
``hosts``, ``source_hosts``) exist in PostgreSQL only, so they are not part
of that schema: they are versioned on their own, by the ``meta`` key
:data:`WORKER_VERSION_KEY`, with their migrations in
:data:`WORKER_MIGRATIONS`, applied on every connect after the store's (under
the same advisory lock). Not in :data:`MIGRATIONS` (a PostgreSQL-only
version 8 would collide with the store's own next version 8, and both
backends' "version 8" would then mean different tables); not in
:data:`SCHEMA` alone (it runs only on an empty database: a state created
before the workers would never get them). Being outside the store's tables
(:data:`store.TABLES`), they are neither dumped nor restored by a state
file: leases are transient coordination, not state. Errors of the server or the
connection become :class:`errors.StoreError` naming the database (without
its password). psycopg is imported only when a ``postgresql:`` state is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from syndicator.errors import StoreError
from syndicator.state.schema import OUTBOX_TABLES, stored_version
from syndicator.urls import is_postgres_url, secretless, shown

__all__ = [
    "MIGRATIONS",
    "SCHEMA",
    "WORKER_MIGRATIONS",
    "WORKER_VERSION_KEY",
    "Connection",
    "connect",
    "is_postgres_url",
    "passing",
    "shown",
]

#: The state's tables at schema version 7 (schema.SCHEMA_VERSION 7), as SQLite has them after its migrations.
SCHEMA = """
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
#: The schema version :data:`SCHEMA` creates, and the migrations after it: {version: statements}.
SCHEMA_VERSION = 7
MIGRATIONS: dict[int, str] = {
    # The deliveries' outbox (schema.SCHEMA_VERSION 8, the same tables as SQLite's; see schema.OUTBOX_TABLES).
    8: OUTBOX_TABLES.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY").replace(
        "outbox_id INTEGER", "outbox_id BIGINT"
    ),
}
#: The ``meta`` key holding the version of the workers' tables (independent of ``schema_version``).
WORKER_VERSION_KEY = "worker_schema_version"
#: The workers' tables (PostgreSQL only, see the module docstring and :mod:`claims`): {version: statements}.
#: ``source_hosts`` holds each claimable source's host key rather than a column of ``sources``, whose
#: columns must stay those of SQLite's (a state file moves ``SELECT *`` of it between the backends).
WORKER_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE IF NOT EXISTS source_hosts (
        source TEXT PRIMARY KEY REFERENCES sources(url) ON DELETE CASCADE,
        host TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS leases (
        source TEXT PRIMARY KEY REFERENCES sources(url) ON DELETE CASCADE,
        host TEXT NOT NULL,
        worker TEXT NOT NULL,
        claimed TIMESTAMPTZ NOT NULL,
        expires TIMESTAMPTZ NOT NULL
    );
    CREATE INDEX IF NOT EXISTS leases_host ON leases (host);
    CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY, next_start TIMESTAMPTZ)
    """,
    # The due queue claims walk (duequeue._PAGE): each source's tier, due time and hold kept beside its host,
    # in the order claims take them, by a trigger on ``sources`` (so the store's SQL stays portable), and
    # indexed: a claim reads the head of the queue instead of casting and sorting every due source.
    2: """
    ALTER TABLE source_hosts ADD COLUMN IF NOT EXISTS tier SMALLINT NOT NULL DEFAULT 0,
        ADD COLUMN IF NOT EXISTS due TIMESTAMPTZ NOT NULL DEFAULT '-infinity',
        ADD COLUMN IF NOT EXISTS held TEXT;
    UPDATE source_hosts q SET
        tier = CASE WHEN s.next_attempt IS NULL THEN 0 WHEN s.failures = 0 THEN 1 ELSE 2 END,
        due = COALESCE(CAST(s.next_attempt AS timestamptz), '-infinity'),
        held = CASE WHEN s.hold IS NOT NULL THEN COALESCE(s.error_kind, '') END
    FROM sources s WHERE s.url = q.source;
    CREATE INDEX IF NOT EXISTS source_hosts_queue ON source_hosts (tier, due, source);
    CREATE OR REPLACE FUNCTION syndicator_queue() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
        UPDATE source_hosts SET
            tier = CASE WHEN NEW.next_attempt IS NULL THEN 0 WHEN NEW.failures = 0 THEN 1 ELSE 2 END,
            due = COALESCE(CAST(NEW.next_attempt AS timestamptz), '-infinity'),
            held = CASE WHEN NEW.hold IS NOT NULL THEN COALESCE(NEW.error_kind, '') END
        WHERE source = NEW.url;
        RETURN NULL;
    END
    $body$;
    DROP TRIGGER IF EXISTS sources_queue ON sources;
    CREATE TRIGGER sources_queue AFTER UPDATE ON sources FOR EACH ROW
        WHEN (OLD.next_attempt IS DISTINCT FROM NEW.next_attempt OR OLD.failures IS DISTINCT FROM NEW.failures
              OR OLD.hold IS DISTINCT FROM NEW.hold OR OLD.error_kind IS DISTINCT FROM NEW.error_kind)
        EXECUTE FUNCTION syndicator_queue()
    """,
}
_JSON = re.compile(r"json_extract\(([\w.]+), '\$\.(\w+)'\)")


class Connection:
    """A psycopg connection with the part of ``sqlite3.Connection``'s interface the store uses.

    Autocommit: the store's own ``BEGIN`` ... ``COMMIT`` statements make the
    transactions. Raises StoreError for any database error.
    """

    def __init__(self, connection: Any, url: str) -> None:
        self._connection = connection
        self.url = url
        self._sql: dict[str, str] = {}

    def _rewrite(self, sql: str) -> str:
        cached = self._sql.get(sql)
        if cached is None:
            text = sql.replace("%", "%%").replace("?", "%s")
            text = _JSON.sub(r"(\1::json ->> '\2')", text)
            cached = self._sql[sql] = "BEGIN" if text.strip() == "BEGIN IMMEDIATE" else text
        return cached

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        """Run one statement; returns a cursor (iterable, fetchone, fetchall, description)."""
        import psycopg  # noqa: PLC0415 - loaded already by connect()

        try:
            return self._connection.execute(self._rewrite(sql), _text_safe(parameters), prepare=False)
        except psycopg.Error as error:
            raise StoreError(f"{shown(self.url)}: {secretless(_one_line(error), self.url)}") from error

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for each row."""
        import psycopg  # noqa: PLC0415

        rows = [_text_safe(row) for row in rows]
        if not rows:
            return
        try:
            with self._connection.cursor() as cursor:
                cursor.executemany(self._rewrite(sql), rows)
        except psycopg.Error as error:
            raise StoreError(f"{shown(self.url)}: {secretless(_one_line(error), self.url)}") from error

    def now(self) -> datetime:
        """The database server's clock (``clock_timestamp()``), an aware UTC datetime: the one clock every
        worker sharing this state reads for leases and due times, whatever its own machine's says.

        Raises:
            StoreError: the database failed.
        """
        moment: datetime = self.execute("SELECT clock_timestamp()").fetchone()[0]
        return moment.astimezone(UTC)

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()


def _text_safe(parameters: Iterable[Any]) -> tuple[Any, ...]:
    """The parameters with NUL characters dropped from strings: PostgreSQL's text cannot hold them
    (SQLite's can), and a server's header (an ETag, a Location) may carry one."""
    return tuple(
        value.replace("\x00", "") if isinstance(value, str) and "\x00" in value else value for value in parameters
    )


def passing(error: BaseException) -> bool:
    """True for a :class:`errors.StoreError` that passes: psycopg's OperationalError under it (the
    connection lost, the server restarting or unreachable, a lock or statement timeout, a deadlock),
    but not a limit of the server's exceeded (a value too large to index: it fails again).
    Connecting again later is the remedy; a newer schema or a broken statement is not such an error."""
    try:
        import psycopg  # noqa: PLC0415
    except ImportError:
        return False
    cause = error.__cause__
    return isinstance(cause, psycopg.OperationalError) and not isinstance(cause, psycopg.errors.ProgramLimitExceeded)


def connect(url: str) -> Connection:
    """Connect to the PostgreSQL database ``url`` and create or migrate the state's schema.

    Raises:
        StoreError: psycopg is not installed, the server cannot be reached or
            refuses us, or the schema is newer than this syndicator's.
    """
    try:
        import psycopg  # noqa: PLC0415 - here: SQLite states never load it
    except ImportError as error:
        raise StoreError(
            f"{shown(url)}: a PostgreSQL state needs psycopg: pip install 'syndicator[postgres]'"
        ) from error
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=15)
    except psycopg.Error as error:
        raise StoreError(f"{shown(url)}: cannot connect: {secretless(_one_line(error), url)}") from error
    connection = Connection(raw, url)
    try:
        _migrate(connection)
    except BaseException:
        connection.close()
        raise
    return connection


def _migrate(connection: Connection) -> None:
    """Create the schema, or apply the migrations after the stored version, then the workers' tables
    (:func:`_migrate_workers`), all in one transaction.

    Two workers starting at once: a transaction-scoped advisory lock makes the second wait for the first.
    """
    connection.execute("BEGIN")
    try:
        connection.execute("SELECT pg_advisory_xact_lock(7061)")  # any constant: the schema's own lock
        connection.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = stored_version(row, shown(connection.url))
        if version > max([SCHEMA_VERSION, *MIGRATIONS]):
            raise StoreError(
                f"{shown(connection.url)}: schema version {version} is newer than this syndicator "
                "understands; upgrade syndicator"
            )
        if version == 0:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    connection.execute(statement)
            version = SCHEMA_VERSION
        for target in sorted(v for v in MIGRATIONS if v > version):
            for statement in MIGRATIONS[target].split(";"):
                if statement.strip():
                    connection.execute(statement)
            version = target
        connection.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (str(version),),
        )
        _migrate_workers(connection)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def _migrate_workers(connection: Connection) -> None:
    """Create or migrate the workers' tables (:data:`WORKER_MIGRATIONS`), in the caller's transaction."""
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (WORKER_VERSION_KEY,)).fetchone()
    version = stored_version(row, shown(connection.url))
    if version > max(WORKER_MIGRATIONS):
        raise StoreError(
            f"{shown(connection.url)}: the workers' tables are at version {version}, newer than this "
            "syndicator understands; upgrade syndicator"
        )
    if version == max(WORKER_MIGRATIONS):
        return
    for target in sorted(v for v in WORKER_MIGRATIONS if v > version):
        for statement in _statements(WORKER_MIGRATIONS[target]):
            connection.execute(statement)
    connection.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (WORKER_VERSION_KEY, str(max(WORKER_MIGRATIONS))),
    )


def _statements(script: str) -> list[str]:
    """The statements of a migration: split at each ``;`` outside a ``$body$`` quoted function body."""
    statements: list[str] = []
    for number, part in enumerate(script.split("$body$")):
        if number % 2:  # inside a body: glued to the statement around it
            statements[-1] += f"$body${part}$body$"
            continue
        pieces = part.split(";")
        if statements and number:
            statements[-1] += pieces.pop(0)
        statements.extend(pieces)
    return [statement for statement in statements if statement.strip()]


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:300] or type(error).__name__
