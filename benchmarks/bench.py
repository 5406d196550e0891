"""Benchmark driver: run the real `syndicator build` against the in-process farm.

For each feed count N (--feeds 1000 10000) over --hosts hosts, start a farm,
write sites.yaml to a temporary folder and run five builds as subprocesses,
each with its own --now on a fake clock starting at --start (T0):

    cold          build at T0, empty cache
    warm          build at T0 + 1 min: nothing should be due
    force         build --force at T0 + 2 min, nothing changed at the farm
    touch+force   farm.touch(--touch) at T0 + 3 min, then build --force
    due+25h       build at T0 + 25 h: every source is due by its schedule

and print one table row per build: wall seconds, requests the farm saw, 200s,
304s and their share, bytes the farm sent, the child's peak RSS, the highest
per-host concurrency, and parse_seconds / due_lag_seconds from CACHE/report.json if the
build wrote one. Each build is killed after --timeout seconds; the farm is
stopped in `finally`. The farm runs in this process, so it shares the CPUs with
the build. Usage: python benchmarks/bench.py --help
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_run import Run, run_build  # noqa: E402
from farm import Farm  # noqa: E402
from farm_cli import add_profile_options, profile_from_args  # noqa: E402


@dataclass
class Row:
    """One build's figures. Sizes in bytes, times in seconds; None when unknown."""

    feeds: int
    scenario: str
    exit_code: int | None  # None: killed after the timeout
    wall_s: float
    requests: int
    status_200: int
    status_304: int
    ratio_304: float  # 304s / requests, 0.0 when no request
    bytes_sent: int  # by the farm: status lines, headers and bodies
    peak_rss_bytes: int | None  # of the build process
    max_host_concurrency: int
    parse_seconds: Any = None  # as report.json gives it
    due_lag: Any = None  # as report.json gives it


def find_syndicator(override: str | None) -> Path:
    """The `syndicator` executable: --syndicator, else the one beside sys.executable."""
    exe = Path(override) if override else Path(sys.executable).parent / "syndicator"
    if not os.access(exe, os.X_OK):
        raise SystemExit(
            f"bench: no executable {exe}; install the project in this venv (pip install -e .) or pass --syndicator PATH"
        )
    return exe


def read_report(cache: Path, since: float) -> tuple[Any, Any]:
    """(parse_seconds, due_lag) from cache/report.json if written at or after `since`
    (epoch seconds); a key may sit at the top or one level down."""
    path = cache / "report.json"
    try:
        if path.stat().st_mtime < since:
            return None, None
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return None, None
    return _find(report, "parse_seconds"), _find(report, "due_lag_seconds")


def _find(report: Any, key: str) -> Any:
    if not isinstance(report, dict):
        return None
    if key in report:
        return report[key]
    for value in report.values():
        if isinstance(value, dict) and key in value:
            return value[key]
    return None


def bench_size(n: int, args: argparse.Namespace, exe: Path, workdir: Path) -> list[Row]:
    """The five builds for n feeds, each a Row; the farm is stopped in `finally`."""
    t0 = args.start
    farm = Farm(args.hosts, n, args.port, profile_from_args(args), start=t0)
    sites, out, cache = workdir / f"sites-{n}.yaml", workdir / f"public-{n}", workdir / f"cache-{n}"
    began = time.monotonic()
    farm.start()
    rows: list[Row] = []
    try:
        print(
            f"bench: {n} feeds on {args.hosts} hosts (port {farm.port}) up in "
            f"{time.monotonic() - began:.2f} s; feeds per behaviour: {farm.summary()}",
            file=sys.stderr,
        )
        farm.write_sites_yaml(sites, **args.settings)
        plan = [
            ("cold", 0, False, 0.0),
            ("warm", 1, False, 0.0),
            ("force", 2, True, 0.0),
            ("touch+force", 3, True, args.touch),
            # A day later every source is due by its schedule (max_interval 24 h):
            # a normal conditional build, and the one where due lag means something.
            ("due+25h", 25 * 60, False, 0.0),
        ]
        for name, minutes, force, touch in plan:
            now = t0 + timedelta(minutes=minutes)
            farm.set_time(now)
            if touch:
                farm.touch(touch)
            farm.reset_stats()
            cmd = [
                str(exe),
                "build",
                "--config",
                str(sites),
                "--output",
                str(out),
                "--cache",
                str(cache),
                "-q",
                "--now",
                now.isoformat(),
            ]
            if force:
                cmd.append("--force")
            started = time.time()
            run = run_build(cmd, workdir, f"{n}-{name}", args.timeout)
            rows.append(_row(n, name, run, farm.stats(), read_report(cache, started)))
            ended = "killed at the timeout" if run.exit_code is None else f"exit {run.exit_code}"
            print(f"bench: {n} {name}: {ended} after {run.wall_s:.1f} s", file=sys.stderr)
            if run.exit_code != 0:
                _show_tail(workdir / f"{n}-{name}.err")
    finally:
        farm.stop()
    return rows


