"""When a feed posts: a decayed posting rate and its hours and weekdays. Pure: no I/O, no clock.

The schedule spends requests where posts are likely (docs/reference/schedule.md,
"The schedule"). This module learns, from the dates of the entries a
feed publishes, two things about it:

* **how often** it posts: a count of its entries, each weighing
  ``exp(-age / TAU)``, over the time it covers weighed alike, so a burst
  raises the rate at once and quiet lets it decay (time constant
  :data:`TAU`). A long-run rate (every entry seen over the whole span since
  the oldest) is a floor, so a feed silent for a month is not treated as
  dead when it posts every few months;
* **when** it posts: decayed counts of its entries' hours of the day and
  days of the week (UTC), each against the decayed time that hour or day
  was watched (:func:`exposure`), shrunk toward a prior (the pooled habits
  of all feeds of the planet, else uniform) by :data:`PRIOR_WEIGHT`
  pseudo-entries: a gamma-Poisson estimate, so an hour never watched is
  not taken for an hour without posts. A feed whose dates carry no time of
  day (every one at 00:00:00) has no hour habit.

:func:`next_check` turns both into the time of the next request, by the
square-root rule: for a fixed number of requests, the expected delay of
a post is smallest when the interval grows with the square root of the
time between posts (Cho and Garcia-Molina, "Effective page refresh
policies for Web crawlers", ACM TODS 2003). Locally the posting rate is
``rate * activity(t)``, so the interval at ``t`` is
``at_one_per_day * (1 day / (rate * activity(t) * 1 day)) ** POWER`` and
the next check falls where the integral of ``1 / interval(t)`` from now
reaches one: sooner in the hours a feed usually posts, later in those it
never does. :data:`POWER` is under one half: the planet's own goal weighs
every feed alike (a feed's median delay), not only every post, so quieter
feeds get a little more than the pure square-root share; the quietest
(beyond :data:`SLOW_GAP` days between posts) get less (:func:`spacing`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache

from syndicator.model import Habits

#: Decay time constant of the posting rate and habits, seconds (7 days).
TAU = 7 * 86400.0
#: Exponent of the interval in the time between posts (1/2: the square-root rule).
POWER = 0.38
#: Feeds posting less than once in SLOW_GAP days (the gap between posts, days) see their interval grow
#: with SLOW_POWER beyond it: their few posts weigh little in the planet's delays, and a check every few
#: hours finds them on the day they come, so they give up some of their share to busier feeds.
SLOW_GAP = 3.0
SLOW_POWER = 0.7
#: The interval of a feed that posts once a day, at an average hour, seconds.
AT_ONE_PER_DAY = 80 * 60.0
#: The prior (pooled or uniform habits) counts as this many entries, spread over the slots.
PRIOR_WEIGHT = 8.0
#: Activity (posting rate relative to the feed's mean) is taken within these bounds:
#: a few posts in one hour of one weekday must not make that hour look 168 times busier.
ACTIVITY_FLOOR = 0.05
ACTIVITY_CEILING = 10.0
#: The integration step of :func:`next_check`, seconds.
STEP = 900.0
#: A feed with this share of its entries at exactly 00:00:00 gives dates only, no time of day.
TIMELESS_SHARE = 0.8
#: The slowest posting rate assumed, posts per second (one in ten years).
RATE_FLOOR = 1 / (3650 * 86400.0)
_DAY = 86400.0
#: 1970-01-05, the first Monday of the epoch (seconds): weeks begin there.
_MONDAY = 4 * _DAY


@dataclass(frozen=True)
class Prior:
    """The habits of a whole planet, each feed's prior: shares per hour (24) and weekday (7), each summing to 1."""

    hours: tuple[float, ...] = (1 / 24,) * 24
    days: tuple[float, ...] = (1 / 7,) * 7


def learn(habits: Habits | None, dates: Iterable[datetime | None], now: datetime) -> Habits:
    """``habits`` with the entry dates not counted before added.

    Args:
        habits: what was learnt so far (None: nothing).
        dates: the dates of the entries of a document just read (UTC, None
            for an undated entry); only those after ``habits.newest`` and
            not after ``now`` count: they are the new posts.
        now: the build's clock (UTC).
    Returns:
        the new Habits, decayed to ``now``.
    """
    habits = decay(habits or Habits(), now)
    fresh = sorted(d for d in dates if d is not None and d <= now and (habits.newest is None or d > habits.newest))
    if not fresh:
        return habits
    hours, days = list(habits.hours), list(habits.days)
    weight, timeless = habits.weight, habits.timeless
    for date in fresh:
        share = math.exp(-(now - date).total_seconds() / TAU)
        weight += share
        utc = date.astimezone(UTC)
        hours[utc.hour] += share
        days[utc.weekday()] += share
        timeless += utc.hour == utc.minute == utc.second == 0
    oldest = min(fresh[0], habits.oldest) if habits.oldest else fresh[0]
    return replace(
        habits,
        weight=weight,
        newest=fresh[-1],
        oldest=oldest,
        count=habits.count + len(fresh),
        timeless=timeless,
        hours=tuple(hours),
        days=tuple(days),
    )


