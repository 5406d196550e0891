"""WebSub subscriptions as a lifecycle, and when push may replace polling. Pure: no I/O, no clock.

The W3C WebSub Recommendation gives the protocol; seed 003 the operating
rules this module keeps:

* **Subscribe** where a feed advertises a hub (:func:`wanted`), with a
  callback of its own (an unguessable token) and a random secret, and
  record it as ``pending``; the serve loop sends it.
* **Verification of intent** (WebSub 5.3): the challenge is echoed only
  for the callback, topic and mode we asked for (:func:`verify`); the
  lease the hub grants is recorded, and a renewal is planned
  :func:`renew_margin` before it ends.
* **Failures**: a refused request, or a verification that never comes
  within :data:`VERIFY_WAIT`, counts a failure; the next attempt waits a
  capped exponential backoff and goes to the next advertised hub. A
  renewal that failed never counts as live: only a verified lease that
  has not ended does (:meth:`Subscription.live`).
* **Push health** (:func:`health`): polling steps down to a long heartbeat
  only while push is healthy: a live lease not near its end, no change
  found by a poll that push had not delivered, a hub whose breaker is
  closed, and no more silence than the feed's own posting history
  allows (about :data:`LATE_POSTS` posts expected since the last push).
  Otherwise the source is polled on its normal schedule, which repairs
  whatever push missed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from syndicator.model import SourceState
from syndicator.parse.hubs import Advertised
from syndicator.poll import habits as habits_module
from syndicator.push.websub import new_secret, new_token
from syndicator.state.pushstate import Subscription

#: The lease asked for, seconds (5 days; hubs commonly grant 1 to 10).
LEASE_SECONDS = 5 * 86400
#: A granted lease longer than this is taken as this long, seconds (a lease of years would never be renewed).
MAX_LEASE = 366 * 86400
#: A renewal is never sent sooner than this after a verification, seconds: a hub granting a lease of a
#: second gets a request every ten, and the subscription counts as live only while its lease runs.
MIN_RENEWAL_GAP = 10.0
#: Seconds to wait for a hub's verification of intent after it accepted a request.
VERIFY_WAIT = 120.0
#: Backoff after a failed request or verification: first wait and ceiling, seconds.
RETRY_FIRST, RETRY_CEILING = 60.0, 6 * 3600.0
#: After a denial the hub is asked again only after this many seconds.
DENIED_WAIT = 86400.0
#: Unsubscribe attempts before the row is dropped (the hub's lease ends on its own).
UNSUBSCRIBE_TRIES = 3
#: Consecutive failures of one hub (over all its subscriptions) that open its breaker.
BREAKER_FAILURES = 3
#: Posts expected from a feed's history since its last push beyond which push is late
#: (a Poisson count with mean 3 is zero 5% of the time).
LATE_POSTS = 3.0
#: With no posting history, push is late after this many of the source's poll intervals.
LATE_INTERVALS = 4.0


def renew_margin(lease_seconds: float) -> float:
    """Seconds before a lease ends at which it is renewed: a fifth of it, 60 s to 1 day, at most half of it
    (:data:`MIN_RENEWAL_GAP` after the verification at the soonest).

    Leaves room for several retries of a renewal (seed 003: renew before
    expiry with a safety margin); at most half the lease, so a short lease
    is not renewed as soon as it is granted.
    """
    return min(max(lease_seconds / 5, 60.0), 86400.0, lease_seconds / 2)


def backoff(failures: int) -> float:
    """Seconds before the next attempt after ``failures`` consecutive failures (>= 1): capped exponential."""
    return min(RETRY_FIRST * 2 ** max(failures - 1, 0), RETRY_CEILING)


def wanted(
    source: str, advertised: Advertised, fetched_url: str, now: datetime, current: Subscription | None
) -> Subscription | None:
    """The subscription ``source`` should have after a poll saw ``advertised``.

    Args:
        source: the configured feed URL.
        advertised: what the response advertised (:func:`parse.hubs.advertised`).
        fetched_url: the URL that answered: the topic when no self URL is given.
        now: the loop's clock (UTC).
        current: the stored subscription, or None.
    Returns:
        a new or changed Subscription to store, or None when nothing changes
        (no hub advertised and none stored, or the stored one still fits).
        A feed that stops advertising hubs keeps its subscription until the
        lease ends: it is not renewed (its ``hubs`` become empty).
    """
    topic = advertised.topic or fetched_url
    if current is None:
        if not advertised.hubs:
            return None
        return Subscription(
            source,
            topic,
            advertised.hubs[0],
            advertised.hubs,
            new_token(),
            new_secret(),
            state="pending",
            next_action=now,
        )
    if current.mode == "unsubscribe":
        return None
    if not advertised.hubs:
        return replace(current, hubs=()) if current.hubs else None
    if current.topic == topic and current.hubs == advertised.hubs:
        return None
    if current.topic != topic or current.hub not in advertised.hubs:  # a new topic or hub: subscribe afresh
        return replace(
            current,
            topic=topic,
            hub=advertised.hubs[0],
            hubs=advertised.hubs,
            state="pending",
            failures=0,
            error=None,
            next_action=now,
        )
    return replace(current, hubs=advertised.hubs)


def leaving(subscription: Subscription, now: datetime) -> Subscription:
    """``subscription`` of a site no longer in sites.yaml, set to be unsubscribed."""
    return replace(subscription, mode="unsubscribe", state="unsubscribing", failures=0, next_action=now)


def returning(subscription: Subscription, now: datetime) -> Subscription:
    """``subscription``, being unsubscribed (:func:`leaving`), of a site back in sites.yaml: set to be
    subscribed again at once."""
    return replace(subscription, mode="subscribe", state="pending", failures=0, error=None, next_action=now)


def due(subscription: Subscription, now: datetime) -> bool:
    """True when the subscription needs a request or a verdict now."""
    if not subscription.hubs and subscription.mode == "subscribe":
        return False  # the feed stopped advertising a hub: the lease runs out
    return subscription.next_action is not None and subscription.next_action <= now


def sent(
    subscription: Subscription, accepted: bool, message: str, now: datetime, retry_after: float | None = None
) -> Subscription:
    """The subscription after a request to its hub was answered (``accepted``: a 2xx) or failed.

    An accepted request waits :data:`VERIFY_WAIT` seconds for its verification:
    ``requested`` (a first subscription), ``renewing`` (the old lease runs
    meanwhile) or ``unsubscribe_sent``.
    """
    if not accepted:
        return failed(subscription, message, now, retry_after)
    state = {"live": "renewing", "renewing": "renewing", "unsubscribing": "unsubscribe_sent"}.get(
        subscription.state, "requested"
    )
    return replace(subscription, state=state, requested=now, next_action=now + timedelta(seconds=VERIFY_WAIT))


def failed(subscription: Subscription, message: str, now: datetime, retry_after: float | None = None) -> Subscription:
    """The subscription after a failure: backoff, and the next advertised hub for the next try.

    A failed renewal is ``failed`` like a first subscription: it does not
    count as live even while the old lease runs (seed 003).
    """
    failures = subscription.failures + 1
    wait = max(backoff(failures), retry_after or 0.0)
    hub = subscription.hub
    if subscription.mode == "subscribe" and len(subscription.hubs) > 1 and hub in subscription.hubs:
        hub = subscription.hubs[(subscription.hubs.index(hub) + 1) % len(subscription.hubs)]
    state = "unsubscribing" if subscription.mode == "unsubscribe" else "failed"
    return replace(
        subscription, failures=failures, error=message, hub=hub, state=state, next_action=now + timedelta(seconds=wait)
    )


def waiting(subscription: Subscription) -> bool:
    """True when a request was accepted and its verification is awaited."""
    return subscription.state in ("requested", "renewing", "unsubscribe_sent")


def unverified(subscription: Subscription, now: datetime) -> Subscription:
    """A subscription whose verification never came within :data:`VERIFY_WAIT`: a failure."""
    what = "unsubscription" if subscription.mode == "unsubscribe" else "subscription"
    return failed(subscription, f"{subscription.hub} accepted the {what} but never verified it", now)


@dataclass(frozen=True)
class IntentAnswer:
    """What the callback answers a verification request (WebSub 5.3): the challenge to echo, or None for 404.

    ``subscription`` is the row to store (None: leave it), ``forget`` true
    when an unsubscription was verified and the row goes.
    """

    challenge: str | None
    subscription: Subscription | None = None
    forget: bool = False


def verify(subscription: Subscription | None, params: Mapping[str, str], now: datetime) -> IntentAnswer:
    """Answer a hub's GET to a callback: verification of intent or a denial (WebSub 5.2, 5.3).

    The challenge is echoed only when the token names a subscription of
    ours, ``hub.topic`` is its topic and ``hub.mode`` the mode we asked for
    (a hub may re-verify a live subscription). A denial (``hub.mode=denied``)
    for our topic is recorded. Anything else gets no challenge (404).
    """
    mode, topic = params.get("hub.mode", ""), params.get("hub.topic", "")
    if subscription is None or topic != subscription.topic:
        return IntentAnswer(None)
    if mode == "denied" and subscription.mode == "subscribe":
        reason = (params.get("hub.reason") or "no reason given")[:200]
        return IntentAnswer(
            "",
            replace(
                subscription,
                state="denied",
                failures=subscription.failures + 1,
                error=f"{subscription.hub} denied the subscription: {reason}",
                next_action=now + timedelta(seconds=DENIED_WAIT),
            ),
        )
    challenge = params.get("hub.challenge", "")
    if mode != subscription.mode or not challenge or len(challenge) > 1024:
        return IntentAnswer(None)
    if mode == "unsubscribe":
        return IntentAnswer(challenge, forget=True)
    try:
        lease = int(params.get("hub.lease_seconds", ""))
    except ValueError:
        lease = subscription.lease_seconds or LEASE_SECONDS  # required by 5.3, but the hub's record is the lease
    lease = min(max(lease, 1), MAX_LEASE)
    expires = now + timedelta(seconds=lease)
    renew = max(expires - timedelta(seconds=renew_margin(lease)), now + timedelta(seconds=MIN_RENEWAL_GAP))
    return IntentAnswer(
        challenge,
        replace(
            subscription,
            state="live",
            verified=now,
            lease_seconds=lease,
            lease_expires=expires,
            failures=0,
            error=None,
            next_action=renew,
        ),
    )


@dataclass
class Breakers:
    """A circuit breaker per hub (seed 003): consecutive failures over all of a hub's subscriptions.

    At :data:`BREAKER_FAILURES` the breaker opens: that hub's sources count
    as without push (polled on their normal schedule) and no new request
    goes to it until ``open_until``; then one request probes it (half
    open), and a success closes it. In memory: a restart closes every breaker.
    """

    failures: dict[str, int] = field(default_factory=dict)
    open_until: dict[str, datetime] = field(default_factory=dict)

    def is_open(self, hub: str) -> bool:
        """True while ``hub`` has failed :data:`BREAKER_FAILURES` times in a row or more."""
        return self.failures.get(hub, 0) >= BREAKER_FAILURES

    def may_try(self, hub: str, now: datetime) -> bool:
        """True when a request may go to ``hub`` now (closed, or open and its wait is over: a probe)."""
        return not self.is_open(hub) or self.open_until.get(hub, now) <= now

    def success(self, hub: str) -> None:
        """A request or verification of ``hub`` succeeded: close its breaker."""
        self.failures.pop(hub, None)
        self.open_until.pop(hub, None)

    def failure(self, hub: str, now: datetime) -> None:
        """A request or verification of ``hub`` failed; at the threshold, open (or keep open) its breaker."""
        count = self.failures.get(hub, 0) + 1
        self.failures[hub] = count
        if count >= BREAKER_FAILURES:
            self.open_until[hub] = now + timedelta(seconds=backoff(count - BREAKER_FAILURES + 1))


def health(
    subscription: Subscription | None, state: SourceState | None, now: datetime, breakers: Breakers | None = None
) -> tuple[bool, str]:
    """Whether push may stand in for polling this source now, and why (bool, one line).

    See the module docstring for the rules (seed 003's table of conditions).
    """
    if subscription is None or subscription.mode != "subscribe":
        return False, "no hub"
    if not subscription.live(now):
        return False, {"denied": "denied by the hub", "failed": "subscription failing"}.get(
            subscription.state, "no live lease"
        )
    assert subscription.lease_expires is not None and subscription.lease_seconds is not None
    if (subscription.lease_expires - now).total_seconds() < renew_margin(subscription.lease_seconds) / 2:
        return False, "lease near expiry"
    if breakers is not None and breakers.is_open(subscription.hub):
        return False, "hub failing"
    if subscription.missed:
        return False, "a poll found a change push had not delivered"
    since = max(t for t in (subscription.last_push, subscription.verified) if t is not None)
    quiet = (now - since).total_seconds()
    if state is not None and state.habits is not None and state.habits.oldest is not None:
        expected = habits_module.rate(state.habits, now) * quiet
        if expected >= LATE_POSTS:
            return False, f"push late: about {expected:.0f} posts expected since the last one"
    elif state is not None and state.interval and quiet > LATE_INTERVALS * state.interval:
        return False, "push late: quiet longer than the feed's history allows"
    return True, "push healthy"


def next_poll(
    state: SourceState,
    subscription: Subscription | None,
    now: datetime,
    heartbeat: float,
    breakers: Breakers | None = None,
) -> datetime | None:
    """When ``state``'s source is next polled, with push taken into account (UTC, None: now).

    With healthy push, the normal next attempt steps down to a heartbeat:
    no sooner than ``heartbeat`` seconds after the last poll, with a stable
    jitter of up to a tenth of it so heartbeats do not fall together. Else
    the normal schedule (``state.next_attempt``).
    """
    if state.next_attempt is None:
        return None
    healthy, _ = health(subscription, state, now, breakers)
    if not healthy or state.last_attempt is None:
        return state.next_attempt
    spread = int(hashlib.sha256(state.url.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    beat = state.last_attempt + timedelta(seconds=heartbeat * (0.9 + 0.2 * spread))
    return max(state.next_attempt, beat)
