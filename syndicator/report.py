"""The figures of one build: the summary line and ``<cache>/report.json``.

The report is what a benchmark or a monitor reads (seed 000, "operate the
scheduler with measurable goals"): sources due and fetched, answers by
status, failures by class, sources skipped by host throttling and the
breaker, bytes, parse time, due lag, and per host the requests made and the
peak of requests at once. README.md ("report.json") lists every field.
"""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPORT = "report.json"
#: Version of the report's shape; bumped when a field changes meaning.
REPORT_VERSION = 1


@dataclass
class BuildReport:
    """Figures of one build. Counts are of sources unless named otherwise.

    Attributes:
        sites, sources: configured sites and distinct feed URLs.
        due: sources chosen for this build; fetched: sources requested.
        outcomes: {"fetched" (parsed 200), "unchanged" (200, same body hash),
            "not_modified" (304), "failed"}: count.
        statuses: {200 or 304: count} of answers.
        changed: parsed 200s whose entries differed from the snapshot.
        failed_by_kind: {failure class: count}.
        skipped: {"throttled" or "breaker": count}.
        bytes_downloaded: body bytes received (after decompression).
        bytes_saved: body bytes 304s spared, estimated from stored sizes.
        parse_seconds: CPU seconds spent parsing.
        due_lags: seconds each due source started after its planned time.
        hosts: {host key: {"requests": n, "peak_concurrency": n, "skipped": n}}.
        stale_copies, entries: sites shown from a last good copy; entries published.
        seconds: wall time of the build.
    """

    sites: int = 0
    sources: int = 0
    due: int = 0
    fetched: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    changed: int = 0
    failed_by_kind: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    bytes_downloaded: int = 0
    bytes_saved: int = 0
    parse_seconds: float = 0.0
    due_lags: list[float] = field(default_factory=list)
    hosts: dict[str, dict[str, int]] = field(default_factory=dict)
    stale_copies: int = 0
    entries: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        """The one-line summary printed at the end of a build (str)."""
        skipped = sum(self.skipped.values())
        return (f"{self.sites} sites, {self.outcomes['fetched']} fetched, "
                f"{self.outcomes['not_modified'] + self.outcomes['unchanged']} not modified, "
                f"{self.outcomes['failed']} failed"
                + (f", {skipped} skipped" if skipped else "")
                + f", {self.stale_copies} stale copies used, {self.entries} entries written, "
                f"{self.due} due, {self.fetched} requested, {self.bytes_downloaded} bytes, "
                f"{self.seconds:.1f} s")

    def to_json(self, now: datetime) -> dict[str, Any]:
        """The report as a JSON-ready dict (README.md, "report.json", lists the fields)."""
        lags = self.due_lags
        return {
            "version": REPORT_VERSION,
            "now": now.isoformat(),
            "seconds": round(self.seconds, 3),
            "sites": self.sites,
            "sources": self.sources,
            "sources_due": self.due,
            "fetched": self.fetched,
            "status_200": self.statuses[200],
            "status_304": self.statuses[304],
            "parsed": self.outcomes["fetched"],
            "changed": self.changed,
            "unchanged_by_hash": self.outcomes["unchanged"],
            "failed": self.outcomes["failed"],
            "failed_by_class": dict(sorted(self.failed_by_kind.items())),
            "skipped_by_breaker": self.skipped["breaker"],
            "skipped_throttled": self.skipped["throttled"],
            "bytes_downloaded": self.bytes_downloaded,
            "bytes_saved_by_304": self.bytes_saved,
            "parse_seconds": round(self.parse_seconds, 3),
            "due_lag_seconds": {"count": len(lags),
                                "median": round(statistics.median(lags), 3) if lags else None,
                                "max": round(max(lags), 3) if lags else None},
            "hosts": dict(sorted(self.hosts.items())),
            "stale_copies": self.stale_copies,
            "entries": self.entries,
        }


def write_report(report: BuildReport, now: datetime, cache: Path) -> Path:
    """Write ``<cache>/report.json`` atomically (a temporary file, then rename).

    Returns:
        the report's path.
    Raises:
        OSError: the cache folder cannot be written.
    """
    path = Path(cache) / REPORT
    temporary = path.with_name(f".{REPORT}.tmp")
    temporary.write_text(json.dumps(report.to_json(now), indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return path