def decay(habits: Habits, now: datetime) -> Habits:
    """``habits`` as of ``now``: weight and histograms decayed by ``exp(-elapsed / TAU)``."""
    if habits.at is None or now <= habits.at:
        return replace(habits, at=now if habits.at is None else habits.at)
    factor = math.exp(-(now - habits.at).total_seconds() / TAU)
    return replace(
        habits,
        at=now,
        weight=habits.weight * factor,
        hours=tuple(h * factor for h in habits.hours),
        days=tuple(d * factor for d in habits.days),
    )


def rate(habits: Habits, now: datetime) -> float:
    """Posts per second: the decayed rate, at least the long-run rate and :data:`RATE_FLOOR`.

    The decayed count is divided by the decayed time it covers, since the
    oldest entry counted (at least one hour): ``TAU * (1 - exp(-span / TAU))``,
    the expected weight of a steady one post per second over that span, so
    the rate is unbiased whether the span is an hour or years. The
    long-run rate spreads every entry counted over the time since the
    oldest (at least TAU).
    """
    if habits.oldest is None:
        return RATE_FLOOR
    since = max((now - habits.oldest).total_seconds(), 0.0)
    recent = decay(habits, now).weight / _covered(max(since, 3600.0))
    long_run = habits.count / max(since, TAU)
    return max(recent, long_run, RATE_FLOOR)


def exposure(habits: Habits, now: datetime) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(per hour of day (24), per weekday (7)): decayed seconds of each slot since the oldest entry counted (UTC).

    A slot's entry count means something only against the time it was
    watched: a feed first read on a Tuesday, whose 20 entries span six
    hours, says nothing yet of Fridays or of the night. Each second weighs
    ``exp(-age / TAU)``, as the entries do; each tuple sums to
    ``TAU * (1 - exp(-span / TAU))``.
    """
    if habits.oldest is None or now <= habits.oldest:
        return (0.0,) * 24, (0.0,) * 7
    return _exposure(habits.oldest.timestamp(), now.timestamp())


@lru_cache(maxsize=2048)
def _exposure(start: float, end: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """:func:`exposure` of epoch seconds; remembered, as a build asks it of each feed two or three times."""
    return _cycle(start, end, _DAY, 24, 0.0), _cycle(start, end, 7 * _DAY, 7, _MONDAY)


def pooled(all_habits: Iterable[Habits], now: datetime) -> Prior:
    """The prior of a planet: each feed's hour and weekday activity (:func:`activity`, shrunk
    toward uniform) averaged, each feed weighing one, as shares.

    Feeds without a time of day count for the weekdays only; with no feed
    to learn from, the prior is uniform.
    """
    uniform = Prior()
    hours, days = [0.0] * 24, [0.0] * 7
    for habits in all_habits:
        if not habits.count:
            continue
        own_hours, own_days = activity(habits, uniform, now)
        for index, value in enumerate(own_days):
            days[index] += value
        if not _timeless(habits):
            for index, value in enumerate(own_hours):
                hours[index] += value
    return Prior(_normal(hours, 24), _normal(days, 7))


def activity(habits: Habits, prior: Prior, now: datetime | None = None) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(per hour of day, per weekday) posting rate relative to the feed's mean rate.

    For each slot, the decayed entries counted in it against the decayed
    time it was watched (:func:`exposure`, as of ``now``, default
    ``habits.at``), shrunk toward the prior by :data:`PRIOR_WEIGHT`
    pseudo-entries spread over the slots (a gamma-Poisson estimate,
    :func:`_shrunk`): ``(count + K * prior / slots) / (mean_rate * watched
    + K / slots)``, where ``prior`` is the slot's prior activity. A slot
    never watched takes the prior's value; hours are smoothed over their
    neighbours first. A feed whose dates carry no time of day takes the
    prior's hours. Each tuple averages about 1.
    """
    if now is not None:
        habits = decay(habits, now)
    watched = exposure(habits, habits.at) if habits.at is not None else ((0.0,) * 24, (0.0,) * 7)
    hour_prior = tuple(24 * p for p in prior.hours)
    day_prior = tuple(7 * p for p in prior.days)
    timed = not _timeless(habits)
    hours = _shrunk(_smoothed(habits.hours), _smoothed(watched[0]), hour_prior) if timed else hour_prior
    return hours, _shrunk(habits.days, watched[1], day_prior)


def pace(habits: Habits, prior: Prior, now: datetime) -> float:
    """Checks per day of ``habits`` relative to a feed with no habits, at the same rate (at most about 1).

    The mean over the 168 hours of the week of ``activity ** POWER``, the
    activity bounded as :func:`next_check` bounds it: concentrated habits
    need fewer checks for the same delay (Jensen's inequality). Used to
    project a budget.
    """
    hours, days = activity(habits, prior, now)
    total = 0.0
    for day in days:  # _local inlined: this runs 168 times per feed per build
        for hour in hours:
            value = hour * day
            total += (ACTIVITY_FLOOR if value < ACTIVITY_FLOOR else min(value, ACTIVITY_CEILING)) ** POWER
    return total / 168


