"""The one orchestrator: the only module that imports the stages.

One build, under the cache lock and the output lock from start to end::

    due sources | pool( observe = fetch | parse ) | decide | store    -> report.json
                        (an HTML page advertising feeds: | follow one | parse)
    store.snapshots | select (5 per feed, merge, sort) | render       -> public/

``observe`` runs on the pool's threads and returns an
:class:`~syndicator.model.Observation` made from the request and the
source's state as it was before the build (nothing shared is mutated).
``decide`` is pure and returns a :class:`~syndicator.model.Decision`;
the calling thread stores each one in its own transaction as it arrives.
The clock is read once, by the caller, and passed down as ``now``.

Containment: a feed's trouble is a value (Failed with a kind from the
failure table). An exception we did not foresee while handling one source
is recorded for that source as kind ``internal``, its traceback logged,
and the build goes on; the CLI then exits 7. Only failures outside any one
source (the store, the output, a template) stop a build.
"""

from __future__ import annotations

import hashlib
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from . import __version__, habits, schedule
from .buildlog import HostTrouble, log_failure, log_followed, log_health
from .decide import decide, snapshot_hash
from .discover import choose_feed
from .errors import ConfigError, EmptyBuildError, FeedError, InternalError, NotAFeedError, ParseError, StoreError
from .failures import kind_of
from .fetch import Fetcher
from .hosts import host_key
from .model import (
    Config,
    Decision,
    Failed,
    Fetched,
    FetchRequest,
    FetchResult,
    NotModified,
    NotRequested,
    Observation,
    SourceState,
)
from .parse import parse_feed
from .pool import HostPool, Skipped
from .publish import output_lock
from .render import render_site
from .report import BuildReport, write_report
from .selection import select_entries, site_statuses
from .store import Store

__all__ = ["BuildOptions", "BuildReport", "build", "discover"]

