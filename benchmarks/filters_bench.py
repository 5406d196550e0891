"""The cost of filters in a build's selection (issue 27): :func:`syndicator.site.planet.select_site` over a
stored state of --feeds feeds of --entries entries each (a summary and a content of about 1 KB each, a
third of them saying "crypto", half in the category python), with no filters, a category rule and a
keyword rule; prints the seconds of each and, with --memory, the peak of Python's allocations
(tracemalloc, which slows the run). Usage::

    .venv/bin/python benchmarks/filters_bench.py --feeds 300 --entries 50 [--memory]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from syndicator.configtypes import Config, Site  # noqa: E402
from syndicator.feedtypes import Entry  # noqa: E402
from syndicator.model import SourceState  # noqa: E402
from syndicator.poll.path import save  # noqa: E402
from syndicator.rules import Filters, Rule
from syndicator.site.planet import select_site  # noqa: E402
from syndicator.state.store import Store  # noqa: E402

NOW = datetime(2026, 11, 30, tzinfo=UTC)
CASES = {
    "no filters": Filters(),
    "category": Filters(keep=(Rule(category=("python",)),)),
    "keyword": Filters(drop=(Rule(keyword=("crypto",)),)),
}


def entries(url: str, feed: int, count: int) -> list[Entry]:
    """``count`` entries of the feed number ``feed``, each text its own (no cache answers for another)."""
    return [
        Entry(
            id=f"{url}#{n}",
            title=f"Post {n} of {feed}",
            link=f"https://s{feed}.example/{n}",
            date=NOW - timedelta(hours=n),
            summary="<p>" + f"lorem {n} ipsum {feed} dolor sit amet " * 40 + ("crypto" if n % 3 == 0 else "") + "</p>",
            content="<p>" + f"consectetur {feed} adipiscing {n} elit " * 40 + "</p>",
            categories=("python",) if n % 2 else ("rust",),
        )
        for n in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feeds", type=int, default=300)
    parser.add_argument("--entries", type=int, default=50)
    parser.add_argument("--memory", action="store_true", help="measure the peak of allocations (slower)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        urls = [f"https://s{i}.example/feed.xml" for i in range(args.feeds)]
        with Store.open(Path(folder)) as store:
            for i, url in enumerate(urls):
                save(store, SourceState(url=url, fetch_url=url, last_success=NOW), entries(url, i, args.entries), NOW)
            states = store.states()
            sites = tuple(Site(name=f"S{i}", feed=url) for i, url in enumerate(urls))
            for name, filters in CASES.items():
                config = Config(Path(folder) / "sites.yaml", "Bench", "https://p.example/", sites, filters=filters)
                if args.memory:
                    tracemalloc.start()
                started = time.perf_counter()
                selected, _ = select_site(config, store, states, NOW)
                seconds = time.perf_counter() - started
                peak = f", peak {tracemalloc.get_traced_memory()[1] / 2**20:.1f} MiB" if args.memory else ""
                tracemalloc.stop()
                size = f"{args.feeds} feeds x {args.entries} entries"
                print(f"{name:10} {size}: {seconds:.2f} s{peak}, {len(selected)} selected")


if __name__ == "__main__":
    main()
