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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from . import __version__, hints, schedule
from .errors import ConfigError, EmptyBuildError, FeedError, HTTPStatusError, NotAFeedError, ParseError
from .failures import host_verdict, kind_of
from .fetch import Fetcher
from .hosts import host_key
from .model import Config, Failed, Fetched, FetchRequest, NotModified, SiteStatus, SourceState
from .parse import parse_feed
from .pool import HostPool, Skipped, Verdict
from .render import render_site
from .report import BuildReport, write_report
from .selection import select_entries, site_statuses
from .store import Store
from .update import Observation, new_state, snapshot_hash

log = logging.getLogger("syndicator")

__all__ = ["BuildOptions", "BuildReport", "build", "discover"]


@dataclass(frozen=True)
class BuildOptions:
    """How to run one build.

    Attributes:
        now: the build's clock (UTC).
        force: fetch every source, due or not.
        sites: names of sites to fetch (``--site``), due or not; empty: by schedule.
        templates: a folder of templates overriding the bundled ones.
        progress: called as progress(done, total) after each source.
    """

    now: datetime
    force: bool = False
    sites: tuple[str, ...] = ()
    templates: Path | None = None
    progress: Callable[[int, int], None] | None = None


def build(config: Config, options: BuildOptions) -> BuildReport:
    """Run one build: fetch what is due, store it, report, publish the site.

    Returns:
        the BuildReport (also written to ``<cache>/report.json``).
    Raises:
        ConfigError: a ``--site`` name is not in sites.yaml.
        CacheLockedError: another build holds the cache.
        StoreError: the state database cannot be used.
        EmptyBuildError: no entries at all; the output is left as it was.
        RenderError: the site could not be written; the output is left as it was.
    """
    started = time.monotonic()
    only = _chosen_sources(config, options.sites)
    report = BuildReport(sites=len(config.sites), sources=len(config.sources))
    with Store.open(config.cache) as store:
        states = store.states()
        fingerprints = schedule.site_fingerprints(config.sites)
        due = schedule.due_sources(config.sources, states, options.now, fingerprints, options.force, only)
        report.due = len(due)
        _poll(config, options, store, states, due, fingerprints, report, started)  # keeps `states` current
        snapshots = store.snapshots(config.sources)
    selected = select_entries(config.sites, snapshots, config.items_per_feed)
    statuses = site_statuses(config.sites, states, snapshots, options.now, config.stale_after)
    report.stale_copies = _log_health(statuses, options.now)
    report.entries = min(len(selected), config.feed_entries)
    report.seconds = time.monotonic() - started
    write_report(report, options.now, config.cache)
    if not selected:
        offline = report.fetched > 0 and report.failed_by_kind.total() == report.fetched and all(
            kind_of(kind).offline for kind in report.failed_by_kind)
        raise EmptyBuildError(f"no entries from any of {len(config.sites)} sites; nothing was published and "
                              f"{config.output} is unchanged" + (" (is the network down?)" if offline else ""))
    render_site(config, selected, statuses, options.now, config.output, options.templates)
    return report


def _chosen_sources(config: Config, names: Iterable[str]) -> list[str] | None:
    """The feed URLs of the ``--site`` names, or None when none were given."""
    names = list(names)
    if not names:
        return None
    by_name = {site.name: site.feed for site in config.sites}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise ConfigError(f"--site: no site named {unknown[0]!r} in {config.path}")
    return [by_name[name] for name in names]


def policy_of(config: Config) -> schedule.Policy:
    """The schedule policy of a config (schedule.Policy)."""
    return schedule.Policy(config.default_interval, config.min_interval, config.max_interval)


