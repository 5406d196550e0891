"""The one orchestrator: the only module that imports the stages.

One build::

    config -> schedule (due sources) -> pool( fetch | parse ) -> decide -> store
           -> select (5 per feed, merge, sort) -> render (staging, swap)

Fetching and parsing run on the pool's threads; deciding and storing run
on the calling thread, one transaction per source, as results arrive. The
clock is read once, by the caller, and passed down as ``now``.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from . import HOMEPAGE, __version__, schedule
from .errors import EmptyBuildError, FeedError, NotAFeedError
from .fetch import Fetcher
from .hosts import host_key
from .model import Config, Failed, Fetched, FetchRequest, NotModified, SiteStatus, SourceState
from .parse import parse_feed
from .pool import HostPool, Skipped, Verdict
from .render import render_site
from .selection import select_entries, site_statuses
from .store import Store
from .update import Observation, new_state

log = logging.getLogger("syndicator")


@dataclass
class BuildReport:
    """Figures of one build, for the summary line and the report file.

    Counts are of sources except ``entries``; ``seconds`` is wall time.
    """

    sites: int = 0
    due: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    failed_by_kind: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    stale_copies: int = 0
    entries: int = 0
    bytes_downloaded: int = 0
    parse_seconds: float = 0.0
    seconds: float = 0.0

    def summary(self) -> str:
        """The one-line summary printed at the end of a build (str)."""
        skipped = sum(self.skipped.values())
        return (f"{self.sites} sites, {self.outcomes['fetched']} fetched, "
                f"{self.outcomes['not_modified'] + self.outcomes['unchanged']} not modified, "
                f"{self.outcomes['failed']} failed"
                + (f", {skipped} skipped" if skipped else "")
                + f", {self.stale_copies} stale copies used, {self.entries} entries written, "
                f"{self.seconds:.1f} s")


@dataclass(frozen=True)
class BuildOptions:
    """How to run one build.

    Attributes:
        now: the build's clock (UTC).
        force: fetch every source, due or not.
        templates: a folder of templates overriding the bundled ones.
        progress: called as progress(done, total) after each source.
    """

    now: datetime
    force: bool = False
    templates: Path | None = None
    progress: Callable[[int, int], None] | None = None


def build(config: Config, options: BuildOptions) -> BuildReport:
    """Run one build: fetch what is due, store it, publish the site.

    Returns:
        the BuildReport.
    Raises:
        CacheLockedError: another build holds the cache.
        StoreError: the state database cannot be used.
        EmptyBuildError: no entries at all; the output is left as it was.
        RenderError: the site could not be written; the output is left as it was.
    """
    started = time.monotonic()
    report = BuildReport(sites=len(config.sites))
    with Store.open(config.cache) as store:
        states = store.states()
        due = schedule.due_sources(config.sources, states, options.now, options.force)
        report.due = len(due)
        _poll(config, options, store, states, due, report)
        states = store.states()
        snapshots = store.snapshots(config.sources)
    selected = select_entries(config.sites, snapshots, config.items_per_feed)
    statuses = site_statuses(config.sites, states, snapshots, options.now, config.stale_after)
    report.stale_copies = _log_health(statuses, options.now)
    if not selected:
        raise EmptyBuildError(f"no entries from any of {len(config.sites)} sites; nothing was "
                              f"published and {config.output} is unchanged (is the network down?)")
    render_site(config, selected, statuses, options.now, config.output, options.templates)
    report.entries = min(len(selected), config.feed_entries)
    report.seconds = time.monotonic() - started
    return report


def _poll(config: Config, options: BuildOptions, store: Store, states: dict[str, SourceState],
          due: list[str], report: BuildReport) -> None:
    """Fetch and parse the due sources on the pool; decide and store each result."""
    fetcher = Fetcher(config.user_agent, timeout=config.timeout, retries=config.retries,
                      max_bytes=config.max_bytes)
    requests = [_request(url, states.get(url)) for url in due]
    pool: HostPool[FetchRequest, Observation] = HostPool(workers=config.workers)
    results = pool.run(requests, host=lambda r: host_key(r.url),
                       work=lambda r: _observe(r, fetcher, states, options.now), judge=_judge)
    for done, (request, observation) in enumerate(results, start=1):
        if isinstance(observation, Skipped):
            report.skipped[observation.reason] += 1
        else:
            _record(store, states.get(request.source) or SourceState(request.source, request.source),
                    observation, options.now, report)
        if options.progress:
            options.progress(done, len(requests))


def _request(url: str, state: SourceState | None) -> FetchRequest:
    if state is None:
        return FetchRequest(source=url, url=url)
    return FetchRequest(source=url, url=state.fetch_url, etag=state.etag,
                        last_modified=state.last_modified, validators_url=state.validators_url)


def _observe(request: FetchRequest, fetcher: Fetcher, states: dict[str, SourceState],
             now: datetime) -> Observation:
    """fetch | parse, on a worker thread. Never raises for a feed's trouble."""
    result = fetcher.fetch(request)
    if not isinstance(result, Fetched):
        return Observation(request, result)
    body_hash = hashlib.sha256(result.body).hexdigest()
    state = states.get(request.source)
    if state is not None and state.body_hash == body_hash:
        return Observation(request, result, body_hash=body_hash, unchanged=True)
    clock = time.process_time()
    try:
        parsed = parse_feed(result.body, result.url, result.headers, now)
    except FeedError as error:
        return Observation(request, Failed(error, result.elapsed), body_hash=body_hash,
                           parse_seconds=time.process_time() - clock)
    return Observation(request, result, parsed, body_hash, parse_seconds=time.process_time() - clock)


