"""Which sources are due, and when each is next attempted. Pure: no I/O, no clock.

Every function takes ``now`` (UTC) from its caller; one ``now`` per build.
Randomness is derived from the source URL and ``now``, so a replayed build
(``--now``) plans exactly the same times. The rules, from seed 000 and
seed 001, with their constants (README.md, "Polite polling", explains them):

* **Observed interval.** The last :data:`~syndicator.update.WINDOW` successful
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
* **Hints** (see :mod:`hints`) never win blindly: a cadence hint replaces the
  observed interval only while fewer than :data:`MIN_EVIDENCE` checks are
  known; after that a hint (cadence or freshness) may only lengthen the
  observed interval, and by at most :data:`HINT_STRETCH` times.
* **Overflow.** When every entry of the document (at least
  :data:`~syndicator.update.OVERFLOW_MIN_ENTRIES`) was new since the last
  check, posts may have scrolled off the feed unseen: the next interval is
  at most half that gap, whatever the observed rate or the hints say.
* **Bounds.** Every interval lies in [min_interval, max_interval].
* **Jitter.** A stable share of :data:`JITTER_FRACTION` of the interval from
  the URL, a small random share, and 1-59 s, so due times never sit on
  round clock times; jitter never breaks the bounds.
* **Classified failures**: transient (timeout, network, TLS, 5xx, 429 and
  other fetch failures) doubles from ``min_interval`` up to ``max_interval``;
  ``Retry-After`` is honoured in full up to :data:`RETRY_AFTER_CEILING`; 404
  and unexpected statuses climb a slower ladder (``default_interval`` times 4
  per failure, up to :data:`SLOW_CEILING`), and so do 401/403 (bot
  challenges and rate walls lift on their own); 410 holds the source until
  its sites.yaml entry changes; a parse failure keeps the normal cadence.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from syndicator.configtypes import Site, is_local
from syndicator.failures import kind_of
from syndicator.model import Check, SourceState
from syndicator.parse.hints import Hint, document_hints, next_allowed
from syndicator.poll import habits

#: A hint may lengthen the observed interval by at most this factor.
HINT_STRETCH = 4.0
#: Successful checks needed before observation outweighs a cadence hint.
MIN_EVIDENCE = 3
#: Weight of a check in the history is RECENCY ** (checks since), newest 1.
RECENCY = 0.7
#: A quiet feed's interval grows by at most this factor per check.
GROWTH = 2.0
#: Share of the interval used for jitter (stable part 80 %, random part 20 %).
JITTER_FRACTION = 0.1
#: Retry-After is honoured in full up to this many seconds (7 days).
RETRY_AFTER_CEILING = 7 * 86400.0
#: The slow ladder of 404 and unexpected statuses: factor per failure, ceiling seconds.
SLOW_FACTOR = 4.0
SLOW_CEILING = 7 * 86400.0


@dataclass(frozen=True)
class Policy:
    """How sources are scheduled.

    Attributes:
        default_interval, min_interval, max_interval: the configured
            intervals, seconds.
        at_one_per_day: the interval of a feed posting once a day, seconds
            (:data:`habits.AT_ONE_PER_DAY`, raised by :func:`spend` when
            the request budget needs it).
        prior: the planet's pooled posting habits (:func:`habits.pooled`).
    """

    default_interval: float = 3600.0
    min_interval: float = 900.0
    max_interval: float = 86400.0
    at_one_per_day: float = habits.AT_ONE_PER_DAY
    prior: habits.Prior = field(default_factory=habits.Prior)


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


def site_fingerprints(sites: Iterable[Site]) -> dict[str, str]:
    """{feed URL: fingerprint of every sites.yaml entry naming that feed} (hex str).

    A held source (410) is retried when its fingerprint changes.
    """
    entries: dict[str, list[str]] = {}
    for site in sites:
        entries.setdefault(site.feed, []).append(repr(site))
    return {feed: hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16] for feed, texts in entries.items()}


def due_sources(
    urls: Iterable[str],
    states: Mapping[str, SourceState],
    now: datetime,
    fingerprints: Mapping[str, str] | None = None,
    force: bool = False,
    only: Iterable[str] | None = None,
) -> list[str]:
    """The configured URLs to fetch in this build, most overdue first.

    A local file (:func:`configtypes.is_local`) is always due: reading it makes no request.

    Args:
        urls: configured feed URLs.
        states: stored state per URL (a missing URL was never attempted).
        now: the build's clock (UTC).
        fingerprints: {URL: fingerprint of its sites.yaml entries}.
        force: fetch every source now, held ones included.
        only: fetch exactly these URLs (``--site``), due or not.
    Returns:
        the URLs to fetch: never-attempted sources first, then healthy ones,
        then failing ones (so when a host's wait ends its healthy feeds are
        asked before the one that made it wait), each group by how long
        they are overdue, then in the order given.
    """
    urls = list(urls)
    fingerprints = fingerprints or {}
    if only is not None:
        wanted = set(only)
        chosen = [url for url in urls if url in wanted]
    else:
        chosen = [url for url in urls if force or is_local(url) or is_due(states.get(url), now, fingerprints.get(url))]
    position = {url: index for index, url in enumerate(urls)}

    def overdue(url: str) -> tuple[int, float, int]:
        state = states.get(url)
        if state is None or state.next_attempt is None:
            return (0, 0.0, position[url])
        return (1 if state.failures == 0 else 2, state.next_attempt.timestamp(), position[url])

    return sorted(chosen, key=overdue)


def is_due(state: SourceState | None, now: datetime, fingerprint: str | None = None) -> bool:
    """True if a source should be fetched at ``now``.

    A never-attempted source is due; a held one only once ``fingerprint``
    (of its sites.yaml entries now) differs from the one it was held with.
    """
    if state is None:
        return True
    if on_hold(state):
        return fingerprint is not None and fingerprint != state.hold
    return state.next_attempt is None or state.next_attempt <= now


def on_hold(state: SourceState) -> bool:
    """True if the source waits for its sites.yaml entry to change.

    A hold stored by an older version for a kind that no longer holds
    (401/403 before they took the slow ladder) is not honoured: such a
    source has no next attempt, so it is due at once.
    """
    return state.hold is not None and kind_of(state.error_kind).hold


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
        return Plan(
            None,
            state.interval or policy.default_interval,
            f"{kind.text}: no automatic attempts until its sites.yaml entry changes",
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


def jitter(url: str, now: datetime, interval: float, floor: float, ceiling: float) -> float:
    """Seconds to wait: ``interval`` less a stable and a small random offset, never below ``floor``.

    The offset is ``interval * JITTER_FRACTION * (0.8 * stable + 0.2 * random)``
    plus 1-59 s, where ``stable`` comes from the URL and ``random`` from the
    URL and ``now``. It is subtracted: a check is never later than its
    interval says (with builds every ``min_interval``, a later due time
    would wait a whole extra build), and never sooner than ``floor``, so a
    feed at ``min_interval`` is checked exactly that often. ``ceiling``
    bounds ``interval`` itself.
    """
    stable = _unit(url)
    noise = random.Random(f"{url} {now.isoformat()}").random()
    offset = interval * JITTER_FRACTION * (0.8 * stable + 0.2 * noise) + 1 + 58 * _unit(url + "#s")
    return max(floor, min(interval, ceiling) - offset)


#: The mean share of an interval :func:`jitter` takes off (its stable and random parts average one half).
_MEAN_JITTER = JITTER_FRACTION / 2


def _unit(text: str) -> float:
    """A stable number in [0, 1) from ``text``."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2.0**64


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


