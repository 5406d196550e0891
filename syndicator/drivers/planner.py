"""What ``serve`` polls, and when: the batches its loop hands the poller.

A source is due by the build's schedule (:mod:`schedule`: backoff,
intervals, the budget), with what only a long-running process knows taken
into account:

* **push** (seed 003: polling stays the safety net): a source whose push is
  healthy is polled on a long heartbeat (``--heartbeat``, default the
  configured ``max_interval``); one whose push is late, whose lease nears
  its end or whose hub fails is polled on its normal schedule
  (:func:`push.next_poll`). A feed whose document was never read for hubs
  is due at once (with ``--public-url``, every feed is soon subscribed); a
  doubtful notification makes its feed due soon (:meth:`Planner.settle_soon`).
* **recovery** (seed 000): a restart makes no burst: sources overdue at
  start are released at most :func:`recovery_rate` a second, most overdue
  first.
* **local feed files** are read again when they change, or every
  :data:`LOCAL_RECHECK` seconds.

Only serve's loop uses a :class:`Planner`; one batch runs at a time.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from syndicator.configtypes import Config, is_local
from syndicator.fetch.hosts import host_key
from syndicator.metrics import Metrics
from syndicator.model import SourceState
from syndicator.poll import schedule
from syndicator.poll.path import current_policy
from syndicator.push import subscriptions as push
from syndicator.push.subscriber import Subscriber
from syndicator.state.store import Store

__all__ = ["LOCAL_RECHECK", "Planner", "recovery_rate"]

log = logging.getLogger("syndicator")

#: A local feed file is read again when it changed, or after this many seconds.
LOCAL_RECHECK = 300.0


def recovery_rate(workers: int) -> float:
    """Sources released a second at most after a restart (float): half the workers' worth.

    Seed 000: rebuild the due queue gradually during recovery instead of
    releasing the whole backlog at once.
    """
    return max(1.0, workers / 2)


class Planner:
    """serve's due queue; see the module docstring.

    Args:
        config: the configuration in use (:meth:`configure` after sites.yaml is read again).
        heartbeat: seconds between polls of a source with healthy push (None: ``max_interval``).
        subscriber: serve's subscriptions (their health, the feeds read for hubs).
        metrics: the queue depth is set on it.

    Attributes:
        sources: the configured feed URLs (frozenset).
        fingerprints: the sites' fingerprints ({feed URL: fingerprint}), as the schedule takes them.
        in_flight: the feed URLs of the batch the poller runs.
    """

    def __init__(self, config: Config, heartbeat: float | None, subscriber: Subscriber, metrics: Metrics) -> None:
        self._heartbeat = heartbeat
        self._subscriber = subscriber
        self._metrics = metrics
        self.in_flight: set[str] = set()
        self._release: dict[str, datetime] = {}  # {source: when the recovery releases it}
        self._local_seen: dict[str, tuple[int, int]] = {}  # {local feed: (mtime ns, size) when last read}
        self._reconcile: dict[str, datetime] = {}  # {source: when to poll it to settle a doubtful notification}
        self._throttled: dict[str, datetime] = {}  # {host: until when it asked us to stop}
        self.configure(config)

    def configure(self, config: Config) -> None:
        """Plan with ``config`` from now on (sites.yaml read again): the policy is made again when next needed."""
        self.config = config
        self.sources = frozenset(config.sources)
        self.fingerprints = schedule.site_fingerprints(config.sites)
        self._policy: tuple[float, schedule.Policy] | None = None

    def policy(self, store: Store, states: Mapping[str, SourceState], now: datetime) -> schedule.Policy:
        """The schedule policy to decide with (:func:`path.current_policy`: made again when old, or after a
        reread; its budget ledger kept in ``store``)."""
        self._policy = current_policy(self._policy, self.config, store, states, now, keep_ledger=True)
        return self._policy[1]

    def recover(self, states: Mapping[str, SourceState], now: datetime) -> None:
        """At start: release the sources overdue ``now`` gradually (:func:`recovery_rate`), most overdue first."""
        config = self.config
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

    def plan(self, store: Store, states: Mapping[str, SourceState], now: datetime) -> list[Any] | None:
        """The next batch for the poller, ``[now, observe jobs]``, when sources are due and no batch runs;
        else None. The batch's sources are ``in_flight`` until :meth:`done`."""
        if self.in_flight:
            self._metrics.queue_depth.set(len(self._due(states, now)))
            return None
        due = self._due(states, now)
        self._metrics.queue_depth.set(len(due))
        if not due:
            return None
        from syndicator.poll import observe

        self.policy(store, states, now)
        jobs = [observe.job_for(url, self._examining(url, states.get(url)), self.config) for url in due]
        self.in_flight = set(due)
        for url in due:
            self._release.pop(url, None)
        return [now, jobs]

    def done(self, sources: Iterable[str]) -> None:
        """The poller ended the batch of ``sources`` (observed, abandoned or failed)."""
        self.in_flight -= set(sources)

    def settle_soon(self, source: str, states: Mapping[str, SourceState], now: datetime) -> None:
        """Poll ``source`` soon whatever push's health: at once, or ``min_interval`` after its last poll."""
        state = states.get(source)
        last = state.last_attempt if state is not None else None
        soon = now if last is None else max(now, last + timedelta(seconds=self.config.min_interval))
        self._reconcile[source] = min(soon, self._reconcile.get(source, soon))

    def settled(self, source: str) -> None:
        """``source`` was polled: no poll is owed to settle a notification."""
        self._reconcile.pop(source, None)

    def throttle(self, url: str, seconds: float, now: datetime) -> None:
        """The host of ``url`` asked us to stop for ``seconds`` (a 429, a 503 with Retry-After)."""
        self._throttled[host_key(url)] = now + timedelta(seconds=seconds)

    def throttled(self, now: datetime) -> int:
        """How many hosts asked us to stop and their wait is not over."""
        self._throttled = {host: until for host, until in self._throttled.items() if until > now}
        return len(self._throttled)

    def _examining(self, url: str, state: SourceState | None) -> SourceState | None:
        """The state a job for ``url`` is made from: without validators and body hash when its document was
        never read for hubs (a 304, or a body equal to the stored one, is not parsed: :mod:`pushstate`)."""
        subscriber = self._subscriber
        if state is None or subscriber.public_url is None or url in subscriber.examined or is_local(url):
            return state
        return replace(state, etag=None, last_modified=None, validators_url=None, body_hash=None)

    def _unexamined_due(self, url: str, state: SourceState, now: datetime) -> SourceState:
        """``state``, due now when its document was never read for hubs and its last fetch succeeded
        (a failing source waits for its backoff): with --public-url, every feed is soon subscribed."""
        if (
            self._subscriber.public_url is None
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
        effective: dict[str, SourceState] = {}
        urls = []
        for url in self.config.sources:
            if url in self.in_flight:
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
                effective[url] = self._effective(url, state, now)
        local = [url for url in urls if is_local(url)]
        remote = schedule.due_sources([u for u in urls if not is_local(u)], effective, now, self.fingerprints)
        return local + remote

    def _effective(self, url: str, state: SourceState, now: datetime) -> SourceState:
        """``state`` with its next attempt as serve plans it: due at once when never read for hubs, on the
        heartbeat while push is healthy, soon when a notification must be settled."""
        state = self._unexamined_due(url, state, now)
        subscription = self._subscriber.current.get(url)
        if subscription is not None:
            heartbeat = self._heartbeat or self.config.max_interval
            breakers = self._subscriber.breakers
            state = replace(state, next_attempt=push.next_poll(state, subscription, now, heartbeat, breakers))
        settle = self._reconcile.get(url)
        if settle is not None and (state.next_attempt is None or settle < state.next_attempt):
            state = replace(state, next_attempt=settle)
        return state

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