def spacing(per_day: float, at_one_per_day: float) -> float:
    """Seconds between checks of a feed posting ``per_day`` times a day, at its average activity.

    ``at_one_per_day * (1 / per_day) ** POWER`` (the square-root rule,
    module docstring); for feeds posting less than once in
    :data:`SLOW_GAP` days the interval grows on from there with the
    exponent :data:`SLOW_POWER`.
    """
    gap = 1 / per_day
    if gap <= SLOW_GAP:
        return at_one_per_day * gap**POWER
    return at_one_per_day * SLOW_GAP**POWER * (gap / SLOW_GAP) ** SLOW_POWER


def next_check(
    habits: Habits, now: datetime, prior: Prior, at_one_per_day: float, ceiling: float
) -> tuple[float, float]:
    """Seconds until the next request, and the feed's posting rate (posts per day).

    The integral of ``1 / interval(t)`` from ``now`` is taken in steps of
    :data:`STEP` until it reaches one (module docstring), at most
    ``ceiling`` seconds (max_interval); the caller applies min_interval.
    """
    per_day = rate(habits, now) * _DAY
    base = spacing(per_day, at_one_per_day)
    hours, days = activity(habits, prior, now)
    progress, elapsed, start = 0.0, 0.0, now.timestamp()
    while elapsed < ceiling:
        day, hour = divmod(int((start + elapsed) // 3600), 24)  # UTC days and hour since the epoch, a Thursday
        local = _local(hours[hour] * days[(day + 3) % 7])
        step = min(STEP, ceiling - elapsed)
        gain = step * local**POWER / base
        if progress + gain >= 1:
            elapsed += (1 - progress) / gain * step
            break
        progress += gain
        elapsed += step
    return min(elapsed, ceiling), per_day


def _local(activity: float) -> float:
    """An hour's activity within [ACTIVITY_FLOOR, ACTIVITY_CEILING]."""
    return min(max(activity, ACTIVITY_FLOOR), ACTIVITY_CEILING)


def _timeless(habits: Habits) -> bool:
    return habits.count > 0 and habits.timeless >= TIMELESS_SHARE * habits.count


def _smoothed(counts: Sequence[float]) -> list[float]:
    """Circular smoothing over neighbours, weights 1/4, 1/2, 1/4."""
    size = len(counts)
    return [0.25 * counts[i - 1] + 0.5 * counts[i] + 0.25 * counts[(i + 1) % size] for i in range(size)]


def _shrunk(counts: Sequence[float], watched: Sequence[float], prior: Sequence[float]) -> tuple[float, ...]:
    """Per slot, ``(count + K * share) / (mean_rate * watched + K / slots)``, K = :data:`PRIOR_WEIGHT`.

    ``prior`` holds each slot's prior activity (averaging 1), ``share`` is
    that over the number of slots: with nothing watched a slot takes the
    prior's activity, with much watched its own.
    """
    slots = len(counts)
    total, seen = sum(counts), sum(watched)
    mean = total / seen if seen > 0 else 0.0
    return tuple(
        (count + PRIOR_WEIGHT * activity / slots) / (mean * seconds + PRIOR_WEIGHT / slots)
        for count, seconds, activity in zip(counts, watched, prior, strict=True)
    )


def _covered(span: float) -> float:
    """Decayed seconds in the last ``span`` seconds: ``TAU * (1 - exp(-span / TAU))``."""
    return TAU * -math.expm1(-span / TAU)


def _cycle(start: float, end: float, period: float, slots: int, origin: float) -> tuple[float, ...]:
    """Decayed seconds of ``[start, end]`` (epoch seconds) in each of ``slots`` equal parts of a cycle.

    The cycle of ``period`` seconds begins at ``origin`` (epoch seconds)
    and repeats; each second weighs ``exp(-(end - t) / TAU)``. Whole cycles
    before the current one add up as a geometric series, so the work does
    not grow with the span.
    """
    width = period / slots
    out = [0.0] * slots

    def add(a: float, b: float) -> None:  # b - a <= period
        while a < b:
            slot = int(((a - origin) % period) // width)
            stop = min(b, a - (a - origin) % width + width)
            out[slot] += TAU * (math.exp(-(end - stop) / TAU) - math.exp(-(end - a) / TAU))
            a = stop if stop > a else a + width  # never stuck on a rounding error

    current = origin + math.floor((end - origin) / period) * period
    add(max(start, current), end)
    if start < current:
        whole = math.floor((current - start) / period)
        if whole:
            ratio = math.exp(-period / TAU)
            series = (1 - ratio**whole) / (1 - ratio)
            for slot in range(slots):  # the cycle just before the current one, then older ones
                last = current - period + (slot + 1) * width
                out[slot] += TAU * math.exp(-(end - last) / TAU) * -math.expm1(-width / TAU) * series
        add(start, current - whole * period)
    return tuple(out)


def _normal(values: Sequence[float], size: int) -> tuple[float, ...]:
    total = sum(values)
    return tuple(v / total for v in values) if total > 0 else (1 / size,) * size
