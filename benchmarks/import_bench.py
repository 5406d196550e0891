"""syndicator import on large generated OPML files: wall time and peak memory, through the real command.

Usage: .venv/bin/python benchmarks/import_bench.py [N ...]   (default: 100000 1000000 and 30000 of one name)

Each list is written to a temporary folder with an empty planet beside it, then
``/usr/bin/time -v syndicator import LIST --config sites.yaml`` runs once; the
script prints N, the exit code, the wall time, the peak resident memory and the
last line the command wrote (its summary, or its one-line error).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

COMMAND = Path(sys.executable).with_name("syndicator")


def opml(path: Path, count: int, same_name: bool) -> None:
    """An OPML file of ``count`` feed outlines, named "Feed N" (or all "Same name")."""
    with path.open("w", encoding="utf-8") as file:
        file.write('<?xml version="1.0"?>\n<opml version="2.0"><head><title>Big</title></head><body>\n')
        for n in range(count):
            name = "Same name" if same_name else f"Feed {n} é"
            file.write(
                f'<outline type="rss" text="{name}" xmlUrl="https://f{n}.example.org/feed.xml" '
                f'htmlUrl="https://f{n}.example.org/"/>\n'
            )
        file.write("</body></opml>\n")


def run(count: int, same_name: bool = False) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder)
        opml(path / "list.opml", count, same_name)
        config = path / "sites.yaml"
        config.write_text("title: T\nlink: https://planet.example.org/\n", encoding="utf-8")
        done = subprocess.run(
            ["/usr/bin/time", "-v", str(COMMAND), "import", str(path / "list.opml"), "--config", str(config)],
            capture_output=True,
            text=True,
        )
        wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", done.stderr)
        peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        last = (done.stdout.strip().splitlines() or [""])[-1] or done.stderr.splitlines()[0]
        size = (path / "list.opml").stat().st_size
        print(
            f"{count:>9,} outlines{' (one name)' if same_name else ''}, {size / 2**20:.1f} MiB: "
            f"exit {done.returncode}, wall {wall[1] if wall else '?'}, "
            f"peak {int(peak[1]) // 1024 if peak else '?'} MiB; {last[:160]}"
        )


def main() -> None:
    counts = [int(arg) for arg in sys.argv[1:]]
    if counts:
        for count in counts:
            run(count)
        return
    run(100_000)
    run(1_000_000)
    run(30_000, same_name=True)


if __name__ == "__main__":
    main()