def _poll(config: Config, options: BuildOptions, store: Store, states: dict[str, SourceState],
          due: list[str], fingerprints: dict[str, str], report: BuildReport, started: float) -> None:
    """Fetch and parse the due sources on the pool; decide, plan and store each result.

    ``states`` is updated in place with every state stored, so the caller
    need not read the store again.
    """
    fetcher = Fetcher(config.user_agent, timeout=config.timeout, retries=config.retries,
                      max_bytes=config.max_bytes)
    requests = [_request(url, states.get(url)) for url in due]
    pool: HostPool[FetchRequest, Observation] = HostPool(
        workers=config.workers, per_host=config.per_host_concurrency, host_gap=config.host_gap,
        breaker=config.host_breaker)
    results = pool.run(requests, host=lambda r: host_key(r.url),
                       work=lambda r: _observe(r, fetcher, states, options.now, started), judge=_judge)
    policy = policy_of(config)
    host_wait: dict[str, float | None] = {}
    stopped_by: dict[str, Observation] = {}  # host -> its last failure that counts against it
    skipped: dict[str, list[str]] = {}  # host -> sources not requested
    http_requests: Counter[str] = Counter()  # host -> HTTP requests, redirects and retries included
    for done, (request, observation) in enumerate(results, start=1):
        state = states.get(request.source) or SourceState(request.source, request.source)
        host = host_key(request.url)
        if isinstance(observation, Skipped):
            report.skipped[observation.reason] += 1
            states[request.source] = schedule.skipped(state, observation.reason, host, options.now,
                                                      host_wait.get(host))
            store.save(states[request.source], None, options.now)
            skipped.setdefault(host, []).append(request.source)
        else:
            if _judge(observation) == "stop":
                host_wait[host] = _retry_after(observation)
            if _judge(observation) != "ok":
                stopped_by[host] = observation
            http_requests[host] += observation.result.requests
            states[request.source] = _record(store, state, observation, options.now, policy,
                                             fingerprints.get(request.source), report)
        if options.progress:
            options.progress(done, len(requests))
    for host, sources in skipped.items():
        _log_skipped(host, sources, stopped_by.get(host), config)
    report.requests = http_requests.total()
    report.hosts = {host: {"sources": s.started, "requests": http_requests[host], "peak_concurrency": s.peak,
                           "skipped": s.skipped} for host, s in pool.stats.items()}


def _log_skipped(host: str, sources: list[str], last: Observation | None, config: Config) -> None:
    """One warning for a host the pool stopped requesting from: why, and the sites not requested.

    Args:
        sources: configured URLs of the host's sources skipped in this build.
        last: the host's last failed observation, which stopped it (429,
            Retry-After, or the failure that tripped the breaker).
    """
    error = last.result.error if last is not None and isinstance(last.result, Failed) else None
    answer = error.message if error is not None else "an error"
    wait = _retry_after(last) if last is not None else None
    until = "until the next build"
    if last is not None and _judge(last) == "stop" and wait is not None:
        why = f"asked to wait {wait:.0f} s ({answer})"
        until = f"for {schedule.duration_text(min(wait, schedule.RETRY_AFTER_CEILING))}"
    elif last is not None and _judge(last) == "stop":
        why = f"answered {answer} without Retry-After"
    else:
        why = (f"failed {config.host_breaker} times in a row (last: {answer}), "
               f"tripping its breaker (host_breaker: {config.host_breaker})")
    unique = set(sources)
    sites = sum(1 for site in config.sites if site.feed in unique)
    feeds = f" ({len(unique)} feed{'s' * (len(unique) != 1)})" if len(unique) != sites else ""
    log.warning("host %s %s: %d site%s%s not requested %s", host, why, sites, "s" * (sites != 1), feeds, until)


def _request(url: str, state: SourceState | None) -> FetchRequest:
    if state is None:
        return FetchRequest(source=url, url=url)
    return FetchRequest(source=url, url=state.fetch_url, etag=state.etag,
                        last_modified=state.last_modified, validators_url=state.validators_url)


def _observe(request: FetchRequest, fetcher: Fetcher, states: dict[str, SourceState],
             now: datetime, build_started: float) -> Observation:
    """fetch | parse, on a worker thread. Never raises for a feed's trouble."""
    started = time.monotonic() - build_started
    result = fetcher.fetch(request)
    if not isinstance(result, Fetched):
        return Observation(request, result, started=started)
    body_hash = hashlib.sha256(result.body).hexdigest()
    state = states.get(request.source)
    if state is not None and state.body_hash == body_hash:
        return Observation(request, result, body_hash=body_hash, unchanged=True, started=started)
    if state is not None and state.failed_body_hash == body_hash:  # the same invalid body: not parsed again
        error = ParseError(request.source, state.error_message or "not a readable feed",
                           kind=state.error_kind or "parse")
        return Observation(request, Failed(error, result.elapsed, result.requests), body_hash=body_hash,
                           started=started)
    clock = time.thread_time()
    try:
        parsed = parse_feed(result.body, result.url, result.headers, now)
    except FeedError as error:
        return Observation(request, Failed(error, result.elapsed, result.requests), body_hash=body_hash,
                           parse_seconds=time.thread_time() - clock, started=started)
    return Observation(request, result, parsed, body_hash, parse_seconds=time.thread_time() - clock,
                       snapshot_hash=snapshot_hash(parsed.entries), started=started)


