"""Adversarial parse benchmark: hostile documents and RRULEs against the real parser.

    .venv/bin/python benchmarks/adversarial.py [--timeout 60] [--only NAME ...] [--no-corpus]

For each document of adversarial_docs.DOCUMENTS, runs ``parse_feed`` in a
child process (killed after --timeout seconds) and prints its size, the
thread CPU seconds the parse took, seconds per MB (10^6 bytes) and the
outcome: ``ok`` with the entry count, or the failure kind. Then parses every
document of the real corpus (shared/corpus/feeds, or $SYNDICATOR_CORPUS/feeds)
and prints the median seconds per MB, the worst adversarial figure and their
ratio (the target: within 5x). Last, for each RRULE of adversarial_docs.RULES,
the CPU seconds of ``hints.rrule_interval`` and of one ``intervals.plan`` call,
and the interval found. Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from adversarial_docs import DOCUMENTS, MB, RULES  # noqa: E402

from syndicator.errors import FeedError  # noqa: E402
from syndicator.feedtypes import FeedHints  # noqa: E402
from syndicator.model import SourceState  # noqa: E402
from syndicator.parse import hints  # noqa: E402
from syndicator.parse.feed import parse_feed  # noqa: E402
from syndicator.poll import intervals, schedule  # noqa: E402

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
URL = "https://adversarial.example/feed"
CORPUS = Path(os.environ.get("SYNDICATOR_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus")


def parse_outcome(body: bytes, headers: dict[str, str]) -> tuple[float, str]:
    """(thread CPU seconds, outcome) of one parse_feed call."""
    started = time.thread_time()
    try:
        parsed = parse_feed(body, URL, headers, NOW)
        outcome = f"ok ({len(parsed.entries)} entries)"
    except FeedError as error:
        outcome = error.kind
    except Exception as error:  # noqa: BLE001 - a benchmark reports crashes, it does not hide them
        outcome = f"CRASH {type(error).__name__}"
    return time.thread_time() - started, outcome


def _child(connection: Any, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    connection.send(work(*args))
    connection.close()


def in_child(work: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> Any | None:
    """``work(*args)`` in a forked child; None when it did not finish within ``timeout`` seconds."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, work, args))
    process.start()
    sender.close()
    result = receiver.recv() if receiver.poll(timeout) else None
    process.join(1)
    if process.is_alive():
        process.kill()
        process.join()
    return result


def documents(names: list[str], timeout: float) -> list[float]:
    """Print the adversarial table; return each document's seconds per MB."""
    print(f"{'document':<30} {'bytes':>10} {'parse s':>9} {'s/MB':>9}  outcome")
    rates = []
    for name, make in DOCUMENTS.items():
        if names and name not in names:
            continue
        body, headers = make()
        result = in_child(parse_outcome, (body, headers), timeout)
        seconds, outcome = result if result is not None else (timeout, f"killed after {timeout:.0f} s")
        rate = seconds / (len(body) / MB)
        rates.append(rate)
        shown = f">{seconds:.0f}" if result is None else f"{seconds:.3f}"
        print(f"{name:<30} {len(body):>10} {shown:>9} {rate:>9.3f}  {outcome}", flush=True)
    return rates


def corpus_median() -> float | None:
    """Print and return the median seconds per MB over the corpus feeds, or None without a corpus."""
    files = sorted((CORPUS / "feeds").glob("*")) if (CORPUS / "feeds").is_dir() else []
    if not files:
        print(f"\ncorpus: not found at {CORPUS} (set SYNDICATOR_CORPUS); no comparison")
        return None
    rates = []
    for path in files:
        body = path.read_bytes()
        seconds, _outcome = parse_outcome(body, {})
        rates.append(seconds / (len(body) / MB))
    median = statistics.median(rates)
    print(f"\ncorpus: {len(files)} documents, median {median:.3f} s/MB, worst {max(rates):.3f} s/MB")
    return median


def rule_timing(rule: str, dtstart: str | None) -> tuple[float, float, float | None]:
    """(rrule_interval CPU s, plan CPU s, interval s) for one rule."""
    started = time.thread_time()
    seconds, _note = hints.rrule_interval(rule, dtstart, NOW)
    middle = time.thread_time()
    state = SourceState(URL, URL, hints=FeedHints(rrule=rule, dtstart=dtstart))
    intervals.plan(state, NOW, schedule.Policy())
    return middle - started, time.thread_time() - middle, seconds


def rules(timeout: float) -> None:
    """Print the RRULE table."""
    print(f"\n{'podcast:updateFrequency rule':<48} {'rrule_interval s':>16} {'plan s':>9}  interval")
    for name, rule, dtstart in RULES:
        result = in_child(rule_timing, (rule, dtstart), timeout)
        if result is None:
            print(f"{name:<48} {'>' + format(timeout, '.0f'):>16} {'-':>9}  killed after {timeout:.0f} s")
            continue
        first, second, seconds = result
        shown = "no hint" if seconds is None else f"{seconds:.0f} s"
        print(f"{name:<48} {first:>16.3f} {second:>9.3f}  {shown}", flush=True)


def main() -> None:
    """Run the benchmark (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per document or rule (default 60)")
    parser.add_argument("--only", nargs="*", default=[], help="document names to run (default: all)")
    parser.add_argument("--no-corpus", action="store_true", help="skip the real-corpus comparison")
    parser.add_argument("--no-rules", action="store_true", help="skip the RRULE timings")
    args = parser.parse_args()
    rates = documents(args.only, args.timeout)
    median = None if args.no_corpus else corpus_median()
    if rates:
        worst = max(rates)
        print(
            f"worst adversarial: {worst:.3f} s/MB"
            + (f"; ratio to the corpus median: {worst / median:.1f}x" if median else "")
        )
    if not args.no_rules:
        rules(args.timeout)


if __name__ == "__main__":
    main()
