"""Fresher for less: the request budget, posting habits kept in the store, and builds on a machine offline."""

from __future__ import annotations

import http.server
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from syndicator.model import Check, Habits, SourceState
from syndicator.poll import habits, intervals, schedule
from syndicator.poll.path import save
from syndicator.state.store import Store

from .conftest import NOW, in_thread, post, rss, write_config
from .polite_helpers import build, run, status

DAY = 86400.0


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(host: str, port: int, body: bytes) -> Iterator[list[str]]:
    """An HTTP server on host:port answering every GET with ``body``; yields the paths asked for."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the base class's name
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with in_thread(http.server.ThreadingHTTPServer((host, port), Handler)):
        yield asked


def test_a_build_on_a_machine_offline_counts_no_failure_and_the_next_build_tries_again(tmp_path: Path) -> None:
    hosts = [("127.0.0.1", free_port("127.0.0.1")), ("127.0.0.2", free_port("127.0.0.2"))]
    config = write_config(
        tmp_path,
        [{"name": f"Site {n}", "feed": f"http://{host}:{port}/feed.xml"} for n, (host, port) in enumerate(hosts)],
        retries=0,
        host_gap=0,
        timeout=2,
    )
    first = run("build", "--config", str(config), "--now", NOW.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert first.exit_code == 3
    assert "is this machine offline?" in first.stderr and "--force" in first.stderr
    rows = status(config)
    assert all(row["failures"] == 0 and row["due_now"] for row in rows.values()), rows
    body = rss(post(1)).encode()
    with serving(*hosts[0], body) as one, serving(*hosts[1], body) as two:
        report = build(config, NOW + timedelta(minutes=1))
    assert one == ["/feed.xml"] and two == ["/feed.xml"]  # the network is back: asked at once
    assert report["fetched"] == 2 and report["offline"] is False


def test_one_host_down_is_no_offline_machine_and_climbs_its_backoff(tmp_path: Path) -> None:
    port = free_port("127.0.0.1")
    config = write_config(
        tmp_path, [{"name": "Only", "feed": f"http://127.0.0.1:{port}/feed.xml"}], retries=0, host_gap=0, timeout=2
    )
    first = run("build", "--config", str(config), "--now", NOW.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert first.exit_code == 3 and "offline?" not in first.stderr
    row = status(config, NOW + timedelta(minutes=1))["Only"]
    assert row["failures"] == 1 and row["due_now"] is False


@pytest.mark.parametrize("value", [0, -1, "many", True, 2000, ".nan"])
def test_the_budget_must_be_a_number_in_range(tmp_path: Path, value: object) -> None:
    config = write_config(tmp_path, [{"name": "A", "feed": "https://a.example/feed"}])
    text = config.read_text().replace("sites:", f"requests_per_feed_per_day: {value}\nsites:")
    config.write_text(text)
    result = run("build", "--config", str(config))
    assert result.exit_code == 2
    assert "requests_per_feed_per_day" in result.stderr and "sites.yaml" in result.stderr


def busy(n: int, per_day: float) -> SourceState:
    """A source whose habits say it posts ``per_day`` times a day, evenly, for the last 20 days."""
    step = DAY / per_day
    dates = [NOW - timedelta(seconds=step * k) for k in range(int(20 * per_day))]
    return SourceState(
        f"https://h{n}.example/feed", f"https://h{n}.example/feed", habits=habits.learn(None, dates, NOW)
    )


def test_the_budget_slows_every_feed_by_one_factor_only_when_needed() -> None:
    states = [busy(n, per_day) for n, per_day in enumerate([0.2, 1, 3, 10, 40] * 4)]
    policy = schedule.Policy()
    assert schedule.spend(states, NOW, policy, 1000) == policy  # a generous budget changes nothing
    tight = schedule.spend(states, NOW, policy, 6)
    assert tight.at_one_per_day > policy.at_one_per_day
    tighter = schedule.spend(states, NOW, policy, 3)
    assert tighter.at_one_per_day > tight.at_one_per_day
    for chosen in (tight, tighter):  # planned checks per day, as the schedule itself plans them
        plans = [intervals.plan(state, NOW, chosen) for state in states]
        assert all(chosen.min_interval <= plan.interval <= chosen.max_interval for plan in plans)
    held = [replace(state, hold="fingerprint") for state in states]
    assert schedule.spend(held, NOW, policy, 0.1) == policy  # sources on hold cost nothing


def test_habits_survive_the_store(tmp_path: Path) -> None:
    learnt = busy(1, 5).habits
    assert learnt is not None and learnt.count == 100
    with Store.open(tmp_path) as store:
        save(store, SourceState("https://h1.example/feed", "https://h1.example/feed", habits=learnt), None, NOW)
    with Store.open(tmp_path) as store:
        assert store.states()["https://h1.example/feed"].habits == learnt


def test_a_date_seen_before_is_not_counted_twice() -> None:
    dates = [NOW - timedelta(hours=k) for k in range(10)]
    once = habits.learn(None, dates, NOW)
    again = habits.learn(once, dates, NOW)
    assert once.count == again.count == 10
    newer = habits.learn(once, [*dates, NOW + timedelta(minutes=5)], NOW + timedelta(minutes=5))
    assert newer.count == 11 and newer.newest == NOW + timedelta(minutes=5)
    assert habits.learn(None, [NOW + timedelta(days=1)], NOW) == Habits(at=NOW)  # the future is no post


def test_the_rate_is_right_whatever_the_time_watched() -> None:
    for days in (3, 7, 60):  # one post an hour: the decayed count over the decayed time watched
        dates = [NOW - timedelta(hours=k) for k in range(int(24 * days))]
        assert habits.rate(habits.learn(None, dates, NOW), NOW) * DAY == pytest.approx(24, rel=0.05), days


def test_hours_and_weekdays_never_watched_are_not_taken_for_silence() -> None:
    dates = [NOW - timedelta(minutes=20 * k) for k in range(18)]  # one document: six busy hours
    hours, days = habits.activity(habits.learn(None, dates, NOW), habits.Prior(), NOW)
    assert all(0.8 < value < 2 for value in hours + days), (hours, days)  # no habit shown yet (it would be 4 and 0.1)
    weeks = [NOW - timedelta(days=7 * w + d, hours=h) for w in range(6) for d in (0, 1) for h in range(3)]
    hours, days = habits.activity(habits.learn(None, weeks, NOW), habits.Prior(), NOW)
    busiest = max(range(7), key=lambda day: days[day])
    assert days[busiest] > 2 and min(days) < 0.6 and hours.index(max(hours)) in {(NOW.hour - 1) % 24, NOW.hour}


def checked_every(n: int, seconds: float, checks: int = 8) -> SourceState:
    """A source whose history holds ``checks`` checks ``seconds`` apart, up to NOW."""
    history = tuple(Check(NOW - timedelta(seconds=seconds * k), seconds, False, 0) for k in range(checks - 1, -1, -1))
    return SourceState(f"https://h{n}.example/feed", f"https://h{n}.example/feed", history=history)


def test_the_requests_made_are_measured_from_the_histories() -> None:
    policy, day = schedule.Policy(), NOW - timedelta(days=1)
    states = [
        checked_every(1, 900),
        checked_every(2, 3 * 3600),
        SourceState("https://new.example/", "https://new.example/"),
    ]
    measured = schedule.measured_requests(states, policy, NOW, day)
    assert measured == pytest.approx((96 + 8 + 24) / 3)  # the new source counts its default interval
    # Over the last six hours only, the 3-hourly source made two requests: eight a day.
    assert schedule.measured_requests(states, policy, NOW, NOW - timedelta(hours=6)) == pytest.approx((96 + 8 + 24) / 3)
    assert schedule.measured_requests(states[1:2], policy, NOW, NOW - timedelta(hours=6)) == pytest.approx(8)
    old = checked_every(3, 3 * 3600)
    assert schedule.measured_requests([old], policy, NOW + timedelta(days=2), day) is None  # nothing in the span
    new = SourceState("https://new.example/", "https://new.example/")
    assert schedule.measured_requests([new], policy, NOW, day) is None


def ledger(expected: float, hours: float, builds: int = 8) -> schedule.Ledger:
    """``builds`` builds over the last ``hours``, each expecting ``expected`` requests per source per day."""
    step = hours / builds
    return schedule.Ledger(tuple((NOW - timedelta(hours=hours - step * k), expected) for k in range(builds)))


def test_the_budget_is_corrected_by_what_was_measured_against_what_was_expected() -> None:
    policy = schedule.Policy()
    states = [checked_every(n, 1800, checks=8) for n in range(4)]  # 48 requests a day each
    assert schedule.correction(ledger(40, 12), states, policy, NOW) == pytest.approx(48 / 40)
    assert schedule.correction(ledger(10, 12), states, policy, NOW) == schedule.CORRECTION_BOUNDS[1]
    assert schedule.correction(ledger(480, 12), states, policy, NOW) == schedule.CORRECTION_BOUNDS[0]
    assert schedule.correction(ledger(40, 2), states, policy, NOW) == 1  # two hours measure too little
    assert schedule.correction(schedule.Ledger(), states, policy, NOW) == 1  # the first build has no ledger
    # A build far from the others counts for the time until the next one: 11 h at 40, 1 h at 80.
    mixed = schedule.Ledger(((NOW - timedelta(hours=12), 40.0), (NOW - timedelta(hours=1), 80.0)))
    assert schedule.correction(mixed, states, policy, NOW) == pytest.approx(48 / ((11 * 40 + 80) / 12))


def test_the_ledger_keeps_one_day_and_the_policy_spends_the_corrected_budget() -> None:
    states = [busy(n, per_day) for n, per_day in enumerate([0.2, 1, 3, 10, 40] * 4)]
    states = [replace(state, history=checked_every(n, 1800).history) for n, state in enumerate(states)]
    policy = schedule.Policy()
    old = schedule.Ledger(((NOW - timedelta(days=2), 5.0), *ledger(40, 12).expected))
    planned, kept = schedule.budgeted(states, NOW, policy, 6, old)
    assert planned == schedule.spend(states, NOW, policy, 6 / (48 / 40))
    assert [at for at, _ in kept.expected] == [at for at, _ in ledger(40, 12).expected] + [NOW]  # two days ago: gone
    assert kept.expected[-1][1] == pytest.approx(schedule.expected_requests(states, NOW, planned))
    assert schedule.Ledger.read(kept.text()) == replace(
        kept, expected=tuple((at, round(value, 4)) for at, value in kept.expected)
    )
    assert schedule.Ledger.read("not json") == schedule.Ledger.read("6600.0") == schedule.Ledger()
    for garbage in ('{"a": 1}', "[[1, 2]]", '[["not a date", 3]]', "[1]", "[" * 100_000 + "]" * 100_000):
        assert schedule.Ledger.read(garbage) == schedule.Ledger(), garbage
    odd = (
        '[["2026-11-30T10:00:00", 3], ["2026-11-30T11:00:00+00:00", "NaN"], ["2026-11-30T09:00:00+00:00", -1],'
        ' ["2026-11-30T08:00:00+00:00", 2], ["2026-11-30T07:00:00+00:00", 1]]'
    )
    assert schedule.Ledger.read(odd).expected == (  # naive, not finite, negative: dropped; the rest in order
        (NOW - timedelta(hours=5), 1.0),
        (NOW - timedelta(hours=4), 2.0),
    )
    many = schedule.Ledger(tuple((NOW - timedelta(seconds=k), 1.0) for k in range(schedule.LEDGER_ENTRIES + 5)))
    assert len(schedule.Ledger.read(many.text()).expected) == schedule.LEDGER_ENTRIES


def test_the_ledger_is_kept_in_the_store_from_build_to_build(tmp_path: Path) -> None:
    port = free_port("127.0.0.1")
    config = write_config(tmp_path, [{"name": "Only", "feed": f"http://127.0.0.1:{port}/feed.xml"}], host_gap=0)
    with serving("127.0.0.1", port, rss(post(1)).encode()):
        build(config, NOW)
        build(config, NOW + timedelta(hours=1), "--force")
        idle = build(config, NOW + timedelta(hours=1, minutes=1))  # fetched a minute ago: nothing due
        build(config, NOW + timedelta(hours=2), "--force")
    assert idle["sources_due"] == 0
    with Store.open(tmp_path / "cache") as store:
        kept = schedule.Ledger.read(store.value("schedule.ledger"))
    # The first build had no state to expect anything of; a build with nothing due plans nothing.
    assert [at for at, _ in kept.expected] == [NOW + timedelta(hours=1), NOW + timedelta(hours=2)]
    assert all(value > 0 for _, value in kept.expected)
