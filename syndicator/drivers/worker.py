"""``syndicator worker``: one of many processes polling into one PostgreSQL state. The third driver.

Each turn a worker claims due sources with leases (:mod:`claims`: never
one source twice at once, ``per_host_concurrency`` and ``host_gap`` held
across every worker; the sources it registered, in :mod:`duequeue`'s
order), runs them through the build's pool
(``observe = fetch | parse``), and for each observation ``decide | store``
in one transaction, then releases its lease. A worker killed at any
moment (``kill -9`` included) loses nothing: what it stored is committed,
and the leases it held expire after ``--lease`` seconds, when another
worker takes those sources. A worker renders nothing: ``syndicator build
--state URL --no-fetch`` publishes the site from the shared state.

SIGTERM or SIGINT stops a worker after the fetches it runs (each bounded
by the fetch deadline); what they observed is stored and their leases
released.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from syndicator.config.union import poller_view
from syndicator.configtypes import Config, is_local
from syndicator.drivers.loaded import take_config
from syndicator.drivers.pipeline import delivery_loop, record_events
from syndicator.drivers.reloading import read_again
from syndicator.errors import ConfigError, StoreError
from syndicator.fetch.hosts import host_key
from syndicator.metrics import Metrics
from syndicator.poll import schedule
from syndicator.poll.path import POLICY_AGE, Poller, current_policy
from syndicator.state import claims, duequeue, pgstate
from syndicator.state.store import Store
from syndicator.urls import shown

__all__ = ["WorkerHealth", "WorkerOptions", "run_worker"]

log = logging.getLogger("syndicator")
lifecycle = logging.getLogger("syndicator.lifecycle")  # shown at info by default (cli.logs)
#: The longest a worker sleeps when nothing is due, seconds: how soon it sees new due sources or a stop.
IDLE = 1.0
#: The longest wait (seconds) between two attempts to connect to a state that failed.
RECONNECT_MAX = 60.0


@dataclass
class WorkerHealth:
    """What keeps a worker from working, for /healthz: None while all is well, else one line."""

    problem: str | None = None


@dataclass(frozen=True)
class WorkerOptions:
    """How to run one worker.

    Attributes:
        name: this worker's name in the leases (default: host name and process id).
        lease: seconds a claim holds before another worker may take it (default: twice the
            fetch deadline, at least 60 s).
        batch: sources claimed per turn (default: twice the workers).
        turns: stop after this many turns that claimed something (None: until stopped); for tests.
    """

    name: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    lease: float | None = None
    batch: int | None = None
    turns: int | None = None


def lease_seconds(config: Config, options: WorkerOptions) -> float:
    """The lease a claim takes (seconds): --lease, else twice the longest fetch's deadline (timeout x 2 per
    attempt, the longest timeout of the planet's and its sites'), >= 60."""
    if options.lease is not None:
        return options.lease
    return max(60.0, 2 * 2 * config.longest_timeout * (config.retries + 1))


def run_worker(
    config: Config,
    options: WorkerOptions,
    stopping: threading.Event,
    metrics: Metrics | None = None,
    health: WorkerHealth | None = None,
    reload: threading.Event | None = None,
) -> int:
    """Claim, fetch, store and release until ``stopping`` is set; returns the sources stored.

    ``metrics`` (served by ``worker --listen``) records each fetch as serve's do, and each claim's
    seconds, the sources claimed and the dead leases its claims ended; ``health`` says what is wrong
    (for /healthz). A state that fails for a reason that passes (the server restarting, the
    connection lost: :func:`pgstate.passing`) is connected to again (:func:`_reconnect`). When
    ``reload`` is set (SIGHUP), sites.yaml is read again before the next claim (:func:`_reload`).

    Raises:
        ConfigError: the state is not a PostgreSQL database.
        StoreError: the database cannot be used.
    """
    if config.state is None:
        raise ConfigError(
            "worker: workers share a PostgreSQL state: set state: postgresql://... in sites.yaml, "
            "--state or SYNDICATOR_STATE"
        )
    worker = _Worker(config, options, metrics, health)
    worker.say_started()
    turns = 0
    try:
        while not stopping.is_set():
            try:
                if reload is not None and reload.is_set():  # SIGHUP; pending until applied (a state down)
                    worker.reload()
                    reload.clear()
                now, held = worker.claim()
                if not held:
                    stopping.wait(IDLE)
                    continue
                worker.store_all(now, held)
                turns += 1
                if options.turns is not None and turns >= options.turns:
                    break
            except StoreError as error:  # the server restarting, the connection lost: connect again
                if not pgstate.passing(error):
                    raise
                if stopping.is_set() or not worker.reconnect(error, stopping):  # stopped meanwhile
                    break
    finally:
        worker.close()
    return worker.stored


class _Worker:
    """One worker's turns: what it holds between them (the state, its configuration, the fetcher, the
    policy and the delivery thread) and the steps of a turn: :meth:`claim`, then :meth:`store_all`.

    Raises (from every method but :meth:`close`):
        StoreError: the database failed.
    """

    def __init__(
        self, config: Config, options: WorkerOptions, metrics: Metrics | None, health: WorkerHealth | None
    ) -> None:
        self.config, self.options, self.metrics, self.health = config, options, metrics, health
        self.store = Store.connect(config.state or "")
        self.wanted, self.fingerprints = _offer(self.store, config, options.name)
        self.lease = lease_seconds(config, options)
        self.batch = options.batch or 2 * config.workers
        self.poller = Poller(poller_view(config))  # every planet's sites (config.union)
        deadline = max(self.poller.open().deadline, 2 * self.poller.config.longest_timeout)  # a site's own timeout too
        if self.lease < 2 * deadline:
            log.warning(
                "worker %s: --lease %g s is shorter than twice a fetch's deadline (%g s): a slow fetch can "
                "outlive its lease, and another worker fetch the same source",
                options.name,
                self.lease,
                deadline,
            )
        self.policy: tuple[float, Any] | None = None
        self.stored = 0
        self.loop = delivery_loop(None, config)

    def say_started(self) -> None:
        """The worker's start line: its name, the state (without its password), the feeds it offers, its
        threads, the per-host limits every worker holds, and its lease."""
        config = self.config
        lifecycle.info(
            "worker %s: started on %s: %d feeds, %d fetch threads, per host %d request%s at once and %g s "
            "apart, leases of %g s",
            self.options.name,
            shown(config.state or ""),
            len(self.wanted),
            config.workers,
            config.per_host_concurrency,
            "s" * (config.per_host_concurrency != 1),
            config.host_gap,
            self.lease,
        )

    def reload(self) -> None:
        """Apply sites.yaml read again (:func:`_reload`); a broken file changes nothing."""
        fresh = _reload(self.config, self.options.name)
        if fresh is not None:
            self.wanted, self.fingerprints = _offer(self.store, fresh, self.options.name)
            self.config, self.policy = fresh, None
            self.poller.reconfigure(poller_view(fresh))
            self.loop = delivery_loop(self.loop, fresh)

    def claim(self) -> tuple[datetime, list[claims.Claim]]:
        """(the database's clock, the leases taken): due sources claimed for this turn, the policy made
        again first when it is older than POLICY_AGE (it reads every state); the claims of sources this
        worker does not fetch (another worker's newer sites.yaml) are released at once."""
        config, name, metrics = self.config, self.options.name, self.metrics
        if self.policy is None or time.monotonic() - self.policy[0] > POLICY_AGE:
            now = claims.server_now(self.store)
            self.policy = current_policy(
                None, self.poller.config, self.store, self.store.states(), now, keep_ledger=False
            )
        now = claims.server_now(self.store)  # the database's clock: leases, due times and the next attempts
        clock = time.monotonic()
        expired = metrics.lease_expiries.inc if metrics is not None else None
        limits = (self.lease, config.per_host_concurrency, config.host_gap)
        held = claims.claim(self.store, name, now, self.batch, *limits, expired=expired)
        for stray in [c for c in held if c.source not in self.wanted]:
            claims.release(self.store, stray)
        held = [c for c in held if c.source in self.wanted]
        if metrics is not None:
            metrics.claim_seconds.observe(time.monotonic() - clock)
            metrics.claimed.inc(len(held))
            metrics.in_flight.set(len(held))
        return now, held

    def store_all(self, now: datetime, held: list[claims.Claim]) -> None:
        """Fetch the ``held`` sources through the host pool (``observe = fetch | parse``), ``decide | store``
        each observation and release its lease, renewing the others' (:func:`_renew`); then wake the
        delivery thread."""
        assert self.policy is not None  # made by claim()
        by_source = {claim.source: claim for claim in held}
        states = self.store.states_of(by_source)
        renewed = time.monotonic()
        polled = self.poller.poll(
            self.store, states, list(by_source), now, time.monotonic(), self.policy[1], self.fingerprints
        )
        for observation, decision in polled:
            source = observation.request.source
            claims.release(self.store, by_source.pop(source))
            if self.metrics is not None:
                self.metrics.fetched(observation, decision)
            self.stored += 1
            if by_source and time.monotonic() - renewed >= self.lease / 4:
                _renew(self.store, self.options.name, by_source, self.lease)
                renewed = time.monotonic()
        if self.loop is not None:
            self.loop.wake()

    def reconnect(self, error: StoreError, stopping: threading.Event) -> bool:
        """Connect to the state again (:func:`_reconnect`); False when ``stopping`` was set meanwhile."""
        fresh = _reconnect(self.config, self.store, error, self.options.name, stopping, self.health)
        if fresh is None:
            return False
        self.store, self.policy = fresh, None
        return True

    def close(self) -> None:
        """Stop the delivery thread (a POST under way is bounded by the timeout; unsent events wait in the
        outbox), close the fetcher's connections and the state."""
        if self.loop is not None:
            self.loop.stop(timeout=self.config.timeout + 2)
        self.poller.close()
        with suppress(Exception):  # closed already when a reconnection was stopped
            self.store.close()


def _renew(store: Store, name: str, by_source: dict[str, claims.Claim], lease: float) -> None:
    """Renew the leases of the sources still queued or being fetched. Called when a fetch ends and a
    quarter lease has passed since the last renewal: fetches end within their deadline, and a lease
    is at least twice that (the default; a shorter --lease is warned of), so the gap between two
    renewals stays under a lease and no lease of a live worker ends."""
    kept = claims.extend_all(store, by_source.values(), claims.server_now(store), lease)
    lost = sorted(set(by_source) - set(kept))
    if lost:
        log.warning(
            "worker %s: lost the lease on %d sources (%s...): the worker stalled longer than its lease; "
            "another worker may fetch them too",
            name,
            len(lost),
            lost[0],
        )
    by_source.update(kept)


def _offer(store: Store, config: Config, name: str) -> tuple[set[str], dict[str, Any]]:
    """Register ``config``'s feeds to fetch for claims (a paused site's are not), withdrawing the others
    (every worker reads the same sites.yaml: the last one to start or reload decides); returns (the
    feed URLs this worker fetches, the sites' fingerprints)."""
    record_events(store, config)
    take_config(store, config, f"worker {name}")
    polled = poller_view(config)
    sources = [url for url in polled.sources if not is_local(url)]
    if len(sources) < len(polled.sources):
        log.warning(
            "worker: local feed files are read by build, not by workers; %d skipped", len(polled.sources) - len(sources)
        )

    def withdrawn(count: int) -> None:
        log.warning(
            "worker %s: %d sources other workers registered are not in %s, or paused there, and are no "
            "longer offered to any worker (their state is kept); every worker must read the same sites.yaml",
            name,
            count,
            config.path,
        )

    added = duequeue.register(store, [(url, host_key(url)) for url in sources], prune=True, withdrawn=withdrawn)
    if added:
        log.info("worker %s: registered %d new sources", name, added)
    return set(sources), schedule.site_fingerprints(polled.sites)


def _reload(config: Config, name: str) -> Config | None:
    """Read sites.yaml again (SIGHUP) by the rule serve follows too (:func:`reloading.read_again`): the
    sites, their settings and the deliveries apply from the next claim; what :data:`config.load.KEPT_ON_RELOAD`
    names, the threads and --lease stay those the worker started with. Returns the new Config, or None for
    a broken file: one error line, and the running configuration stays."""
    fresh = read_again(config, {"workers": config.workers}, f"worker {name}")  # batches, leases sized by them
    if fresh is None:
        return None
    lifecycle.info("worker %s: read %s again: %d sites", name, config.path, len(fresh.sites))
    return fresh


def _reconnect(
    config: Config, store: Store, error: StoreError, name: str, stopping: threading.Event, health: WorkerHealth | None
) -> Store | None:
    """Close the failed ``store`` and connect to ``config.state`` again, waiting 1 s, then twice as long
    after each failure up to RECONNECT_MAX s; None when ``stopping`` is set meanwhile. /healthz says
    the state is unreachable until then. The leases held are left to expire (their observations were
    not all stored: another worker, or this one, fetches those sources again).

    Raises:
        StoreError: connecting failed for a reason that does not pass (a newer schema).
    """
    with suppress(Exception):  # the connection is likely gone already
        store.close()
    if health is not None:
        health.problem = f"the state is unreachable: {error}"
    log.warning("worker %s: %s; connecting again", name, error)
    pause = 1.0
    while not stopping.wait(pause):
        try:
            fresh = Store.connect(config.state or "")
        except StoreError as again:
            if not pgstate.passing(again):
                raise
            pause = min(2 * pause, RECONNECT_MAX)
            log.warning("worker %s: %s; trying again in %.0f s", name, again, pause)
            continue
        fresh.outbox = store.outbox
        if health is not None:
            health.problem = None
        lifecycle.info("worker %s: connected to the state again", name)
        return fresh
    return None


#: The largest request body the worker's /metrics and /healthz server reads (bytes): they take none.
METRICS_BODY = 65536


def metrics_server(listen: tuple[str, int] | None, stopping: threading.Event, health: Any) -> tuple[Any, Any]:
    """(Metrics, the waitress server serving them) for ``worker --listen``, or (None, None) without it.
    /healthz answers 503 while ``stopping`` is set or ``health.problem`` (a worker.WorkerHealth) says why.

    Raises:
        ConfigError: the address cannot be listened on.
    """
    if listen is None:
        return None, None
    from syndicator.metrics import metrics_app
    from syndicator.push.callbacks import listen as bind

    metrics = Metrics()

    def healthy() -> tuple[bool, str]:
        if stopping.is_set():
            return False, "stopping"
        return (False, health.problem) if health.problem else (True, "ok")

    server = bind(metrics_app(metrics, healthy), listen[0], listen[1], METRICS_BODY)  # serve's hardened server
    threading.Thread(target=server.run, name="http", daemon=True).start()
    return metrics, server
