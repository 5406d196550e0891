"""Several `syndicator worker` processes on one PostgreSQL state against the loopback farm (issue 13).

For each worker count W (--workers-list 1,2,4): a new database, a farm of
--feeds feeds on --hosts hosts (no redirects or throttling, so one request
per feed is the whole job), W worker processes started at once, and the
clock runs until every source was attempted. Printed per W:

- wall seconds to fetch every feed once, and fetches a second;
- due lag p50 / p99: every source is due at the start, so a source's lag
  is when its fetch was stored (last_attempt) minus the start;
- duplicate fetches: requests the farm saw beyond one per feed (must be 0);
- the highest concurrency one host saw (must stay at or below
  per_host_concurrency);

then one kill -9 run: two workers with --lease, one killed mid-run; the
sources it held are fetched by the other within one lease of the kill.

The PostgreSQL server is --state's, else a throwaway cluster started here
with the repository's test fixture code (tests/postgres.py). Every wait is
bounded by --timeout. Usage:

    .venv/bin/python benchmarks/workers_bench.py --feeds 10000 --hosts 200 --workers-list 1,2,4
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from farm import Farm  # noqa: E402
from farm_profile import FarmProfile  # noqa: E402

SYNDICATOR = Path(sys.executable).with_name("syndicator")


@contextlib.contextmanager
def server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from tests.postgres import find_bin, throwaway_cluster

    folder = find_bin()
    if folder is None:
        raise SystemExit("no PostgreSQL binaries: apt-get install postgresql, or pass --state")
    with throwaway_cluster(folder) as started:
        yield started


def new_database(admin: str, name: str) -> str:
    import psycopg
    from psycopg import sql

    from tests.postgres import with_database

    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        db.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return with_database(admin, name)


def attempts(url: str) -> list[datetime]:
    import psycopg

    with psycopg.connect(url) as db:
        try:
            rows = db.execute("SELECT last_attempt FROM sources WHERE last_attempt IS NOT NULL").fetchall()
        except psycopg.errors.UndefinedTable:  # no worker made the schema yet
            return []
    return [datetime.fromisoformat(row[0]) for row in rows]


def attempted(url: str) -> int:
    """How many sources were attempted (a count: the wait loop must not load the workers' server)."""
    import psycopg

    with psycopg.connect(url) as db:
        try:
            row = db.execute("SELECT COUNT(*) FROM sources WHERE last_attempt IS NOT NULL").fetchone()
        except psycopg.errors.UndefinedTable:
            return 0
    return int(row[0]) if row else 0


def held_by(url: str, worker: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as db:
        try:
            return {row[0] for row in db.execute("SELECT source FROM leases WHERE worker = %s", (worker,))}
        except psycopg.errors.UndefinedTable:
            return set()


def attempted_after(url: str, sources: set[str], moment: datetime) -> int:
    import psycopg

    with psycopg.connect(url) as db:
        rows = db.execute("SELECT url, last_attempt FROM sources WHERE url = ANY(%s)", (list(sources),)).fetchall()
    return sum(1 for _, at in rows if at and datetime.fromisoformat(at) > moment)


def start_workers(config: Path, count: int, threads: int, *extra: str) -> list[subprocess.Popen[bytes]]:
    env = {k: v for k, v in os.environ.items() if k != "SYNDICATOR_STATE"}
    return [
        subprocess.Popen(
            [
                str(SYNDICATOR),
                "worker",
                "--config",
                str(config),
                "--name",
                f"w{i}",
                "--workers",
                str(threads),
                "-q",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        for i in range(count)
    ]


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feeds", type=int, default=10_000)
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--workers-list", default="1,2,4")
    parser.add_argument("--threads", type=int, default=8, help="fetch threads per worker")
    parser.add_argument("--per-host", type=int, default=2)
    parser.add_argument("--state", help="an existing PostgreSQL server (superuser URL); default: a throwaway one")
    parser.add_argument("--timeout", type=float, default=1200.0)
    args = parser.parse_args()
    profile = FarmProfile(seed=1, redirect_301_share=0, redirect_302_share=0, throttle_share=0)
    work = Path(tempfile.mkdtemp(prefix="workers-bench-"))
    print(
        f"| workers | feeds | wall s | fetches/s | due lag p50 / p99 s | duplicate fetches | peak per host "
        f"(limit {args.per_host}) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with server(args.state) as admin, Farm(hosts=args.hosts, feeds=args.feeds, profile=profile) as farm:
        for count in [int(n) for n in args.workers_list.split(",")]:
            url = new_database(admin, f"bench_{count}")
            config = farm.write_sites_yaml(
                work / f"sites-{count}.yaml",
                state=url,
                host_gap=0,
                per_host_concurrency=args.per_host,
                cache=str(work / f"cache-{count}"),
                output=str(work / f"public-{count}"),
            )
            farm.reset_stats()
            started = datetime.now(UTC)
            clock = time.monotonic()
            processes = start_workers(config, count, args.threads)
            try:
                while time.monotonic() - clock < args.timeout and attempted(url) < args.feeds:
                    time.sleep(1.0)
                wall = time.monotonic() - clock
            finally:
                stop(processes)
            lags = [(at - started).total_seconds() for at in attempts(url)]
            stats = farm.stats()
            print(
                f"| {count} | {len(lags)} of {args.feeds} | {wall:.1f} | {len(lags) / wall:.0f} | "
                f"{statistics.median(lags):.1f} / {percentile(lags, 0.99):.1f} | "
                f"{stats['requests'] - args.feeds} | {stats['max_host_concurrency']} |",
                flush=True,
            )
        # kill -9: two workers, one killed while it holds leases
        url = new_database(admin, "bench_kill")
        lease = 20.0
        config = farm.write_sites_yaml(
            work / "sites-kill.yaml",
            state=url,
            host_gap=0,
            per_host_concurrency=args.per_host,
            cache=str(work / "cache-kill"),
            output=str(work / "public-kill"),
        )
        processes = start_workers(config, 2, args.threads, "--lease", str(lease))
        try:
            deadline = time.monotonic() + 60
            victim: set[str] = set()
            while time.monotonic() < deadline and len(victim) < 4:
                time.sleep(0.2)
                victim = held_by(url, "w0")
            processes[0].send_signal(signal.SIGKILL)
            killed = datetime.now(UTC)
            clock = time.monotonic()
            while time.monotonic() - clock < 3 * lease and attempted_after(url, victim, killed) < len(victim):
                time.sleep(0.5)
            recovered = time.monotonic() - clock
            done = attempted_after(url, victim, killed)
        finally:
            stop(processes)
        print(
            f"\nkill -9 of one of two workers holding {len(victim)} leases (--lease {lease:.0f}): {done} of them "
            f"fetched by the other worker {recovered:.1f} s after the kill (within one lease: "
            f"{'yes' if done == len(victim) and recovered <= lease + 5 else 'no'})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
