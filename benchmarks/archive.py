"""The archive and the search over 30 simulated days, and their cost at 10,000 entries.

Part 1, the month: a 50-site planet whose feeds (served on 127.0.0.1, RSS 2.0, the 10 newest posts
each, 0.3 to 3 posts a day, one or two of 12 categories each) are built with the real ``syndicator
build`` every 6 simulated hours for 30 days (``--now``). Every entry any build's feed.xml carried is
then looked for on its month's archive page, in its site's feed and in each of its categories'
feeds (following RFC 5005 ``prev-archive`` from ``feed.xml``). Prints how many were published and
how many are missing from each (want 0).

Part 2, the size: one planet of 10,000 entries (200 sites of 50 posts) built once; prints the
archive's size on disk (archive/, sites/, categories/), in the state (the ``archive`` table and its
index, SQLite's dbstat) and the search index (search/: files, bytes, the largest file, what a
one-word query loads), and the wall time of a build that renders the whole archive (the output
folder emptied first), of a build with one new entry, and of the same build with ``archive: false``
and ``search: false`` (medians of ``--runs``).

    .venv/bin/python benchmarks/archive.py --syndicator .venv/bin/syndicator --out /tmp/archive-bench
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

ATOM = "{http://www.w3.org/2005/Atom}"
START = datetime(2026, 10, 1, tzinfo=UTC)
CATEGORIES = [
    f"topic {name}"
    for name in ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]
]
WORDS = [
    "feed",
    "planet",
    "python",
    "archive",
    "search",
    "river",
    "bridge",
    "stone",
    "garden",
    "window",
    "paper",
    "music",
    "coffee",
    "rain",
]


class Farm:
    """Feeds whose posts appear with the simulated clock: {path: [(time, n, categories)]}, served as the
    ``window`` newest posts published by ``now``."""

    def __init__(self, sites: int, per_day: tuple[float, float], days: int, window: int, seed: int) -> None:
        rng = random.Random(seed)
        self.window, self.now = window, START
        self.posts: dict[str, list[tuple[datetime, int, list[str]]]] = {}
        for site in range(sites):
            rate = rng.uniform(*per_day)
            at, posts = START - timedelta(days=5), []
            while at < START + timedelta(days=days):
                at += timedelta(days=rng.expovariate(rate))
                posts.append((at, len(posts), rng.sample(CATEGORIES, rng.randint(1, 2))))
            self.posts[f"/site{site}.xml"] = posts

    def document(self, path: str) -> bytes:
        """The feed at ``path`` as of ``self.now`` (RSS 2.0)."""
        site = path.strip("/").removesuffix(".xml")
        shown = [post for post in self.posts[path] if post[0] <= self.now][-self.window :]
        items = "".join(
            f"<item><title>{site} post {n}</title><link>https://{site}.example.org/{n}</link>"
            f"<guid>https://{site}.example.org/{n}</guid><pubDate>{format_datetime(at)}</pubDate>"
            f"<description>{' '.join(WORDS[(n + i) % len(WORDS)] for i in range(60))} word{n}</description>"
            + "".join(f"<category>{c}</category>" for c in categories)
            + "</item>"
            for at, n, categories in reversed(shown)
        )
        return (
            f'<?xml version="1.0"?><rss version="2.0"><channel><title>{site}</title>'
            f"<link>https://{site}.example.org/</link><description>d</description>{items}</channel></rss>"
        ).encode()


def serve(farm: Farm) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            body = farm.document(self.path) if self.path in farm.posts else b""
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/rss+xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def planet(folder: Path, url: str, farm: Farm, **settings: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "title": "Archive bench",
        "link": "https://planet.example.org/",
        "output": "public",
        "cache": "cache",
        "host_gap": 0,
        "allow_private_networks": True,
        "new_feed_items": "all",
        "items_per_feed": farm.window,
        "feed_entries": 100_000,
        "page_entries": 50,
        **settings,
        "sites": [{"name": f"Site {path[5:-4]}", "feed": url + path} for path in farm.posts],
    }
    path = folder / "sites.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def build(syndicator: str, config: Path, now: datetime) -> float:
    started = time.perf_counter()
    subprocess.run(
        [syndicator, "build", "--config", str(config), "--now", now.isoformat(), "--force", "-qq"], check=True
    )
    return time.perf_counter() - started


def chain(folder: Path) -> set[str]:
    ids: set[str] = set()
    path: Path | None = folder / "feed.xml"
    while path is not None and path.exists():
        root = ET.parse(path).getroot()
        ids.update(e.findtext(f"{ATOM}id") or "" for e in root.findall(f"{ATOM}entry"))
        prev = [link.get("href") or "" for link in root.findall(f"{ATOM}link") if link.get("rel") == "prev-archive"]
        path = folder / prev[0].rsplit("/", 1)[1] if prev else None
    return ids


def month(args: argparse.Namespace) -> None:
    farm = Farm(50, (0.3, 3.0), 30, 10, seed=1)
    server, url = serve(farm)
    config = planet(args.out / "month", url, farm)
    published: dict[str, tuple[str, list[str], str]] = {}  # id: (site slug, categories, month)
    for step in range(30 * 4):
        farm.now = START + timedelta(hours=6 * step)
        build(args.syndicator, config, farm.now)
        for entry in ET.parse(config.parent / "public" / "feed.xml").getroot().findall(f"{ATOM}entry"):
            site = entry.findtext(f"{ATOM}source/{ATOM}title") or ""
            categories = [c.get("term") or "" for c in entry.findall(f"{ATOM}category")]
            published[entry.findtext(f"{ATOM}id") or ""] = (
                site,
                categories,
                (entry.findtext(f"{ATOM}published") or "")[:7],
            )
    server.shutdown()
    public = config.parent / "public"
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (public / "archive").glob("20*.html")}
    feeds = {folder.name: chain(folder) for folder in (public / "sites").iterdir()}
    topics = {folder.name: chain(folder) for folder in (public / "categories").iterdir()}
    off_month = [i for i, (_, _, at) in published.items() if f'href="{i}"' not in pages.get(at, "")]
    off_site = [i for i, (site, _, _) in published.items() if i not in feeds.get(site.lower().replace(" ", "-"), set())]
    off_topic = [
        i for i, (_, cs, _) in published.items() for c in cs if i not in topics.get(c.replace(" ", "-"), set())
    ]
    last_feed = {e.findtext(f"{ATOM}id") for e in ET.parse(public / "feed.xml").getroot().findall(f"{ATOM}entry")}
    print(
        f"month: 120 builds of 50 sites over 30 days: {len(published)} entries published, "
        f"{len(published) - len(published.keys() & last_feed)} of them no longer in any feed"
    )
    print(
        f"  missing from its month's page: {len(off_month)}; from its site's feeds: {len(off_site)}; "
        f"from its categories' feeds: {len(off_topic)}"
    )


def size(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else []
    return len(files), sum(p.stat().st_size for p in files)


def big(args: argparse.Namespace) -> None:
    farm = Farm(200, (50.0, 50.0), 1, 50, seed=2)
    server, url = serve(farm)
    farm.now = START + timedelta(days=1)
    config = planet(args.out / "big", url, farm)
    plain = planet(args.out / "plain", url, farm, archive=False, search=False)
    build(args.syndicator, config, farm.now)
    build(args.syndicator, plain, farm.now)
    public = config.parent / "public"
    entries = len(list(ET.parse(public / "feed.xml").getroot().findall(f"{ATOM}entry")))
    per = 10_000 / entries
    disk = sum(size(public / name)[1] for name in ("archive", "sites", "categories"))
    files = sum(size(public / name)[0] for name in ("archive", "sites", "categories"))
    with sqlite3.connect(config.parent / "cache" / "state.sqlite") as db:
        state = db.execute(
            "SELECT SUM(pgsize) FROM dbstat WHERE name IN ('archive', 'archive_order', 'sqlite_autoindex_archive_1')"
        ).fetchone()[0]
    count, total = size(public / "search")
    largest = max(p.stat().st_size for p in (public / "search").iterdir())
    query = sum((public / "search" / name).stat().st_size for name in ("pairs.js", "t-0072-0069.js", "d-19.js"))
    print(f"size: {entries} entries archived (200 sites, 50 posts each, {len(CATEGORIES)} categories)")
    print(
        f"  archive pages and feeds: {files} files, {disk / 1e6:.1f} MB ({disk * per / 1e6:.1f} MB per 10,000 entries)"
    )
    print(f"  archive in the state: {state / 1e6:.1f} MB ({state * per / 1e6:.1f} MB per 10,000 entries)")
    print(
        f"  search index: {count} files, {total / 1e6:.2f} MB, largest {largest / 1e3:.0f} KB; "
        f"a one-word query ('river') loads {query / 1e3:.0f} KB"
    )
    full, normal, without = [], [], []
    for run in range(args.runs):
        shutil.rmtree(public)
        full.append(build(args.syndicator, config, farm.now + timedelta(minutes=run)))
        farm.posts["/site0.xml"].append((farm.now + timedelta(minutes=run, seconds=30), 1000 + run, ["topic alpha"]))
        moment = farm.now + timedelta(minutes=run, seconds=40)
        normal.append(build(args.syndicator, config, moment))
        without.append(build(args.syndicator, plain, moment))
    server.shutdown()
    print(
        f"  build wall, median of {args.runs}: whole archive rendered (output emptied) "
        f"{statistics.median(full):.2f} s; "
        f"one new entry {statistics.median(normal):.2f} s; the same without archive and search "
        f"{statistics.median(without):.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--syndicator", default="syndicator")
    parser.add_argument("--out", type=Path, default=Path("/tmp/archive-bench"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--part", choices=("month", "big", "both"), default="both")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    if args.part in ("month", "both"):
        month(args)
    if args.part in ("big", "both"):
        big(args)


if __name__ == "__main__":
    main()
