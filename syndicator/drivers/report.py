"""The figures of one build: the summary line and ``<cache>/report.json``.

The report is what a benchmark or a monitor reads (seed 000, "operate the
scheduler with measurable goals"): sources due and fetched, answers by
status, failures by class, sources skipped by host throttling and the
breaker, bytes, parse time, due lag, and per host the requests made and the
peak of requests at once. docs/reference/report.md lists every field.
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

from syndicator.configtypes import is_local
from syndicator.model import Decision, Failed, Fetched, NotRequested, Observation

REPORT = "report.json"
#: Version of the report's shape; bumped when a field changes meaning.
REPORT_VERSION = 1


@dataclass
class BuildReport:
    """Figures of one build. Counts are of sources unless named otherwise.

    Attributes:
        sites, sources: configured sites and distinct feed URLs.
        due: sources chosen for this build; fetched: sources requested.
        requests: HTTP requests made, redirect hops and retries included.
        outcomes: {"fetched" (parsed 200), "unchanged" (200, same body hash),
            "not_modified" (304), "failed"}: count.
        statuses: {200 or 304: count} of answers.
        changed: parsed 200s whose entries differed from the snapshot.
        failed_by_kind: {failure class: count}.
        followed: sources whose URL answered with an HTML page, whose
            advertised feed was followed (feed discovery).
        skipped: {"throttled" or "breaker": count}.
        bytes_downloaded: body bytes received (after decompression).
        bytes_saved: body bytes 304s spared, estimated from stored sizes.
        parse_seconds: CPU seconds spent parsing.
        due_lags: seconds each due source started after its planned time.
        hosts: {host key: {"sources": n requested, "requests": n HTTP requests,
            "peak_concurrency": n, "skipped": n}}.
        stale_copies, entries: sites shown from a last good copy; entries published.
        rendered: files of the site were written. False until they are, and
            False when nothing a render reads changed since the last build that
            wrote it (:mod:`sitekey`), or the render gave every file's bytes as
            published (publish.py), so the output was left as it was.
        seconds: wall time of the build.
        offline: every request failed to connect, to several hosts: this
            machine was offline, and no source was counted as failing for it.
        restored: the cache folder held no state and the build loaded it
            from ``restore_from`` (statefile.py).
        failing_sites: sites whose last attempt failed (health failing, gone or
            denied), counted when the site is published; ``build --fail-on`` reads it.
        planets: with ``planets:`` in sites.yaml, each planet's figures, {label: {"entries": n,
            "rendered": bool, "empty": bool}} (docs/planets.md); empty for a file of one planet, whose
            figures are ``entries`` and ``rendered``.
    """

    sites: int = 0
    sources: int = 0
    due: int = 0
    fetched: int = 0
    requests: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    changed: int = 0
    failed_by_kind: Counter[str] = field(default_factory=Counter)
    followed: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    bytes_downloaded: int = 0
    bytes_saved: int = 0
    parse_seconds: float = 0.0
    due_lags: list[float] = field(default_factory=list)
    hosts: dict[str, dict[str, int]] = field(default_factory=dict)
    stale_copies: int = 0
    entries: int = 0
    rendered: bool = False
    seconds: float = 0.0
    offline: bool = False
    restored: bool = False
    failing_sites: int = 0
    planets: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, observation: Observation, decision: Decision, host: str) -> None:
        """Count one source's observation and the decision taken on it.

        Args:
            host: the host key of the URL requested, for the per-host figures.
        """
        result = observation.result
        figures = self.hosts.setdefault(host, {"sources": 0, "requests": 0, "peak_concurrency": 0, "skipped": 0})
        if isinstance(result, NotRequested):
            self.skipped[result.reason] += 1
            figures["skipped"] += 1
            return
        figures["sources"] += 1
        figures["requests"] += result.requests
        self.fetched += 1
        self.requests += result.requests
        self.outcomes[observation.outcome] += 1
        self.changed += int(decision.changed)
        self.followed += observation.followed is not None
        self.parse_seconds += observation.parse_seconds
        self.bytes_saved += decision.bytes_saved
        if observation.status is not None:
            self.statuses[observation.status] += 1
        if isinstance(result, Fetched) and not is_local(observation.request.source):  # a local file is read
            self.bytes_downloaded += len(result.body)
        if decision.due_lag is not None:
            self.due_lags.append(decision.due_lag)
        if isinstance(result, Failed):
            self.failed_by_kind[result.error.kind] += 1

    def record_peaks(self, peaks: dict[str, int]) -> None:
        """Fill each host's ``peak_concurrency`` from {host key: most requests at once}."""
        for host, peak in peaks.items():
            if host in self.hosts:
                self.hosts[host]["peak_concurrency"] = peak

    @property
    def internal_errors(self) -> int:
        """Sources that hit an internal error (a bug) in this build (int)."""
        return self.failed_by_kind["internal"]

    def summary(self) -> str:
        """The one-line summary printed at the end of a build (str).

        Counts of feeds add up: due = requested + skipped (host throttled or
        breaker), requested = changed + unchanged + failed, where unchanged
        is a 304, a 200 with the stored body, or a 200 with the same entries.
        "requested" is report.json's ``fetched``; docs/reference/commands.md shows it.
        """
        failed = self.outcomes["failed"]
        unchanged = self.fetched - self.changed - failed
        return (
            f"{_count(self.sites, 'site')}: {_count(self.due, 'feed')} due, {self.fetched} requested "
            f"({self.changed} changed, {unchanged} unchanged, {failed} failed), "
            f"{sum(self.skipped.values())} skipped, {_count(self.stale_copies, 'stale copy', 'stale copies')} "
            f"used, {_count(self.entries, 'entry', 'entries')} {'written' if self.rendered else 'unchanged'}, "
            f"{_size(self.bytes_downloaded)} downloaded, {self.seconds:.1f} s" + self._planets_text()
        )

    def _planets_text(self) -> str:
        """``; planets: main 12 written, django 0 unchanged`` with ``planets:``, else ""."""
        if not self.planets:
            return ""
        parts = (
            f"{label} {figures['entries']} {'written' if figures['rendered'] else 'unchanged'}"
            for label, figures in self.planets.items()
        )
        return "; planets: " + ", ".join(parts)

    def to_json(self, now: datetime) -> dict[str, Any]:
        """The report as a JSON-ready dict (docs/reference/report.md lists the fields)."""
        lags = self.due_lags
        return {
            "version": REPORT_VERSION,
            "now": now.isoformat(),
            "seconds": round(self.seconds, 3),
            "sites": self.sites,
            "sources": self.sources,
            "sources_due": self.due,
            "fetched": self.fetched,
            "requests": self.requests,
            "status_200": self.statuses[200],
            "status_304": self.statuses[304],
            "parsed": self.outcomes["fetched"],
            "changed": self.changed,
            "unchanged_by_hash": self.outcomes["unchanged"],
            "failed": self.outcomes["failed"],
            "failed_by_class": dict(sorted(self.failed_by_kind.items())),
            "followed_from_pages": self.followed,
            "skipped_by_breaker": self.skipped["breaker"],
            "skipped_throttled": self.skipped["throttled"],
            "bytes_downloaded": self.bytes_downloaded,
            "bytes_saved_by_304": self.bytes_saved,
            "parse_seconds": round(self.parse_seconds, 3),
            "due_lag_seconds": {
                "count": len(lags),
                "median": round(statistics.median(lags), 3) if lags else None,
                "max": round(max(lags), 3) if lags else None,
            },
            "hosts": dict(sorted(self.hosts.items())),
            "stale_copies": self.stale_copies,
            "entries": self.entries,
            "rendered": self.rendered,
            "offline": self.offline,
            "restored": self.restored,
            "failing_sites": self.failing_sites,
            **({"planets": self.planets} if self.planets else {}),
        }


def _count(number: int, one: str, many: str | None = None) -> str:
    """``1 site``, ``2 sites``: a number with its noun in the right number."""
    return f"{number} {one if number == 1 else many or one + 's'}"


def _size(size: int) -> str:
    """A byte count for people, in SI units: ``999 B``, ``3.4 kB``, ``12.3 MB``, ``1.2 GB``."""
    if size < 1000:
        return f"{size} B"
    for unit, scale in (("kB", 1e3), ("MB", 1e6)):
        if size < scale * 999.95:
            return f"{size / scale:.1f} {unit}"
    return f"{size / 1e9:.1f} GB"


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
