"""When a source just observed is next attempted, and why. Pure: no I/O, no clock.

Every function takes ``now`` (UTC) from its caller; one ``now`` per build.
Randomness is derived from the source URL and ``now``, so a replayed build
(``--now``) plans exactly the same times. Which sources are due, the
policy and the request budget are :mod:`syndicator.poll.schedule`'s. The
rules, from seed 000 and seed 001, with their constants (docs/reference/schedule.md
explains them):

* **Observed interval.** The last :data:`~syndicator.poll.decide.WINDOW` successful
  checks are the change history. The change rate is counted from the new
  entries dated inside the checked spans (plus one half, a continuity
  correction) when every change brought dated entries; otherwise it is the
  larger of that and the rate from how many checks saw the snapshot change
  (Cho and Garcia-Molina's estimator ``-ln((unchanged + 0.5) / (checks +
  0.5)) / mean gap``, finite even when every check saw a change). Each check
  counts with weight :data:`RECENCY` to the power of its age in checks
  (exponential smoothing over the window), so a burst fades. The interval is
  one over the rate, but at most :data:`GROWTH` times the last gap, so a
  quiet feed slows down step by step. With no history: ``default_interval``.
* **Hints** (see :mod:`syndicator.parse.hints`) never win blindly: a cadence hint replaces the
  observed interval only while fewer than :data:`MIN_EVIDENCE` checks are
  known; after that a hint (cadence or freshness) may only lengthen the
  observed interval, and by at most :data:`HINT_STRETCH` times.
* **Overflow.** When every entry of the document (at least
  :data:`~syndicator.poll.decide.OVERFLOW_MIN_ENTRIES`) was new since the last
  check, posts may have scrolled off the feed unseen: the next interval is
  at most half that gap, whatever the observed rate or the hints say.
* **Bounds.** Every interval lies in [min_interval, max_interval].
* **Jitter** (:mod:`syndicator.poll.jitter`). A stable share of
  :data:`~syndicator.poll.jitter.JITTER_FRACTION` of the interval from the
  URL, a small random share, and 1-59 s, so due times never sit on round
  clock times; jitter never breaks the bounds.
* **Classified failures**: transient (timeout, network, TLS, 5xx, 429 and
  other fetch failures) doubles from ``min_interval`` up to ``max_interval``;
  ``Retry-After`` is honoured in full up to :data:`RETRY_AFTER_CEILING`; 404
  and unexpected statuses climb a slower ladder (``default_interval`` times 4
  per failure, up to :data:`SLOW_CEILING`), and so do 401/403 (bot
  challenges and rate walls lift on their own); 410 holds the source until
  its sites.yaml entry changes; a parse failure keeps the normal cadence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from syndicator.failures import kind_of
from syndicator.model import Check, SourceState
from syndicator.parse.hints import Hint, document_hints, next_allowed
from syndicator.poll import habits
from syndicator.poll.jitter import jitter
from syndicator.poll.schedule import Policy

#: A hint may lengthen the observed interval by at most this factor.
HINT_STRETCH = 4.0


#: Successful checks needed before observation outweighs a cadence hint.
MIN_EVIDENCE = 3


#: Weight of a check in the history is RECENCY ** (checks since), newest 1.
RECENCY = 0.7


#: A quiet feed's interval grows by at most this factor per check.
GROWTH = 2.0


#: Retry-After is honoured in full up to this many seconds (7 days).
RETRY_AFTER_CEILING = 7 * 86400.0


#: The slow ladder of 404 and unexpected statuses: factor per failure, ceiling seconds.
SLOW_FACTOR = 4.0


SLOW_CEILING = 7 * 86400.0


@dataclass(frozen=True)
class Plan:
    """When to try a source next, and why.

    Attributes:
        next_attempt: UTC time, or None for a source on hold.
        interval: the chosen interval before jitter, seconds.
        reason: one line, e.g. ``observed: ~3 changes/day``.
    """

    next_attempt: datetime | None
    interval: float
    reason: str


def plan(
    state: SourceState, now: datetime, policy: Policy, retry_after: float | None = None, http_hint: Hint | None = None
) -> Plan:
    """Plan the next attempt of a source just observed (see the module docstring).

    Args:
        state: the source's state *after* this build's observation.
        now: the build's clock (UTC).
        policy: the configured intervals.
        retry_after: seconds from the response's Retry-After, if any.
        http_hint: the response's Cache-Control/Expires freshness, if any.
    Returns:
        the Plan.
    """
    if state.error_kind is None:
        return _success_plan(state, now, policy, http_hint)
    kind, count = kind_of(state.error_kind), max(1, state.failures)
    if kind.hold:
        changed = "credentials change" if kind.name == "credentials" else "sites.yaml entry changes"
        return Plan(
            None, state.interval or policy.default_interval, f"{kind.text}: no automatic attempts until its {changed}"
        )
    floor, ceiling = policy.min_interval, policy.max_interval
    if kind.ladder == "cadence":
        interval = state.interval or policy.default_interval
        reason = f"parse failure x{count}: normal cadence"
    elif kind.ladder == "slow":
        interval = ceiling = _ladder(policy.default_interval, SLOW_FACTOR, count, SLOW_CEILING)
        label = "access denied (401/403)" if kind.name == "http_401" else kind.name.replace("http_", "HTTP ")
        reason = f"backoff: {label} x{count} (slow ladder)"
    else:
        interval = _ladder(policy.min_interval, 2.0, count, policy.max_interval)
        reason = f"backoff: {kind.name} x{count}"
    if retry_after is not None and retry_after >= interval:
        honoured = min(retry_after, RETRY_AFTER_CEILING)
        capped = ", capped at 7 d" if retry_after > RETRY_AFTER_CEILING else ""
        interval = floor = ceiling = honoured
        reason = f"retry-after: {honoured:.0f} s ({kind}){capped}"
    wait = jitter(state.url, now, interval, floor, max(ceiling, interval))
    return Plan(now + timedelta(seconds=wait), interval, reason)


def _ladder(first: float, factor: float, failures: int, ceiling: float) -> float:
    """``first * factor ** (failures - 1)`` seconds, at most ``ceiling``.

    The exponent is capped before the power is taken, so a source that has
    failed thousands of times never overflows a float.
    """
    steps = max(0, failures - 1)
    if factor > 1:
        steps = min(steps, math.ceil(math.log(max(ceiling / first, 1.0), factor)) + 1)
    return min(ceiling, first * factor**steps)


def _success_plan(state: SourceState, now: datetime, policy: Policy, http_hint: Hint | None) -> Plan:
    if state.habits is not None and state.habits.count:
        interval, per_day = habits.next_check(
            state.habits, now, policy.prior, policy.at_one_per_day, policy.max_interval
        )
        reason = f"habits: {post_rate_text(per_day)} by its entry dates"
    else:
        interval, reason = observed_interval(state.history, policy)
    hints = document_hints(state.hints, now) + ([http_hint] if http_hint else [])
    interval, reason = weigh_hints(interval, reason, len(state.history), hints)
    if state.history and state.history[-1].overflowed and interval > state.history[-1].elapsed / 2:
        # Every entry was new: posts may have been missed. No hint may keep the interval that long.
        interval = state.history[-1].elapsed / 2
        reason = "observed: every entry new since the last check, posts may have been missed; halved"
    if interval < policy.min_interval:
        interval, reason = policy.min_interval, f"{reason}, capped at min_interval"
    elif interval >= policy.max_interval:
        interval, reason = policy.max_interval, f"{reason}, capped at max_interval"
    wait = jitter(state.url, now, interval, policy.min_interval, policy.max_interval)
    due = now + timedelta(seconds=wait)
    moved = next_allowed(due, state.hints, now + timedelta(seconds=policy.max_interval))
    if moved != due:
        reason = f"{reason}; moved out of skipHours/skipDays"
    return Plan(moved, interval, reason)


def observed_interval(history: Sequence[Check], policy: Policy) -> tuple[float, str]:
    """The interval change history suggests, and the reason text.

    Args:
        history: recent successful checks, oldest first.
        policy: the configured intervals (the default is used with no history).
    Returns:
        (seconds, reason); not yet bounded by min/max_interval.
    """
    total = sum(check.elapsed for check in history)
    if not history or total <= 0:
        return policy.default_interval, "default: no change history yet"
    weights = [RECENCY**age for age in range(len(history) - 1, -1, -1)]
    checks = sum(weights)
    span = sum(w * check.elapsed for w, check in zip(weights, history, strict=True))
    unchanged = sum(w for w, check in zip(weights, history, strict=True) if not check.changed)
    by_checks = -math.log((unchanged + 0.5) / (checks + 0.5)) / (span / checks)
    entries = sum(w * check.new_entries for w, check in zip(weights, history, strict=True))
    by_entries = (entries + 0.5) / span if entries else 0.0  # + 0.5: continuity correction
    # Dated entries count changes directly; trust them alone when every change brought some.
    dated = entries > 0 and all(check.new_entries for check in history if check.changed)
    rate = by_entries if dated else max(by_checks, by_entries)  # changes per second
    limit = GROWTH * max(history[-1].elapsed, policy.min_interval)
    if rate <= 0:
        return limit, f"observed: no change in {len(history)} checks over {duration_text(total)}"
    return min(1 / rate, limit), f"observed: {rate_text(rate)}"


def weigh_hints(observed: float, reason: str, evidence: int, hints: Sequence[Hint]) -> tuple[float, str]:
    """Combine the observed interval with publisher hints (never obeyed blindly).

    Args:
        observed: the observed interval, seconds; reason: its explanation.
        evidence: successful checks in the history.
        hints: the hints of the document and the last response.
    Returns:
        (seconds, reason).
    """
    cadence = [hint for hint in hints if hint.kind == "cadence"]
    if cadence and evidence < MIN_EVIDENCE:
        chosen = min(cadence, key=lambda hint: hint.seconds)
        observed, reason = chosen.seconds, f"hint: {chosen.label}"
        hints = [hint for hint in hints if hint is not chosen]
    longer = [hint for hint in hints if hint.seconds > observed]
    if not longer:
        return observed, reason
    chosen = max(longer, key=lambda hint: hint.seconds)
    if chosen.seconds <= observed * HINT_STRETCH:
        return chosen.seconds, f"hint: {chosen.label}"
    return observed * HINT_STRETCH, f"hint: {chosen.label}, limited to {HINT_STRETCH:g}x ({reason})"


def skipped(state: SourceState, reason: str, host: str, now: datetime, retry_after: float | None = None) -> SourceState:
    """A source the pool did not request in this build, recorded as such.

    Args:
        reason: "throttled" (the host asked us to wait) or "breaker".
        host: the host key.
        retry_after: seconds the host asked for (throttled), if known.
    Returns:
        the state with ``reason`` set; a throttled source's next attempt is
        pushed to the host's Retry-After (up to 7 days), a breaker-skipped
        one stays due for the next build.
    """
    if reason == "throttled":
        wait = min(retry_after or 0.0, RETRY_AFTER_CEILING)
        later = now + timedelta(seconds=wait)
        due = max(state.next_attempt, later) if state.next_attempt else later
        return replace(
            state, next_attempt=due, reason=f"throttled: {host} asked to wait {wait:.0f} s; not requested in this build"
        )
    return replace(state, reason=f"breaker: {host} failed repeatedly in this build; waits for the next build")


def duration_text(seconds: float) -> str:
    """A short human duration: ``45 s``, ``15 min``, ``2.5 h``, ``3 d`` (str)."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h".replace(".0 h", " h")
    return f"{seconds / 86400:.1f} d".replace(".0 d", " d")


def rate_text(rate: float) -> str:
    """A change rate (per second) as ``~3 changes/day`` or ``~1 change every 4 d``."""
    per_day = rate * 86400
    if per_day >= 1:
        return f"~{per_day:.0f} changes/day" if per_day >= 10 else f"~{per_day:.1f} changes/day".replace(".0 ", " ")
    return f"~1 change every {duration_text(1 / rate)}"


def post_rate_text(per_day: float) -> str:
    """A posting rate (posts per day) as ``~3 posts/day`` or ``~1 post every 4 d``."""
    return rate_text(per_day / 86400).replace("changes", "posts").replace("change", "post")
