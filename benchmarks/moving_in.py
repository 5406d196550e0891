"""Moving real planets in: ``syndicator init`` on the corpus's planet configs, then one build against a
loopback farm of the corpus's feeds, counting what survives.

For each list: ``syndicator init LIST`` (a real subprocess), then counts of the sites written, those
with a link, and the names garbled (a name that is not, byte for byte, in the source file, as
written or XML-escaped; a " (2)" syndicator added to a repeated name aside). Then every site's feed
is pointed at one corpus feed on a loopback server (site i gets feed i modulo the corpus, with
``?site=i`` so each site is its own source), one ``syndicator build`` runs, and the published
sites.html and opml.xml are counted: sites shown with a link (their own, or their feed's home page)
and names that do not appear on the page as written.

    SYNDICATOR_CORPUS=/work/shared/corpus .venv/bin/python benchmarks/moving_in.py --syndicator .venv/bin/syndicator

Needs the corpus (``../shared/corpus``, or the folder in SYNDICATOR_CORPUS).
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import yaml
from markupsafe import escape

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_outputs import CORPUS, _Handler  # noqa: E402 - after the path is set

#: (file in corpus/opml, options init needs: the lists that name no planet link).
LISTS = [
    ("01-planetpython-config.ini", []),
    ("02-planetopenstack-planet-openstack-org.opml", ["--link", "https://planet.openstack.org/"]),
    ("03-planetopensuse-planet.ini", ["--link", "https://planet.opensuse.org/"]),
]
_NUMBERED = re.compile(r" \(\d+\)$")


def garbled(names: list[str], raw: bytes) -> list[str]:
    """The names that are not in ``raw`` byte for byte (as written, or XML-escaped)."""
    bare = [_NUMBERED.sub("", name) for name in names]
    return [n for n in bare if n.encode() not in raw and html.escape(n, quote=False).encode() not in raw]


def measure(
    syndicator: str, name: str, options: list[str], folder: Path, base: str, feeds: list[str]
) -> dict[str, Any]:
    """The counts of one list: after init, and after one build against the farm at ``base``."""
    source = CORPUS / "opml" / name
    config = folder / "sites.yaml"
    command = [syndicator, "init", str(source), "-o", str(config), *options]
    init = subprocess.run(command, capture_output=True, text=True)
    if init.returncode != 0:
        raise SystemExit(f"{name}: init failed: {init.stderr.strip()}")
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    sites = data["sites"]
    counts: dict[str, Any] = {
        "list": name,
        "sites": len(sites),
        "linked_after_init": sum(1 for site in sites if site.get("link")),
        "faces": sum(1 for site in sites if site.get("face")),
        "garbled_in_sites_yaml": len(garbled([site["name"] for site in sites], source.read_bytes())),
        "not_supported_lines": sum(1 for line in init.stdout.splitlines() if line.startswith("not supported:")),
    }
    for number, site in enumerate(sites):
        site["feed"] = f"{base}{feeds[number % len(feeds)]}?site={number}"
    data.update(per_host_concurrency=16, host_gap=0, workers=16, timeout=30)
    config.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    built = subprocess.run([syndicator, "build", "--config", str(config), "-q"], capture_output=True, text=True)
    counts["build_exit"] = built.returncode
    page = (folder / "public" / "sites.html").read_text(encoding="utf-8")
    opml = (folder / "public" / "opml.xml").read_text(encoding="utf-8")
    cells = re.findall(r'<td class="site" dir="auto">(.*?)</td>', page, re.S)
    counts["linked_after_build"] = sum(1 for cell in cells if "<a href=" in cell)
    counts["opml_htmlurl"] = opml.count("htmlUrl=")
    counts["garbled_on_sites_page"] = len([n for n in (site["name"] for site in sites) if str(escape(n)) not in page])
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--syndicator", default="syndicator", help="the syndicator executable")
    args = parser.parse_args()
    if not (CORPUS / "opml").is_dir():
        sys.exit(f"corpus not found at {CORPUS} (set SYNDICATOR_CORPUS)")
    feeds = sorted(p.name for p in (CORPUS / "feeds").iterdir() if p.is_file())
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(CORPUS / "feeds"))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        for name, options in LISTS:
            with tempfile.TemporaryDirectory() as folder:
                print(measure(args.syndicator, name, options, Path(folder), base, feeds), flush=True)
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