#: Requests are measured over the last day (seconds).
MEASURED_SPAN = 86400.0
#: The budget's correction (measured / expected requests) needs this much measured time (seconds),
#: and stays within CORRECTION_BOUNDS.
CORRECTION_SPAN = 6 * 3600.0
CORRECTION_BOUNDS = (2 / 3, 1.5)
#: A ledger keeps at most this many builds (one every 10 s for a day).
LEDGER_ENTRIES = 8640
#: Checks a change history holds (decide.WINDOW; repeated here: decide imports schedule).
WINDOW_CHECKS = 8


@dataclass(frozen=True)
class Ledger:
    """What the schedule expected over its last day of builds (:data:`MEASURED_SPAN`).

    Only builds that plan (something was due) add to it; each expectation
    holds until the next, so a build with nothing due changes nothing.

    Attributes:
        expected: ((UTC time of a build, requests per source per day that
            build's plan was expected to make), ...), oldest first.
    """

    expected: tuple[tuple[datetime, float], ...] = ()

    def text(self) -> str:
        """The ledger as JSON text, for the store."""
        return json.dumps([[at.isoformat(), round(value, 4)] for at, value in self.expected], separators=(",", ":"))

    def recent(self, now: datetime) -> tuple[tuple[datetime, float], ...]:
        """The entries of the last :data:`MEASURED_SPAN` before ``now`` (UTC), oldest first."""
        since = now - timedelta(seconds=MEASURED_SPAN)
        return tuple(item for item in self.expected if since < item[0] < now)

    @classmethod
    def read(cls, text: str | None) -> Ledger:
        """A ledger from :meth:`text`; an empty one for None or text that is not one (an older cache).

        Only entries with a UTC offset and a finite, non-negative
        expectation are kept, oldest first, the newest
        :data:`LEDGER_ENTRIES` of them.
        """
        try:
            items = [(datetime.fromisoformat(at), float(value)) for at, value in json.loads(text or "[]")]
        except (ValueError, TypeError, RecursionError):
            return cls()
        kept = [
            (at, value) for at, value in items if at.utcoffset() is not None and math.isfinite(value) and value >= 0
        ]
        return cls(tuple(sorted(kept, key=lambda item: item[0])[-LEDGER_ENTRIES:]))


