"""Main-thread CPU of syndicator's HostPool while every worker is busy.

The fetch pool's main thread only hands out jobs and collects results; while
the workers wait on the network it should sleep, not poll. This runs
``HostPool.run`` over jobs that block for ``--job-ms`` (a stand-in for a
request) spread over ``--hosts`` hosts, and prints the main thread's CPU
time (``time.thread_time()``) as a percent of wall time, with how busy the
workers were. Target: under 5 %.

    .venv/bin/python benchmarks/pool_cpu.py                   # 8 workers, 400 jobs, 40 hosts, 50 ms
    .venv/bin/python benchmarks/pool_cpu.py --host-gap 0.5    # paced as a default sites.yaml is

Exit status 1 when the figure is over ``--target``.
"""

from __future__ import annotations

import argparse
import threading
import time
from dataclasses import dataclass

from syndicator.poll.pool import HostPool


@dataclass(frozen=True)
class Figures:
    """One run: wall and main-thread CPU seconds, worker busy share (0..1), jobs done."""

    wall_s: float
    main_cpu_s: float
    worker_busy: float
    jobs: int

    @property
    def main_cpu_percent(self) -> float:
        """Main-thread CPU as a percent of wall time."""
        return 100.0 * self.main_cpu_s / self.wall_s if self.wall_s else 0.0


def measure(workers: int, jobs: int, hosts: int, job_s: float, per_host: int, host_gap: float) -> Figures:
    """Run ``jobs`` jobs that each block ``job_s`` seconds on a HostPool; return its figures."""
    pool: HostPool[int, float] = HostPool(workers=workers, per_host=per_host, host_gap=host_gap)
    blocker = threading.Event()  # never set: each job blocks for its full timeout, like a slow server

    def work(job: int) -> float:
        began = time.perf_counter()
        blocker.wait(job_s)
        return time.perf_counter() - began

    busy = 0.0
    done = 0
    wall0, cpu0 = time.perf_counter(), time.thread_time()
    for _job, result in pool.run(range(jobs), host=lambda j: f"host{j % hosts}", work=work, judge=lambda r: "ok"):
        busy += result if isinstance(result, float) else 0.0
        done += 1
    wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
    return Figures(wall, cpu, busy / (workers * wall), done)


def main(argv: list[str] | None = None) -> int:
    """Parse options, measure, print one line; 1 when main-thread CPU is over the target."""
    p = argparse.ArgumentParser(prog="pool_cpu.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, default=8, help="worker threads (default: 8)")
    p.add_argument("--jobs", type=int, default=400, help="jobs (default: 400)")
    p.add_argument("--hosts", type=int, default=40, help="hosts the jobs are spread over (default: 40)")
    p.add_argument("--job-ms", type=float, default=50.0, help="milliseconds each job blocks (default: 50)")
    p.add_argument("--per-host", type=int, default=2, help="jobs of one host at once (default: 2)")
    p.add_argument("--host-gap", type=float, default=0.0, help="seconds between starts per host (default: 0)")
    p.add_argument("--target", type=float, default=5.0, help="largest acceptable percent (default: 5)")
    args = p.parse_args(argv)
    f = measure(args.workers, args.jobs, args.hosts, args.job_ms / 1000, args.per_host, args.host_gap)
    print(
        f"{f.jobs} jobs, {args.workers} workers, {args.hosts} hosts, {args.job_ms:g} ms each, "
        f"host_gap {args.host_gap:g} s: wall {f.wall_s:.2f} s, workers busy {100 * f.worker_busy:.0f} %, "
        f"main-thread CPU {f.main_cpu_s * 1000:.0f} ms = {f.main_cpu_percent:.2f} % of wall "
        f"(target < {args.target:g} %)"
    )
    return 0 if f.main_cpu_percent < args.target else 1


if __name__ == "__main__":
    raise SystemExit(main())
