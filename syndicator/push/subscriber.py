"""``serve``'s WebSub subscriber: what it knows of its subscriptions, and the thread that asks the hubs.

push.sqlite (:class:`pushstate.PushState`) records every subscription; the
rules of their lifecycle are :mod:`push.subscriptions`. A :class:`Subscriber`
holds what serve's loop and its subscriber thread share:

* for the loop: ``current`` (push.sqlite's subscriptions, read again each
  turn and kept up to date as the loop changes them), the feeds whose
  documents were read for hubs (``examined``), and the hubs' breakers;
  after each poll :meth:`Subscriber.learn` subscribes to the hub a feed
  advertises, follows a change of hub, or counts a change push missed;
  :meth:`Subscriber.leave_removed` unsubscribes the feeds no longer
  configured (or paused), :meth:`Subscriber.come_back` subscribes those
  configured again, and :meth:`Subscriber.moved` subscribes again after a
  change of ``--public-url``;
* for the subscriber thread (:meth:`Subscriber.run`): the subscription,
  renewal and unsubscription requests, each sent when its subscription is
  due, with backoff, the next hub after a failure, and a breaker per hub.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from syndicator.configtypes import Config
from syndicator.errors import SyndicatorError
from syndicator.metrics import Metrics
from syndicator.model import Fetched, Observation, SourceState
from syndicator.parse.hubs import advertised
from syndicator.push import subscriptions as push
from syndicator.push.callbacks import callback_url
from syndicator.push.websub import HubAnswer, request_subscription
from syndicator.state.pushstate import PushState, Subscription
from syndicator.state.store import Store

__all__ = ["PUBLIC_URL_KEY", "TICK", "Subscriber"]

log = logging.getLogger("syndicator")

#: The longest the subscriber thread sleeps, seconds: how soon it notices a stop or a subscription due.
TICK = 1.0
#: Where push.sqlite keeps the --public-url the subscriptions' callbacks were given.
PUBLIC_URL_KEY = "public_url"


class Subscriber:
    """serve's subscriptions; see the module docstring.

    Args:
        push_state: push.sqlite, open for serve's life.
        config: the configuration serve started with: the requests' User-Agent and timeout (kept when
            sites.yaml is read again).
        public_url: the URL at which hubs reach serve's callbacks; None: no subscription is sent.
        clock: the current time (UTC).
        metrics: counts the requests sent to hubs.
        allow_private: a hub may be on a private network (sites.yaml's ``allow_private_networks``).
    """

    def __init__(
        self,
        push_state: PushState,
        config: Config,
        public_url: str | None,
        clock: Callable[[], datetime],
        metrics: Metrics,
        allow_private: bool,
    ) -> None:
        self.push_state = push_state
        self.public_url = public_url
        self.breakers = push.Breakers()
        self.current: dict[str, Subscription] = {}  # {source: its subscription}, the loop's copy
        self.examined: set[str] = push_state.examined()  # the sources whose documents were read for hubs
        self._clock = clock
        self._metrics = metrics
        self._user_agent = config.user_agent
        self._timeout = config.timeout
        self._allow_private = allow_private
        self._wake = threading.Event()

    # --- the loop ----------------------------------------------------------------------

    def wake(self) -> None:
        """Wake the subscriber thread: a subscription is due."""
        self._wake.set()

    def refresh(self) -> None:
        """Read ``current`` again from push.sqlite (the HTTP server's verifications change it)."""
        self.current = self.push_state.subscriptions()

    def update(self, subscription: Subscription, **fields: Any) -> Subscription | None:
        """Change ``fields`` of ``subscription`` in push.sqlite and in ``current``; the row as stored, or None
        when it is gone."""
        changed = self.push_state.update(subscription.token, **fields)
        if changed is not None:
            self.current[subscription.source] = changed
        return changed

    def leave_removed(self, sources: Collection[str]) -> None:
        """Unsubscribe the subscriptions of feeds not among ``sources`` (the feed URLs of sites.yaml)."""
        configured = set(sources)
        now = self._clock()
        for subscription in self.push_state.subscriptions().values():
            if subscription.source not in configured and subscription.mode == "subscribe":
                self.push_state.save(push.leaving(subscription, now))
                self.wake()

    def come_back(self, sources: Collection[str]) -> None:
        """Subscribe again the feeds of ``sources``, back in sites.yaml (a site no longer paused, or listed
        again): an unsubscription still under way becomes a subscription again; a feed whose subscription
        is gone has its next document read whole, at once (the planner makes an unread feed due), so
        :meth:`learn` subscribes it to the hub it advertises."""
        now = self._clock()
        for source in sources:
            subscription = self.push_state.subscription(source)
            if subscription is not None and subscription.mode == "unsubscribe":
                again = push.returning(subscription, now)
                self.push_state.save(again)
                self.current[source] = again
                self.wake()
            elif subscription is None and source in self.examined:
                self.push_state.forget_examined(source)
                self.examined.discard(source)

    def moved(self) -> None:
        """After a change of --public-url, subscribe every feed again at its callback's new address.

        The hubs go on delivering to the old address until those leases end;
        what they deliver there is lost to us, and polling repairs it.
        """
        public_url, push_state = self.public_url, self.push_state
        if public_url is None or push_state.value(PUBLIC_URL_KEY) == public_url:
            return
        now = self._clock()
        moved = 0
        for subscription in push_state.subscriptions().values():
            if subscription.mode == "subscribe" and subscription.state != "pending":
                push_state.save(replace(subscription, state="pending", failures=0, error=None, next_action=now))
                moved += 1
        push_state.keep(PUBLIC_URL_KEY, public_url)
        if moved:
            lifecycle = logging.getLogger("syndicator.lifecycle")  # shown at info by default (cli.logs)
            lifecycle.info("serve: --public-url changed: subscribing %d feeds again at %s", moved, public_url)

    def known(self, store: Store, observation: Observation, now: datetime) -> set[str] | None:
        """The ids of the entries stored for ``observation``'s source before it is stored, when the source
        has a live subscription and the poll parsed a document (what :meth:`learn` compares with); else None."""
        source = observation.request.source
        subscription = self.current.get(source)
        if subscription is None or not subscription.live(now) or observation.parsed is None:
            return None
        return {item.entry.id for item in store.snapshots([source]).get(source, [])}

    def learn(self, before: SourceState, observation: Observation, known: set[str] | None, now: datetime) -> None:
        """Subscribe, follow a hub change, or count a change push missed, after one poll (never for a
        private feed: a hub could not read it, docs/private-feeds.md).

        ``before`` is the source's state before the poll; ``known`` holds the entry ids stored before it
        (:meth:`known`) when the source had a live subscription: a poll that finds an id not among them,
        although the lease ran since the poll before, found a post that push did not deliver.
        """
        if observation.request.credential is not None:  # a private feed is polled: a hub cannot read it
            return
        source = observation.request.source
        current = self.current.get(source)
        result, parsed = observation.result, observation.parsed
        if isinstance(result, Fetched) and parsed is not None:
            found = advertised(result.headers, parsed, result.url)
            if source not in self.examined:
                self.push_state.mark_examined(source, found.hubs, found.topic, now)
                self.examined.add(source)
            wanted = push.wanted(source, found, result.url, now, current)
            if wanted is not None:
                self.push_state.save(wanted)
                self.current[source] = wanted
                self.wake()
                current = wanted
        new = known is not None and parsed is not None and any(entry.id not in known for entry in parsed.entries)
        if (
            current is not None
            and new
            and current.live(now)
            and current.verified is not None
            and before.last_attempt is not None
            and current.verified <= before.last_attempt
            and self.update(current, missed=current.missed + 1) is not None
        ):
            self.breakers.failure(current.hub, now)
            log.warning(
                "serve: %s: a poll found a change that %s had not pushed; polling it on its normal "
                "schedule until a push arrives",
                source,
                current.hub,
            )

    def live(self, now: datetime) -> int:
        """How many subscriptions hold a live lease ``now``."""
        return sum(1 for subscription in self.current.values() if subscription.live(now))

    def healthy(self, states: Mapping[str, SourceState], now: datetime) -> int:
        """How many sources have healthy push ``now`` (:func:`push.health`); ``states``: {feed URL: state}."""
        return sum(1 for url, s in self.current.items() if push.health(s, states.get(url), now, self.breakers)[0])

    # --- the subscriber thread ---------------------------------------------------------

    def thread(self, stopping: threading.Event) -> threading.Thread:
        """The subscriber thread (:meth:`run`), not started."""
        return threading.Thread(target=self.run, args=(stopping,), name="subscriber", daemon=True)

    def run(self, stopping: threading.Event) -> None:
        """The subscriber thread, until ``stopping`` is set: send what the subscriptions need, when they need it.

        A failure is logged and tried again the next turn (a bug of ours included).
        """
        from syndicator.fetch.outbound import new_session

        session = new_session(self._user_agent)  # an advertised hub is screened (netguard)
        try:
            while not stopping.is_set():
                self._wake.wait(TICK)
                self._wake.clear()
                if self.public_url is None:
                    continue
                try:
                    self._send_due(session, stopping)
                except SyndicatorError as error:
                    log.error("serve: %s", error)
                except Exception:  # a bug of ours: logged, tried again next turn
                    log.exception("serve: the subscriber failed")
        finally:
            session.close()

    def _send_due(self, session: Any, stopping: threading.Event) -> None:
        """Send each subscription due its request; one accepted but never verified counts a failure."""
        push_state = self.push_state
        for subscription in push_state.subscriptions().values():
            if stopping.is_set():
                return
            now = self._clock()
            if not push.due(subscription, now):
                continue
            if push.waiting(subscription):
                if subscription.mode == "unsubscribe" and subscription.failures + 1 >= push.UNSUBSCRIBE_TRIES:
                    push_state.delete(subscription.source)
                    continue
                push_state.save(push.unverified(subscription, now))
                self.breakers.failure(subscription.hub, now)
                log.warning(
                    "serve: %s accepted a request for %s but never verified it", subscription.hub, subscription.topic
                )
                continue
            if not self.breakers.may_try(subscription.hub, now):
                continue
            asked = push.sent(subscription, True, "", now)
            push_state.save(asked)  # before the request: a hub may verify before it answers
            answer = self._request(session, subscription)
            self._metrics.hub_requests.labels(subscription.mode, "accepted" if answer.accepted else "refused").inc()
            if answer.accepted:
                self.breakers.success(subscription.hub)
            else:
                self._refused(subscription, asked, answer, now)

    def _request(self, session: Any, subscription: Subscription) -> HubAnswer:
        """Send ``subscription``'s request (subscribe, renew or unsubscribe) to its hub; the hub's answer."""
        assert self.public_url is not None
        subscribing = subscription.mode == "subscribe"
        return request_subscription(
            session,
            subscription.hub,
            mode=subscription.mode,
            topic=subscription.topic,
            callback=callback_url(self.public_url, subscription.token),
            secret=subscription.secret if subscribing else None,
            lease_seconds=push.LEASE_SECONDS if subscribing else None,
            timeout=self._timeout,
            source=subscription.source,
            allow_private=self._allow_private,
        )

    def _refused(self, subscription: Subscription, asked: Subscription, answer: HubAnswer, now: datetime) -> None:
        """Count a refusal of the request ``asked`` (unless the hub verified or denied it meanwhile): backoff
        and the next hub; an unsubscription refused too often is dropped (the hub's lease ends on its own)."""
        push_state = self.push_state
        self.breakers.failure(subscription.hub, now)
        current = push_state.subscription(subscription.source)
        if current is None or current.requested != asked.requested or not push.waiting(current):
            return  # verified (or denied) meanwhile
        if current.mode == "unsubscribe" and current.failures + 1 >= push.UNSUBSCRIBE_TRIES:
            push_state.delete(current.source)
            return
        push_state.save(push.failed(current, f"{subscription.hub}: {answer.message}", now, answer.retry_after))
        log.warning(
            "serve: %s refused to %s %s: %s",
            subscription.hub,
            subscription.mode,
            subscription.topic,
            answer.message,
        )