#: A build whose every request failed to connect, to at least this many
#: hosts, saw this machine offline, not the hosts (one host down looks alike).
OFFLINE_HOSTS = 2
#: Where the store keeps the schedule's ledger of expected requests (schedule.budgeted).
LEDGER_KEY = "schedule.ledger"


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

    Both locks are held until the report and the site are written, so two
    builds on one cache or one output folder never interleave.

    Returns:
        the BuildReport (also written to ``<cache>/report.json``); its
        ``internal_errors`` counts sources that hit a bug of ours.
    Raises:
        ConfigError: a ``--site`` name is not in sites.yaml.
        CacheLockedError, OutputLockedError: another build holds the cache
            or the output folder; nothing was fetched or published.
        StoreError: the state database cannot be used.
        EmptyBuildError: no entries at all; the output is left as it was.
        RenderError: the site could not be written; the output is left as it was.
    """
    started = time.monotonic()
    _check_folders(config)
    only = _chosen_sources(config, options.sites)
    report = BuildReport(sites=len(config.sites), sources=len(config.sources))
    with Store.open(config.cache) as store, output_lock(config.output):
        states = store.states()
        states.update(_poll(config, options, store, states, only, report, started))
        snapshots = store.snapshots(config.sources, complete=config.items_per_feed)
        selected = select_entries(config.sites, snapshots, config.items_per_feed)
        statuses = site_statuses(config.sites, states, snapshots, options.now, config.stale_after)
        report.stale_copies = log_health(statuses, options.now)
        report.entries = min(len(selected), config.feed_entries)
        report.seconds = time.monotonic() - started
        write_report(report, options.now, config.cache)
        if not selected:
            offline = (" (every request failed to connect: is this machine offline? No site was counted as "
                       "failing for it; the next build tries them all again, `--force` at once)") if report.offline \
                else " (is the network down?)" * _offline(report)
            raise EmptyBuildError(f"no entries from any of {len(config.sites)} sites; nothing was published and "
                                  f"{config.output} is unchanged" + offline)
        render_site(config, selected, statuses, options.now, config.output, options.templates)
    return report


def _offline(report: BuildReport) -> bool:
    """True when every request of the build failed the way a machine without network fails."""
    failed = report.failed_by_kind
    return report.fetched > 0 and failed.total() == report.fetched and all(kind_of(k).offline for k in failed)


def _check_folders(config: Config) -> None:
    """Refuse a cache folder that is the output folder or inside it: publishing replaces the output whole.

    Raises:
        ConfigError: naming both folders, before anything is fetched.
    """
    output, cache = Path(config.output).resolve(), Path(config.cache).resolve()
    if cache == output or output in cache.parents:
        raise ConfigError(f"the cache folder {config.cache} must not be the output folder {config.output} or inside "
                          "it: every build replaces the output folder whole")


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


def policy_of(config: Config, states: Mapping[str, SourceState] | None = None, now: datetime | None = None,
              ledger: schedule.Ledger | None = None) -> tuple[schedule.Policy, schedule.Ledger]:
    """The schedule policy of a config, and the ledger to keep (schedule.Policy, schedule.Ledger).

    With the stored ``states`` and the build's ``now``, the planet's pooled
    posting habits are the prior, and the request budget
    (``requests_per_feed_per_day``) is spent over the configured sources,
    corrected by the ``ledger`` the last build kept (:func:`schedule.budgeted`).
    """
    policy = schedule.Policy(config.default_interval, config.min_interval, config.max_interval)
    ledger = ledger or schedule.Ledger()
    if states is None or now is None:
        return policy, ledger
    configured = [states[url] for url in config.sources if url in states]
    prior = habits.pooled((state.habits for state in configured if state.habits is not None), now)
    return schedule.budgeted(configured, now, replace(policy, prior=prior), config.requests_per_feed_per_day, ledger)


def _poll(config: Config, options: BuildOptions, store: Store, states: dict[str, SourceState],
          only: list[str] | None, report: BuildReport, started: float) -> dict[str, SourceState]:
    """due | pool(observe) | decide | store, for every due source; returns {URL: the state stored}.

    ``states`` (as they were before the build) is only read.
    """
    now = options.now
    policy, ledger = policy_of(config, states, now, schedule.Ledger.read(store.value(LEDGER_KEY)))
    store.keep(LEDGER_KEY, ledger.text())
    fingerprints = schedule.site_fingerprints(config.sites)
    due = schedule.due_sources(config.sources, states, now, fingerprints, options.force, only)
    report.due = len(due)
    pool: HostPool[_Job, Observation] = HostPool(
        workers=config.workers, per_host=config.per_host_concurrency, host_gap=config.host_gap,
        breaker=config.host_breaker)
    fetcher = Fetcher(config.user_agent, timeout=config.timeout, retries=config.retries, max_bytes=config.max_bytes,
                      per_host=config.per_host_concurrency)
    stored: dict[str, SourceState] = {}
    hosts: set[str] = set()
    trouble = HostTrouble()
    observations = _observe_all(pool, fetcher, [_job(url, states.get(url)) for url in due], now, started)
    names: dict[str, list[str]] = {}
    for site in config.sites:
        names.setdefault(site.feed, []).append(site.name)
    with fetcher:  # keep-alive connections live for the build
        for done, observation in enumerate(observations, start=1):
            source = observation.request.source
            state = states.get(source) or SourceState(source, source)
            observation, decision = _decide_and_store(store, state, observation, now, policy, fingerprints.get(source))
            stored[source] = decision.state
            report.add(observation, decision, host_key(observation.request.url))
            hosts.add(host_key(observation.request.url))
            trouble.note(observation)
            log_failure(observation)
            log_followed(observation, states.get(source), names.get(source, []))
            if options.progress:
                options.progress(done, len(due))
    if _offline(report) and len(hosts) >= OFFLINE_HOSTS:
        stored.update(_forgive(store, states, stored, now))
        report.offline = True
    else:
        trouble.warn(config)
    report.record_peaks({host: stats.peak for host, stats in pool.stats.items()})
    return stored


def _forgive(store: Store, before: Mapping[str, SourceState], after: Mapping[str, SourceState],
             now: datetime) -> dict[str, SourceState]:
    """The states of a build in which this machine, not the hosts, was offline.

    Every request failed to connect, to :data:`OFFLINE_HOSTS` hosts or
    more: no source climbs its backoff for it. Each keeps the failure count
    it had before the build (the error is still shown) and is due again at
    once, so the first build after the network returns fetches everything.
    """
    forgiven = {}
    for source, state in after.items():
        failures = before[source].failures if source in before else 0
        forgiven[source] = replace(state, failures=failures, next_attempt=now,
                                   reason="offline: every request of the last build failed to connect; "
                                          "tried again by the next build")
        store.save(forgiven[source], None, now)
    return forgiven


@dataclass(frozen=True)
class _Job:
    """One due source for the pool: the request and the source's state before the build."""

    request: FetchRequest
    state: SourceState | None


def _job(url: str, state: SourceState | None) -> _Job:
    if state is None:
        return _Job(FetchRequest(source=url, url=url), None)
    return _Job(FetchRequest(source=url, url=state.fetch_url, etag=state.etag, last_modified=state.last_modified,
                             validators_url=state.validators_url), state)


def _observe_all(pool: HostPool[_Job, Observation], fetcher: Fetcher, jobs: list[_Job], now: datetime,
                 started: float) -> Iterator[Observation]:
    """pool(observe): one Observation per job, as each ends; a source the pool skipped is NotRequested."""
    waits: dict[str, float | None] = {}  # host -> the Retry-After it asked for
    results = pool.run(jobs, host=lambda job: host_key(job.request.url),
                       work=lambda job: _observe(job, fetcher, now, started),
                       judge=lambda observation: observation.verdict)
    for job, result in results:
        if isinstance(result, Skipped):
            yield Observation(job.request, NotRequested(result.reason, result.host, waits.get(result.host)))
            continue
        if result.verdict == "stop":
            waits[host_key(job.request.url)] = result.retry_after
        yield result


