"""How long one claim takes (claims.claim) as the number of sources grows (issue 13).

For each case: a new database on a throwaway PostgreSQL cluster (or
--state's server), --sources sources registered over --hosts hosts, a
share of them due (--due, five minutes overdue; the others due in an
hour), then --claims claims of --limit sources with per_host 2, each
followed by the release of its leases and a store-like write of the
claimed sources' next attempt an hour ahead (as a worker's save does).
Prints the median and the slowest claim in milliseconds. Usage::

    .venv/bin/python benchmarks/claims_bench.py --cases 10000:200:1,100000:200:1,100000:200:0.1,100000:1:1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from workers_bench import new_database, server  # noqa: E402

from syndicator.state import claims, duequeue  # noqa: E402
from syndicator.state.store import Store  # noqa: E402


def one_case(url: str, count: int, hosts: int, due: float, runs: int, limit: int) -> tuple[float, float, float]:
    """(register seconds, median claim ms, slowest claim ms)."""
    with Store.connect(url) as store:
        db = store._db  # noqa: SLF001 - the benchmark's own SQL: the sources' due times
        pairs = [(f"http://h{n % hosts}.test/feed{n}.xml", f"h{n % hosts}.test") for n in range(count)]
        started = time.monotonic()
        duequeue.register(store, pairs)
        registered = time.monotonic() - started
        now = datetime.now(UTC)
        cut = int(count * due)
        later = (now + timedelta(hours=1)).isoformat()
        db.execute(
            "UPDATE sources SET next_attempt = ? WHERE url = ANY(CAST(? AS text[]))",
            (later, [url for url, _ in pairs[cut:]]),
        )
        db.execute(
            "UPDATE sources SET next_attempt = ? WHERE url = ANY(CAST(? AS text[]))",
            ((now - timedelta(minutes=5)).isoformat(), [url for url, _ in pairs[:cut]]),
        )
        db.execute("ANALYZE")
        times = []
        for _ in range(runs):
            clock = time.monotonic()
            held = claims.claim(store, "bench", now, limit, 60.0, 2)
            times.append(time.monotonic() - clock)
            for lease in held:
                claims.release(store, lease)
                db.execute("UPDATE sources SET next_attempt = ? WHERE url = ?", (later, lease.source))
    return registered, statistics.median(times) * 1000, max(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases",
        default="10000:200:1,100000:200:1,100000:200:0.1,100000:1:1",
        help="SOURCES:HOSTS:DUE_SHARE, comma-separated",
    )
    parser.add_argument("--claims", type=int, default=40)
    parser.add_argument("--limit", type=int, default=16)
    parser.add_argument("--state", help="an existing PostgreSQL server (superuser URL); default: a throwaway one")
    args = parser.parse_args()
    print(f"| sources | hosts | due | register s | claim of {args.limit}: median ms | slowest ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    with server(args.state) as admin:
        for number, case in enumerate(args.cases.split(",")):
            count, hosts, due = case.split(":")
            url = new_database(admin, f"bench_claims_{number}")
            registered, median, slowest = one_case(url, int(count), int(hosts), float(due), args.claims, args.limit)
            print(
                f"| {int(count):,} | {int(hosts):,} | {float(due):.0%} | {registered:.1f} | {median:.1f} | "
                f"{slowest:.1f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
