"""HostPool alone, on a fake clock: limits, turns, pacing, stop, breaker, exactly once.

Jobs run on the pool's real worker threads but take no real time. Each job
records its start on the fake clock and returns at once with its simulated
end (start + its duration). The fake ``wait`` lets the running jobs return,
then hands the pool those that end first, moving the clock to that end (or
only to the pool's timeout, when that comes sooner); the fake ``sleep``
moves the clock. Every run is so exact and repeatable, and no test depends
on how fast the machine is.
"""

from __future__ import annotations

import concurrent.futures
from collections import Counter
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pytest

from syndicator.poll.pool import HostPool, Skipped, Verdict, wait_first

#: Fake waits allowed per run before the pool counts as polling (a spinning pool never ends on a fake clock).
MAX_WAITS = 10_000


@dataclass(frozen=True)
class Job:
    """A job for ``host`` taking ``seconds`` of fake time and judged ``verdict``; ``boom`` raises."""

    host: str
    n: int
    seconds: float = 1.0
    verdict: Verdict = "ok"
    boom: bool = False


@dataclass(frozen=True)
class Done:
    """What a job did: when it started and ended on the fake clock."""

    job: Job
    start: float
    end: float


@dataclass
class FakeTime:
    """A fake clock with the ``sleep`` and ``wait`` a HostPool takes; records what the pool asked for."""

    now: float = 0.0
    timeouts: list[float | None] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def wait(self, futures: set[Future[Any]], timeout: float | None) -> set[Future[Any]]:
        self.timeouts.append(timeout)
        if len(self.timeouts) > MAX_WAITS:
            raise AssertionError(f"{MAX_WAITS} waits: the pool polls instead of waiting")
        concurrent.futures.wait(futures)  # the jobs return at once; their fake end is in their result
        ends = {f: self.now if f.exception() else f.result().end for f in futures}
        first = min(ends.values())
        if timeout is not None and first > self.now + timeout:
            self.now += timeout
            return set()
        self.now = max(self.now, first)
        return {f for f, end in ends.items() if end <= self.now}

    def work(self, job: Job) -> Done:
        if job.boom:
            raise ValueError(f"bug in job {job.n}")
        return Done(job, self.now, self.now + job.seconds)


def pool(fake: FakeTime, **settings: Any) -> HostPool[Job, Done]:
    """A HostPool on ``fake``'s clock, sleep and wait."""
    return HostPool(clock=fake.clock, sleep=fake.sleep, wait=fake.wait, **settings)


def run(fake: FakeTime, jobs: list[Job], **settings: Any) -> list[tuple[Job, Done | Skipped]]:
    """Run ``jobs`` on a fresh pool; every yielded (job, result) in order."""
    return list(pool(fake, **settings).run(jobs, host=lambda j: j.host, work=fake.work, judge=lambda d: d.job.verdict))


def jobs_of(host: str, count: int, seconds: float = 1.0, **fields: Any) -> list[Job]:
    """Jobs 1..``count`` of ``host``, each taking ``seconds`` of fake time."""
    return [Job(host, n, seconds, **fields) for n in range(1, count + 1)]


def done(results: list[tuple[Job, Done | Skipped]]) -> list[Done]:
    """The results of the jobs that ran, in the order they started."""
    return sorted((r for _, r in results if isinstance(r, Done)), key=lambda d: (d.start, d.job.host, d.job.n))


def most_at_once(runs: list[Done]) -> int:
    """The largest number of ``runs`` whose [start, end) intervals overlap."""
    events = sorted([(d.start, 1) for d in runs] + [(d.end, -1) for d in runs])  # an end sorts before a start
    count = peak = 0
    for _, step in events:
        count += step
        peak = max(peak, count)
    return peak


@pytest.mark.parametrize("per_host", [1, 2, 3])
def test_per_host_concurrency_is_never_exceeded(per_host: int) -> None:
    fake = FakeTime()
    jobs = [Job(host, n, seconds=1 + n % 3) for n in range(12) for host in ("a", "b")] + jobs_of("c", 3)
    runs = done(run(fake, jobs, workers=8, per_host=per_host))
    peaks = {host: most_at_once([d for d in runs if d.job.host == host]) for host in "abc"}
    assert max(peaks.values()) <= per_host
    assert peaks["a"] == peaks["b"] == per_host  # hosts with many jobs use their whole allowance
    assert most_at_once(runs) <= 8


def test_workers_bound_the_jobs_at_once() -> None:
    fake = FakeTime()
    runs = done(run(fake, [j for h in "abcdef" for j in jobs_of(h, 4)], workers=3, per_host=2))
    assert most_at_once(runs) == 3


def test_hosts_take_turns() -> None:
    fake = FakeTime()
    jobs = jobs_of("a", 3) + jobs_of("b", 2) + jobs_of("c", 1)
    runs = done(run(fake, jobs, workers=1, per_host=1))
    assert [(d.job.host, d.job.n) for d in runs] == [("a", 1), ("b", 1), ("c", 1), ("a", 2), ("b", 2), ("a", 3)]
    assert [d.start for d in runs] == [0, 1, 2, 3, 4, 5]  # one at a time, back to back


