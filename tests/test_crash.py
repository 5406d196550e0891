"""The crash matrix: ``kill -9`` of a build at 50 random points, then look at what is left.

Each round starts a real ``syndicator build`` process against a loopback
server whose feeds gain entries on every request, kills it after a random
delay (during start-up, fetching, a store transaction, rendering or the
swap, in proportion to the time each takes), and checks:

* ``PRAGMA integrity_check`` of the state database is ok;
* the published folder is wholly the previous site or wholly a new one:
  every file is there, and all of them come from one build (the same
  generation time), the previous one's byte for byte;
* the next build (not killed) succeeds and keeps every entry that was
  committed before the kill.

The delays come from a seeded generator, so a failing round can be replayed.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from .conftest import ARCHIVE_AND_SEARCH, ATOM, atom_entries, build, post, rss, write_config

ROUNDS = 50
FEEDS = 6
FILES = sorted(
    [
        ".syndicator-output",
        "feed.json",
        "feed.xml",
        "index.html",
        "opml.xml",
        "sites.html",
        "style.css",
        *ARCHIVE_AND_SEARCH,
    ]
)
_GENERATED = re.compile(r'Newest post <time datetime="([^"]+)">')


def command(config: Path, now: datetime) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from syndicator.cli import main; main()",
        "build",
        "--config",
        str(config),
        "--force",
        "-q",
        "--now",
        now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    ]


def committed(database: Path) -> tuple[str, set[tuple[str, str]]]:
    """The integrity check's answer and every (source, entry id) committed."""
    with contextlib.closing(sqlite3.connect(database)) as db:  # `with connect()` alone leaves it open
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
        seen = set(db.execute("SELECT source, id FROM seen"))
    return check, seen


def built_at(public: Path) -> str:
    """The one build a published folder comes from: the entries of its feed, and its "Updated" time.

    Asserts that every file comes from that build: the pages carry the time of
    the Atom feed's newest change, and the Atom and JSON feeds the same entries.
    """
    pages = {
        _GENERATED.search((public / name).read_text()).group(1)  # type: ignore[union-attr]
        for name in ("index.html", "sites.html")
    }
    updated = ET.parse(public / "feed.xml").getroot().findtext(f"{ATOM}updated")
    assert pages == {updated}
    atom_ids = [e.findtext(f"{ATOM}id") for e in atom_entries(public / "feed.xml")]
    assert atom_ids == [item["id"] for item in json.loads((public / "feed.json").read_text())["items"]]
    return f"{updated} {' '.join(str(i) for i in atom_ids)}"


@pytest.fixture
def growing_feeds(server: HTTPServer) -> list[str]:
    """FEEDS feeds of 40 entries; each request of a feed adds one newer entry."""
    counter = count(100)

    def handler(request: Request) -> Response:
        newest = next(counter)
        items = [post(n, day=1 + n % 28, host=f"feed{request.path[2]}.example.org") for n in range(newest - 40, newest)]
        return Response(rss(*items), content_type="application/rss+xml")

    for number in range(FEEDS):
        server.expect_request(f"/f{number}.xml").respond_with_handler(handler)
    return [server.url_for(f"/f{number}.xml") for number in range(FEEDS)]


def test_kill_9_at_fifty_random_points(growing_feeds: list[str], tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        [{"name": f"Site {n}", "feed": url} for n, url in enumerate(growing_feeds)],
        items_per_feed=40,
        host_gap=0,
        page_entries=10_000,
    )  # one page: the files are known
    public, database = tmp_path / "public", tmp_path / "cache" / "state.sqlite"
    clock = datetime(2026, 11, 30, tzinfo=UTC)
    started = time.monotonic()
    assert subprocess.run(command(config, clock), capture_output=True, timeout=60).returncode == 0
    duration = time.monotonic() - started  # one whole build, start-up included
    rng = random.Random(20261201)
    for round_ in range(ROUNDS):
        _, kept = committed(database)
        clock += timedelta(hours=1)
        delay = rng.uniform(0.0, duration * 1.1)
        process = subprocess.Popen(command(config, clock), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        where = f"round {round_}, killed after {delay:.3f} s of about {duration:.3f} s"
        check, seen = committed(database)
        assert check == "ok", where
        assert kept <= seen, where
        assert sorted(p.name for p in public.iterdir()) == FILES, where
        killed = built_at(public)  # the previous site, or the killed build's: whole either way
        clock += timedelta(hours=1)
        after = build(config, "--force", "-q", now=clock.strftime("%Y-%m-%dT%H:%M:%SZ"))  # in this process
        assert after.exit_code == 0, f"{where}: the next build failed: {after.stderr}"
        assert committed(database)[1] >= seen, where
        assert built_at(public) != killed, where  # each request adds an entry: this build's site
    assert sorted(p.name for p in tmp_path.iterdir()) == [".public.lock", "cache", "public", "sites.yaml"]
