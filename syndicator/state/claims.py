"""Leases on due sources for many ``syndicator worker`` processes sharing one PostgreSQL state.

Seed 000: "A scheduler should claim due sources with a lease, allowing another
worker to recover work if the first worker fails", and "apply concurrency
and request-rate limits per host or registrable domain". A worker
registers its configured sources (:func:`duequeue.register`), :func:`claim` s a few due ones,
fetches them, stores each observation (``poll.path.decide_and_store``, which plans the next
attempt) and :func:`release` s the lease; while its sources wait in its
pool or are fetched, it renews their leases (:func:`extend_all`).
A worker that is killed simply stops renewing: once its leases expire the
next claim by anyone takes the sources over. :func:`held` lists the live
leases (status, metrics). Which sources are due, and in which order, is
:mod:`duequeue`'s (its ``source_hosts`` table). PostgreSQL only; the tables
are pgstate's ``WORKER_MIGRATIONS``:

* ``leases (source, host, worker, claimed, expires)``: one row per source
  being fetched; a row whose ``expires`` is not after ``now`` is dead;
* ``hosts (host, next_start)``: a host's earliest next claim (``host_gap``).

Exactness: the design choice
----------------------------
A claim is one transaction that takes **one transaction-scoped advisory
lock for every claim** (``pg_advisory_xact_lock(CLAIM_LOCK)``), then, in
order:

1. deletes every dead lease (``expires <= now``): a killed worker's leases
   end here, so a late :func:`extend` or :func:`release` by their old
   holder finds nothing (returns None / False) and cannot bring a lease back
   that this claim stopped counting;
2. chooses the due sources without a lease: it reads the head of the due
   queue tier by tier, in pages of :data:`PAGE` in claim order (an index
   range scan), leaving out in the query every host without room, and
   takes sources while their host has room: ``per_host`` minus its lease
   rows, at most one per host when ``host_gap`` > 0, none of a host whose
   ``next_start`` is after ``now``; the first ``limit`` in the order above;
3. locks those rows of ``sources`` with ``SELECT ... FOR UPDATE SKIP
   LOCKED`` (re-checking that they are still due): a row some transaction
   is writing right now (a late ``poll.path.save`` of a dead lease's holder) is
   skipped rather than handed out half-written, and the claim never waits
   on a row;
4. inserts the leases (``ON CONFLICT (source) DO NOTHING``: the primary key
   alone already forbids two holders of one source), and with ``host_gap``
   moves each claimed host's ``next_start`` to ``now + host_gap``.

Only claims add lease rows and they run one at a time, so the count each
one reads (a fresh READ COMMITTED snapshot taken after the lock) is exact:
no host ever has more than ``per_host`` lease rows, live or dead, and no
source two. :func:`release` and :func:`extend` only remove or renew rows,
so they take no lock. The lock waits at most :data:`LOCK_TIMEOUT` seconds
(then StoreError), and dies with a killed claimer's connection.

Why one lock and not per-host locks (``pg_advisory_xact_lock(hashtext(host))``
in a consistent order, with ``FOR UPDATE SKIP LOCKED`` on the candidates)?
They only pay when claims are long and mostly on different hosts, and a
claim is short: a few index reads plus two small writes. Measured (issue
13; a 2-core machine, the server local, limit 16 and a release after each
claim, 200 hosts; ``benchmarks/claims_bench.py``): a claim takes a median
3 ms at 10,000 sources all due, 7.5 ms at 100,000 all due and 3.5 ms at
100,000 with a tenth due; 17 ms when all 100,000 are on one host (the
index is read past its sources). The
first version, one statement that cast and ranked every due source with
a window, took 16 and 213 ms: the scan, not the lock, was the cost, and
at 100,000 feeds it held four workers to 91 fetches a second. Each lease
covers a fetch of a second or more, so a serialised claim of a few
milliseconds is far beyond what a fleet fetching politely needs. Per-host
locks would have every claimer either lock every host it might use (the
same serialisation whenever two claimers share hosts, the normal case
with a few big hosts) or try-lock hosts one by one and silently claim less
than it could, with a round trip per host and a deadlock discipline to
keep. One lock keeps the choice exact by construction.

Times are aware datetimes, stored as ``timestamptz`` and returned in UTC.
Exactness is relative to the ``now`` the callers pass, so they pass one
clock: the worker passes the database server's (``clock_timestamp()``,
:func:`server_now`, read at each claim and renewal), never its
own machine's. A worker whose clock ran five minutes fast once ended other
workers' live leases as dead and found sources due early (issue 31).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from syndicator.state.duequeue import DUE, HOLDING_KINDS, choose, transaction
from syndicator.state.store import Store

__all__ = [
    "CLAIM_LOCK",
    "LOCK_TIMEOUT",
    "Claim",
    "claim",
    "extend",
    "extend_all",
    "held",
    "release",
    "server_now",
]

#: The advisory lock key every claim takes (pgstate's schema lock is 7061; keys share one space per database).
CLAIM_LOCK = 7062
#: Seconds a claim waits for the claim lock before failing with StoreError (a claimer stuck mid-transaction).
LOCK_TIMEOUT = 30.0


@dataclass(frozen=True)
class Claim:
    """A lease on one source.

    Attributes:
        source: the configured feed URL.
        host: the host key of its fetch URL (:func:`hosts.host_key`).
        worker: who holds it.
        expires: UTC; after this another worker's claim may take it.
    """

    source: str
    host: str
    worker: str
    expires: datetime


def claim(
    store: Store,
    worker: str,
    now: datetime,
    limit: int,
    lease_seconds: float,
    per_host: int,
    host_gap: float = 0.0,
    lifted: Iterable[str] = (),
    expired: Callable[[int], None] | None = None,
) -> list[Claim]:
    """Claim up to ``limit`` due sources for ``worker``, in one transaction (see the module docstring).

    Args:
        store: a PostgreSQL state (:meth:`Store.connect`).
        worker: the claimer's name, unique among live workers (host, pid, a random part).
        now: the database server's clock (:func:`server_now`), an aware datetime.
        limit: most sources to claim; 0 or less claims none.
        lease_seconds: how long the leases last (> 0).
        per_host: most lease rows of one host across all workers (>= 1).
        host_gap: with > 0, seconds between two claims of one host (so at most one per call).
        lifted: held (410) sources whose hold no longer applies: their sites.yaml entry changed.
        expired: called with the number of dead leases this claim ended (metrics: lease expiries).
    Returns:
        the claims made, in the order of due sources (list of Claim).
    Raises:
        ValueError: a naive ``now``, ``lease_seconds`` <= 0, ``per_host`` < 1 or ``host_gap`` < 0.
        StoreError: the database failed, or the claim lock was not free within LOCK_TIMEOUT.
    """
    now = _utc(now)
    if lease_seconds <= 0 or per_host < 1 or host_gap < 0:
        raise ValueError(
            f"need lease_seconds > 0, per_host >= 1 and host_gap >= 0, not {lease_seconds}, {per_host}, {host_gap}"
        )
    if limit <= 0:
        return []
    db = store._db
    lifted = sorted(set(lifted))
    with transaction(db):
        db.execute(f"SET LOCAL lock_timeout = {int(LOCK_TIMEOUT * 1000)}")
        db.execute("SELECT pg_advisory_xact_lock(?)", (CLAIM_LOCK,))
        ended = db.execute("DELETE FROM leases WHERE expires <= ?", (now,)).rowcount
        if expired is not None and ended:
            expired(ended)
        chosen = choose(db, now, limit, per_host, 1 if host_gap > 0 else per_host, lifted)
        if not chosen:
            return []
        claims = _lease(db, worker, chosen, now, now + timedelta(seconds=lease_seconds), lifted)
        if host_gap > 0 and claims:
            db.execute(
                "INSERT INTO hosts (host, next_start) SELECT h, ? FROM unnest(CAST(? AS text[])) AS t(h) "
                "ON CONFLICT (host) DO UPDATE SET next_start = "
                "GREATEST(hosts.next_start, excluded.next_start)",
                (now + timedelta(seconds=host_gap), sorted({c.host for c in claims})),
            )
    return claims


def _lease(
    db: Any, worker: str, chosen: list[tuple[str, str]], now: datetime, expires: datetime, lifted: list[str]
) -> list[Claim]:
    """Steps 3 and 4 of a claim (the module docstring): lock the ``sources`` rows of the ``chosen``
    (source, host) pairs still due, skipping those another transaction is writing, and insert their
    leases, held by ``worker`` until ``expires``; returns the claims made, in the order of ``chosen``."""
    host_of = dict(chosen)
    locked = {
        row[0]
        for row in db.execute(
            f"SELECT s.url FROM sources s WHERE s.url = ANY(CAST(? AS text[])) AND {DUE} "  # noqa: S608 - constants
            "FOR UPDATE SKIP LOCKED",
            (list(host_of), now, HOLDING_KINDS, lifted),
        )
    }
    urls = [url for url, _host in chosen if url in locked]
    inserted = {
        row[0]
        for row in db.execute(
            "INSERT INTO leases (source, host, worker, claimed, expires) "
            "SELECT u, h, ?, ?, ? FROM unnest(CAST(? AS text[]), CAST(? AS text[])) AS t(u, h) "
            "ON CONFLICT (source) DO NOTHING RETURNING source",
            (worker, now, expires, urls, [host_of[url] for url in urls]),
        )
    }
    return [Claim(url, host_of[url], worker, expires) for url in urls if url in inserted]


def release(store: Store, claim: Claim) -> bool:
    """End a lease once its observation was stored, if ``claim.worker`` still holds it.

    Returns:
        True if the lease was released; False when it was not held by that
        worker any more (it expired and was taken over or ended by a claim).
    Raises:
        StoreError: the database failed.
    """
    rows = store._db.execute(
        "DELETE FROM leases WHERE source = ? AND worker = ? RETURNING source", (claim.source, claim.worker)
    ).fetchall()
    return bool(rows)


def extend(store: Store, claim: Claim, now: datetime, lease_seconds: float) -> Claim | None:
    """Renew a lease still held (a long fetch) to expire ``lease_seconds`` after ``now``.

    Returns:
        the renewed Claim (use it from now on), or None when the lease was lost:
        it is held by another worker, or has ended, or is dead at ``now``.
    Raises:
        ValueError: a naive ``now`` or ``lease_seconds`` <= 0.
        StoreError: the database failed.
    """
    return extend_all(store, [claim], now, lease_seconds).get(claim.source)


def extend_all(store: Store, held: Iterable[Claim], now: datetime, lease_seconds: float) -> dict[str, Claim]:
    """Renew, in one statement, every lease of ``held`` still held and live, to expire ``lease_seconds``
    after ``now`` (a worker's sources still queued or fetching).

    Returns:
        {source: renewed Claim} of the leases renewed; a source missing from it lost its lease.
    Raises:
        ValueError: a naive ``now`` or ``lease_seconds`` <= 0.
        StoreError: the database failed.
    """
    now = _utc(now)
    if lease_seconds <= 0:
        raise ValueError(f"need lease_seconds > 0, not {lease_seconds}")
    by_worker: dict[str, list[str]] = {}
    for lease in held:
        by_worker.setdefault(lease.worker, []).append(lease.source)
    expires = now + timedelta(seconds=lease_seconds)
    renewed: dict[str, Claim] = {}
    for worker, sources in by_worker.items():
        rows = store._db.execute(
            "UPDATE leases SET expires = ? WHERE worker = ? AND source = ANY(CAST(? AS text[])) "
            "AND expires > ? RETURNING source, host",
            (expires, worker, sources, now),
        ).fetchall()
        renewed.update((source, Claim(source, host, worker, expires)) for source, host in rows)
    return renewed


def held(store: Store, now: datetime) -> dict[str, Claim]:
    """The live leases at ``now``: {source: Claim}, for status and metrics."""
    rows = store._db.execute(
        "SELECT source, host, worker, expires FROM leases WHERE expires > ? ORDER BY source", (_utc(now),)
    )
    return {source: Claim(source, host, worker, expires.astimezone(UTC)) for source, host, worker, expires in rows}


def server_now(store: Store) -> datetime:
    """The database server's clock (aware UTC; ``clock_timestamp()``, :meth:`pgstate.Connection.now`), read
    at each call: the ``now`` of every claim, renewal and stored time of the workers sharing ``store``."""
    moment: datetime = store._db.now()
    return moment


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{moment.isoformat()}: a naive time; pass an aware UTC datetime")
    return moment.astimezone(UTC)