def test_host_gap_spaces_the_starts_of_one_host() -> None:
    fake = FakeTime()
    runs = done(
        run(fake, jobs_of("a", 4, seconds=0.1) + jobs_of("b", 2, seconds=0.1), workers=4, per_host=2, host_gap=0.5)
    )
    starts = {host: [d.start for d in runs if d.job.host == host] for host in ("a", "b")}
    assert starts["a"] == pytest.approx([0.0, 0.5, 1.0, 1.5])
    assert starts["b"] == pytest.approx([0.0, 0.5])  # hosts are paced apart, not one after the other
    assert fake.sleeps  # nothing ran while both hosts paced: the pool slept on the injected sleep


def test_a_stop_verdict_skips_the_rest_of_that_host() -> None:
    fake = FakeTime()
    jobs = [Job("a", 1, verdict="stop"), *jobs_of("a", 3)[1:], *jobs_of("b", 2)]
    p = pool(fake, workers=2, per_host=1)
    results = list(p.run(jobs, host=lambda j: j.host, work=fake.work, judge=lambda d: d.job.verdict))
    skipped = [(job.n, r) for job, r in results if isinstance(r, Skipped)]
    assert skipped == [(2, Skipped("throttled", "a")), (3, Skipped("throttled", "a"))]
    assert sorted((d.job.host, d.job.n) for d in done(results)) == [("a", 1), ("b", 1), ("b", 2)]
    assert (p.stats["a"].started, p.stats["a"].skipped, p.stats["b"].skipped) == (1, 2, 0)


@pytest.mark.parametrize(
    ("verdicts", "ran"),
    [
        (["failed", "failed", "ok", "ok"], 2),
        (["failed", "ok", "failed", "failed", "ok", "ok"], 4),  # the "ok" resets the count
        (["failed", "ok", "failed", "ok", "failed", "ok"], 6),
    ],
    ids=["two-in-a-row", "reset-then-two", "never-two-in-a-row"],
)
def test_breaker_skips_a_host_after_consecutive_failures(verdicts: list[Verdict], ran: int) -> None:
    fake = FakeTime()
    jobs = [Job("a", n, verdict=v) for n, v in enumerate(verdicts, 1)] + [Job("b", 1, verdict="failed")]
    results = run(fake, jobs, workers=1, per_host=1, breaker=2)
    assert [job.n for job, r in results if job.host == "a" and isinstance(r, Done)] == list(range(1, ran + 1))
    skipped = [r for job, r in results if job.host == "a" and isinstance(r, Skipped)]
    assert skipped == [Skipped("breaker", "a")] * (len(verdicts) - ran)
    assert [isinstance(r, Done) for job, r in results if job.host == "b"] == [True]


def test_an_exception_in_work_propagates() -> None:
    fake = FakeTime()
    jobs = jobs_of("a", 2) + [Job("b", 1, boom=True)] + jobs_of("c", 2)
    with pytest.raises(ValueError, match="bug in job 1"):
        run(fake, jobs, workers=2, per_host=1)


def test_every_job_yields_exactly_once() -> None:
    fake = FakeTime()
    verdicts: list[Verdict] = ["ok", "failed", "failed", "ok", "stop", "failed", "ok"]
    jobs = [Job(f"h{n % 5}", n, seconds=0.2 + n % 4 * 0.3, verdict=verdicts[n % len(verdicts)]) for n in range(60)]
    results = run(fake, jobs, workers=3, per_host=2, host_gap=0.3, breaker=2)
    assert Counter(job for job, _ in results) == Counter(jobs)
    assert all(r.host == job.host for job, r in results if isinstance(r, Skipped))
    assert any(isinstance(r, Skipped) for _, r in results) and any(isinstance(r, Done) for _, r in results)


def test_the_pool_waits_for_a_job_instead_of_polling_while_workers_are_busy() -> None:
    fake = FakeTime()
    jobs = [j for host in "abcd" for j in jobs_of(host, 5, seconds=2.0)]
    results = run(fake, jobs, workers=2, per_host=1, host_gap=0.5)
    assert len(results) == 20
    assert all(t is None or t > 0 for t in fake.timeouts), fake.timeouts
    assert len(fake.timeouts) <= 20  # one wait per job that ends, at most


def test_wait_first_returns_the_futures_that_are_done() -> None:
    finished: Future[int] = Future()
    finished.set_result(1)
    pending: Future[int] = Future()
    assert wait_first({finished, pending}, 0.0) == {finished}
    assert wait_first({pending}, 0.0) == set()
    pending.set_result(2)
    assert wait_first({finished, pending}, None) == {finished, pending}


def test_a_host_with_most_of_the_jobs_is_served_as_soon_as_it_would_end_last() -> None:
    """Turns alone serve the big host once a round and leave its jobs to run alone at the end."""
    fake = FakeTime()
    small = [j for h in range(60) for j in jobs_of(f"small{h}", 1)]
    runs = done(run(fake, small + jobs_of("big", 40), workers=8, per_host=2))
    assert max(d.end for d in runs) == 20  # the big host's own floor: 40 jobs, 2 at a time
    big = [d for d in runs if d.job.host == "big"]
    assert most_at_once(big) == 2 and min(d.start for d in big) <= 4


def test_a_paced_host_keeps_its_pace_from_the_start() -> None:
    fake = FakeTime()
    small = [j for h in range(30) for j in jobs_of(f"small{h}", 1, seconds=0.1)]
    runs = done(run(fake, small + jobs_of("big", 10, seconds=0.1), workers=4, per_host=2, host_gap=1.0))
    starts = [d.start for d in runs if d.job.host == "big"]
    assert starts == pytest.approx([float(n) for n in range(10)])  # one start a second, the first at once
    assert max(d.end for d in runs) == pytest.approx(9.1)
