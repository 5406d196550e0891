"""The first build of a planet of real feeds, and an old undated site added to it: does the front page flood?

Builds one site per corpus feed (read as local files, so nothing is served), with the real
``syndicator build`` of any version (pass its executable), then adds a site whose feed holds 50
undated posts and builds again. Prints, for each build: the front page's entries, how many of
them show the build's own time (an undated post shown as today's), how many of the top 10 do,
and the most entries one site has there; and for the added site, its entries on the front page
and how many of them sit above an entry of another site.

    .venv/bin/python benchmarks/first_fetch.py --syndicator .venv/bin/syndicator --out /tmp/first-fetch

Needs the corpus (``../shared/corpus``, or the folder in SYNDICATOR_CORPUS). docs/first-fetch.md
says what a first fetch publishes.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import yaml

CORPUS = Path(os.environ.get("SYNDICATOR_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
FIRST, SECOND = "2026-11-30T12:00:00Z", "2026-11-30T14:00:00Z"
OLD = "Old undated site"
_ARTICLE = re.compile(r'<article class="entry".*?<bdi>(?P<site>[^<]*)</bdi>.*?<time datetime="(?P<at>[^"]+)"', re.S)


def old_undated_feed(count: int = 50) -> str:
    """An RSS document of ``count`` posts without any date, newest first."""
    items = "".join(
        f"<item><title>Old {n}</title><link>https://old.example.org/{n}</link>"
        f"<guid>https://old.example.org/{n}</guid><description>Old {n}</description></item>"
        for n in range(count, 0, -1)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Old</title>'
        f"<link>https://old.example.org/</link><description>d</description>{items}</channel></rss>"
    )


def build(syndicator: str, out: Path, sites: list[dict[str, str]], now: str) -> list[tuple[str, str]]:
    """Write sites.yaml, run one build at ``now``, print its summary; return the front page's (site, time)."""
    planet = {"title": "Corpus", "link": "https://planet.example.org/", "workers": 2, "sites": sites}
    (out / "sites.yaml").write_text(yaml.safe_dump(planet, sort_keys=False), encoding="utf-8")
    done = subprocess.run(
        [syndicator, "build", "--config", str(out / "sites.yaml"), "--now", now],
        capture_output=True,
        text=True,
        check=False,
    )
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-300:])
    html = (out / "public" / "index.html").read_text(encoding="utf-8")
    return [(m["site"], m["at"]) for m in _ARTICLE.finditer(html)]


def report(front: list[tuple[str, str]], now: str) -> None:
    today = sum(1 for _, at in front if at == now)
    top = sum(1 for _, at in front[:10] if at == now)
    most = max(Counter(site for site, _ in front).values(), default=0)
    print(f"  front page: {len(front)} entries, {today} at the build's own time ({top} of the top 10); ", end="")
    print(f"most from one site: {most}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--syndicator", required=True, help="the syndicator executable to measure")
    parser.add_argument("--out", type=Path, required=True, help="an empty folder for the planet")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    feeds = sorted(p for p in (CORPUS / "feeds").iterdir() if p.is_file())
    sites = [{"name": f"{i:03d} {p.name}", "feed": str(p)} for i, p in enumerate(feeds)]
    report(build(args.syndicator, args.out, sites, FIRST), FIRST)
    (args.out / "old.xml").write_text(old_undated_feed(), encoding="utf-8")
    front = build(args.syndicator, args.out, [*sites, {"name": OLD, "feed": "old.xml"}], SECOND)
    report(front, SECOND)
    names = [site for site, _ in front]
    last_other = max((i for i, name in enumerate(names) if name != OLD), default=-1)
    mine = [i for i, name in enumerate(names) if name == OLD]
    print(f"  {OLD}: {len(mine)} on the front page, {sum(1 for i in mine if i < last_other)} above another site's")


if __name__ == "__main__":
    main()
