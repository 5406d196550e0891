"""Deliveries: each new or changed entry POSTed, signed, to the webhooks of ``deliveries:`` (issue 13).

Commit before fan-out: when sites.yaml has ``deliveries``, :meth:`store.Store.save`
writes one ``outbox`` event for each entry it stores that is new (a new id)
or changed (its content hash changed), and one pending ``deliveries`` row
for it per configured destination, in the very transaction that stores the
entry. A crash before that commit loses all of them (the source is fetched
again); a crash after it loses nothing, since they wait in the outbox. A
destination added to sites.yaml gets the events stored after it, not the
backlog; one removed is no longer sent anything.

:func:`deliver_due` consumes them, apart from polling (a thread of ``serve``
and ``worker``, the end of a ``build``), POSTing each due one:

* the body is the event's stored JSON payload, byte for byte (source, id,
  title, link, date, version, kind), ``Content-Type: application/json``;
* ``Idempotency-Key``: :func:`idempotency_key`, the SHA-256 (hex) of the
  source, the entry id and its version (content hash): the same on every
  retry, and for one entry version at every destination;
* ``X-Syndicator-Signature: sha256=<hex>``: the HMAC-SHA256 of the exact
  body with the destination's secret (:func:`signature`).

A 2xx answer marks the pair delivered, in its own transaction right after
the answer; a delivered pair is never POSTed again. Anything else (another
status, a redirect, a timeout, no connection) is retried after
:func:`backoff` (60 s, doubling, at most 6 h); after :data:`ATTEMPTS`
attempts the pair is ``dead`` (a dead letter, counted by ``syndicator
status``). A crash between a 2xx and that commit delivers the event again,
with the same Idempotency-Key: that is what the key is for, so a receiver
can drop the duplicate. Before each POST the pair is claimed by moving its
next try a lease ahead (a compare-and-set), so two delivery loops sharing a
PostgreSQL state do not POST it at once, and a loop killed mid-POST tries
again after the lease.

:func:`prune` keeps the outbox from growing without end: an event is
deleted :data:`KEEP_DELIVERED` after it was written once no configured
destination still waits for it, and a dead letter is kept
:data:`KEEP_DEAD` for ``status`` to show.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from .errors import StoreError
from .model import Config
from .store import Store, outbox_time

__all__ = ["ATTEMPTS", "KEEP_DEAD", "KEEP_DELIVERED", "DeliveryCounts", "DeliveryLoop", "backoff", "deliver_due",
           "idempotency_key", "make_session", "prune", "signature", "totals"]

log = logging.getLogger("syndicator")
#: Attempts before a delivery is dead (a dead letter).
ATTEMPTS = 10
#: The first retry's wait (seconds), doubled after each failure, and its ceiling.
BACKOFF = 60.0
BACKOFF_MAX = 6 * 3600.0
#: Due deliveries of one destination read per run.
BATCH = 200
#: How long an event stays in the outbox after it was written once no destination waits for it, and how long
#: a dead letter is kept (status counts it meanwhile).
KEEP_DELIVERED = timedelta(days=7)
KEEP_DEAD = timedelta(days=30)
#: Seconds between two prunes of the outbox by the delivery thread.
PRUNE_EVERY = 3600.0
#: The time a build gives the deliveries after publishing (seconds); the rest waits for the next build.
BUILD_BUDGET = 10.0
#: The delivery thread of serve and worker: a round's time budget and the longest sleep between rounds (seconds).
LOOP_BUDGET = 30.0
LOOP_IDLE = 5.0
#: The longest wait (seconds) before the delivery thread opens a failed state again.
RECONNECT_MAX = 60.0


@dataclass
class DeliveryCounts:
    """What one :func:`deliver_due` did: POSTs answered 2xx, failed (to retry), failed for the last time
    (dead), and due deliveries left for the next run (out of time, or stopping)."""

    delivered: int = 0
    retrying: int = 0
    dead: int = 0
    left: int = 0


def idempotency_key(source: str, entry_id: str, version: str) -> str:
    """The ``Idempotency-Key`` of one entry version: the SHA-256 (hex) of the UTF-8 bytes of the compact
    JSON array ``["<source>","<entry id>","<version>"]`` (no spaces, non-ASCII characters as they are,
    as JavaScript's ``JSON.stringify`` writes it), unambiguous whatever characters the id holds."""
    text = json.dumps([source, entry_id, version], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def signature(secret: str, body: bytes) -> str:
    """The ``X-Syndicator-Signature`` of ``body``: ``sha256=`` and the hex HMAC-SHA256 keyed by ``secret``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def backoff(attempts: int) -> float:
    """Seconds before the next try after ``attempts`` failed ones (>= 1): 60, 120, 240, ... at most 6 h."""
    return float(min(BACKOFF * 2 ** min(attempts - 1, 30), BACKOFF_MAX))


def make_session(config: Config) -> Any:
    """A requests.Session for the webhooks: the planet's User-Agent, no .netrc or proxies from the environment."""
    import requests  # noqa: PLC0415 - here: a planet without deliveries never loads it

    session = requests.Session()
    session.trust_env = False
    session.headers["User-Agent"] = config.user_agent
    return session


def deliver_due(store: Store, config: Config, now: datetime, session: Any, budget_seconds: float,
                stopping: Callable[[], bool] = lambda: False,
                clock: Callable[[], float] = time.monotonic) -> DeliveryCounts:
    """POST every due (event, destination) of ``store``'s outbox, within ``budget_seconds``.

    See the module docstring for the body, headers, retries and dead letters.
    Each destination gets one POST at a time, in order of due time, and the
    destinations are served side by side (one thread each, at most
    :data:`BATCH` due deliveries each a run), so one that hangs holds back
    only its own events. No POST starts after the budget is spent or once
    ``stopping()`` is true; each is bounded by ``config.timeout``. Nothing
    happens without ``config.deliveries``.

    Args:
        now: the clock (aware UTC): what is due, and the times recorded.
        session: a requests.Session (:func:`make_session`).
    Returns:
        the DeliveryCounts.
    Raises:
        StoreError: the state cannot be read or written.
    """
    counts = DeliveryCounts()
    if not config.deliveries:
        return counts
    started = clock()
    db = store._db  # noqa: SLF001 - the outbox's SQL lives here, the tables in store.py
    secrets = {d.url: d.secret for d in config.deliveries}
    at = outbox_time(now)
    queues = {url: deque(db.execute(
        "SELECT d.outbox_id, d.url, d.attempts, d.next_try, o.source, o.entry_id, o.version, o.payload "
        "FROM deliveries d JOIN outbox o ON o.id = d.outbox_id "
        "WHERE d.state = 'pending' AND d.url = ? AND d.next_try <= ? "
        "ORDER BY d.next_try, d.outbox_id LIMIT ?", (url, at, BATCH)).fetchall()) for url in secrets}
    queues = {url: queue for url, queue in queues.items() if queue}
    if not queues:
        return counts
    lease = outbox_time(now + timedelta(seconds=max(60.0, 4 * config.timeout)))
    # One POST at a time per destination, the destinations side by side: one that hangs holds back only
    # its own events. The database is used on this thread alone.
    with ThreadPoolExecutor(max_workers=len(queues), thread_name_prefix="delivery") as pool:
        running: dict[Future[str | None], tuple[Any, ...]] = {}

        def start(url: str) -> None:
            queue = queues[url]
            while queue and not stopping() and clock() - started < budget_seconds:
                row = queue.popleft()
                outbox_id, _, _, next_try, source, entry_id, version, payload = row
                claimed = db.execute("UPDATE deliveries SET next_try = ? WHERE outbox_id = ? AND url = ? "
                                     "AND state = 'pending' AND next_try = ?", (lease, outbox_id, url, next_try))
                if claimed.rowcount != 1:
                    continue  # another loop took it
                body = str(payload).encode()
                running[pool.submit(_post, session, url, body, {
                    "Content-Type": "application/json",
                    "Idempotency-Key": idempotency_key(source, entry_id, version),
                    "X-Syndicator-Signature": signature(secrets[url], body),
                }, config.timeout)] = row
                return

        for url in queues:
            start(url)
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                row = running.pop(future)
                _record(db, row, future.result(), now, counts)
                start(row[1])
    counts.left = sum(len(queue) for queue in queues.values())
    return counts


def _record(db: Any, row: tuple[Any, ...], error: str | None, now: datetime, counts: DeliveryCounts) -> None:
    """Record the outcome of one POST (``error`` None: a 2xx) in its own transaction, and count it."""
    outbox_id, url, attempts, _, _, entry_id, _, _ = row
    tried = attempts + 1
    if error is None:
        db.execute("UPDATE deliveries SET state = 'delivered', attempts = ?, delivered_at = ?, last_error = NULL "
                   "WHERE outbox_id = ? AND url = ?", (tried, outbox_time(now), outbox_id, url))
        counts.delivered += 1
    elif tried >= ATTEMPTS:
        db.execute("UPDATE deliveries SET state = 'dead', attempts = ?, last_error = ? "
                   "WHERE outbox_id = ? AND url = ?", (tried, error, outbox_id, url))
        counts.dead += 1
        log.warning("delivery to %s of %s gave up after %d attempts: %s", url, entry_id, tried, error)
    else:
        retry = outbox_time(now + timedelta(seconds=backoff(tried)))
        db.execute("UPDATE deliveries SET attempts = ?, next_try = ?, last_error = ? "
                   "WHERE outbox_id = ? AND url = ?", (tried, retry, error, outbox_id, url))
        counts.retrying += 1
        log.info("delivery to %s of %s failed (%s); tried again at %s", url, entry_id, error, retry)


def _post(session: Any, url: str, body: bytes, headers: dict[str, str], timeout: float) -> str | None:
    """POST ``body``; None for a 2xx answer, else what went wrong (one short line)."""
    import requests  # noqa: PLC0415 - loaded already by make_session

    try:
        with session.post(url, data=body, headers=headers, timeout=timeout, allow_redirects=False,
                          stream=True) as response:
            if 200 <= response.status_code < 300:
                return None
            return f"HTTP {response.status_code}"
    except requests.RequestException as error:
        return f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"


def totals(store: Store, urls: Sequence[str]) -> dict[str, int]:
    """The deliveries to the destinations ``urls`` in each state: {"pending": n, "delivered": n, "dead": n}
    (0 for none). Those of a destination no longer listed are left out: they are never tried again."""
    found = {"pending": 0, "delivered": 0, "dead": 0}
    if urls:
        rows = store._db.execute(  # noqa: SLF001
            f"SELECT state, COUNT(*) FROM deliveries WHERE url IN ({', '.join('?' * len(urls))}) "  # noqa: S608
            "GROUP BY state", tuple(urls))
        found.update((str(state), int(count)) for state, count in rows)
    return found


def prune(store: Store, config: Config, now: datetime) -> int:
    """Delete the events no configured destination waits for any more, with their deliveries.

    An event written more than :data:`KEEP_DELIVERED` before ``now`` goes when each of its
    deliveries to a destination still in ``config.deliveries`` is delivered, or dead for more than
    :data:`KEEP_DEAD` (the deliveries of destinations removed from sites.yaml do not hold it).

    Returns:
        the number of events deleted (int).
    Raises:
        StoreError: the state cannot be written.
    """
    urls = [d.url for d in config.deliveries] or [""]  # no destination: nothing holds an event
    db = store._db  # noqa: SLF001 - the outbox's SQL lives here, the tables in store.py
    deleted = db.execute(
        "DELETE FROM outbox WHERE id IN (SELECT o.id FROM outbox o WHERE o.created < ? AND NOT EXISTS "  # noqa: S608
        f"(SELECT 1 FROM deliveries d WHERE d.outbox_id = o.id AND d.url IN ({', '.join('?' * len(urls))}) "
        "AND (d.state = 'pending' OR (d.state = 'dead' AND o.created > ?))))",
        (outbox_time(now - KEEP_DELIVERED), *urls, outbox_time(now - KEEP_DEAD))).rowcount
    if deleted:
        log.info("deliveries: %d events older than %d days deleted from the outbox", deleted, KEEP_DELIVERED.days)
    return int(deleted or 0)


class DeliveryLoop:
    """The delivery thread of ``serve`` and ``worker``: :func:`deliver_due` on its own connection to the
    state (:meth:`store.Store.open_second`), woken by :meth:`wake` after stores and every
    :data:`LOOP_IDLE` seconds, so a slow webhook never slows polling."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="deliveries", daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def wake(self) -> None:
        """Deliver soon (after a store that may have written events)."""
        self._wake.set()

    def stop(self, timeout: float) -> None:
        """Stop after the POST under way (each bounded by the config's timeout); wait at most ``timeout`` s."""
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        """Deliver until stopped. A state that fails (the server restarting, the connection lost) is
        opened again, after waits doubling from LOOP_IDLE to RECONNECT_MAX seconds; events wait meanwhile."""
        store: Store | None = None
        session = make_session(self.config)
        pruned = float("-inf")
        pause = LOOP_IDLE
        try:
            while not self._stopping.is_set():
                self._wake.clear()
                try:
                    if store is None:
                        store = Store.open_second(self.config.cache, self.config.state)
                    deliver_due(store, self.config, datetime.now(UTC), session, LOOP_BUDGET, self._stopping.is_set)
                    if time.monotonic() - pruned >= PRUNE_EVERY:
                        prune(store, self.config, datetime.now(UTC))
                        pruned = time.monotonic()
                    pause = LOOP_IDLE
                except StoreError as error:
                    log.warning("deliveries: %s; the state is opened again in %.0f s", error, pause)
                    if store is not None:
                        with suppress(Exception):  # the connection may be gone already
                            store.close()
                        store = None
                    self._stopping.wait(pause)
                    pause = min(2 * pause, RECONNECT_MAX)
                    continue
                except Exception as error:  # noqa: BLE001 - the thread goes on; polling never depends on it
                    log.warning("deliveries: %s", error)
                self._wake.wait(LOOP_IDLE)
        finally:
            session.close()
            if store is not None:
                store.close()
