"""The due queue of the workers' shared PostgreSQL state: which sources claims consider, and which are due first.

A worker :func:`register` s its configured sources; each claim (:mod:`claims`,
which holds the leases and the lock that makes a claim exact) reads the head
of the queue with :func:`choose`. This module takes no lease and no lock.
PostgreSQL only; the table is pgstate's ``WORKER_MIGRATIONS``:

* ``source_hosts (source, host, tier, due, held)``: the host key of each
  registered source, and so the set of sources claims consider, and the
  **due queue**: the source's tier (0 never attempted, 1 healthy, 2
  failing), its ``next_attempt`` as a ``timestamptz`` (``-infinity`` when
  never attempted) and the failure kind of a hold, kept from ``sources``
  by a trigger (pgstate's ``syndicator_queue``) and indexed in claim order.
  A table rather than columns of ``sources``, whose columns must stay
  SQLite's: a state file carries ``SELECT *`` of ``sources`` from one
  backend to the other, and the store's SQL stays the same on both.

Due, and in which order, as :func:`schedule.due_sources` has it: a source
is due when its ``next_attempt`` (ISO 8601 text, compared as
``CAST(next_attempt AS timestamptz)``, never as text) is NULL or not after
``now``, and it is not on hold (410 Gone; :func:`schedule.on_hold`: ``hold``
set and its ``error_kind`` one that holds) unless the caller names it in
``lifted`` (its sites.yaml entry changed: :func:`schedule.is_due` with the
fingerprints). Never-attempted sources (no ``next_attempt``) come first,
then healthy ones, then failing ones, each group most overdue first, then
by URL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from typing import Any

from syndicator.errors import StoreError
from syndicator.failures import KINDS
from syndicator.state.store import GENERATION_KEY, Store

__all__ = ["DUE", "HOLDING_KINDS", "PAGE", "choose", "register", "transaction"]

#: The failure kinds that hold a source until its sites.yaml entry changes (schedule.on_hold).
HOLDING_KINDS = sorted(name for name, kind in KINDS.items() if kind.hold)


#: A source's place in the due queue (``source_hosts``' tier, due, held) from its ``sources s`` row, as
#: pgstate's trigger ``syndicator_queue`` keeps it: tier 0 never attempted, 1 healthy, 2 failing.
_QUEUED = (
    "CASE WHEN s.next_attempt IS NULL THEN 0 WHEN s.failures = 0 THEN 1 ELSE 2 END, "
    "COALESCE(CAST(s.next_attempt AS timestamptz), '-infinity'), "
    "CASE WHEN s.hold IS NOT NULL THEN COALESCE(s.error_kind, '') END"
)
#: Rows of the due queue read at a time.
PAGE = 200
#: One page of one tier of the due queue, in claim order (parameters: tier, now, hosts left out, holding kinds,
#: lifted URLs, then with _AFTER the last (due, source) read, then the page size).
_PAGE = """
SELECT q.source, q.host, CAST(q.due AS text) FROM source_hosts q
WHERE q.tier = ? AND q.due <= ? AND q.host <> ALL(CAST(? AS text[]))
  AND (q.held IS NULL OR q.held <> ALL(CAST(? AS text[])) OR q.source = ANY(CAST(? AS text[])))
  AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.source = q.source) {after}
