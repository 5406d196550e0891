"""``syndicator serve``: the build's pipeline as one long-running process, with WebSub push.

One pipeline, two drivers: :mod:`pipeline` runs it once (``build``); this
module runs the same stages continuously::

    due queue | pool( observe = fetch | parse ) | decide | store ─┐
    hub ─► callback ─► inbox (push.sqlite) | parse | decide_push | store ─┤
                                               (debounced) select | render | publish | announce

Threads, and what each may touch:

* **the loop** (the thread that calls :meth:`Server.run`): the only writer
  of the feeds' state (:class:`store.Store`). It decides and stores every
  observation and notification (:mod:`push.inbox`), plans batches
  (:mod:`planner`: push's health, a restart without a burst), reads
  sites.yaml again when it changes or on SIGHUP (:mod:`reloading`), and
  renders the site a moment after changes (:mod:`rendering`).
* **the poller** (:mod:`poller`): runs one batch of due sources at a time
  through the build's pool and hands each observation to the loop.
* **the subscriber** (:mod:`push.subscriber`): sends subscription, renewal
  and unsubscription requests to hubs.
* **the parser** (:mod:`push.inbox`): parses the notifications' bodies, off
  the loop.
* **the HTTP server** (waitress): the callbacks, ``/metrics`` and
  ``/healthz`` (:mod:`callbacks`); a notification is committed to the inbox
  before its 2xx and the loop is woken.

SIGTERM or SIGINT stops cleanly: the HTTP server stops accepting and
finishes the requests it holds (their notifications are committed),
fetches still running are abandoned (their sources stay due), everything
observed is stored, the site is rendered if it changed, and the locks are
released. ``serve`` holds the cache lock and every planet's output lock
(each planet rendered when its view changes) for its whole life, so it and
``build`` never run on one cache at once.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from syndicator.config.union import planet_figures, poller_view
from syndicator.configtypes import Config, is_local
from syndicator.drivers.buildlog import log_failure
from syndicator.drivers.loaded import take_config
from syndicator.drivers.pipeline import delivery_loop, record_events
from syndicator.drivers.planets import check_planets, planet_locks
from syndicator.drivers.planner import Planner
from syndicator.drivers.poller import BatchPoller
from syndicator.drivers.reloading import Watch
from syndicator.drivers.rendering import Rendering
from syndicator.drivers.restore import restore
from syndicator.metrics import Metrics
from syndicator.model import Observation, SourceState
from syndicator.poll.path import decide_and_store
from syndicator.push.callbacks import App, address, listen, stop_server
from syndicator.push.inbox import Inbox
from syndicator.push.subscriber import Subscriber
from syndicator.state.pushstate import PushState
from syndicator.state.store import Store

__all__ = ["ServeOptions", "Server"]

log = logging.getLogger("syndicator")
lifecycle = logging.getLogger("syndicator.lifecycle")  # shown at info by default (cli.logs)

#: The longest the loop sleeps, seconds: how soon it notices a stop, a reload or a due source.
TICK = 1.0
#: /healthz fails when the loop has not turned for this many seconds.
STALL = 60.0
#: At a stop, seconds to wait for notifications still being parsed (the others stay in the inbox).
DRAIN_PARSE = 10.0


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


class Server:
    """One ``syndicator serve`` process; see the module docstring.

    Use: ``Server(config, options).run()`` blocks until :meth:`stop`.
    :meth:`stop` and :meth:`reload` are safe from any thread and from
    signal handlers. ``address`` is the (host, port) listened on, once
    ``ready`` is set.
    """

    def __init__(self, config: Config, options: ServeOptions) -> None:
        self.config, self.polled = config, poller_view(config)  # polled: every planet's sites (config.union)
        self.options = options
        self.metrics = Metrics()
        self.metrics.set_planets(*planet_figures(config))  # they change with sites.yaml only
        self.ready = threading.Event()
        self.address: tuple[str, int] | None = None
        self._events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._stopping = threading.Event()
        self._reload = threading.Event()
        self._beat = time.monotonic()
        self._rendering = Rendering(self.metrics, options.clock, options.templates)
        self._watch = Watch(config.path)
        self._states: dict[str, SourceState] = {}
        self._deliveries: Any = None  # deliveries.DeliveryLoop, with deliveries in sites.yaml
        self._http_started = False
        self._subscriber: Subscriber  # these three are made by _serve, with push.sqlite (_parts)
        self._inbox: Inbox
        self._planner: Planner
        self._poller: BatchPoller  # made by _serve

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

    # --- start and stop --------------------------------------------------------------

    def run(self) -> None:
        """Serve until :meth:`stop`; see the module docstring.

        Raises:
            CacheLockedError, OutputLockedError: a build or another serve holds the cache or the output.
            StoreError: the state cannot be used.
            ConfigError: the listen address cannot be bound.
        """
        config = self.config
        check_planets(config, self.options.templates)  # every planet's folders, before the state is opened
        with Store.open(config.cache, config.state) as store, planet_locks(config):
            push_state = PushState.open(config.cache)
            try:
                server = self._listen(push_state)  # before the restore: a bad --listen is the one line said
                try:
                    if store.count("sources") == 0:
                        restore(config, store)
                    take_config(store, config, "serve")
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
        return listen(app, self.options.host, self.options.port, config.max_bytes + 65536)

    def _serve(self, store: Store, push_state: PushState, server: Any) -> None:
        """Start the threads, turn the loop until a stop, then stop them (:meth:`_shut_down`)."""
        self.address = (str(server.effective_host), int(server.effective_port))
        http = threading.Thread(target=server.run, name="http", daemon=True)
        self._poller = BatchPoller(self.polled, self._events, self._stopping)
        poller = self._poller.thread()
        self._parts(push_state)
        subscriber = self._subscriber.thread(self._stopping)
        states = self._states = store.states()
        self._planner.recover(states, self.options.clock())
        self._subscriber.leave_removed(self.polled.sources)
        self._subscriber.moved()
        http.start()
        self._http_started = True
        poller.start()
        subscriber.start()
        self._start_deliveries(store)
        self.ready.set()
        self._log_listening()
        if states:
            self._rendering.outdated()  # publish what the state holds at once (sitekey skips a current site)
        try:
            while not self._stopping.is_set():
                self._turn(store, states)
        finally:
            self._shut_down(store, states, server, poller, subscriber)
        lifecycle.info("serve: stopped; the state is saved")

    def _parts(self, push_state: PushState) -> None:
        """Make the loop's parts that read push.sqlite: the subscriber, the inbox, and the planner (which
        plans with the subscriptions' health)."""
        config = self.polled
        options = self.options
        allow_private = config.allow_private_networks  # kept on a reload (config.load.KEPT_ON_RELOAD)
        self._subscriber = Subscriber(
            push_state, config, options.public_url, options.clock, self.metrics, allow_private
        )
        self._inbox = Inbox(push_state, self._subscriber, self.metrics, self.wake)
        self._planner = Planner(config, options.heartbeat, self._subscriber, self.metrics)

    def _log_listening(self) -> None:
        """The one line saying where serve listens and whether WebSub is on."""
        assert self.address is not None
        lifecycle.info(
            "serve: listening on %s (metrics at /metrics, health at /healthz); WebSub %s",
            f"http://{address(*self.address)}",
            f"callbacks at {self.options.public_url.rstrip('/')}/websub/"
            if self.options.public_url
            else "off (no --public-url)",
        )

    def _shut_down(
        self,
        store: Store,
        states: dict[str, SourceState],
        server: Any,
        poller: threading.Thread,
        subscriber: threading.Thread,
    ) -> None:
        """Stop the other threads, storing and publishing what they hold (also when the loop failed)."""
        self._stopping.set()  # the other threads end
        stop_server(server)  # no new connection; the requests held finish (their notifications are committed)
        self._poller.stop()
        self._subscriber.wake()
        poller.join(timeout=5)  # it leaves a batch within 0.2 s; fetches still running are abandoned
        self._drain(store, states)
        if self._rendering.pending:
            self._rendering.render(self.config, store, states, final=True)
        subscriber.join(timeout=2)  # a request to a hub still waiting is abandoned: the subscription is kept
        if self._deliveries is not None:  # a POST under way is bounded by the timeout; unsent events wait
            self._deliveries.stop(timeout=self.config.timeout + 2)
        self._poller.close()

    def _drain(self, store: Store, states: dict[str, SourceState]) -> None:
        """At a stop: store every observation already made and every notification already committed."""
        now = self.options.clock()
        for kind, value in self._wait(0.0):
            if kind == "observation":
                self._stored(store, states, value, now)
        self._take_pushed(store, states, now, wait=DRAIN_PARSE)
        self._inbox.close()

    # --- the loop ------------------------------------------------------------------

    def _turn(self, store: Store, states: dict[str, SourceState]) -> None:
        """One turn of the loop: wait for work, store what arrived, plan, render.

        Raises:
            StoreError: the state database was removed (the cache folder deleted) while serving.
        """
        self._beat = time.monotonic()
        events = self._wait(self._rendering.until_due(TICK))
        now = self.options.clock()
        self._take_pushed(store, states, now)  # first: a poll that ran meanwhile finds the push stored
        for kind, value in events:
            if kind == "observation":
                self._stored(store, states, value, now)
            elif kind == "batch_done":
                self._planner.done(value)
        if self._reload.is_set() or self._watch.changed(self.config):
            self._reload.clear()
            self._reread(store)
        self._subscriber.refresh()
        batch = self._planner.plan(store, states, now)
        if batch is not None:
            self._poller.put(batch)
        self._update_gauges(now)
        if self._rendering.due():
            self._rendering.render(self.config, store, states)

    def _wait(self, timeout: float) -> list[tuple[str, Any]]:
        """The events that arrived, waiting up to ``timeout`` seconds for the first."""
        try:
            events = [self._events.get(timeout=timeout)]
        except queue.Empty:
            events = []
        while True:
            try:
                events.append(self._events.get_nowait())
            except queue.Empty:
                return events

    def _stored(self, store: Store, states: dict[str, SourceState], observation: Observation, now: datetime) -> None:
        """decide | store one observation from the poller; learn the hubs it advertises."""
        planner = self._planner
        source = observation.request.source
        if source not in planner.sources:  # its site left sites.yaml while it was fetched
            return
        before = states.get(source) or SourceState(source, source)
        # sites.yaml read again while this batch was fetched drops the policy: made again from the new one
        policy = planner.policy(store, states, now).within(self.config.intervals_for(source))
        planner.settled(source)
        known = self._subscriber.known(store, observation, now)
        fingerprint, names = planner.fingerprints.get(source), self.polled.site_names.get(source, ())
        first = self.polled.new_items(source)
        observation, decision = decide_and_store(store, before, observation, now, policy, fingerprint, first, names)
        states[source] = decision.state
        self.metrics.fetched(observation, decision)
        if self._deliveries is not None and decision.changed:
            self._deliveries.wake()
        log_failure(observation)
        if observation.verdict == "stop" and not is_local(source):
            planner.throttle(observation.request.url, observation.retry_after or self.config.min_interval, now)
        if decision.changed:
            self._rendering.changed(source)
        elif decision.state.error_kind != before.error_kind or before.last_attempt is None:
            self._rendering.changed(source)  # the sites page shows the health
        if self.options.public_url and not is_local(source):
            self._subscriber.learn(before, observation, known, now)

    def _take_pushed(self, store: Store, states: dict[str, SourceState], now: datetime, wait: float = 0.0) -> None:
        """parse | decide_push | store the notifications in the inbox (:meth:`Inbox.take`), and act on each:
        render soon, poll a feed soon to settle a doubt or repair a failed notification."""
        for pushed in self._inbox.take(store, states, self._planner.sources, now, wait):
            if pushed.settle and pushed.source is not None:
                self._planner.settle_soon(pushed.source, states, now)
            if pushed.changed:
                self._rendering.changed(pushed.source)

    def _start_deliveries(self, store: Store) -> None:
        """Write events for the configured deliveries, and run the delivery thread for them (again when
        sites.yaml changed them; none without them)."""
        record_events(store, self.config)
        self._deliveries = delivery_loop(self._deliveries, self.config)

    def _reread(self, store: Store) -> None:
        """Read sites.yaml again (:meth:`Watch.reread`; a broken or incompatible file is one error and the
        old one stays) and plan, subscribe, deliver and render by it.

        Changed ``deliveries`` apply to the events stored from now on: the delivery thread starts,
        stops or is started again with the new destinations and secrets."""
        path = self.config.path
        config = self._watch.reread(self.config, self.options.overrides)
        if config is None:
            return
        polled = poller_view(config)
        added = set(polled.sources) - set(self.polled.sources)
        removed = set(self.polled.sources) - set(polled.sources)
        self.config, self.polled, self._poller.config = config, polled, polled
        self.metrics.set_planets(*planet_figures(config))
        if take_config(store, config, "serve"):
            self._states.update(store.states_of(self._states))
        self._planner.configure(polled)
        self._subscriber.leave_removed(polled.sources)
        self._subscriber.come_back(added)  # a site no longer paused is subscribed to its hub again
        self._start_deliveries(store)
        self._rendering.changed()
        lifecycle.info(
            "serve: read %s again: %d sites (feeds: %d added, %d removed)",
            path,
            len(polled.sites),
            len(added),
            len(removed),
        )

    def _update_gauges(self, now: datetime) -> None:
        """Set the gauges /metrics shows: leases, push's health, fetches under way, sources, hosts throttled."""
        self.metrics.live_leases.set(self._subscriber.live(now))
        self.metrics.push_healthy.set(self._subscriber.healthy(self._states, now))
        self.metrics.in_flight.set(len(self._planner.in_flight))
        self.metrics.sources.set(len(self.polled.sources))
        self.metrics.throttled_hosts.set(self._planner.throttled(now))
