"""The schedule, driven by simulated feeds and a fake clock (pure: no I/O)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from syndicator.configtypes import Site
from syndicator.errors import FeedError, HTTPStatusError, ParseError
from syndicator.feedtypes import Entry, FeedHints, ParsedFeed
from syndicator.model import Check, Failed, Fetched, FetchRequest, NotModified, SourceState
from syndicator.parse.hints import Hint
from syndicator.poll import habits, intervals, jitter, schedule
from syndicator.poll.decide import Observation, new_state, snapshot_hash
from syndicator.poll.schedule import Policy

from .conftest import NOW

URL = "https://blog.example.org/feed.xml"
HOUR = 3600.0
DAY = 86400.0
POLICY = Policy()


class SimFeed:
    """A feed whose entries are published at given times; checked through update + schedule."""

    def __init__(self, published: Callable[[datetime], list[datetime]], hints: FeedHints | None = None) -> None:
        self.published = published
        self.hints = hints or FeedHints()
        self.state = SourceState(URL, URL)

    def check(self, now: datetime, policy: Policy = POLICY) -> intervals.Plan:
        dates = sorted(self.published(now))[-10:]
        entries = tuple(Entry(id=f"e{d.timestamp():.0f}", title="t", date=d) for d in dates)
        digest = snapshot_hash(entries)
        request = FetchRequest(URL, URL)
        if digest == self.state.snapshot_hash:
            observation = Observation(request, NotModified(URL))
        else:
            observation = Observation(
                request,
                Fetched(URL, b"x" + digest.encode()),
                ParsedFeed("T", None, entries, hints=self.hints),
                body_hash=digest,
                snapshot_hash=digest,
            )
        state = new_state(self.state, observation, now)
        plan = intervals.plan(state, now, policy)
        self.state = replace(state, next_attempt=plan.next_attempt, interval=plan.interval, reason=plan.reason)
        return plan

    def run(self, checks: int, start: datetime = NOW, policy: Policy = POLICY) -> list[intervals.Plan]:
        plans, now = [], start
        for _ in range(checks):
            plan = self.check(now, policy)
            plans.append(plan)
            assert plan.next_attempt is not None
            now = plan.next_attempt
        return plans


def every(seconds: float, since: datetime = NOW - timedelta(days=30)) -> Callable[[datetime], list[datetime]]:
    """Publication times every ``seconds`` from ``since`` up to the clock."""

    def published(now: datetime) -> list[datetime]:
        count = int((now - since).total_seconds() // seconds)
        return [since + timedelta(seconds=seconds * k) for k in range(max(0, count - 20), count + 1)]

    return published


def never(now: datetime) -> list[datetime]:
    return [NOW - timedelta(days=3000)]


def undated(now: datetime) -> list[datetime]:
    return []


def test_a_feed_without_dated_entries_starts_at_the_default_interval() -> None:
    plan = intervals.plan(SourceState(URL, URL, last_success=NOW), NOW, POLICY)
    assert plan.interval == POLICY.default_interval
    assert plan.reason == "default: no change history yet"


def test_the_first_document_teaches_the_rate_at_once() -> None:
    hourly = SimFeed(every(HOUR)).check(NOW)
    dormant = SimFeed(never).check(NOW)
    assert hourly.interval < HOUR and hourly.reason.startswith("habits: ~")
    assert dormant.interval == POLICY.max_interval and dormant.reason.endswith("capped at max_interval")


def median_interval(period: float, checks: int = 40) -> float:
    seen = sorted(plan.interval for plan in SimFeed(every(period)).run(checks)[5:])
    return seen[len(seen) // 2]


def test_intervals_follow_the_square_root_rule_not_the_gap() -> None:
    """Cho and Garcia-Molina: for a fixed budget the interval grows like the square root of the gap."""
    hourly, six_hourly, daily = median_interval(HOUR), median_interval(6 * HOUR), median_interval(DAY)
    assert hourly < HOUR and six_hourly < 6 * HOUR and daily < DAY / 4  # slower feeds: checked more than they post
    ratio = six_hourly / hourly
    assert 1.6 < ratio < 3.6  # 6 ** 0.38 = 2.0 (and its hours); a linear rule would give 6
    assert daily > six_hourly > hourly


def test_hourly_feed_after_dormancy_is_checked_often_at_once() -> None:
    start_hourly = NOW + timedelta(days=20)

    def published(now: datetime) -> list[datetime]:
        old = [NOW - timedelta(days=3000)]
        return old + (every(HOUR, start_hourly)(now) if now >= start_hourly else [])

    plans = SimFeed(published).run(40)
    dormant = [p for p in plans if p.next_attempt is not None and p.next_attempt < start_hourly]
    assert max(p.interval for p in dormant) == POLICY.max_interval
    checked = [NOW] + [p.next_attempt for p in plans[:-1]]
    after = [
        p for p, at in zip(plans, checked, strict=True) if at is not None and at > start_hourly + timedelta(hours=2)
    ]
    assert after and after[0].interval <= HOUR  # the first document with the new posts is enough


def test_dormant_feed_stays_at_max_interval() -> None:
    plans = SimFeed(never).run(12)  # one post, 3000 days ago
    assert [plan.interval for plan in plans] == [POLICY.max_interval] * 12
    assert plans[-1].reason.endswith("capped at max_interval")


def test_dormant_feed_reaches_a_configured_seven_day_maximum() -> None:
    policy = Policy(max_interval=7 * DAY)
    plans = SimFeed(lambda now: [NOW - timedelta(days=3000)]).run(14, policy=policy)
    assert plans[-1].interval > 1.5 * DAY  # one post in 3000 days: beyond the default maximum of a day
    assert all(p.next_attempt is not None for p in plans)


def test_single_burst_raises_the_rate_at_once_and_decays() -> None:
    burst_at = NOW + timedelta(days=12)

    def published(now: datetime) -> list[datetime]:
        burst = [burst_at + timedelta(minutes=20 * k) for k in range(10)]
        return [NOW - timedelta(days=3000)] + [d for d in burst if d <= now]

    feed, plans, checked, now = SimFeed(published), [], [], NOW
    while now < burst_at + timedelta(days=30):
        plans.append(feed.check(now))
        checked.append(now)
        now = plans[-1].next_attempt or now
    during = [
        plan.interval
        for plan, at in zip(plans, checked, strict=True)
        if burst_at + timedelta(hours=3) < at < burst_at + timedelta(days=2)
    ]
    assert during and during[0] < DAY / 3 and min(during) <= 2 * HOUR  # the burst raised the rate at once
    late = [plan.interval for plan, at in zip(plans, checked, strict=True) if at > burst_at + timedelta(days=14)]
    assert statistics.median(late) > 3 * min(during)  # and quiet decays it
    assert plans[-1].interval >= 4 * HOUR


def test_very_active_feed_is_capped_at_min_interval() -> None:
    plans = SimFeed(every(120)).run(10)
    assert plans[-1].interval == POLICY.min_interval
    assert plans[-1].reason.endswith("capped at min_interval")


def weekday_mornings(now: datetime) -> list[datetime]:
    """Posts at 09:00-09:50 UTC on weekdays, every 10 minutes, for 30 days before ``now``."""
    day0 = (now - timedelta(days=30)).replace(hour=9, minute=0, second=0, microsecond=0)
    posts = [day0 + timedelta(days=d, minutes=10 * k) for d in range(31) for k in range(6)]
    return [p for p in posts if p.weekday() < 5 and p <= now]


def test_a_feed_is_checked_sooner_in_its_posting_hours() -> None:
    feed = SimFeed(weekday_mornings)
    monday_night = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)  # a Monday
    now = monday_night - timedelta(days=14)
    while now < monday_night - timedelta(hours=1):  # two weeks of checks: about 60 posts seen
        now = feed.check(now).next_attempt or monday_night
    night = intervals.plan(feed.state, monday_night, POLICY)
    morning = intervals.plan(feed.state, monday_night.replace(hour=8, minute=45), POLICY)
    assert morning.interval < night.interval / 2  # its hours come: check soon
    assert feed.state.habits is not None
    hours, days = habits.activity(feed.state.habits, habits.Prior())
    assert days[5] < max(days) / 3 and hours[3] < hours[9] / 10  # Saturdays and nights are quiet


def hinted(history_checks: int, **hints: object) -> SourceState:
    changes = tuple(Check(NOW - timedelta(hours=k), HOUR, True, 1) for k in range(history_checks, 0, -1))
    return SourceState(URL, URL, last_success=NOW, history=changes, hints=FeedHints(**hints))  # type: ignore[arg-type]


def test_cadence_hint_replaces_the_default_while_evidence_is_thin() -> None:
    plan = intervals.plan(hinted(0, update_period=6 * HOUR), NOW, POLICY)
    assert plan.interval == 6 * HOUR
    assert plan.reason == "hint: sy:updatePeriod every 6 h"


def test_observation_outweighs_a_cadence_hint_after_enough_checks() -> None:
    plan = intervals.plan(hinted(6, update_period=6 * HOUR), NOW, POLICY)
    assert plan.interval <= 4 * HOUR  # may stretch toward the hint, at most 4x observed
    assert "limited to 4x" in plan.reason


def test_ttl_lengthens_observed_interval_within_the_stretch() -> None:
    plan = intervals.plan(hinted(6, ttl=90 * 60.0), NOW, POLICY)
    assert plan.interval == 90 * 60.0
    assert plan.reason == "hint: ttl 90 min"


def test_a_feed_that_turns_over_between_checks_is_checked_sooner_whatever_its_hint_says() -> None:
    """An hourly feed of 10 items that claims a daily cadence: every check a
    day apart finds all 10 entries new, so posts were missed; halve the gap."""
    plans = SimFeed(every(HOUR), FeedHints(update_period=24 * HOUR)).run(5)
    assert plans[0].interval == 24 * HOUR  # the hint, while nothing is known
    assert plans[1].interval <= 12 * HOUR and "posts may have been missed" in plans[1].reason
    assert plans[2].interval <= 6 * HOUR
    assert all(plan.interval <= 6 * HOUR for plan in plans[2:])  # 10 items cover the gap again


def test_a_short_feed_changing_is_not_taken_for_an_overflow() -> None:
    """A feed that lists only its latest two posts is all new after any change."""

    def two_latest(now: datetime) -> list[datetime]:
        return every(6 * HOUR)(now)[-2:]

    plans = SimFeed(two_latest).run(6)
    assert not any("missed" in plan.reason for plan in plans)


def test_hints_cannot_break_the_bounds() -> None:
    fast = intervals.plan(hinted(0, update_period=60.0), NOW, POLICY)
    assert fast.interval == POLICY.min_interval and fast.reason.endswith("capped at min_interval")
    slow_hint = Hint(365 * DAY, "Cache-Control max-age 31536000 s", "freshness")
    slow = intervals.plan(SourceState(URL, URL, last_success=NOW), NOW, POLICY, http_hint=slow_hint)
    assert slow.interval == 4 * POLICY.default_interval  # a freshness hint stretches at most 4x
    assert "limited to 4x" in slow.reason
    yearly = intervals.plan(hinted(0, rrule="FREQ=YEARLY"), NOW, POLICY)
    assert yearly.interval == POLICY.max_interval and yearly.reason.endswith("capped at max_interval")
    assert yearly.next_attempt is not None
    assert yearly.next_attempt - NOW <= timedelta(seconds=POLICY.max_interval)


def test_ended_podcast_schedule_slows_a_new_feed_to_the_maximum() -> None:
    state = hinted(0, rrule="FREQ=WEEKLY;UNTIL=2023-12-31T00:00:00.000Z;BYDAY=MO")
    plan = intervals.plan(state, NOW, Policy(max_interval=7 * DAY))
    assert plan.interval == 7 * DAY
    assert "UNTIL has passed" in plan.reason


def test_skip_hours_move_the_attempt_to_an_allowed_hour() -> None:
    state = SourceState(URL, URL, last_success=NOW, hints=FeedHints(skip_hours=(12, 13, 14, 15)))
    plan = intervals.plan(state, NOW, POLICY)  # NOW is 12:00, default 1 h (less jitter) lands in 12:xx
    assert plan.next_attempt is not None and plan.next_attempt.hour == 16
    assert "skipHours" in plan.reason


@pytest.mark.parametrize("interval", [3600.0, 86400.0])
def test_jitter_is_bounded_stable_and_off_round_times(interval: float) -> None:
    urls = [f"https://host{n}.example/feed" for n in range(200)]
    waits = [jitter.jitter(url, NOW, interval, 900.0, 86400.0) for url in urls]
    assert all(900.0 <= wait <= interval for wait in waits)  # never later than the interval says
    assert all(interval - wait <= interval * 0.1 + 60 for wait in waits)
    assert len({round(wait) for wait in waits}) > 80  # spread, not one wave
    dues = [NOW + timedelta(seconds=wait) for wait in waits]
    assert not any(due.second == 0 and due.microsecond == 0 for due in dues)
    later = [jitter.jitter(url, NOW + timedelta(hours=5), interval, 900.0, 86400.0) for url in urls]
    assert all(abs(a - b) <= interval * 0.1 * 0.2 + 1e-6 for a, b in zip(waits, later, strict=True))


def test_jitter_never_goes_below_min_interval() -> None:
    """A feed at min_interval is checked exactly that often: builds every 15 min catch each due time."""
    waits = {jitter.jitter(f"https://host{n}.example/feed", NOW, 900.0, 900.0, 86400.0) for n in range(50)}
    assert waits == {900.0}


def failed(kind: str, failures: int, **state: object) -> SourceState:
    return SourceState(URL, URL, failures=failures, error_kind=kind, **state)  # type: ignore[arg-type]


def test_transient_failures_double_from_min_to_max_interval() -> None:
    seen = [intervals.plan(failed("timeout", n), NOW, POLICY).interval for n in range(1, 10)]
    assert seen == [900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 57600.0, 86400.0, 86400.0]
    assert intervals.plan(failed("http_5xx", 3), NOW, POLICY).reason == "backoff: http_5xx x3"


def test_not_found_climbs_a_slower_ladder_to_seven_days() -> None:
    seen = [intervals.plan(failed("http_404", n), NOW, POLICY).interval for n in range(1, 7)]
    assert seen == [3600.0, 14400.0, 57600.0, 230400.0, 604800.0, 604800.0]
    assert "slow ladder" in intervals.plan(failed("http_404", 2), NOW, POLICY).reason


@pytest.mark.parametrize(("retry_after", "expected"), [(3 * DAY, 3 * DAY), (30 * DAY, 7 * DAY)])
def test_retry_after_is_honoured_up_to_seven_days(retry_after: float, expected: float) -> None:
    plan = intervals.plan(failed("http_429", 1), NOW, POLICY, retry_after=retry_after)
    assert plan.next_attempt is not None
    assert plan.next_attempt - NOW >= timedelta(seconds=expected)
    assert plan.next_attempt - NOW <= timedelta(seconds=expected * 1.1 + 60)
    assert plan.reason.startswith(f"retry-after: {expected:.0f} s")


def test_short_retry_after_does_not_shorten_the_backoff() -> None:
    plan = intervals.plan(failed("http_5xx", 4), NOW, POLICY, retry_after=60)
    assert plan.interval == 7200.0


def test_parse_failure_keeps_the_normal_cadence() -> None:
    plan = intervals.plan(failed("parse", 3, interval=7200.0), NOW, POLICY)
    assert plan.interval == 7200.0
    assert plan.reason == "parse failure x3: normal cadence"


def test_gone_holds_until_the_site_entry_changes() -> None:
    site = Site("Blog", URL, "https://blog.example.org/")
    fingerprint = schedule.site_fingerprints([site])[URL]
    observation = Observation(FetchRequest(URL, URL), Failed(HTTPStatusError(URL, 410)))
    state = new_state(SourceState(URL, URL), observation, NOW, fingerprint)
    plan = intervals.plan(state, NOW, POLICY)
    assert plan.next_attempt is None and "until its sites.yaml entry changes" in plan.reason
    state = replace(state, next_attempt=None)
    far = NOW + timedelta(days=365)
    assert not schedule.is_due(state, far, fingerprint)
    assert schedule.due_sources([URL], {URL: state}, far, {URL: fingerprint}) == []
    assert schedule.due_sources([URL], {URL: state}, far, {URL: fingerprint}, force=True) == [URL]
    edited = schedule.site_fingerprints([replace(site, link="https://blog.example.org/new/")])[URL]
    assert edited != fingerprint and schedule.is_due(state, NOW, edited)


def test_parse_failure_remembers_the_invalid_body() -> None:
    observation = Observation(FetchRequest(URL, URL), Failed(ParseError(URL, "bad")), body_hash="abc")
    state = new_state(SourceState(URL, URL, etag='"v1"'), observation, NOW)
    assert state.failed_body_hash == "abc" and state.etag == '"v1"' and state.failures == 1


def test_due_sources_orders_new_then_most_overdue_and_honours_only() -> None:
    a, b, c, d = (f"https://{n}.example/feed" for n in "abcd")
    states = {
        a: SourceState(a, a, next_attempt=NOW - timedelta(minutes=5)),
        b: SourceState(b, b, next_attempt=NOW - timedelta(hours=2)),
        c: SourceState(c, c, next_attempt=NOW + timedelta(hours=1)),
    }
    assert schedule.due_sources([a, b, c, d], states, NOW) == [d, b, a]
    assert schedule.due_sources([a, b, c, d], states, NOW, only=[c]) == [c]
    assert schedule.due_sources([a, b, c, d], states, NOW, force=True) == [d, b, a, c]


def test_due_sources_ask_healthy_feeds_before_failing_ones() -> None:
    """When a throttling host's wait ends, its other feeds go first, not the one it throttled."""
    throttled, companion = "https://x.example/a", "https://x.example/b"
    wait_over = NOW - timedelta(minutes=1)
    states = {
        throttled: SourceState(throttled, throttled, next_attempt=wait_over - timedelta(seconds=5), failures=3),
        companion: SourceState(companion, companion, next_attempt=wait_over),
    }
    assert schedule.due_sources([throttled, companion], states, NOW) == [companion, throttled]


def test_skipped_sources_are_recorded() -> None:
    state = SourceState(URL, URL, next_attempt=NOW - timedelta(minutes=1))
    throttled = intervals.skipped(state, "throttled", "example.org", NOW, retry_after=600)
    assert throttled.next_attempt is not None and throttled.next_attempt == NOW + timedelta(seconds=600)
    assert throttled.reason is not None and throttled.reason.startswith("throttled: example.org")
    breaker = intervals.skipped(state, "breaker", "example.org", NOW)
    assert breaker.next_attempt == state.next_attempt and breaker.reason is not None
    assert breaker.reason.startswith("breaker: example.org")


def test_a_fetch_error_that_is_not_http_counts_as_transient() -> None:
    observation = Observation(FetchRequest(URL, URL), Failed(FeedError(URL, "boom", kind="network")))
    state = new_state(SourceState(URL, URL, failures=2, error_kind="network"), observation, NOW)
    assert state.failures == 3
    assert intervals.plan(state, NOW, POLICY).interval == 3600.0
