"""``serve``'s notifications, from the inbox (push.sqlite) to the state: ``parse | decide_push | store``.

The HTTP server commits each signed notification to the inbox before its
2xx (:mod:`push.callbacks`); serve's loop then hands it to :class:`Inbox`:
its body is parsed on a thread of its own (a heavy document does not stop
polling, rendering or the heartbeat /healthz reads), then decided and
stored in arrival order, and its verdict recorded. Duplicates and replays
change nothing (seed 003). A failure while parsing, deciding or storing one
notification (a bug of ours, a store error) costs that notification only:
it is marked ``failed`` and its feed is polled soon instead (conditional
polling is the safety net). The loop acts on what each notification did
(:class:`Pushed`): it renders, and polls the feeds to settle.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor, TimeoutError
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from syndicator.errors import FeedError
from syndicator.feedtypes import ParsedFeed
from syndicator.metrics import Metrics
from syndicator.model import SourceState
from syndicator.poll.path import push_and_store
from syndicator.push.subscriber import Subscriber
from syndicator.state.pushstate import Notification, PushState, Subscription
from syndicator.state.store import Store

__all__ = ["Inbox", "Pushed"]

log = logging.getLogger("syndicator")


@dataclass(frozen=True)
class Pushed:
    """What one notification did, for serve's loop to act on.

    Attributes:
        verdict: as recorded in the inbox: ``stored``, ``duplicate``, ``replay``, ``orphan`` (no configured
            feed has its callback), ``unparsable`` (not a feed) or ``failed`` (a failure of ours).
        source: the feed URL its subscription is for (None: no subscription has its callback).
        changed: the site shows a change: render soon.
        settle: poll ``source`` soon whatever push's health (doubt to settle, or a failed notification).
    """

    verdict: str
    source: str | None = None
    changed: bool = False
    settle: bool = False


class Inbox:
    """The notifications waiting in push.sqlite, parsed off the loop and stored by it; see the module docstring.

    Args:
        push_state: push.sqlite, open for serve's life.
        subscriber: serve's subscriptions (counts on them, the hubs' breakers).
        metrics: counts the notifications by verdict.
        wake: wakes serve's loop (a parse is done).
    """

    def __init__(
        self, push_state: PushState, subscriber: Subscriber, metrics: Metrics, wake: Callable[[], None]
    ) -> None:
        self._push_state = push_state
        self._subscriber = subscriber
        self._metrics = metrics
        self._wake = wake
        self._parser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="push-parser")
        self._parses: dict[int, tuple[Notification, Future[ParsedFeed | None]]] = {}

    def take(
        self,
        store: Store,
        states: dict[str, SourceState],
        sources: Collection[str],
        now: datetime,
        wait: float = 0.0,
    ) -> list[Pushed]:
        """Hand each pending notification to the parser thread; decide and store those parsed, in arrival order.

        A notification waits for the ones that arrived before it. ``states`` ({feed URL: state}) is kept up
        to date; ``sources``: the configured feed URLs (a notification for another is an ``orphan``).
        ``wait``: seconds to wait for parses under way (at a stop; those not done stay in the inbox for
        the next start). Returns what each notification stored did, in arrival order.
        """
        for notification in self._push_state.pending():
            if notification.id not in self._parses:
                future = self._parser.submit(self._read, notification, now)
                future.add_done_callback(lambda _: self._wake())
                self._parses[notification.id] = (notification, future)
        deadline = time.monotonic() + wait
        done = []
        for key in sorted(self._parses):
            notification, future = self._parses[key]
            try:
                future.result(timeout=max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                break
            except Exception:  # noqa: S110 - the parse's own failure: _contained logs it
                pass
            del self._parses[key]
            done.append(self._contained(store, states, sources, notification, future, now))
        return done

    def close(self) -> None:
        """Stop the parser thread; the parses not started are dropped (their notifications stay in the inbox)."""
        self._parser.shutdown(wait=False, cancel_futures=True)

    def _read(self, notification: Notification, now: datetime) -> ParsedFeed | None:
        """The parser thread: a notification's body parsed, or None for one already processed (a duplicate).

        Raises:
            FeedError: the body is not a feed.
        """
        from syndicator.parse.feed import parse_feed

        subscription = self._push_state.by_token(notification.token)
        if subscription is None or self._push_state.seen_before(notification):
            return None
        return parse_feed(notification.body, subscription.topic, {"content-type": notification.content_type}, now)

    def _contained(
        self,
        store: Store,
        states: dict[str, SourceState],
        sources: Collection[str],
        notification: Notification,
        parsed: Future[ParsedFeed | None],
        now: datetime,
    ) -> Pushed:
        """Decide and store one parsed notification, and record its verdict; a failure stays its own.

        An exception while parsing, deciding or storing it (a bug of ours, a store error) is logged with
        the topic and costs this notification only: it is marked ``failed``, its feed is polled soon to
        repair what it carried (seed 003: conditional polling is the safety net), and serve goes on.
        """
        subscription = self._push_state.by_token(notification.token)
        try:
            pushed = self._push(store, states, sources, notification, subscription, parsed.result(), now)
        except FeedError as error:
            assert subscription is not None
            log.warning(
                "serve: a notification for %s from %s could not be read: %s",
                subscription.topic,
                subscription.hub,
                error.message,
            )
            pushed = Pushed("unparsable", subscription.source)
        except Exception:  # a bug of ours, or the state failing: this notification only
            topic = subscription.topic if subscription is not None else notification.token
            log.exception("serve: a notification for %s could not be stored; the feed is polled instead", topic)
            source = subscription.source if subscription is not None else None
            pushed = Pushed("failed", source, settle=source is not None)
        self._push_state.processed(notification.id, pushed.verdict, now)
        if pushed.verdict != "orphan":
            self._metrics.notification(pushed.verdict)
        return pushed

    def _push(
        self,
        store: Store,
        states: dict[str, SourceState],
        sources: Collection[str],
        notification: Notification,
        subscription: Subscription | None,
        parsed: ParsedFeed | None,
        now: datetime,
    ) -> Pushed:
        """decide_push | store one notification; what it did.

        Duplicates and replays change nothing (seed 003: a later-arriving notification may describe an
        older representation; the feed's current one is the source of truth): an exact body already
        processed is a ``duplicate``; one that brought only older versions of stored entries, or versions
        that cannot be ordered, is a ``replay``, counted on the subscription; with doubt, the feed is
        polled soon (a conditional request) to settle it.
        """
        if subscription is None or subscription.source not in sources:
            return Pushed("orphan")
        source = subscription.source
        if parsed is None or self._push_state.seen_before(notification):
            self._subscriber.update(subscription, duplicates=subscription.duplicates + 1)
            log.info(
                "serve: %s delivered a notification for %s already processed; nothing changed", subscription.hub, source
            )
            return Pushed("duplicate", source)
        state = states.get(source) or SourceState(source, source)
        decision, reconciled = push_and_store(store, state, parsed, now)
        if not reconciled.replay:  # a replay leaves the state as it was, habits and all
            states[source] = decision.state
        fields: dict[str, Any] = {"last_push": now, "missed": 0}
        if reconciled.replay:
            fields = {"replays": subscription.replays + 1}
            log.info(
                "serve: %s delivered an older version of %s (%d entries older than the stored ones, %d "
                "unordered); nothing changed",
                subscription.hub,
                source,
                reconciled.stale,
                reconciled.doubtful,
            )
        settle = bool(reconciled.doubtful)
        self._subscriber.update(subscription, **fields)
        if reconciled.replay:
            return Pushed("replay", source, settle=settle)
        self._subscriber.breakers.success(subscription.hub)
        if decision.changed:
            log.info("serve: %s pushed a change to %s", subscription.hub, source)
        return Pushed("stored", source, changed=decision.changed, settle=settle)