def _observe(job: _Job, fetcher: Fetcher, now: datetime, build_started: float) -> Observation:
    """fetch | parse (| follow the advertised feed | parse), on a worker thread.

    Never raises for a feed's trouble, nor for a bug of ours.
    """
    clock = time.monotonic()
    started = clock - build_started
    result: FetchResult | None = None
    try:
        result = fetcher.fetch(job.request)
        observation = _parse(job, result, now, started)
        feed = _advertised(observation)
        if feed is None or not isinstance(result, Fetched):
            return observation
        return _follow(job, result, feed, fetcher, fetcher.deadline - (time.monotonic() - clock), now, started)
    except Exception as error:  # a bug of ours while handling this source: contained to it
        return _internal(Observation(job.request, result or Failed(FeedError(job.request.source, ""), requests=0),
                                     started=started), error)


def _advertised(observation: Observation) -> str | None:
    """The feed to follow when the source answered with an HTML page that advertises feeds, else None."""
    error = observation.failure
    return choose_feed(error.url, error.alternates) if isinstance(error, NotAFeedError) else None


def _follow(job: _Job, page: Fetched, feed: str, fetcher: Fetcher, budget: float, now: datetime,
            started: float) -> Observation:
    """fetch | parse of the feed an HTML page advertises: one hop of discovery, never more.

    The feed's request carries the stored validators (bound to the feed's
    URL, so they go only there) and gets what is left of the page's
    deadline; every rule of fetch applies to it (URL, redirects, size). The
    observation is the feed's, under the source's request, with the page's
    permanent redirect (the fetch URL stays the page's) and both requests counted.
    """
    state = job.state
    request = FetchRequest(source=job.request.source, url=feed, etag=state.etag if state else None,
                           last_modified=state.last_modified if state else None,
                           validators_url=state.validators_url if state else None)
    result = fetcher.fetch(request, budget)
    if isinstance(result, Fetched | NotModified):
        result = replace(result, permanent_url=page.permanent_url)
    if not isinstance(result, NotRequested):
        result = replace(result, requests=result.requests + page.requests, elapsed=result.elapsed + page.elapsed)
    observation = _parse(_Job(request, state), result, now, started)
    return replace(observation, request=job.request, followed=feed)


def _parse(job: _Job, result: FetchResult, now: datetime, started: float) -> Observation:
    """The observation of a fetch result: parsed, unchanged (same body), or failed."""
    request, state = job.request, job.state
    if not isinstance(result, Fetched):
        return Observation(request, result, started=started)
    body_hash = hashlib.sha256(result.body).hexdigest()
    if state is not None and state.body_hash == body_hash:
        return Observation(request, result, body_hash=body_hash, unchanged=True, started=started)
    if state is not None and state.failed_body_hash == body_hash and state.failed_body_kind != "not_a_feed":
        # the same invalid body: not parsed again (a page is: it is cheap, and may now be followed)
        error = ParseError(request.source, state.failed_body_message or "not a readable feed",
                           kind=state.failed_body_kind or "parse")
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


def _internal(observation: Observation, error: Exception) -> Observation:
    """``observation`` turned into a failure of kind ``internal`` carrying ``error``'s traceback."""
    details = "".join(traceback.format_exception(error))
    result = observation.result
    requests = 0 if isinstance(result, NotRequested) else result.requests
    failure = InternalError(observation.request.source, error, details)
    return Observation(observation.request, Failed(failure, requests=requests), started=observation.started)


def _decide_and_store(store: Store, state: SourceState, observation: Observation, now: datetime,
                      policy: schedule.Policy, fingerprint: str | None) -> tuple[Observation, Decision]:
    """decide | store for one source, in one transaction.

    A bug of ours while deciding or storing is contained to the source: it
    is recorded as kind ``internal`` (the snapshot kept). The store's own
    trouble (disk full, a damaged database) is a StoreError and stops the build.
    """
    try:
        decision = decide(state, observation, now, policy, fingerprint)
        store.save(decision.state, decision.entries, now)
        return observation, decision
    except StoreError:
        raise
    except Exception as error:
        observation = _internal(observation, error)
        decision = decide(state, observation, now, policy, fingerprint)
        store.save(decision.state, None, now)
        return observation, decision


def discover(url: str, now: datetime, timeout: float = 15.0) -> list[str]:
    """The feed URLs for ``url``: ``fetch | parse`` once, nothing stored.

    Returns:
        [the URL that answered] when it serves a feed, else the feed URLs
        its HTML page advertises (possibly none), in page order.
    Raises:
        FeedError: the URL cannot be fetched, or answers with something
            that is neither a feed nor an HTML page.
    """
    with Fetcher(f"syndicator/{__version__}", timeout=timeout, retries=0) as fetcher:  # no sites.yaml: no contact URL
        result = fetcher.fetch(FetchRequest(source=url, url=url))
    if isinstance(result, Failed):
        raise result.error
    assert isinstance(result, Fetched)  # no validators were sent, and the pool was not used
    try:
        parse_feed(result.body, result.url, result.headers, now)
    except NotAFeedError as error:
        return error.alternates
    return [result.url]
