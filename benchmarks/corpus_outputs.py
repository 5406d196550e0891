"""What the real-world corpus publishes, feed by feed, and what changed between two versions.

``build`` serves every corpus feed from a loopback server, runs one real
``syndicator build`` (any version: pass its executable) with one site per
feed and every entry kept, and writes ``entries.json``: for each corpus
file, the items syndicator published for it in ``feed.json``, in order.

``compare`` reads two such files and prints, per item field (title,
content_html, authors, attachments, image, dates, ...), how many corpus
feeds publish something different, with a few examples; so a change can
say how many real feeds it changed, and how. The loopback server's address
is written as ``http://corpus.example/``; items are matched by id, or by
position when only their ids differ (ids hashed from that address), and
the id itself is not compared.

    .venv/bin/python benchmarks/corpus_outputs.py build --syndicator .venv/bin/syndicator --out /tmp/after
    .venv/bin/python benchmarks/corpus_outputs.py compare /tmp/before/entries.json /tmp/after/entries.json

Needs the corpus (``../shared/corpus``, or the folder in SYNDICATOR_CORPUS).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(os.environ.get("SYNDICATOR_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")
NOW = "2026-11-30T12:00:00Z"
#: What the loopback server's address is written as in entries.json.
BASE = "http://corpus.example/"
_LOOPBACK = re.compile(r"http://127\.0\.0\.1:\d+/")


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the corpus files as they are, JSON as JSON and everything else as XML."""

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        return "application/json" if str(path).endswith(".json") else "application/xml"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


def build(syndicator: str, out: Path) -> Path:
    """Build the whole corpus with ``syndicator`` into ``out``; return the entries.json written."""
    feeds = sorted(p.name for p in (CORPUS / "feeds").iterdir() if p.is_file())
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(CORPUS / "feeds"))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        out.mkdir(parents=True, exist_ok=True)
        config = {
            "title": "Corpus",
            "link": "https://planet.example.org/",
            "items_per_feed": 100,
            "feed_entries": 100000,
            "workers": 8,
            "per_host_concurrency": 8,
            "host_gap": 0,
            "retries": 0,
            "timeout": 60,
            "sites": [{"name": name, "feed": base + name} for name in feeds],
        }
        (out / "sites.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        run = subprocess.run(
            [syndicator, "build", "--config", str(out / "sites.yaml"), "--now", NOW, "--force", "-q"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        print(run.stdout.strip() or run.stderr.strip()[-500:], file=sys.stderr)
    finally:
        server.shutdown()
    items: dict[str, list[dict[str, Any]]] = {name: [] for name in feeds}
    document = json.loads((out / "public" / "feed.json").read_text(encoding="utf-8"))
    for item in document["items"]:
        source = item.get("_source", {}).get("feed_url", "")
        items[source.rsplit("/", 1)[-1]].append({k: v for k, v in item.items() if k != "_source"})
    path = out / "entries.json"
    text = json.dumps(items, indent=1, ensure_ascii=False, sort_keys=True)
    path.write_text(_LOOPBACK.sub(BASE, text), encoding="utf-8")  # the same text whatever port was free
    return path


def compare(before: Path, after: Path, examples: int = 3) -> None:
    """Print, per item field, how many corpus feeds publish something different."""
    old, new = (json.loads(_LOOPBACK.sub(BASE, p.read_text(encoding="utf-8"))) for p in (before, after))
    changed: Counter[str] = Counter()
    shown: dict[str, list[str]] = {}
    for feed in sorted(set(old) | set(new)):
        a, b = _by_id(old.get(feed, [])), _by_id(new.get(feed, []))
        fields: set[str] = set()
        if set(a) != set(b) and len(a) == len(b) == len(old.get(feed, [])) == len(new.get(feed, [])):
            # ids made from the server's address differ between runs: match the items by position
            a, b = ({str(n): item for n, item in enumerate(items[feed])} for items in (old, new))
        elif set(a) != set(b):
            fields.add("(items added or removed)")
        for key in set(a) & set(b):
            fields |= {f for f in set(a[key]) | set(b[key]) if f != "id" and a[key].get(f) != b[key].get(f)}
        for field in fields:
            changed[field] += 1
            shown.setdefault(field, []).append(feed)
    total = len(set(old) | set(new))
    print(f"{total} corpus feeds; feeds whose published items differ, by field:")
    for field, count in changed.most_common():
        print(f"  {field:28} {count:4}   e.g. {', '.join(shown[field][:examples])}")
    print(f"  {'any field':28} {len({f for fs in shown.values() for f in fs}):4}")


def _by_id(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(item.get("id")): item for item in items}


def main() -> None:
    """Command line: ``build`` or ``compare`` (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    making = commands.add_parser("build", help="build the corpus and write entries.json")
    making.add_argument("--syndicator", required=True, help="the syndicator executable to run")
    making.add_argument("--out", type=Path, required=True, help="a folder for sites.yaml, cache, public, entries.json")
    comparing = commands.add_parser("compare", help="compare two entries.json files")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args()
    if not (CORPUS / "feeds").is_dir():
        sys.exit(f"corpus not found at {CORPUS} (set SYNDICATOR_CORPUS)")
    if args.command == "build":
        print(build(args.syndicator, args.out))
    else:
        compare(args.before, args.after)


if __name__ == "__main__":
    main()
