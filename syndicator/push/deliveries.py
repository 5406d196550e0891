"""Deliveries: each new or changed entry POSTed, signed, to the webhooks of ``deliveries:`` (issue 13).

Commit before fan-out: when sites.yaml has ``deliveries``, a save (:func:`poll.path.save`)
writes one ``outbox`` event for each entry it stores that is new (a new id)
or changed (its content hash changed), and one pending ``deliveries`` row
for it per destination of the planets that publish it (:mod:`push.routes`:
a file of several planets sends each planet's webhooks its own filtered
view, and a URL named by several planets the event once), in the very
transaction that stores the entry. A crash before that commit loses all of them (the source is fetched
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
  body with the destination's secret (:func:`signature`);
* sent as every outbound request (:mod:`fetch.outbound`): through the proxy
  the environment names for the URL (``NO_PROXY`` heeded), trusting its CA bundle.

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
:data:`KEEP_DEAD` for ``status`` to show. The SQL that reads and writes the
outbox is :mod:`state.outbox`'s; the rules above are this module's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from syndicator.configtypes import Config
from syndicator.errors import StoreError
from syndicator.fetch import outbound
from syndicator.fetch.outbound import Session
from syndicator.push.routes import webhooks
from syndicator.state import outbox
from syndicator.state.store import Store

__all__ = [
    "ATTEMPTS",
    "KEEP_DEAD",
    "KEEP_DELIVERED",
    "DeliveryCounts",
    "DeliveryLoop",
    "backoff",
    "deliver_due",
    "idempotency_key",
    "make_session",
    "prune",
    "signature",
]

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
#: The delivery thread of serve and worker: the longest sleep between two looks at the outbox (seconds).
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


def make_session(config: Config) -> Session:
    """The webhooks' session (:func:`fetch.outbound.new_session`): the planet's User-Agent, the environment's
    CA bundle, no .netrc credentials, no cookie kept. Raises ConfigError: a CA bundle variable names no path."""
    return outbound.new_session(config.user_agent)


def deliver_due(
    store: Store,
    config: Config,
    now: datetime,
    session: Session,
    budget_seconds: float,
    stopping: Callable[[], bool] = lambda: False,
    clock: Callable[[], float] = time.monotonic,
) -> DeliveryCounts:
    """POST every due (event, destination) of ``store``'s outbox, within ``budget_seconds`` (the end of a build).

    See the module docstring for the body, headers, retries and dead letters.
    Each destination gets one POST at a time, in order of due time, and the
    destinations are served side by side (:class:`_Sender`: one thread each, at
    most :data:`BATCH` due deliveries each a run), so one that hangs holds back
    only its own events. No POST starts after the budget is spent or once
    ``stopping()`` is true; each ends within ``config.timeout`` (a total
    deadline: a destination answering a byte at a time is cut then). Nothing
    happens when no planet has ``deliveries`` (:func:`routes.webhooks`: every planet's, each URL once).

    Args:
        now: the clock (aware UTC): what is due, and the times recorded.
        session: the webhooks' session (:func:`make_session`).
    Returns:
        the DeliveryCounts.
    Raises:
        StoreError: the state cannot be read or written.
    """
    counts = DeliveryCounts()
    if not webhooks(config):
        return counts
    started = clock()
    sender = _Sender(store, config, session)
    try:
        sender.read(now)
        while True:
            if not stopping() and clock() - started < budget_seconds:
                sender.start(now, refill=False)
            if not sender.running:
                break
            wait(list(sender.running), return_when=FIRST_COMPLETED)
            sender.collect(now, counts)
        counts.left = sum(len(queue) for queue in sender.queues.values())
    finally:
        sender.close()
    return counts


class _Sender:
    """The POSTs under way, at most one per destination, each on a thread of its own; the state is read
    and written on the thread that owns the sender alone (a SQLite connection belongs to its thread).

    A destination is never waited for by another: :meth:`start` gives each
    destination with no POST under way its next due delivery, whatever the
    others are doing, and :meth:`collect` records the POSTs that ended.
    ``done`` is called (on the POST's thread) when one ends, to wake the owner.
    """

    def __init__(self, store: Store, config: Config, session: Session, done: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self.config = config
        self.session = session
        self.secrets = {d.url: d.secret for d in webhooks(config)}
        self.queues: dict[str, deque[tuple[Any, ...]]] = {url: deque() for url in self.secrets}
        self.running: dict[Future[str | None], tuple[Any, ...]] = {}
        self._done = done
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(self.secrets)), thread_name_prefix="delivery")

    def read(self, now: datetime, url: str | None = None) -> None:
        """Read the due deliveries (at most :data:`BATCH`) of ``url``, or of every destination, oldest first."""
        for each in [url] if url is not None else list(self.queues):
            self.queues[each].extend(outbox.due(self.store, each, now, BATCH))

    def start(self, now: datetime, refill: bool) -> None:
        """Start the next due POST of each destination that has none under way (``refill``: read its due
        deliveries again when none is left). Before its POST a delivery is claimed by moving its next
        try a lease ahead (a compare-and-set): another loop sharing the state leaves it alone."""
        busy = {row[1] for row in self.running.values()}
        lease = now + timedelta(seconds=max(60.0, 4 * self.config.timeout))
        for url, queue in self.queues.items():
            if url in busy:
                continue
            if not queue and refill:
                self.read(now, url)
            while queue:
                row = queue.popleft()
                outbox_id, _, _, next_try, source, entry_id, version, payload = row
                if not outbox.take(self.store, outbox_id, url, next_try, lease):
                    continue  # another loop took it
                body = str(payload).encode()
                key, signed = idempotency_key(source, entry_id, version), signature(self.secrets[url], body)
                headers = {"Content-Type": "application/json", "Idempotency-Key": key, "X-Syndicator-Signature": signed}
                future = self._pool.submit(_post, self.session, url, body, headers, self.config.timeout)
                self.running[future] = row
                future.add_done_callback(lambda _: self._done())
                break

    def collect(self, now: datetime, counts: DeliveryCounts) -> None:
        """Record the outcome of each POST that ended, in its own transaction (:func:`_record`)."""
        for future in [future for future in self.running if future.done()]:
            _record(self.store, self.running.pop(future), future.result(), now, counts)

    def close(self, wait_for_posts: bool = True) -> None:
        """Let the threads go (after the POSTs under way, each bounded by the timeout, if ``wait_for_posts``)."""
        self._pool.shutdown(wait=wait_for_posts)


def _record(store: Store, row: tuple[Any, ...], error: str | None, now: datetime, counts: DeliveryCounts) -> None:
    """Record the outcome of one POST (``error`` None: a 2xx) in its own transaction, and count it."""
    outbox_id, url, attempts, _, _, entry_id, _, _ = row
    tried = attempts + 1
    if error is None:
        outbox.delivered(store, outbox_id, url, tried, now)
        counts.delivered += 1
    elif tried >= ATTEMPTS:
        outbox.dead(store, outbox_id, url, tried, error)
        counts.dead += 1
        log.warning("delivery to %s of %s gave up after %d attempts: %s", url, entry_id, tried, error)
    else:
        retry = outbox.retry(store, outbox_id, url, tried, now + timedelta(seconds=backoff(tried)), error)
        counts.retrying += 1
        log.info("delivery to %s of %s failed (%s); tried again at %s", url, entry_id, error, retry)


def _post(session: Session, url: str, body: bytes, headers: dict[str, str], timeout: float) -> str | None:
    """POST ``body`` through :func:`fetch.outbound.post` (the environment's proxy for ``url``, its CA bundle);
    None for a 2xx answer, else what went wrong (one short line). ``timeout`` (seconds) bounds the whole
    POST, from name resolution to the status line and headers (a total deadline, as for a fetch), not only
    each wait: an answer trickling in a byte at a time is cut then. The body of the answer is not read."""
    try:
        answer = outbound.post(url, body, headers, timeout, session=session)
    except outbound.OutboundError as error:
        if error.kind == "deadline":
            return f"Timeout: no answer within {timeout:g} s"
        return f"{error.name}: {error.detail[:200]}"
    return None if 200 <= answer.status < 300 else f"HTTP {answer.status}"


def prune(store: Store, config: Config, now: datetime) -> int:
    """Delete the events no configured destination waits for any more, with their deliveries.

    An event written more than :data:`KEEP_DELIVERED` before ``now`` goes when each of its
    deliveries to a destination still in a planet's ``deliveries`` (:func:`routes.webhooks`) is delivered,
    or dead for more than :data:`KEEP_DEAD` (the deliveries of destinations removed from sites.yaml do not hold it).

    Returns:
        the number of events deleted (int).
    Raises:
        StoreError: the state cannot be written.
    """
    urls = [d.url for d in webhooks(config)]
    deleted = outbox.prune(store, urls, now - KEEP_DELIVERED, now - KEEP_DEAD)
    if deleted:
        log.info("deliveries: %d events older than %d days deleted from the outbox", deleted, KEEP_DELIVERED.days)
    return deleted


class DeliveryLoop:
    """The delivery thread of ``serve`` and ``worker``: a :class:`_Sender` on its own connection to the
    state (:meth:`store.Store.open_second`), woken by :meth:`wake` after stores, when a POST ends, and
    every :data:`LOOP_IDLE` seconds, so a slow webhook never slows polling.

    The destinations are independent: each wake starts the next due POST of every destination
    that has none under way, and never waits for the POSTs still running (one that hangs, or answers
    a byte at a time, holds only its own destination, for at most ``timeout`` seconds a POST).

    ``clock`` (aware UTC datetimes) says what is due and stamps what is recorded; by default a
    PostgreSQL state's server clock, else this machine's (:func:`outbox.clock`).
    """

    def __init__(self, config: Config, clock: Callable[[], datetime] | None = None) -> None:
        self.config = config
        self._clock = clock
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
        """Stop after the POSTs under way (each bounded by the config's timeout); wait at most ``timeout`` s."""
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        """Deliver until stopped. A state that fails (the server restarting, the connection lost) is
        opened again, after waits doubling from LOOP_IDLE to RECONNECT_MAX seconds; events wait meanwhile
        (a POST under way then is recorded by nobody: its lease ends and it is sent again, same key)."""
        store: Store | None = None
        sender: _Sender | None = None
        session = make_session(self.config)
        pruned = float("-inf")
        pause = LOOP_IDLE
        try:
            while not self._stopping.is_set():
                self._wake.clear()
                try:
                    if store is None or sender is None:
                        store = Store.open_second(self.config.cache, self.config.state)
                        sender = _Sender(store, self.config, session, self._wake.set)
                    now = self._clock() if self._clock is not None else outbox.clock(store)
                    sender.collect(now, DeliveryCounts())
                    sender.start(now, refill=True)
                    if time.monotonic() - pruned >= PRUNE_EVERY:
                        prune(store, self.config, now)
                        pruned = time.monotonic()
                    pause = LOOP_IDLE
                except StoreError as error:
                    log.warning("deliveries: %s; the state is opened again in %.0f s", error, pause)
                    store, sender = self._drop(store, sender)
                    self._stopping.wait(pause)
                    pause = min(2 * pause, RECONNECT_MAX)
                    continue
                except Exception as error:  # noqa: BLE001 - the thread goes on; polling never depends on it
                    log.warning("deliveries: %s", error)
                self._wake.wait(LOOP_IDLE)
            if store is not None and sender is not None:  # the POSTs under way end within the timeout
                wait(list(sender.running), timeout=self.config.timeout + 1)
                with suppress(StoreError):
                    sender.collect(self._clock() if self._clock is not None else outbox.clock(store), DeliveryCounts())
        finally:
            if sender is not None:
                sender.close(wait_for_posts=False)
            session.close()
            if store is not None:
                store.close()

    @staticmethod
    def _drop(store: Store | None, sender: _Sender | None) -> tuple[None, None]:
        """Let a failed state's connection and its sender go."""
        if sender is not None:
            sender.close(wait_for_posts=False)
        if store is not None:
            with suppress(Exception):  # the connection may be gone already
                store.close()
        return None, None