def _judge(observation: Observation) -> Verdict:
    """The pool's verdict: "stop" the host on 429 or Retry-After; "failed" on host trouble."""
    result = observation.result
    if not isinstance(result, Failed):
        return "ok"
    return host_verdict(result.error.kind, _retry_after(observation))


def _retry_after(observation: Observation) -> float | None:
    result = observation.result
    if isinstance(result, Failed) and isinstance(result.error, HTTPStatusError):
        return result.error.retry_after
    return None


def _record(store: Store, state: SourceState, observation: Observation, now: datetime,
            policy: schedule.Policy, fingerprint: str | None, report: BuildReport) -> SourceState:
    """decide | plan | store for one source, in one transaction; returns the state stored."""
    updated = new_state(state, observation, now, fingerprint)
    headers = observation.result.headers if not isinstance(observation.result, Failed) else {}
    plan = schedule.plan(updated, now, policy, _retry_after(observation), hints.http_freshness(headers))
    updated = replace(updated, next_attempt=plan.next_attempt, interval=plan.interval, reason=plan.reason)
    changed = updated.snapshot_hash != state.snapshot_hash and observation.parsed is not None
    entries = observation.parsed.entries if changed and observation.parsed is not None else None
    store.save(updated, entries, now)
    _count(report, state, observation, changed, now)
    return updated


def _count(report: BuildReport, state: SourceState, observation: Observation, changed: bool,
           now: datetime) -> None:
    """Add one observation to the build's figures."""
    report.fetched += 1
    report.outcomes[observation.outcome] += 1
    report.changed += int(changed)
    report.parse_seconds += observation.parse_seconds
    if observation.status is not None:
        report.statuses[observation.status] += 1
    if observation.status == 304:
        report.bytes_saved += state.body_size or 0
    if isinstance(observation.result, Fetched):
        report.bytes_downloaded += len(observation.result.body)
    if state.next_attempt is not None and state.next_attempt <= now:
        started = now + timedelta(seconds=observation.started)
        report.due_lags.append((started - state.next_attempt).total_seconds())
    if isinstance(observation.result, Failed):
        error = observation.result.error
        report.failed_by_kind[error.kind] += 1
        log.info("%s: %s", error.url, error.message)


def _log_health(statuses: list[SiteStatus], now: datetime) -> int:
    """Log failing sites; return how many use a last-known-good copy (int).

    A site that failed in this build is an error (never worked, seed 004) or
    a warning naming the age of its last good copy. A site still failing
    from an earlier build, not requested in this one (backing off, or on
    hold), is logged at info level only, so a cron job is not mailed the
    same failure every hour.
    """
    stale_copies = 0
    for status in statuses:
        state = status.state
        if state is None or state.error_kind is None:
            continue
        stale_copies += state.last_success is not None
        now_failed = state.last_attempt == now
        kind = kind_of(state.error_kind)
        problem = state.error_message
        if state.hold:
            problem = f"{problem}; {kind.advice}, it is not requested again until its entry in sites.yaml changes"
        if state.last_success is None:
            log.log(logging.ERROR if now_failed else logging.INFO,
                    "site %r has never been fetched successfully and contributes nothing: %s (%s)",
                    status.site.name, problem, state.fetch_url)
        else:
            log.log(logging.WARNING if now_failed else logging.INFO,
                    "site %r failed (%s); using its last good copy from %s ago",
                    status.site.name, problem, _age(now - state.last_success))
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
    fetcher = Fetcher(f"syndicator/{__version__}", timeout=timeout, retries=0)  # no sites.yaml: no contact URL
    result = fetcher.fetch(FetchRequest(source=url, url=url))
    if isinstance(result, Failed):
        raise result.error
    assert not isinstance(result, NotModified)  # no validators were sent
    try:
        parse_feed(result.body, result.url, result.headers, now)
    except NotAFeedError as error:
        return error.alternates
    return [result.url]