ORDER BY q.due, q.source
LIMIT ?
"""
_AFTER = "AND (q.due, q.source) > (CAST(? AS timestamptz), ?)"
#: Due at ``now`` (parameters: now, holding kinds, lifted URLs), over ``sources s``.
DUE = (
    "(s.next_attempt IS NULL OR CAST(s.next_attempt AS timestamptz) <= ?) "
    "AND NOT (s.hold IS NOT NULL AND COALESCE(s.error_kind, '') = ANY(CAST(? AS text[])) "
    "AND s.url <> ALL(CAST(? AS text[])))"
)


def register(
    store: Store,
    sources: Iterable[tuple[str, str]],
    *,
    prune: bool = False,
    withdrawn: Callable[[int], None] | None = None,
) -> int:
    """Make every configured source one that claims consider, in one transaction.

    A source without a ``sources`` row gets one (``fetch_url`` = its URL, never
    attempted, so due at once); a stored source keeps its state. Each source's
    host is recorded (updated when it changed). Idempotent. Run it after a
    state file was restored into an empty database (``Store.load`` refuses a
    database that already has sources).

    Args:
        store: a PostgreSQL state (:meth:`Store.connect`).
        sources: (configured URL, host key of its fetch URL) pairs; for one URL
            given twice the last host wins.
        prune: also withdraw every other source from claims (its state is kept):
            the worker's configuration is the whole set.
        withdrawn: called with the number of sources ``prune`` withdrew, when there are some.
    Returns:
        how many ``sources`` rows were added (int).
    Raises:
        StoreError: the database failed.
    """
    db = store._db
    hosts = dict(sources)
    urls = sorted(hosts)  # one order for every worker: concurrent registrations do not deadlock
    with transaction(db):
        added = db.execute(
            "INSERT INTO sources (url, fetch_url) SELECT u, u FROM unnest(CAST(? AS text[])) AS t(u) "
            "ON CONFLICT (url) DO NOTHING RETURNING url",
            (urls,),
        ).fetchall()
        db.execute(
            f"INSERT INTO source_hosts (source, host, tier, due, held) "  # noqa: S608 - constants
            f"SELECT t.u, t.h, {_QUEUED} "
            "FROM unnest(CAST(? AS text[]), CAST(? AS text[])) AS t(u, h) JOIN sources s ON s.url = t.u "
            "ON CONFLICT (source) DO UPDATE SET host = excluded.host "
            "WHERE source_hosts.host <> excluded.host",
            (urls, [hosts[url] for url in urls]),
        )
        if prune:
            gone = db.execute("DELETE FROM source_hosts WHERE source <> ALL(CAST(? AS text[]))", (urls,)).rowcount
            if gone and withdrawn is not None:
                withdrawn(gone)
        if added:  # a new row is a write of the state (Store.generation)
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) "
                "DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)",
                (GENERATION_KEY,),
            )
    return len(added)


def choose(db: Any, now: datetime, limit: int, per_host: int, cap: int, lifted: list[str]) -> list[tuple[str, str]]:
    """The (source, host) pairs to claim: the head of the due queue, tier by tier, as hosts have room.

    A host has room for ``per_host`` minus its lease rows, and for at most
    ``cap`` in this call. A host without room, or whose ``next_start`` is
    after ``now``, is left out by the query itself, so the pages read never
    fill with the sources of a host that cannot take one.
    """
    room = {host: per_host - count for host, count in db.execute("SELECT host, COUNT(*) FROM leases GROUP BY host")}
    paced = {row[0] for row in db.execute("SELECT host FROM hosts WHERE next_start > ?", (now,))}
    taken: dict[str, int] = {}
    chosen: list[tuple[str, str]] = []
    for tier in (0, 1, 2):
        after: tuple[str, str] | None = None
        while True:
            out = sorted(
                paced
                | {host for host, left in room.items() if left <= 0}
                | {host for host, count in taken.items() if count >= cap}
            )
            rows = db.execute(
                _PAGE.format(after="" if after is None else _AFTER),
                (tier, now, out, HOLDING_KINDS, lifted, *(after or ()), PAGE),
            ).fetchall()
            for source, host, _due in rows:
                if host in out or room.get(host, per_host) <= 0 or taken.get(host, 0) >= cap:
                    continue
                chosen.append((source, host))
                room[host] = room.get(host, per_host) - 1
                taken[host] = taken.get(host, 0) + 1
                if len(chosen) == limit:
                    return chosen
            if len(rows) < PAGE:
                break
            after = (rows[-1][2], rows[-1][0])
    return chosen


@contextmanager
def transaction(db: Any) -> Iterator[None]:
    """BEGIN ... COMMIT on the autocommit connection (a register, a claim), ROLLBACK on any exception
    (a return inside commits)."""
    db.execute("BEGIN")
    try:
        yield
    except BaseException:
        with suppress(StoreError):  # the connection may be gone: the first error is the one to see
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
