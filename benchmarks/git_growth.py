"""How much a git repository grows when a planet is published into it on every build.

A planet of --feeds sites (567: Planet Python's size) on the loopback farm
(farm.py, every feed well behaved: validators, no errors; ``--mixed``: the
farm's default mix of feeds without validators, changing ETags, errors,
throttling and redirects) is built with the
real CLI into a folder that is a git checkout (as a GitHub Pages branch is),
and after each build ``git add -A && git commit`` runs (no commit when
nothing changed). The builds run 30 minutes apart on the fake clock, each
with ``--force`` (every feed asked, the most a build can do):

    first        the first build, committed: the baseline
    304          --builds builds in which every feed answers 304
    changed      --builds builds in which --changed of the feeds (5 %) have one new entry each

each with ``snapshot: false`` and ``snapshot: true``. Repository growth is
measured twice, in bytes:

    loose        the objects a phase's commits added, as git writes them (zlib'd,
                 no deltas): the sizes of the files under .git/objects after
                 the phase, less before (the repository is packed first);
    packed       the packs' bytes (``git count-objects -v`` size-pack) after ``git gc`` at the end of the
                 phase, less after the one before it: what the repository keeps (and about
                 what a push sends: git sends deltas)

Printed per build and per day at a 30-minute cron (48 builds), with the
files each build wrote on average. Usage: python benchmarks/git_growth.py --help
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from farm import Farm, FarmProfile  # noqa: E402

#: Every feed well behaved: the 304 phase is 304s only.
QUIET = FarmProfile(
    no_validators_share=0.0,
    changing_etag_share=0.0,
    redirect_301_share=0.0,
    redirect_302_share=0.0,
    invalid_share=0.0,
    throttle_share=0.0,
    latency_ms=(0.0, 0.0),
)
START = datetime(2026, 3, 2, 0, 15, tzinfo=UTC)  # a Monday; ten 30-minute builds stay in the day
BUILDS_A_DAY = 48


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo``; its output (str). Raises CalledProcessError when it fails."""
    command = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org", "-C", str(repo), *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def loose_bytes(repo: Path) -> int:
    """Bytes of the loose objects of ``repo`` (the files under .git/objects/??/)."""
    objects = repo / ".git" / "objects"
    return sum(
        entry.stat().st_size for folder in objects.iterdir() if len(folder.name) == 2 for entry in folder.iterdir()
    )


def packed_bytes(repo: Path) -> int:
    """The bytes of the packs of ``repo`` after ``git gc`` (``git count-objects -v``'s size-pack, to the byte)."""
    git(repo, "gc", "-q", "--prune=now")
    return sum(pack.stat().st_size for pack in (repo / ".git" / "objects" / "pack").glob("*.pack"))


def build(exe: Path, sites: Path, repo: Path, cache: Path, now: datetime) -> int:
    """One ``syndicator build --force`` at ``now``, then commit; returns the files the commit changed."""
    command = [str(exe), "build", "--config", str(sites), "--output", str(repo), "--cache", str(cache)]
    result = subprocess.run([*command, "--force", "-q", "--now", now.isoformat()], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"git_growth: the build at {now} failed ({result.returncode}): {result.stderr.strip()}")
    git(repo, "add", "-A")
    changed = len(git(repo, "diff", "--cached", "--name-only").splitlines())
    if changed:
        git(repo, "commit", "-q", "-m", f"build at {now.isoformat()}")
    return changed


def run(exe: Path, snapshot: bool, args: argparse.Namespace, workdir: Path) -> list[str]:
    """The three phases of one planet; one printed row per measured phase."""
    profile = FarmProfile(latency_ms=(0.0, 0.0)) if args.mixed else QUIET
    farm = Farm(args.hosts, args.feeds, profile=profile, start=START)
    repo, cache = workdir / "public", workdir / "cache"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "gh-pages")
    rows = []
    with farm:
        sites = farm.write_sites_yaml(workdir / "sites.yaml", snapshot=snapshot, link="https://planet.example.org/")
        now = START
        build(exe, sites, repo, cache, now)
        packed = packed_bytes(repo)
        for phase, fraction in (("304", 0.0), ("changed", args.changed)):
            loose, files = loose_bytes(repo), 0
            for _ in range(args.builds):
                now += timedelta(minutes=30)
                farm.set_time(now)
                if fraction:
                    farm.touch(fraction)
                files += build(exe, sites, repo, cache, now)
            loose = loose_bytes(repo) - loose
            grown = packed_bytes(repo) - packed
            packed += grown
            rows.append(_row(snapshot, phase, args.builds, files, loose, grown))
        state = repo / "syndicator-state.json.gz"
        size = f"{state.stat().st_size:,} B state file" if state.exists() else "no state file"
        print(f"git_growth: snapshot {str(snapshot).lower()}: {size}, repository {packed:,} B packed", file=sys.stderr)
    return rows


def _row(snapshot: bool, phase: str, builds: int, files: int, loose: int, packed: int) -> str:
    return (
        f"| {str(snapshot).lower()} | {phase} | {files / builds:.1f} | {loose / builds:,.0f} | "
        f"{loose / builds * BUILDS_A_DAY:,.0f} | {packed / builds:,.0f} | {packed / builds * BUILDS_A_DAY:,.0f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feeds", type=int, default=567, help="sites of the planet (default 567)")
    parser.add_argument("--hosts", type=int, default=100, help="farm hosts they are spread over (default 100)")
    parser.add_argument("--builds", type=int, default=10, help="builds per phase (default 10)")
    parser.add_argument("--changed", type=float, default=0.05, help="share of feeds changed per build (default 0.05)")
    parser.add_argument(
        "--mixed",
        action="store_true",
        help="the farm's default mix (no validators, changing ETags, errors, redirects), not quiet feeds",
    )
    parser.add_argument("--syndicator", help="the syndicator executable (default: beside this Python)")
    args = parser.parse_args(argv)
    exe = Path(args.syndicator) if args.syndicator else Path(sys.executable).parent / "syndicator"
    if not os.access(exe, os.X_OK):
        raise SystemExit(f"git_growth: no executable {exe}; pip install -e . in this venv, or pass --syndicator")
    print(f"{args.feeds} feeds, {args.builds} builds a phase, --force, 30 minutes apart; bytes of git objects")
    print(
        "| snapshot | builds | files changed a build | loose B a build | loose B a day "
        "| packed B a build | packed B a day |"
    )
    print("|---|---|---|---|---|---|---|")
    for snapshot in (False, True):
        with tempfile.TemporaryDirectory(prefix="git-growth-") as workdir:
            for row in run(exe, snapshot, args, Path(workdir)):
                print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