def budgeted(
    states: Iterable[SourceState], now: datetime, policy: Policy, budget: float, ledger: Ledger
) -> tuple[Policy, Ledger]:
    """The policy that spends ``budget`` (:func:`spend`), corrected by what was measured, and the new ledger.

    The expectation of :func:`spend` is a model; what happens between
    builds (bursts that raise a rate at once, failures that back off,
    hints) moves the real count off it. So the budget is divided by
    :func:`correction`: the requests measured in the change histories over
    the ledger's span, against what the builds of that span expected. Both
    are averages over the same time, so the correction estimates the
    model's error, not the schedule's own lag, and does not feed on itself.

    Args:
        states: the stored state of every configured source.
        now: the build's clock (UTC).
        policy: the configured policy, with the planet's prior.
        budget: requests_per_feed_per_day.
        ledger: the ledger kept by the previous build.
    Returns:
        (the policy to plan with, the ledger to keep: this build's
        expectation added, entries older than :data:`MEASURED_SPAN` dropped).
    """
    states = list(states)
    expectation = _expectation(states, now, policy)
    spent = _spent(expectation, policy, budget / correction(ledger, states, policy, now))
    kept = ledger.recent(now)
    if expectation is None:
        return spent, Ledger(kept)
    return spent, Ledger((*kept, (now, expectation(spent.at_one_per_day))))


def correction(ledger: Ledger, states: Iterable[SourceState], policy: Policy, now: datetime) -> float:
    """Requests measured per source per day over the ledger's span, over those expected (a factor).

    The span runs from the ledger's oldest build (at most a day ago) to
    ``now``; each build's expectation counts for the time until the next.
    1 when the span is shorter than :data:`CORRECTION_SPAN` or nothing was
    measured; otherwise within :data:`CORRECTION_BOUNDS`.
    """
    kept = ledger.recent(now)
    if not kept or (now - kept[0][0]).total_seconds() < CORRECTION_SPAN:
        return 1.0
    ends = [*(at for at, _ in kept[1:]), now]
    weights = [(end - at).total_seconds() for (at, _), end in zip(kept, ends, strict=True)]
    expected = sum(w * value for w, (_, value) in zip(weights, kept, strict=True)) / sum(weights)
    measured = measured_requests(states, policy, now, kept[0][0])
    if measured is None or expected <= 0:
        return 1.0
    low, high = CORRECTION_BOUNDS
    return min(max(measured / expected, low), high)


