"""Reading a large sites.yaml: the median time of :func:`syndicator.config.load.load_config` (issue 25).

Writes a sites.yaml of --sites sites (each a name, an http(s) feed, a link and a language, the
planet with a few settings) in a temporary folder, loads it --runs times, and prints the median
and fastest load in milliseconds, and which YAML parser read it. Usage::

    .venv/bin/python benchmarks/config_bench.py --sites 10000 --runs 7
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from syndicator.config.load import load_config  # noqa: E402


def sites_yaml(count: int) -> str:
    """A sites.yaml (str) of ``count`` sites."""
    lines = [
        "title: Planet Bench",
        "link: https://planet.example.org/",
        "workers: 16",
        "timeout: 20s",
        "default_interval: 1h",
        "sites:",
    ]
    for index in range(count):
        lines += [
            f"  - name: Site {index}",
            f"    feed: https://host{index % 500}.example.org/feed/{index}.xml",
            f"    link: https://host{index % 500}.example.org/",
            "    language: en",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sites.yaml"
        path.write_text(sites_yaml(args.sites), encoding="utf-8")
        seconds = []
        for _ in range(args.runs):
            start = time.perf_counter()
            config = load_config(path)
            seconds.append(time.perf_counter() - start)
        assert len(config.sites) == args.sites
    parsers = sorted(name for name in sys.modules if name in ("_yaml", "yaml._yaml", "_ruamel_yaml"))
    print(
        f"{args.sites} sites, {args.runs} loads: "
        f"median {statistics.median(seconds) * 1000:.0f} ms, fastest {min(seconds) * 1000:.0f} ms; "
        f"C parser modules loaded: {parsers or 'none'}"
    )


if __name__ == "__main__":
    main()
