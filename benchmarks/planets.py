"""Three planets sharing 300 feeds from ONE sites.yaml, against three separate planets on the same farm.

A loopback farm (benchmarks/farm.py) serves 300 feeds. Feeds 0-99 are in all three planets; the other
200 are split among them (main: 100-166, django: 167-233, universe: 234-299). The shared run writes one
sites.yaml with ``planets:`` (the file's own planet, ``django`` naming top-level sites and listing its
own, ``universe`` the same way) and runs N builds under a shifted clock (``--now``, the farm clock set
alike; intervals fixed at one hour, builds two hours apart, so every source is due at every build).
At the farm it counts the requests of each feed in each build: the figure is the most requests one
source got in one due check (1 is the promise: one request per source per due check, however many
planets list it). Then the same N builds run over three separate sites.yaml files (three caches)
and the requests saved are printed. It also checks that each planet's feed.xml holds the posts of its
own feeds and of no other.

    python benchmarks/planets.py [--builds N] [--syndicator PATH] [--out FOLDER]

Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from farm import Farm, FarmProfile, Response  # noqa: E402

FEEDS, SHARED, HOSTS = 300, 100, 30
PLANETS = ("main", "django", "universe")
START = datetime(2026, 11, 2, tzinfo=UTC)
STEP = timedelta(hours=2)
#: Intervals fixed at an hour: every source is due at every build two hours apart.
SETTINGS = {
    "workers": 8,
    "per_host_concurrency": 2,
    "host_gap": 0,
    "default_interval": "1h",
    "min_interval": "1h",
    "max_interval": "1h",
    "items_per_feed": 1,
    "feed_entries": 1000,
    "page_entries": 1000,
}
_POST = re.compile(r"/posts/(\d+)/\d+\.html")


class CountingFarm(Farm):
    """A farm that counts the GETs of each feed (by its number) since the last :meth:`take`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.per_feed: Counter[int] = Counter()
        self._count_lock = threading.Lock()

    def respond(self, host: int, path: str, headers: Mapping[str, str]) -> Response:
        found = re.fullmatch(r"/feeds/(\d+)\.xml", path.split("?", 1)[0])
        if found:
            with self._count_lock:
                self.per_feed[int(found.group(1))] += 1
        return super().respond(host, path, headers)

    def take(self) -> Counter[int]:
        """The counts since the last take, and start again."""
        with self._count_lock:
            counts, self.per_feed = self.per_feed, Counter()
        return counts


def members() -> dict[str, list[int]]:
    """{planet: its feed numbers}: 0..SHARED-1 in all, the others split in three runs."""
    others = list(range(SHARED, FEEDS))
    third = -(-len(others) // 3)
    return {name: [*range(SHARED), *others[i * third : (i + 1) * third]] for i, name in enumerate(PLANETS)}


def site_line(farm: Farm, j: int) -> str:
    return f'{{name: "feed {j}", feed: "{farm.url(j)}"}}'


def settings_text() -> str:
    return "".join(f"{key}: {value}\n" for key, value in SETTINGS.items())


def one_file(folder: Path, farm: Farm, planets: dict[str, list[int]]) -> Path:
    """The ONE sites.yaml with ``planets:``; each other planet names the shared top-level sites and
    lists its own."""
    lines = ["title: Planet main", "link: https://main.example.org/", settings_text().rstrip(), "sites:"]
    lines += [f"  - {site_line(farm, j)}" for j in planets["main"]]
    lines.append("planets:")
    for name in PLANETS[1:]:
        own = ", ".join(site_line(farm, j) if j >= SHARED else f'"feed {j}"' for j in planets[name])
        lines += [
            f"  - name: {name}",
            f"    title: Planet {name}",
            f"    link: https://{name}.example.org/",
            f"    output: public-{name}",
            f"    sites: [{own}]",
        ]
    path = folder / "sites.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def separate_files(folder: Path, farm: Farm, planets: dict[str, list[int]]) -> list[Path]:
    """Three sites.yaml files, one planet each, each with its own cache and output."""
    paths = []
    for name, feeds in planets.items():
        (folder / name).mkdir(parents=True, exist_ok=True)
        text = f"title: Planet {name}\nlink: https://{name}.example.org/\n{settings_text()}sites:\n"
        text += "".join(f"  - {site_line(farm, j)}\n" for j in feeds)
        path = folder / name / "sites.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def run_builds(syndicator: str, farm: CountingFarm, configs: list[Path], builds: int) -> tuple[int, int, int, int]:
    """Run ``builds`` rounds (each config once a round, at the round's clock); returns (requests, due
    checks (report.json's ``sources_due``), sources requested, the most requests one source got in one
    build)."""
    requests = due = checks = worst = 0
    for n in range(builds):
        when = START + n * STEP
        farm.set_time(when)
        if n:
            farm.touch(0.1)
        for config in configs:
            done = subprocess.run(
                [syndicator, "build", "--config", str(config), "--now", when.strftime("%Y-%m-%dT%H:%M:%SZ")],
                capture_output=True,
                text=True,
                check=False,
            )
            counts = farm.take()
            if done.returncode != 0:
                raise SystemExit(f"build {config} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
            requests += sum(counts.values())
            checks += len(counts)
            due += json.loads((config.parent / "cache" / "report.json").read_text(encoding="utf-8"))["sources_due"]
            worst = max([worst, *counts.values()])
            print(f"  {config.parent.name or '.'} round {n}: {done.stdout.strip().splitlines()[-1][:160]}")
    return requests, due, checks, worst


def published_feeds(output: Path) -> set[int]:
    """The feed numbers whose posts the planet's feed.xml holds."""
    return {int(j) for j in _POST.findall((output / "feed.xml").read_text(encoding="utf-8"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=3, help="builds per planet file (default 3)")
    parser.add_argument("--syndicator", default=shutil.which("syndicator") or "syndicator")
    parser.add_argument("--out", type=Path, help="a folder to keep the planets in (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="planets-bench-"))
    profile = FarmProfile(
        redirect_301_share=0,
        redirect_302_share=0,
        invalid_share=0,
        throttle_share=0,
        latency_ms=(0.0, 0.0),
    )
    planets = members()
    with CountingFarm(hosts=HOSTS, feeds=FEEDS, profile=profile, start=START) as farm:
        print(f"one sites.yaml, {len(PLANETS)} planets, {FEEDS} feeds ({SHARED} in all three), {args.builds} builds")
        (out / "shared").mkdir(parents=True)
        config = one_file(out / "shared", farm, planets)
        shared = run_builds(args.syndicator, farm, [config], args.builds)
        for name in PLANETS:
            folder = out / "shared" / ("public" if name == "main" else f"public-{name}")
            found = published_feeds(folder)
            print(
                f"  {name}: feed.xml holds posts of {len(found)} feeds; its own: {len(set(planets[name]))}; "
                f"exactly its own: {found == set(planets[name])}"
            )
        farm.set_time(START)
    with CountingFarm(hosts=HOSTS, feeds=FEEDS, profile=profile, start=START) as farm:
        print("three separate sites.yaml files (three caches), the same farm and clocks")
        separate = run_builds(args.syndicator, farm, separate_files(out / "separate", farm, planets), args.builds)
    for label, (requests, due, checks, worst) in (("one file (planets)", shared), ("three files", separate)):
        print(
            f"{label:>20}: {requests} requests, {due} due checks, {checks} sources requested; "
            f"most requests to one source in one build: {worst}"
        )
    print(f"requests saved by one poller: {separate[0] - shared[0]} ({(separate[0] - shared[0]) / separate[0]:.0%})")


if __name__ == "__main__":
    main()