def _row(n: int, name: str, run: Run, stats: dict[str, Any], report: tuple[Any, Any]) -> Row:
    requests = stats["requests"]
    by_status = stats["by_status"]
    return Row(
        n,
        name,
        run.exit_code,
        round(run.wall_s, 3),
        requests,
        by_status.get(200, 0),
        by_status.get(304, 0),
        round(by_status.get(304, 0) / requests, 4) if requests else 0.0,
        stats["bytes_sent"],
        run.peak_rss_bytes,
        stats["max_host_concurrency"],
        *report,
    )


def _show_tail(path: Path, lines: int = 15) -> None:
    try:
        tail = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return
    for line in tail:
        print(f"    | {line}", file=sys.stderr)


_COLUMNS: list[tuple[str, int, Callable[[Row], str]]] = [  # header, width, formatter
    ("feeds", 6, lambda r: str(r.feeds)),
    ("scenario", 11, lambda r: r.scenario),
    ("exit", 4, lambda r: "kill" if r.exit_code is None else str(r.exit_code)),
    ("wall s", 7, lambda r: f"{r.wall_s:.2f}"),
    ("requests", 8, lambda r: str(r.requests)),
    ("200", 6, lambda r: str(r.status_200)),
    ("304", 6, lambda r: str(r.status_304)),
    ("304 %", 6, lambda r: f"{100 * r.ratio_304:.1f}"),
    ("MB sent", 8, lambda r: f"{r.bytes_sent / 1e6:.2f}"),
    ("RSS MB", 7, lambda r: "?" if r.peak_rss_bytes is None else f"{r.peak_rss_bytes / 1e6:.0f}"),
    ("host peak", 9, lambda r: str(r.max_host_concurrency)),
    ("parse s", 8, lambda r: _short(r.parse_seconds)),
    ("due lag", 0, lambda r: _short(r.due_lag)),
]


def _short(value: Any) -> str:
    """A report.json figure in a table cell: numbers to 3 decimals, dicts as k=v."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ",".join(f"{k}={_short(v)}" for k, v in value.items())
    return json.dumps(value) if isinstance(value, list) else str(value)


def format_table(rows: list[Row]) -> str:
    """Rows as an aligned text table with a header line."""
    lines = ["  ".join(h.rjust(w) for h, w, _ in _COLUMNS).rstrip()]
    for row in rows:
        lines.append("  ".join(f(row).rjust(w) for _, w, f in _COLUMNS).rstrip())
    return "\n".join(lines)


def _setting(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError("expected KEY=VALUE")
    try:
        return key, json.loads(raw)  # 15 -> int, true -> bool, "x" -> str
    except ValueError:
        return key, raw


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options (see --help)."""
    p = argparse.ArgumentParser(prog="bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--feeds", type=int, nargs="+", default=[1000, 10000], help="feed counts")
    p.add_argument("--hosts", type=int, default=200, help="farm hosts (default: 200)")
    p.add_argument("--port", type=int, default=0, help="farm port, 0 = any (default)")
    p.add_argument("--workers", type=int, default=8, help="sites.yaml workers (default: 8)")
    p.add_argument(
        "--per-host-concurrency",
        type=int,
        default=2,
        help="sites.yaml per_host_concurrency (default: 2)",
    )
    p.add_argument(
        "--set",
        dest="extra",
        type=_setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra top-level sites.yaml setting (repeatable)",
    )
    p.add_argument(
        "--touch",
        type=float,
        default=0.1,
        help="share of feeds changed before the last build (default: 0.1)",
    )
    p.add_argument(
        "--start",
        type=datetime.fromisoformat,
        default="2025-01-01T00:00:00+00:00",
        metavar="ISO",
        help="T0, the first build's --now (default: 2025-01-01T00:00Z)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds before a build is killed (default: 900)",
    )
    p.add_argument(
        "--syndicator",
        metavar="PATH",
        help="executable to run (default: syndicator beside sys.executable)",
    )
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON ('-': stdout)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    add_profile_options(p)
    args = p.parse_args(argv)
    if args.start.tzinfo is None:
        p.error("--start needs a UTC offset, e.g. 2025-01-01T00:00:00+00:00")
    args.settings = {
        "workers": args.workers,
        "per_host_concurrency": args.per_host_concurrency,
        **dict(args.extra),
    }
    return args


def main(argv: list[str] | None = None) -> int:
    """Run every size and scenario; print the table. Exit 1 if a build failed."""
    args = parse_args(argv)
    exe = find_syndicator(args.syndicator)
    workdir = Path(tempfile.mkdtemp(prefix="syndicator-bench-"))
    rows: list[Row] = []
    try:
        for n in args.feeds:
            rows += bench_size(n, args, exe, workdir)
    finally:
        if args.keep:
            print(f"bench: kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(format_table(rows))
    print(
        f"note: touch+force is a --force build after farm.touch({args.touch:g}): that share "
        "of feeds has one new item; the rest should answer 304."
    )
    if args.json:
        doc = {
            "argv": sys.argv[1:],
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "hosts": args.hosts,
            "settings": args.settings,
            "rows": [asdict(r) for r in rows],
        }
        text = json.dumps(doc, indent=2, default=str)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n")
    return 0 if all(r.exit_code == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
