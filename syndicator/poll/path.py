"""The per-source path every driver runs: due | pool(observe) | decide | store.

``build`` runs it over the due sources once, ``serve`` in a loop (and for
pushed content: push | parse | decide | store), ``worker`` over the sources
it claimed. The drivers decide when and for which sources; the steps for one
source, and their containment, are written here once:

- :func:`policy_of` and :func:`current_policy`: the schedule policy of a
  planet (pooled habits, the request budget and its ledger);
- :func:`save`: read | decide | write of one source's new state and
  snapshot, in one transaction of the store (the rules: :mod:`poll.known`);
- :func:`decide_and_store`: decide | store for one observation, in one
  transaction; a bug of ours is contained to its source (kind ``internal``);
  the one place that says when a feed starts failing or recovers (:mod:`transitions`);
- :class:`Poller`: pool(observe) | decide | store over some sources; the
  one place a driver's Fetcher and HostPool are made from the Config;
- :func:`push_and_store`: decide | store for one pushed (and parsed) document,
  in one transaction; its caller contains a failure to the notification.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from syndicator.configtypes import Config
from syndicator.errors import StoreError
from syndicator.feedtypes import Entry, ParsedFeed
from syndicator.model import Decision, Observation, SourceState
from syndicator.poll import habits, schedule, transitions
from syndicator.poll.decide import Reconciled, decide, decide_push
from syndicator.poll.known import intents, lookups
from syndicator.poll.pool import HostPool, HostStats, wait_first
from syndicator.state.store import Store

if TYPE_CHECKING:
    from syndicator.fetch.http import Fetcher
    from syndicator.poll.observe import Job

__all__ = [
    "LEDGER_KEY",
    "POLICY_AGE",
    "current_policy",
    "Poller",
    "decide_and_store",
    "policy_of",
    "push_and_store",
    "save",
]

#: Where the store keeps the schedule's ledger of expected requests (schedule.budgeted).
LEDGER_KEY = "schedule.ledger"

#: How long (seconds) ``serve`` and ``worker`` use a schedule policy (pooled habits, the request budget)
#: before they work it out again from the stored states.
POLICY_AGE = 300.0


def current_policy(
    cached: tuple[float, schedule.Policy] | None,
    config: Config,
    store: Store,
    states: Mapping[str, SourceState],
    now: datetime,
    keep_ledger: bool,
) -> tuple[float, schedule.Policy]:
    """The policy a long-running driver plans with: ``cached`` (``(time.monotonic() when made, policy)``)
    while younger than :data:`POLICY_AGE`, else one made again by :func:`policy_of` from ``states``;
    its budget ledger is stored when ``keep_ledger`` (``serve``; workers sharing a state only read it)."""
    if cached is not None and time.monotonic() - cached[0] <= POLICY_AGE:
        return cached
    policy, ledger = policy_of(config, states, now, schedule.Ledger.read(store.value(LEDGER_KEY)))
    if keep_ledger:
        store.keep(LEDGER_KEY, ledger.text())
    return time.monotonic(), policy


def policy_of(
    config: Config,
    states: Mapping[str, SourceState] | None = None,
    now: datetime | None = None,
    ledger: schedule.Ledger | None = None,
) -> tuple[schedule.Policy, schedule.Ledger]:
    """The schedule policy of a config, and the ledger to keep (schedule.Policy, schedule.Ledger).

    With the stored ``states`` and the build's ``now``, the planet's pooled
    posting habits are the prior, and the request budget
    (``requests_per_feed_per_day``) is spent over the configured sources,
    corrected by the ``ledger`` the last build kept (:func:`schedule.budgeted`).
    """
    policy = schedule.Policy(config.default_interval, config.min_interval, config.max_interval)
    ledger = ledger or schedule.Ledger()
    if states is None or now is None:
        return policy, ledger
    configured = [states[url] for url in config.sources if url in states]
    prior = habits.pooled((state.habits for state in configured if state.habits is not None), now)
    return schedule.budgeted(configured, now, replace(policy, prior=prior), config.requests_per_feed_per_day, ledger)


def save(store: Store, state: SourceState, entries: Iterable[Entry] | None, now: datetime, new_items: int = 0) -> None:
    """Store one source observation in a single transaction: read | decide | write.

    The source's row becomes ``state``; with ``entries``, the store reads what it knows of
    them (:func:`poll.known.lookups`), :func:`poll.known.intents` decides (new, changed,
    aliases, first dates, the baseline, events when ``store.outbox`` routes them) and
    the store writes the result.

    Args:
        store: the state to write.
        state: the new state of the source (replaces the stored row).
        entries: the new snapshot, or None to keep the stored one (a 304, an unchanged body,
            or a failure). Each entry is stored under the id it resolves to (its aliases).
        now: the build's clock (UTC), recorded as first-seen of new ids and as the change
            time of edited ones.
        new_items: how many entries of the source's first snapshot are published
            (:func:`poll.known.backlog`, the site's ``new_feed_items``; 0: all).
    Raises:
        StoreError: the database cannot be written (disk full, I/O error, a damaged file);
            the transaction is rolled back, as it is for any other exception.
    """
    with store.transaction():
        store.write_state(state)
        if entries is None:
            return
        snapshot = list(entries)
        known = store.read_known(state.url, *lookups(snapshot))
        store.write_intents(state.url, intents(known, snapshot, now, store.outbox is not None, new_items), now)


def decide_and_store(
    store: Store,
    state: SourceState,
    observation: Observation,
    now: datetime,
    policy: schedule.Policy,
    fingerprint: str | None,
    new_items: int,
    names: Sequence[str],
) -> tuple[Observation, Decision]:
    """decide | store for one source, in one transaction, then say when the source started failing
    or recovered (:func:`poll.transitions.say`, naming the sites ``names``: Config.site_names);
    ``new_items`` is the source's ``new_feed_items`` (:meth:`configtypes.Config.new_items`), for its
    first snapshot.

    A bug of ours while deciding or storing is contained to the source: it
    is recorded as kind ``internal`` (the snapshot kept). The store's own
    trouble (disk full, a damaged database) is a StoreError and stops the build.
    """
    try:
        decision = decide(state, observation, now, policy, fingerprint)
        save(store, decision.state, decision.entries, now, new_items)
    except StoreError:
        raise
    except Exception as error:
        from syndicator.poll.observe import internal  # loaded already: observations come from it

        observation = internal(observation, error)
        decision = decide(state, observation, now, policy, fingerprint)
        save(store, decision.state, None, now)
    transitions.say(state, decision.state, names, now)
    return observation, decision


class Poller:
    """The poll path of one planet, for every driver: pool(observe) | decide | store.

    The one place a driver's Fetcher and HostPool are made from the Config:
    the Fetcher (and its keep-alive connections) lives as long as the
    Poller, made on first use so that a run with nothing due never loads
    requests, feedparser or lxml; each run gets a HostPool of its own, whose
    per-host figures stay readable in :attr:`stats` until the next run.

    Use: ``with Poller(config) as poller: for observation, decision in poller.poll(...)``.
    A driver that decides and stores on another thread than it fetches
    (``serve``) calls :meth:`observe` and :func:`decide_and_store` itself.

    Args:
        config: the planet's settings; :meth:`reconfigure` replaces them between runs.
        fetcher: a ready fetcher instead of one made from ``config``: any object with a Fetcher's
            ``fetch(request, budget=None) -> FetchResult``, ``max_bytes``, ``allow_private`` and
            ``deadline`` (a fake in tests of the pipeline without HTTP); it is not closed.
        wait: the pools' wait for a running job (poll.pool.wait_first; ``serve``'s also wakes on a stop).

    Raises (from the first use of :attr:`fetcher`):
        ConfigError: a CA bundle variable names a missing path.
    """

    def __init__(
        self,
        config: Config,
        fetcher: Any = None,
        wait: Callable[[set[Future[Any]], float | None], set[Future[Any]]] = wait_first,
    ) -> None:
        self.config = config
        self.stats: dict[str, HostStats] = {}
        self._fetcher = fetcher
        self._own = fetcher is None
        self._wait = wait

    @property
    def fetcher(self) -> Fetcher:
        """The Fetcher of the planet (fetch.http.Fetcher), made from the Config on first use."""
        if self._fetcher is None:
            from syndicator.fetch.http import Fetcher  # here: a build with nothing due never loads requests

            self._fetcher = Fetcher.for_config(self.config)
        return cast("Fetcher", self._fetcher)

    def open(self) -> Fetcher:
        """Make the Fetcher now, for a driver that always fetches (``serve``, ``worker``): a bad CA bundle
        variable is said at start. Raises ConfigError as :attr:`fetcher`."""
        return self.fetcher

    def reconfigure(self, config: Config) -> None:
        """Use ``config`` (sites.yaml read again, config.reread) for the pools of the next runs. The
        Fetcher stays: the settings it is made from are kept on a reload (config.load.KEPT_ON_RELOAD)."""
        self.config = config

    def observe(self, jobs: list[Job], now: datetime, started: float) -> Iterator[Observation]:
        """pool(observe): one Observation per job (poll.observe.Job), in the order they end, through a new
        HostPool made from the Config. ``started``: the run's start (time.monotonic(), seconds)."""
        from syndicator.poll import observe  # here: a build with nothing due never loads feedparser or lxml

        pool: HostPool[Job, Observation] = HostPool.for_config(self.config, wait=self._wait)
        self.stats = pool.stats
        return observe.observe_all(pool, self.fetcher, jobs, now, started)

    def poll(
        self,
        store: Store,
        states: Mapping[str, SourceState],
        sources: Sequence[str],
        now: datetime,
        started: float,
        policy: schedule.Policy,
        fingerprints: Mapping[str, str],
    ) -> Iterator[tuple[Observation, Decision]]:
        """pool(observe) | decide | store for each of ``sources``, yielding (observation, decision) in the
        order the sources end, each stored (:func:`decide_and_store`) before it is yielded.

        ``states`` (the stored states, {URL: SourceState}) is only read; a
        source without one starts from an empty state. ``started`` is the
        run's start (time.monotonic(), seconds); ``fingerprints`` are the
        sites' settings fingerprints (schedule.site_fingerprints).

        Raises:
            StoreError: the store cannot be used; the sources stored so far stay stored.
        """
        from syndicator.poll.observe import job_for

        jobs = [job_for(url, states.get(url), self.config) for url in sources]
        for observation in self.observe(jobs, now, started):
            source = observation.request.source
            state = states.get(source) or SourceState(source, source)
            first, names = self.config.new_items(source), self.config.site_names.get(source, ())
            mine = policy.within(self.config.intervals_for(source))  # its sites' own intervals, if any
            yield decide_and_store(store, state, observation, now, mine, fingerprints.get(source), first, names)

    def close(self) -> None:
        """Close the Fetcher's connections (one made here; a fetcher passed in is left open)."""
        if self._own and self._fetcher is not None:
            self._fetcher.close()
            self._fetcher = None

    def __enter__(self) -> Poller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def push_and_store(store: Store, state: SourceState, parsed: ParsedFeed, now: datetime) -> tuple[Decision, Reconciled]:
    """decide | store for one pushed document of ``state``'s source, in one transaction.

    The pushed entries are merged into the stored snapshot (:func:`decide.decide_push`); a replay
    (only older versions of stored entries) stores nothing, so the state stays as it was, habits and all.

    Raises:
        StoreError: the state cannot be written.
        Exception: a bug of ours while deciding; nothing is stored. The caller contains it to its
            notification (``serve``: marked ``failed``, the source polled soon; seed 003).
    """
    stored = [item.entry for item in store.snapshots([state.url]).get(state.url, [])]
    decision, reconciled = decide_push(state, parsed, stored, now)
    if not reconciled.replay:
        save(store, decision.state, decision.entries, now)
    return decision, reconciled
