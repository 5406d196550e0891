"""``syndicator serve``: the build's pipeline as one long-running process, with WebSub push.

One pipeline, two drivers: :mod:`pipeline` runs it once (``build``); this
module runs the same stages continuously::

    due queue | pool( observe = fetch | parse ) | decide | store ─┐
    hub ─► callback ─► inbox (push.sqlite) | parse | decide_push | store ─┤
                                               (debounced) select | render | publish | announce

Threads, and what each may touch:

* **the loop** (the thread that calls :meth:`Server.run`): the only writer
  of the feeds' state (:class:`store.Store`). It decides and stores every
  observation and notification, plans batches, re-reads sites.yaml when
  it changes (or on SIGHUP), and renders the site a moment after changes
  (:data:`rendering.RENDER_QUIET` seconds of quiet, at most :data:`rendering.RENDER_MAX_WAIT`
  after the first change).
* **the poller**: runs one batch of due sources at a time through the
  build's pool (:mod:`pool`: workers, per-host limits and pacing, the host
  breaker) and hands each observation to the loop.
* **the subscriber**: sends subscription, renewal and unsubscription
  requests to hubs (:mod:`push`: backoff, next hub, a breaker per hub).
* **the HTTP server** (waitress): the callbacks, ``/metrics`` and
  ``/healthz`` (:mod:`callbacks`); a notification is committed to the inbox
  before its 2xx and the loop is woken.

Polling stays the safety net (seed 003): a source whose push is healthy
is polled on a long heartbeat (``--heartbeat``, default the configured
``max_interval``); one whose push is late, whose lease nears its end or
whose hub fails is polled on its normal schedule (:func:`push.next_poll`).

A restart makes no burst: sources overdue at start are released at most
:func:`recovery_rate` a second, most overdue first. SIGTERM or SIGINT
stops cleanly: the HTTP server stops accepting and finishes the requests
it holds (their notifications are committed), fetches still running are
abandoned (their sources stay due), everything observed is stored, the
site is rendered if it changed, and the locks are released. ``serve``
holds the cache lock and the output lock for its whole life, so it and
``build`` never run on one cache at once.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from syndicator.configtypes import Config, is_local
from syndicator.drivers.buildlog import log_failure
from syndicator.drivers.pipeline import (
    check_folders,
    delivery_loop,
    restore,
)
from syndicator.drivers.reloading import Watch, read_again, same_places
from syndicator.drivers.rendering import Rendering
from syndicator.errors import ConfigError
from syndicator.fetch.hosts import host_key
from syndicator.metrics import Metrics
from syndicator.model import Observation, SourceState
from syndicator.poll import schedule
from syndicator.poll.path import current_policy, decide_and_store
from syndicator.poll.pool import HostPool, wait_first
from syndicator.push import subscriptions as push
from syndicator.push.callbacks import App, create_server
from syndicator.push.inbox import Inbox
from syndicator.push.subscriber import Subscriber
from syndicator.site.publish import output_lock
from syndicator.state.pushstate import PushState
from syndicator.state.store import Store

__all__ = ["ServeOptions", "Server", "recovery_rate"]

log = logging.getLogger("syndicator")

#: The longest the loop sleeps, seconds: how soon it notices a stop, a reload or a due source.
TICK = 1.0
#: A local feed file is read again when it changed, or after this many seconds.
LOCAL_RECHECK = 300.0
#: /healthz fails when the loop has not turned for this many seconds.
STALL = 60.0
#: At a stop, seconds to wait for notifications still being parsed (the others stay in the inbox).
DRAIN_PARSE = 10.0


def recovery_rate(workers: int) -> float:
    """Sources released a second at most after a restart (float): half the workers' worth.

    Seed 000: rebuild the due queue gradually during recovery instead of
    releasing the whole backlog at once.
    """
    return max(1.0, workers / 2)


@dataclass(frozen=True)
class ServeOptions:
    """How to run ``serve``.

    Attributes:
        host, port: where the HTTP server listens (port 0: any free port).
        public_url: the URL at which hubs reach that server (callbacks are
            ``<public_url>/websub/<token>``); None: no WebSub subscriptions.
        templates: a folder of templates overriding the bundled ones.
        heartbeat: seconds between polls of a source with healthy push
            (None: the config's ``max_interval``).
        overrides: settings given on the command line ({Config field: value}),
            applied again each time sites.yaml is read.
        clock: the current time (UTC); injectable for tests.
    """

    host: str = "127.0.0.1"
    port: int = 8080
    public_url: str | None = None
    templates: Path | None = None
    heartbeat: float | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))


class _Stopped(Exception):
    """Raised inside the pool's wait to abandon a batch when serve stops."""


class Server:
    """One ``syndicator serve`` process; see the module docstring.

    Use: ``Server(config, options).run()`` blocks until :meth:`stop`.
    :meth:`stop` and :meth:`reload` are safe from any thread and from
    signal handlers. ``address`` is the (host, port) listened on, once
    ``ready`` is set.
    """

    def __init__(self, config: Config, options: ServeOptions) -> None:
        self.config = config
        self.options = options
        self.metrics = Metrics()
        self.ready = threading.Event()
        self.address: tuple[str, int] | None = None
        self._events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._stopping = threading.Event()
        self._reload = threading.Event()
        self._batches: queue.Queue[list[Any] | None] = queue.Queue()
        self._beat = time.monotonic()
        self._in_flight: set[str] = set()
        self._release: dict[str, datetime] = {}
        self._local_seen: dict[str, tuple[int, int]] = {}
        self._rendering = Rendering(self.metrics, options.clock, options.templates)
        self._watch = Watch(config.path)
        self._fingerprints = schedule.site_fingerprints(config.sites)
        self._sources = frozenset(config.sources)
        self._policy: tuple[float, schedule.Policy] | None = None
        self._fetcher: Any = None
        self._throttled: dict[str, datetime] = {}
        self._states: dict[str, SourceState] = {}
        self._deliveries: Any = None  # deliveries.DeliveryLoop, with deliveries in sites.yaml
        self._http_started = False
        self._subscriber: Subscriber  # made by run(), with push.sqlite
        self._inbox: Inbox
        self._reconcile: dict[str, datetime] = {}  # {source: when to poll it to settle a doubtful notification}

    # --- control, from any thread ------------------------------------------------

    def stop(self) -> None:
        """Ask the process to stop cleanly (SIGTERM, SIGINT)."""
        self._stopping.set()
        self._events.put(("wake", None))

    def reload(self) -> None:
        """Ask for sites.yaml to be read again (SIGHUP)."""
        self._reload.set()
        self._events.put(("wake", None))

    def wake(self) -> None:
        """Wake the loop: a notification was stored."""
        self._events.put(("wake", None))

    def healthy(self) -> tuple[bool, str]:
        """(ok, one line) for /healthz: ok while the loop turns and is not stopping."""
        if self._stopping.is_set():
            return False, "stopping"
        stalled = time.monotonic() - self._beat
        if stalled > STALL:
            return False, f"the loop has not turned for {stalled:.0f} s"
        return True, "ok"

    # --- the loop ------------------------------------------------------------------

    def run(self) -> None:
        """Serve until :meth:`stop`; see the module docstring.

        Raises:
            CacheLockedError, OutputLockedError: a build or another serve holds the cache or the output.
            StoreError: the state cannot be used.
            ConfigError: the listen address cannot be bound.
        """
        config = self.config
        check_folders(config)
        with Store.open(config.cache, config.state) as store, output_lock(config.output):
            push_state = PushState.open(config.cache)
            try:
                server = self._listen(push_state)  # before the restore: a bad --listen is the one line said
                try:
                    if store.count("sources") == 0:
                        restore(config, store)
                    self._serve(store, push_state, server)
                finally:
                    if not self._http_started:  # never ran: closed from this thread (else _serve closed it)
                        server.close()
            finally:
                push_state.close()

    def _listen(self, push_state: PushState) -> Any:
        """Bind the HTTP server (waitress, not yet running) for the callbacks, /metrics and /healthz.

        Raises:
            ConfigError: the listen address cannot be bound or resolved.
        """
        config = self.config
        app = App(push_state, self.metrics, config.max_bytes, self.wake, self.healthy, self.options.clock)
        try:
            return create_server(app, self.options.host, self.options.port, config.max_bytes + 65536)
        except (OSError, ValueError) as error:  # ValueError: a host that is no address and resolves to none
            raise ConfigError(
                f"--listen {_address(self.options.host, self.options.port)}: cannot listen there "
                f"({getattr(error, 'strerror', None) or error})"
            ) from error

    def _serve(self, store: Store, push_state: PushState, server: Any) -> None:
        from syndicator.fetch.http import Fetcher

        config = self.config
        self.address = (str(server.effective_host), int(server.effective_port))
        http = threading.Thread(target=server.run, name="http", daemon=True)
        self._fetcher = Fetcher.for_config(config)
        poller = threading.Thread(target=self._poll_batches, name="poller", daemon=True)
        self._subscriber = Subscriber(
            push_state,
            self.options.public_url,
            self.options.clock,
            self.metrics,
            user_agent=config.user_agent,
            timeout=config.timeout,
            allow_private=self._fetcher.allow_private,
        )
        self._inbox = Inbox(push_state, self._subscriber, self.metrics, self.wake)
        subscriber = threading.Thread(
            target=self._subscriber.run, args=(self._stopping,), name="subscriber", daemon=True
        )
        states = self._states = store.states()
        now = self.options.clock()
        self._release = _recovery(
            config,
            {url: self._unexamined_due(url, state, now) for url, state in states.items()},
            now,
            recovery_rate(config.workers),
        )
        if self._release:
            last = max(self._release.values())
            log.info(
                "serve: %d sources were overdue; released over %.0f s, most overdue first",
                len(self._release),
                (last - now).total_seconds(),
            )
        self._subscriber.leave_removed(config.sources)
        self._subscriber.moved()
        http.start()
        self._http_started = True
        poller.start()
        subscriber.start()
        self._start_deliveries(store)
        self.ready.set()
        where = f"http://{_address(*self.address)}"
        log.warning(
            "serve: listening on %s (metrics at /metrics, health at /healthz); WebSub %s",
            where,
            f"callbacks at {self.options.public_url.rstrip('/')}/websub/"
            if self.options.public_url
            else "off (no --public-url)",
        )
        if states:
            self._rendering.outdated()  # publish what the state holds at once (sitekey skips a current site)
        try:
            while not self._stopping.is_set():
                self._turn(store, push_state, states)
        finally:
            self._stopping.set()  # also when the loop failed: the other threads end
            _close_http(server)  # no new connection; the requests held finish (their notifications are committed)
            server.task_dispatcher.shutdown(cancel_pending=False, timeout=10)
            self._batches.put(None)
            self._subscriber.wake()
            poller.join(timeout=5)  # it leaves a batch within 0.2 s; fetches still running are abandoned
            self._drain(store, push_state, states)
            if self._rendering.pending:
                self._rendering.render(self.config, store, states, final=True)
            subscriber.join(timeout=2)  # a request to a hub still waiting is abandoned: the subscription is kept
            if self._deliveries is not None:  # a POST under way is bounded by the timeout; unsent events wait
                self._deliveries.stop(timeout=config.timeout + 2)
            self._fetcher.close()
        log.warning("serve: stopped; the state is saved")

    def _turn(self, store: Store, push_state: PushState, states: dict[str, SourceState]) -> None:
        """One turn of the loop: wait for work, store what arrived, plan, render.

        Raises:
            StoreError: the state database was removed (the cache folder deleted) while serving.
        """
        self._beat = time.monotonic()
        timeout = self._rendering.wait(TICK)
        try:
            events = [self._events.get(timeout=timeout)]
        except queue.Empty:
            events = []
        while True:
            try:
                events.append(self._events.get_nowait())
            except queue.Empty:
                break
        now = self.options.clock()
        self._take_pushed(store, states, now)  # first: a poll that ran meanwhile finds the push stored
        for kind, value in events:
            if kind == "observation":
                self._stored(store, push_state, states, value, now)
            elif kind == "batch_done":
                self._in_flight -= set(value)
        if self._reload.is_set() or self._watch.changed(self.config):
            self._reload.clear()
            self._reread(store, push_state)
        self._subscriber.refresh()
        self._plan(store, states, now)
        self._update_gauges(now)
        if self._rendering.due():
            self._rendering.render(self.config, store, states)

    # --- polling -------------------------------------------------------------------

    def _plan(self, store: Store, states: dict[str, SourceState], now: datetime) -> None:
        """Hand the poller the sources due now, unless it still runs a batch."""
        if self._in_flight:
            self.metrics.queue_depth.set(len(self._due(states, now)))
            return
        due = self._due(states, now)
        self.metrics.queue_depth.set(len(due))
        if not due:
            return
        from syndicator.poll import observe

        self._policy = current_policy(self._policy, self.config, store, states, now, keep_ledger=True)
        jobs = [observe.job_for(url, self._examining(url, states.get(url))) for url in due]
        self._in_flight = set(due)
        for url in due:
            self._release.pop(url, None)
        self._batches.put([now, jobs])

    def _examining(self, url: str, state: SourceState | None) -> SourceState | None:
        """The state a job for ``url`` is made from: without validators and body hash when its document was
        never read for hubs (a 304, or a body equal to the stored one, is not parsed: :mod:`pushstate`)."""
        if state is None or self.options.public_url is None or url in self._subscriber.examined or is_local(url):
            return state
        return replace(state, etag=None, last_modified=None, validators_url=None, body_hash=None)

    def _unexamined_due(self, url: str, state: SourceState, now: datetime) -> SourceState:
        """``state``, due now when its document was never read for hubs and its last fetch succeeded
        (a failing source waits for its backoff): with --public-url, every feed is soon subscribed."""
        if (
            self.options.public_url is None
            or url in self._subscriber.examined
            or is_local(url)
            or state.error_kind is not None
            or state.next_attempt is None
            or state.next_attempt <= now
        ):
            return state
        return replace(state, next_attempt=now)

    def _due(self, states: Mapping[str, SourceState], now: datetime) -> list[str]:
        """The configured sources due now, with push, the recovery window and local files taken into account."""
        heartbeat = self.options.heartbeat or self.config.max_interval
        effective: dict[str, SourceState] = {}
        urls = []
        for url in self.config.sources:
            if url in self._in_flight:
                continue
            release = self._release.get(url)
            if release is not None and release > now:
                continue
            state = states.get(url)
            if is_local(url):
                if self._local_changed(url, state, now):
                    urls.append(url)
                continue
            urls.append(url)
            if state is not None:
                state = self._unexamined_due(url, state, now)
                subscription = self._subscriber.current.get(url)
                if subscription is not None:
                    state = replace(
                        state,
                        next_attempt=push.next_poll(state, subscription, now, heartbeat, self._subscriber.breakers),
                    )
                settle = self._reconcile.get(url)
                if settle is not None and (state.next_attempt is None or settle < state.next_attempt):
                    state = replace(state, next_attempt=settle)
                effective[url] = state
        local = [url for url in urls if is_local(url)]
        remote = schedule.due_sources([u for u in urls if not is_local(u)], effective, now, self._fingerprints)
        return local + remote

    def _local_changed(self, url: str, state: SourceState | None, now: datetime) -> bool:
        """True when a local feed file should be read: changed since last read, or not read for a while."""
        from syndicator.fetch.localfile import path_of

        try:
            info = os.stat(path_of(url))
            mark = (info.st_mtime_ns, info.st_size)
        except (OSError, ValueError):
            mark = (0, 0)
        if state is None or state.last_attempt is None or self._local_seen.get(url) != mark:
            self._local_seen[url] = mark
            return True
        return (now - state.last_attempt).total_seconds() >= LOCAL_RECHECK

    def _poll_batches(self) -> None:
        """The poller thread: run each batch through the pool, handing observations to the loop."""
        from syndicator.poll import observe

        while True:
            batch = self._batches.get()
            if batch is None or self._stopping.is_set():
                return
            now, jobs = batch
            pool: HostPool[observe.Job, Observation] = HostPool.for_config(self.config, wait=self._wait_or_stop)
            started = time.monotonic()
            try:
                for observation in observe.observe_all(pool, self._fetcher, jobs, now, started):
                    self._events.put(("observation", observation))
                    if self._stopping.is_set():
                        raise _Stopped
            except _Stopped:
                log.info("serve: stopping; fetches still running are abandoned (their sources stay due)")
            except Exception:  # a bug of ours: logged; the sources of the batch are planned again
                log.exception("serve: a batch of fetches failed")
            finally:
                self._events.put(("batch_done", [job.request.source for job in jobs]))

    def _wait_or_stop(self, futures: set[Future[Any]], timeout: float | None) -> set[Future[Any]]:
        """The pool's wait, in slices, raising _Stopped when serve stops."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._stopping.is_set():
                raise _Stopped
            left = 0.2 if deadline is None else min(0.2, max(0.0, deadline - time.monotonic()))
            done = wait_first(futures, left)
            if done or (deadline is not None and time.monotonic() >= deadline):
                return done

    def _stored(
        self,
        store: Store,
        push_state: PushState,
        states: dict[str, SourceState],
        observation: Observation,
        now: datetime,
    ) -> None:
        """decide | store one observation from the poller; learn the hubs it advertises."""
        source = observation.request.source
        if source not in self._sources:  # its site left sites.yaml while it was fetched
            return
        before = states.get(source) or SourceState(source, source)
        # sites.yaml read again while this batch was fetched drops the policy: made again from the new one
        self._policy = current_policy(self._policy, self.config, store, states, now, keep_ledger=True)
        self._reconcile.pop(source, None)
        known = self._subscriber.known(store, observation, now)
        observation, decision = decide_and_store(
            store, before, observation, now, self._policy[1], self._fingerprints.get(source)
        )
        states[source] = decision.state
        self.metrics.fetched(observation, decision)
        if self._deliveries is not None and decision.changed:
            self._deliveries.wake()
        log_failure(observation)
        if observation.verdict == "stop" and not is_local(source):
            wait = observation.retry_after or self.config.min_interval
            self._throttled[host_key(observation.request.url)] = now + timedelta(seconds=wait)
        if decision.changed:
            self._rendering.changed()
        elif decision.state.error_kind != before.error_kind or before.last_attempt is None:
            self._rendering.changed()  # the sites page shows the health
        if self.options.public_url and not is_local(source):
            self._subscriber.learn(before, observation, known, now)

    def _take_pushed(self, store: Store, states: dict[str, SourceState], now: datetime, wait: float = 0.0) -> None:
        """parse | decide_push | store the notifications in the inbox (:meth:`Inbox.take`), and act on each."""
        for pushed in self._inbox.take(store, states, self._sources, now, wait):
            if pushed.settle and pushed.source is not None:
                self._reconcile_soon(pushed.source, states, now)
            if pushed.changed:
                self._rendering.changed()

    def _reconcile_soon(self, source: str, states: Mapping[str, SourceState], now: datetime) -> None:
        """Poll ``source`` soon whatever push's health: at once, or ``min_interval`` after its last poll."""
        state = states.get(source)
        last = state.last_attempt if state is not None else None
        soon = now if last is None else max(now, last + timedelta(seconds=self.config.min_interval))
        self._reconcile[source] = min(soon, self._reconcile.get(source, soon))

    def _start_deliveries(self, store: Store) -> None:
        """Write events for the configured deliveries, and run the delivery thread for them (again when
        sites.yaml changed them; none without them)."""
        store.outbox = tuple(d.url for d in self.config.deliveries)
        self._deliveries = delivery_loop(self._deliveries, self.config)

    # --- sites.yaml ------------------------------------------------------------------

    def _reread(self, store: Store, push_state: PushState) -> None:
        """Read sites.yaml again; a broken or incompatible file is one error and the old one stays.

        Changed ``deliveries`` apply to the events stored from now on: the delivery thread starts,
        stops or is started again with the new destinations and secrets."""
        path = self.config.path
        self._watch.seen(path)
        config = read_again(self.config, self.options.overrides, "serve")
        if config is None:
            return
        if not same_places(config, self.config):
            log.error(
                "serve: %s: the output or cache folder changed; restart serve to use it (the previous "
                "configuration stays in use)",
                path,
            )
            return
        added = set(config.sources) - set(self.config.sources)
        removed = set(self.config.sources) - set(config.sources)
        self.config = config
        self._fingerprints = schedule.site_fingerprints(config.sites)
        self._sources = frozenset(config.sources)
        self._policy = None
        self._subscriber.leave_removed(config.sources)
        self._start_deliveries(store)
        self._rendering.changed()
        log.warning(
            "serve: read %s again: %d sites (feeds: %d added, %d removed)",
            path,
            len(config.sites),
            len(added),
            len(removed),
        )

    def _drain(self, store: Store, push_state: PushState, states: dict[str, SourceState]) -> None:
        """At a stop: store every observation already made and every notification already committed."""
        now = self.options.clock()
        while True:
            try:
                kind, value = self._events.get_nowait()
            except queue.Empty:
                break
            if kind == "observation":
                self._stored(store, push_state, states, value, now)
        self._take_pushed(store, states, now, wait=DRAIN_PARSE)
        self._inbox.close()

    def _update_gauges(self, now: datetime) -> None:
        subscriptions, breakers = self._subscriber.current, self._subscriber.breakers
        self.metrics.live_leases.set(sum(1 for s in subscriptions.values() if s.live(now)))
        self.metrics.push_healthy.set(
            sum(1 for url, s in subscriptions.items() if push.health(s, self._states.get(url), now, breakers)[0])
        )
        self.metrics.in_flight.set(len(self._in_flight))
        self.metrics.sources.set(len(self.config.sources))
        self._throttled = {host: until for host, until in self._throttled.items() if until > now}
        self.metrics.throttled_hosts.set(len(self._throttled))


def _recovery(config: Config, states: Mapping[str, SourceState], now: datetime, rate: float) -> dict[str, datetime]:
    """When each source overdue at start may go: at most ``rate`` a second, most overdue first.

    Returns:
        {URL: release time (UTC)}; empty when no more are overdue than can go at once.
    """
    overdue = [
        url
        for url in schedule.due_sources([u for u in config.sources if not is_local(u)], states, now)
        if url in states
    ]
    if len(overdue) <= config.workers:
        return {}
    return {url: now + timedelta(seconds=index / rate) for index, url in enumerate(overdue)}


def _close_http(server: Any) -> None:
    """Stop waitress accepting, from its own thread.

    Closed from another thread, its listening socket could vanish between
    the http thread listing the sockets and waiting on them. The close runs
    on the http thread instead (waitress's trigger), and waits at most 5 s.
    """
    closed = threading.Event()

    def close() -> None:
        try:
            server.close()
        finally:
            closed.set()

    server.trigger.pull_trigger(close)
    closed.wait(5)


def _address(host: str, port: int) -> str:
    """HOST:PORT, an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