def measured_requests(states: Iterable[SourceState], policy: Policy, now: datetime, since: datetime) -> float | None:
    """Requests per source per day the schedule made since ``since``, from the change histories.

    A source counts its checks after ``since`` (at most :data:`MEASURED_SPAN`
    ago) over that span; when its history holds only such checks (a busy
    source whose short history covers less), their rate over the span they
    cover. A source with no check in the span counts its planned interval;
    sources on hold count nothing. None when no source was checked in it.
    """
    states = [state for state in states if state.hold is None]
    since = max(since, now - timedelta(seconds=MEASURED_SPAN))
    span = max((now - since).total_seconds(), 1.0)
    rates, measured = [], False
    for state in states:
        recent = [check.at for check in state.history if check.at > since]
        if len(recent) > 1 and len(recent) == len(state.history) == WINDOW_CHECKS:
            rates.append(86400 * (len(recent) - 1) / max((recent[-1] - recent[0]).total_seconds(), 1.0))
        elif recent:
            rates.append(86400 * len(recent) / span)
        else:
            rates.append(86400 / max(state.interval or policy.default_interval, policy.min_interval))
        measured = measured or bool(recent)
    return sum(rates) / len(rates) if measured and rates else None


def spend(states: Iterable[SourceState], now: datetime, policy: Policy, budget: float) -> Policy:
    """``policy`` with ``at_one_per_day`` raised until the expected requests fit ``budget``.

    Args:
        states: the stored state of every configured source.
        now: the build's clock (UTC).
        policy: the configured policy, its ``at_one_per_day`` the default.
        budget: requests per feed per day, on average over the sources
            (``requests_per_feed_per_day`` in sites.yaml, corrected by
            :func:`budgeted`).
    Returns:
        the policy to plan with: unchanged when the expected requests
        (:func:`expected_requests`) fit the budget; else with the smallest
        ``at_one_per_day`` that fits it, found by bisection.
    """
    return _spent(_expectation(list(states), now, policy), policy, budget)


def _spent(expected: Callable[[float], float] | None, policy: Policy, budget: float) -> Policy:
    """:func:`spend` with the expectation already worked out."""
    if expected is None or expected(policy.at_one_per_day) <= budget:
        return policy
    low, high = policy.at_one_per_day, policy.at_one_per_day
    for _ in range(64):  # requests fall as at_one_per_day grows, down to one per max_interval
        high *= 2
        if expected(high) <= budget or high >= 1000 * policy.max_interval:
            break
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (low, middle) if expected(middle) <= budget else (middle, high)
    return replace(policy, at_one_per_day=high)


def expected_requests(states: Iterable[SourceState], now: datetime, policy: Policy) -> float | None:
    """Requests per source per day that planning with ``policy`` is expected to make (None: no source).

    A source with habits is expected to be checked every ``interval /
    pace`` (:func:`habits.pace`), kept between min_interval and
    max_interval, less the mean jitter (:func:`jitter`), plus half the time
    between builds (a due source waits for the next build; that time is the
    shortest gap between two checks in the histories, at most min_interval)
    unless it is at min_interval (jitter never goes below it, so such a
    source is due exactly when a build comes); one with no dated entries
    yet every ``default_interval``. Sources on hold cost nothing.
    """
    expected = _expectation(list(states), now, policy)
    return expected(policy.at_one_per_day) if expected is not None else None


def _expectation(states: list[SourceState], now: datetime, policy: Policy) -> Callable[[float], float] | None:
    """at_one_per_day (seconds) -> expected requests per source per day (:func:`expected_requests`)."""
    states = [state for state in states if state.hold is None]
    if not states:
        return None
    learnt = [state.habits for state in states if state.habits and state.habits.count]
    others = len(states) - len(learnt)
    # (posts per day, pace) of each source with habits.
    feeds = [(habits.rate(learned, now) * 86400, habits.pace(learned, policy.prior, now)) for learned in learnt]
    gaps = [check.elapsed for state in states for check in state.history if check.elapsed > 0]
    wait = min(min(gaps, default=policy.min_interval), policy.min_interval) / 2

    def every(interval: float) -> float:  # seconds between checks: a source at the floor waits for no build
        if interval <= policy.min_interval:
            return policy.min_interval
        return max(min(interval, policy.max_interval) * (1 - _MEAN_JITTER) - 30, policy.min_interval) + wait

    def expected(at_one_per_day: float) -> float:
        spent = sum(86400 / every(habits.spacing(per_day, at_one_per_day) / pace) for per_day, pace in feeds)
        return (spent + others * 86400 / every(policy.default_interval)) / len(states)

    return expected


def post_rate_text(per_day: float) -> str:
    """A posting rate (posts per day) as ``~3 posts/day`` or ``~1 post every 4 d``."""
    return rate_text(per_day / 86400).replace("changes", "posts").replace("change", "post")
