"""Which sources are due, and the policy and request budget they are planned with. Pure: no I/O, no clock.

Every function takes ``now`` (UTC) from its caller; one ``now`` per build.
This module holds:

* the :class:`Policy` (the configured intervals and the planet's posting
  prior) that :func:`syndicator.poll.intervals.plan` plans each source with;
* due selection: :func:`due_sources`, :func:`is_due`, :func:`on_hold` and the
  sites.yaml fingerprints that lift a hold (410);
* the request budget (``requests_per_feed_per_day``): :func:`spend` raises
  the policy's ``at_one_per_day`` until the expected requests fit, and
  :func:`budgeted` corrects it by what the :class:`Ledger` of the last
  day's builds measured.

When each source is next attempted (intervals, hints, backoff) is
:mod:`syndicator.poll.intervals`'s; the jitter is :mod:`syndicator.poll.jitter`'s.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from syndicator.configtypes import Config, Site, is_local
from syndicator.failures import kind_of
from syndicator.model import SourceState
from syndicator.poll import habits
from syndicator.poll.jitter import MEAN_JITTER


@dataclass(frozen=True)
class Policy:
    """How sources are scheduled.

    Attributes:
        default_interval, min_interval, max_interval: the configured
            intervals, seconds (defaults: those of :class:`configtypes.Config`).
        at_one_per_day: the interval of a feed posting once a day, seconds
            (:data:`habits.AT_ONE_PER_DAY`, raised by :func:`spend` when
            the request budget needs it).
        prior: the planet's pooled posting habits (:func:`habits.pooled`).
    """

    default_interval: float = Config.default_interval
    min_interval: float = Config.min_interval
    max_interval: float = Config.max_interval
    at_one_per_day: float = habits.AT_ONE_PER_DAY
    prior: habits.Prior = field(default_factory=habits.Prior)

    def within(self, bounds: tuple[float, float]) -> Policy:
        """This policy for one source whose sites set its own ``bounds``, (min_interval, max_interval)
        seconds (:meth:`configtypes.Config.intervals_for`): those bounds, and ``default_interval`` kept
        inside them; the policy itself when they are its own."""
        low, high = bounds
        if (low, high) == (self.min_interval, self.max_interval):
            return self
        return replace(
            self, min_interval=low, max_interval=high, default_interval=min(max(self.default_interval, low), high)
        )


def site_fingerprints(sites: Iterable[Site]) -> dict[str, str]:
    """{feed URL: fingerprint of every sites.yaml entry naming that feed} (hex str).

    A held source (410) is retried when its fingerprint changes: any field of a site naming it, its
    own settings (:attr:`configtypes.Site.own_settings`) included.
    """
    entries: dict[str, list[str]] = {}
    for site in sites:  # a site's own settings are not in its repr: added when it gives some
        entries.setdefault(site.feed, []).append(repr(site) + (repr(site.own_settings) if site.own_settings else ""))
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


#: Requests are measured over the last day (seconds).
MEASURED_SPAN = 86400.0
#: The budget's correction (measured / expected requests) needs this much measured time (seconds),
#: and stays within CORRECTION_BOUNDS.
CORRECTION_SPAN = 6 * 3600.0
CORRECTION_BOUNDS = (2 / 3, 1.5)
#: A ledger keeps at most this many builds (one every 10 s for a day).
LEDGER_ENTRIES = 8640
#: Checks a change history holds (decide.WINDOW; repeated here: decide imports intervals, which imports schedule).
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
    max_interval, less the mean jitter (:func:`syndicator.poll.jitter.jitter`), plus half the time
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
        return max(min(interval, policy.max_interval) * (1 - MEAN_JITTER) - 30, policy.min_interval) + wait

    def expected(at_one_per_day: float) -> float:
        spent = sum(86400 / every(habits.spacing(per_day, at_one_per_day) / pace) for per_day, pace in feeds)
        return (spent + others * 86400 / every(policy.default_interval)) / len(states)

    return expected
