"""A bounded worker pool that is fair to hosts (seed 000, "per-host fairness").

* At most ``workers`` jobs run at once, and at most ``per_host`` of them for
  one host key.
* Hosts take turns (round robin), so a host with hundreds of feeds cannot
  starve the others.
* Successive job starts for one host are spaced at least ``host_gap``
  seconds apart: a publisher sees a steady trickle, not a burst. Pacing
  delays jobs; it never drops one.
* When a result says the host asked us to stop (429, or 503 with
  Retry-After), or ``breaker`` consecutive jobs of one host failed, the
  host's remaining jobs are not run in this build: they come back as
  :class:`Skipped` and wait for the next build.

The pool knows nothing of HTTP: callers pass the job, its host key and a
judge of its result. Time is read from ``clock`` and waited out with
``sleep`` and ``wait``, so a test can drive the pool on a fake clock. The
main thread never polls: while every worker is busy it blocks until a job
ends, and otherwise until a job ends or the next pacing host may start.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Verdict = Literal["ok", "failed", "stop"]


@dataclass(frozen=True)
class Skipped:
    """A job the pool did not run in this build.

    Attributes:
        reason: "throttled" (the host asked us to wait) or "breaker" (too
            many consecutive failures from the host).
        host: the host key.
    """

    reason: Literal["throttled", "breaker"]
    host: str


def wait_first(futures: set[Future[Any]], timeout: float | None) -> set[Future[Any]]:
    """Block until one of ``futures`` is done or ``timeout`` seconds pass (None: no limit).

    Returns the futures that are done (an empty set when the time ran out).
    """
    return wait(futures, timeout=timeout, return_when=FIRST_COMPLETED).done


@dataclass
class HostStats:
    """Per-host figures of one run: jobs started, peak jobs at once, jobs skipped."""

    started: int = 0
    peak: int = 0
    skipped: int = 0


@dataclass
class HostPool(Generic[T, R]):
    """Runs jobs on threads with per-host limits; see the module docstring.

    Attributes:
        workers: threads (int >= 1).
        per_host: jobs of one host at once (int >= 1).
        host_gap: minimum seconds between two job starts for one host.
        breaker: consecutive failures of one host that skip the rest of its
            jobs in this run (0 disables).
        clock: monotonic seconds; injectable for tests.
        stats: {host key: HostStats}, filled while running.
        sleep: blocks for the seconds given, when nothing runs and every
            waiting host is pacing; injectable for tests.
        wait: ``wait(futures, timeout)`` blocks until one of the running
            jobs' futures is done or ``timeout`` seconds pass (None: no
            limit) and returns the done ones (:func:`wait_first`);
            injectable for tests.
    """

    workers: int
    per_host: int = 2
    host_gap: float = 0.0
    breaker: int = 0
    clock: Callable[[], float] = time.monotonic
    stats: dict[str, HostStats] = field(default_factory=dict)
    sleep: Callable[[float], None] = time.sleep
    wait: Callable[[set[Future[Any]], float | None], set[Future[Any]]] = wait_first

    def run(self, jobs: Iterable[T], host: Callable[[T], str], work: Callable[[T], R],
            judge: Callable[[R], Verdict]) -> Iterator[tuple[T, R | Skipped]]:
        """Run ``work`` on every job; yield (job, result or Skipped) as each ends.

        Args:
            jobs: the jobs, in priority order within each host.
            host: the host key of a job.
            work: the function run on a worker thread; it must not raise for
                expected failures (an exception propagates and ends the run).
            judge: "ok", "failed" or "stop" for a result (see module docstring).
        """
        queues: dict[str, deque[T]] = {}
        for job in jobs:
            queues.setdefault(host(job), deque()).append(job)
        order = deque(queues)
        running: dict[Future[R], tuple[str, T]] = {}
        in_flight: Counter[str] = Counter()
        failures: Counter[str] = Counter()
        next_start: dict[str, float] = {}
        executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="fetch")
        finished = False
        try:
            while order or running:
                self._dispatch(order, queues, in_flight, next_start, running, executor, work)
                if not running:
                    if order:  # every waiting host is pacing: sleep until the first may start
                        self.sleep(max(0.0, min(next_start[h] for h in order) - self.clock()))
                    continue
                done = self.wait(set(running), self._pause(order, in_flight, next_start, len(running)))
                for future in [f for f in running if f in done]:  # in the order they started
                    name, job = running.pop(future)
                    in_flight[name] -= 1
                    result = future.result()
                    yield job, result
                    yield from self._judge(name, judge(result), failures, queues, order)
            finished = True
        finally:
            # Interrupted (Ctrl-C, or the caller stopped): do not wait for running jobs.
            executor.shutdown(wait=finished, cancel_futures=True)

    def _dispatch(self, order: deque[str], queues: dict[str, deque[T]], in_flight: Counter[str],
                  next_start: dict[str, float], running: dict[Future[R], tuple[str, T]],
                  executor: ThreadPoolExecutor, work: Callable[[T], R]) -> None:
        """Start jobs, one per eligible host per pass, until workers are full."""
        started = True
        while started and len(running) < self.workers:
            started = False
            for _ in range(len(order)):
                if len(running) >= self.workers or not order:
                    return
                name = order[0]
                order.rotate(-1)
                now = self.clock()
                if in_flight[name] >= self.per_host or next_start.get(name, 0.0) > now:
                    continue
                job = queues[name].popleft()
                if not queues[name]:
                    order.remove(name)
                in_flight[name] += 1
                next_start[name] = now + self.host_gap
                stats = self.stats.setdefault(name, HostStats())
                stats.started += 1
                stats.peak = max(stats.peak, in_flight[name])
                running[executor.submit(work, job)] = (name, job)
                started = True

    def _pause(self, order: deque[str], in_flight: Counter[str],
               next_start: dict[str, float], busy: int) -> float | None:
        """Seconds until a pacing host may start, or None to wait for a job to end.

        With all ``busy`` workers taken nothing can start before a job ends,
        so a host whose pacing is over is no reason to wake up: a zero
        timeout there made the main thread spin while the workers worked.
        """
        if busy >= self.workers:
            return None
        waits = [next_start[h] for h in order if in_flight[h] < self.per_host and h in next_start]
        return max(0.0, min(waits) - self.clock()) if waits else None

    def _judge(self, name: str, verdict: Verdict, failures: Counter[str],
               queues: dict[str, deque[T]], order: deque[str]) -> Iterator[tuple[T, Skipped]]:
        if verdict == "ok":
            failures[name] = 0
            return
        failures[name] += 1
        reason: Literal["throttled", "breaker"] | None = None
        if verdict == "stop":
            reason = "throttled"
        elif self.breaker and failures[name] >= self.breaker:
            reason = "breaker"
        if reason is None or not queues.get(name):
            return
        skipped = queues.pop(name)
        if name in order:
            order.remove(name)
        self.stats.setdefault(name, HostStats()).skipped += len(skipped)
        for job in skipped:
            yield job, Skipped(reason, name)
