"""The state in PostgreSQL: the store's SQL on a psycopg 3 connection (``state: postgresql://...``).

:class:`store.Store` is written in one dialect, SQLite's, with ``?``
parameters; the SQLite connection runs it as it is (no layer on the
build's hot path). For PostgreSQL, :class:`Connection` stands in for
``sqlite3.Connection`` with the few methods the store calls (``execute``,
``executemany``, ``close``) and rewrites each statement once (cached):

* ``?`` parameters become ``%s`` (and a literal ``%`` becomes ``%%``);
* ``json_extract(X, '$.key')`` becomes ``(X::json ->> 'key')``;
* ``BEGIN IMMEDIATE`` becomes ``BEGIN`` (PostgreSQL locks rows, not the file).

The schema is :mod:`schema`'s: the store's migrations in SQLite's dialect
(:data:`schema.MIGRATIONS`), replayed here through :func:`ddl`, which rewrites
their types where PostgreSQL needs its own (:data:`BIGINT_COLUMNS`, ``REAL``,
``AUTOINCREMENT``) and quotes the keyword ``interval``, by the one runner
(:func:`schema.migrate`) under an advisory lock (:data:`SCHEMA_LOCK`). The
version number is the store's, shared by both backends: it means the same
``sources``, ``entries``, ``seen``, ``aliases`` and outbox tables in SQLite
and here.

The tables of many workers sharing one database (:mod:`claims`: ``leases``,
``hosts``, ``source_hosts``) exist in PostgreSQL only, so they are not part
of that schema: they are versioned on their own, by the ``meta`` key
:data:`WORKER_VERSION_KEY`, with their migrations (PostgreSQL's dialect) in
:data:`WORKER_MIGRATIONS`, applied by the same runner on every connect after
the store's (under the same advisory lock). Not in :data:`schema.MIGRATIONS`
(a PostgreSQL-only version would collide with the store's own next version,
and both backends' "version N" would then mean different tables). Being
outside the store's tables (:data:`store.TABLES`), they are neither dumped
nor restored by a state file: leases are transient coordination, not state.

Errors of the server or the connection become :class:`errors.StoreError`
naming the database (without its password). psycopg is imported only when a
``postgresql:`` state is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from syndicator.errors import StoreError
from syndicator.state.schema import migrate
from syndicator.urls import is_postgres_url, secretless, shown

__all__ = [
    "BIGINT_COLUMNS",
    "SCHEMA_LOCK",
    "WORKER_MIGRATIONS",
    "WORKER_VERSION_KEY",
    "Connection",
    "connect",
    "ddl",
    "is_postgres_url",
    "passing",
    "shown",
]

#: The advisory lock the migrations take (any constant: the schema's own; claims.CLAIM_LOCK is another).
SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(7061)"
#: The ``INTEGER`` columns of :data:`schema.MIGRATIONS` that are ``BIGINT`` here: a body's size in bytes
#: (past 2 GiB) and the outbox's id a delivery refers to (``BIGSERIAL``). The others stay ``INTEGER``.
BIGINT_COLUMNS = ("body_size", "outbox_id")
#: SQLite's DDL in PostgreSQL's words: (pattern, replacement), applied in order by :func:`ddl`.
_DDL = (
    (re.compile(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b"), "BIGSERIAL PRIMARY KEY"),
    (re.compile(rf"\b({'|'.join(BIGINT_COLUMNS)}) INTEGER\b"), r"\1 BIGINT"),
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\binterval\b"), '"interval"'),  # a keyword of PostgreSQL's (a type), quoted as a column
)
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


def ddl(statement: str) -> str:
    """A statement of :data:`schema.MIGRATIONS` (SQLite's DDL) as PostgreSQL runs it: ``INTEGER PRIMARY
    KEY AUTOINCREMENT`` becomes ``BIGSERIAL PRIMARY KEY``, the :data:`BIGINT_COLUMNS` ``BIGINT``,
    ``REAL`` ``DOUBLE PRECISION``, and the column ``interval`` is quoted. Anything else is kept (the
    query rewrites of :class:`Connection`, ``?`` and ``json_extract``, still apply when it runs)."""
    for pattern, replacement in _DDL:
        statement = pattern.sub(replacement, statement)
    return statement


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
        migrate(connection, shown(url), SCHEMA_LOCK, dialect=ddl)
        migrate(connection, shown(url), SCHEMA_LOCK, key=WORKER_VERSION_KEY, migrations=WORKER_MIGRATIONS)
    except BaseException:
        connection.close()
        raise
    return connection


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:300] or type(error).__name__