def _judge(observation: Observation) -> Verdict:
    result = observation.result
    if not isinstance(result, Failed):
        return "ok"
    return "stop" if result.error.kind == "http_429" else "failed"


def _record(store: Store, state: SourceState, observation: Observation, now: datetime,
            report: BuildReport) -> None:
    """decide | store for one source, in one transaction."""
    updated = new_state(state, observation, now)
    entries = observation.parsed.entries if observation.parsed is not None else None
    store.save(updated, entries, now)
    report.outcomes[observation.outcome] += 1
    report.parse_seconds += observation.parse_seconds
    if isinstance(observation.result, Fetched):
        report.bytes_downloaded += len(observation.result.body)
    if isinstance(observation.result, Failed):
        error = observation.result.error
        report.failed_by_kind[error.kind] += 1
        log.info("%s: %s", error.url, error.message)


def _log_health(statuses: list[SiteStatus], now: datetime) -> int:
    """Warn about failing sites; return how many use a last-known-good copy (int)."""
    stale_copies = 0
    for status in statuses:
        state = status.state
        if state is None or state.error_kind is None:
            continue
        if state.last_success is None:
            log.error("site %r has never been fetched successfully and contributes nothing: %s (%s)",
                      status.site.name, state.error_message, state.fetch_url)
            continue
        stale_copies += 1
        log.warning("site %r failed (%s); using its last good copy from %s ago",
                    status.site.name, state.error_message, _age(now - state.last_success))
    return stale_copies


def _age(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def discover(url: str, now: datetime, timeout: float = 15.0) -> list[str]:
    """The feed URLs for ``url``: ``fetch | parse`` once, nothing stored.

    Returns:
        [the URL that answered] when it serves a feed, else the feed URLs
        its HTML page advertises (possibly none), in page order.
    Raises:
        FeedError: the URL cannot be fetched, or answers with something
            that is neither a feed nor an HTML page.
    """
    fetcher = Fetcher(f"syndicator/{__version__} (+{HOMEPAGE})", timeout=timeout, retries=0)
    result = fetcher.fetch(FetchRequest(source=url, url=url))
    if isinstance(result, Failed):
        raise result.error
    assert not isinstance(result, NotModified)  # no validators were sent
    try:
        parse_feed(result.body, result.url, result.headers, now)
    except NotAFeedError as error:
        return error.alternates
    return [result.url]
