"""Command line of the farm: `python benchmarks/farm.py --help`.

Serves a farm for a bounded time (--duration seconds, then it stops by itself),
optionally writing a sites.yaml first, and prints the request stats as JSON.
`--selftest` runs a short self-check instead.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from datetime import datetime

from farm import Farm, FarmProfile

_PROFILE_HELP = {
    "seed": "seed of every random choice (behaviours, latency, touch)",
    "items": "items per document",
    "latency_ms": "added latency per request in ms: 'LO,HI' (uniform) or 'MS' (fixed)",
    "retry_after_s": "Retry-After of 429/503 answers, seconds",
    "padding_bytes": "extra bytes (an XML comment) in each padded body",
    "padding_share": "share of feeds whose body is padded",
    "invalid_share": "share of feeds: invalid (half HTML error page, half truncated XML)",
    "throttle_share": "share of feeds: 429 or 503 with Retry-After (half each)",
    "gzip_share": "share of feeds that gzip when the client accepts it",
    "atom_share": "share of feeds in Atom 1.0 (others RSS 2.0)",
}


def _latency(text: str) -> tuple[float, float]:
    parts = [float(p) for p in text.split(",")]
    if len(parts) == 1:
        return parts[0], parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise argparse.ArgumentTypeError("expected MS or LO,HI")


def add_profile_options(parser: argparse.ArgumentParser) -> None:
    """One --option per FarmProfile field (e.g. --gzip-share 0.5, --latency-ms 0,20)."""
    group = parser.add_argument_group("feed profile (shares are fractions of all feeds)")
    for f in dataclasses.fields(FarmProfile):
        default = f.default
        kind = _latency if f.name == "latency_ms" else type(default)
        shown = ",".join(f"{x:g}" for x in default) if isinstance(default, tuple) else default
        text = _PROFILE_HELP.get(f.name, f"share of feeds: {f.name.removesuffix('_share')}")
        metavar = "FRACTION" if f.name.endswith("_share") else "N"
        metavar = "LO,HI" if f.name == "latency_ms" else metavar
        group.add_argument(
            "--" + f.name.replace("_", "-"),
            dest=f.name,
            type=kind,
            default=default,
            metavar=metavar,
            help=f"{text} (default: {shown})",
        )


def profile_from_args(args: argparse.Namespace) -> FarmProfile:
    """The FarmProfile the parsed options describe."""
    return FarmProfile(**{f.name: getattr(args, f.name) for f in dataclasses.fields(FarmProfile)})


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="farm.py", description="Serve synthetic feed hosts on 127.x.y.z for load tests."
    )
    parser.add_argument("--selftest", action="store_true", help="run a short self-check and exit")
    parser.add_argument("--hosts", type=int, default=200, help="hosts (addresses) (default: 200)")
    parser.add_argument("--feeds", type=int, default=1000, help="feeds (default: 1000)")
    parser.add_argument("--port", type=int, default=8123, help="port, 0 = any (default: 8123)")
    parser.add_argument(
        "--duration",
        type=float,
        default=300.0,
        help="seconds to serve before stopping by itself (default: 300)",
    )
    parser.add_argument("--sites", metavar="PATH", help="write a sites.yaml for the farm here")
    parser.add_argument(
        "--start",
        type=datetime.fromisoformat,
        metavar="ISO",
        default="2025-01-01T00:00:00+00:00",
        help="farm clock at start, aware ISO 8601 (default: 2025-01-01T00:00Z)",
    )
    add_profile_options(parser)
    args = parser.parse_args(argv)
    if args.selftest:
        from farm_selftest import selftest

        return selftest()
    farm = Farm(args.hosts, args.feeds, args.port, profile_from_args(args), start=args.start)
    began = time.monotonic()
    farm.start()
    try:
        print(
            f"farm: {args.hosts} hosts {farm.addresses[0]}..{farm.addresses[-1]} port "
            f"{farm.port}, {args.feeds} feeds, started in {time.monotonic() - began:.2f} s",
            file=sys.stderr,
        )
        print(f"farm: feeds per behaviour {farm.summary()}", file=sys.stderr)
        if args.sites:
            farm.write_sites_yaml(args.sites)
            print(f"farm: wrote {args.sites}", file=sys.stderr)
        print(f"farm: serving for {args.duration:g} s (Ctrl-C stops sooner)", file=sys.stderr)
        time.sleep(max(0.0, args.duration))
    except KeyboardInterrupt:
        pass
    finally:
        farm.stop()
    stats = farm.stats()
    stats["hosts"] = len(stats["hosts"])  # hosts that saw requests
    print(json.dumps(stats, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
