"""The ``build`` driver: one run of the stages over every due source (``serve`` and ``worker`` run
the same stages their own way).

One build, under the cache lock and the output lock from start to end::

    due sources | pool( observe = fetch | parse ) | decide | store    -> report.json
                        (an HTML page advertising feeds: | follow one | parse)
    store.snapshots | select (5 per feed, merge, sort) | render       -> public/
                      (skipped when nothing a render reads changed: sitekey)
    public/feed.xml, feed.json | announce (with ``hub``: ping hubs of a changed feed)

With ``planets:`` in sites.yaml (docs/planets.md), the poll half runs once over the poller view (every
planet's sites, one source per feed URL: :func:`config.union.poller_view`), and the site half once per
planet, each into its own output (:mod:`drivers.planets`).

``observe`` (:mod:`observe`) runs on the pool's threads and returns an
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

A build whose cache holds no state first loads the state file ``restore_from`` names
(:mod:`restore`). Then each feed listed under two names is warned of, and a change of the
intervals in sites.yaml re-plans every source (:mod:`loaded`).

A build with nothing due and nothing to render loads neither the HTTP and
feed libraries nor the template engine: :mod:`observe` and :mod:`render`
are imported where they are first needed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from syndicator.config.union import poller_view
from syndicator.configtypes import Config, is_local
from syndicator.drivers.buildlog import HostTrouble, log_failure, log_followed, log_health
from syndicator.drivers.loaded import take_config
from syndicator.drivers.planets import check_planets, planet_locks, publish_planets
from syndicator.drivers.report import BuildReport, write_report
from syndicator.drivers.restore import restore
from syndicator.errors import ConfigError, EmptyBuildError
from syndicator.failures import kind_of
from syndicator.fetch.hosts import host_key
from syndicator.health import TROUBLE
from syndicator.model import SourceState
from syndicator.poll import schedule
from syndicator.poll.path import LEDGER_KEY, Poller, policy_of, save
from syndicator.poll.transitions import transition
from syndicator.push.routes import Routes, webhooks
from syndicator.site import planet
from syndicator.site.output import check_output
from syndicator.site.selection import site_statuses
from syndicator.site.sitekey import site_key
from syndicator.state.store import Store

__all__ = ["BuildOptions", "BuildReport", "build"]

#: A build whose every request failed to connect, to at least this many
#: hosts, saw this machine offline, not the hosts (one host down looks alike).
OFFLINE_HOSTS = 2
log = logging.getLogger("syndicator")
lifecycle = logging.getLogger("syndicator.lifecycle")  # shown at info by default (cli.logs)


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
    fetch: bool = True
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
        EmptyBuildError: no entries at all (for one or more planets: each named, the others published);
            the output is left as it was.
        RenderError: the site could not be written; the output is left as it was.
    """
    started = time.monotonic()
    poller = poller_view(config)
    check_planets(config, options.templates)
    only = _chosen_sources(poller, options.sites)
    report = BuildReport(sites=len(poller.sites), sources=len(poller.sources))
    with Store.open(config.cache, config.state) as store, planet_locks(config):
        record_events(store, config)
        if options.fetch and store.count("sources") == 0:  # no state: a first build, a lost cache, or a stopped restore
            report.restored = restore(config, store)
        take_config(store, config, "build")
        states = store.states()
        said: set[str] = set()
        if options.fetch:
            polled, said = _poll(poller, options, store, states, only, report, started)
            states.update(polled)
        else:
            lifecycle.info("build: started; publishing from the stored state (--no-fetch)")
        publish_planets(config, poller, store, states, options.now, options.templates, report, started, said)
        if webhooks(config):
            _deliver(config, store, options.now)
    return report


def _deliver(config: Config, store: Store, now: datetime) -> None:
    """POST the due webhook deliveries (deliveries.py) for at most BUILD_BUDGET seconds after publishing
    (what is left waits for the next build), then prune the outbox."""
    from syndicator.push import deliveries  # here: a planet without deliveries never loads it

    session = deliveries.make_session(config)
    try:
        counts = deliveries.deliver_due(store, config, now, session, deliveries.BUILD_BUDGET)
        deliveries.prune(store, config, now)
    finally:
        session.close()
    if counts.retrying or counts.dead or counts.left:
        log.warning(
            "deliveries: %d delivered, %d to retry, %d dead, %d left for the next build",
            counts.delivered,
            counts.retrying,
            counts.dead,
            counts.left,
        )
    elif counts.delivered:
        log.info("deliveries: %d delivered", counts.delivered)


def publish_site(
    config: Config,
    store: Store,
    states: Mapping[str, SourceState],
    now: datetime,
    templates: Path | None,
    report: BuildReport,
    started: float,
    log_stale: bool = True,
    announce: bool = True,
    said: Collection[str] = (),
) -> None:
    """store | select | render | publish (the steps of :mod:`site.planet`), unless the published
    site is current (:mod:`sitekey`).

    The second half of a build, and what ``syndicator serve`` runs after
    changes. Logs the sites' health, writes ``report`` (entries, rendered, seconds) to
    ``<cache>/report.json``, keeps what was published, and tells the
    planet's hubs (:mod:`announce`). The caller holds both locks.

    Args:
        states: every stored source state, {URL: SourceState}.
        now: the clock of the build or serve cycle (UTC).
        templates: a folder of templates overriding the bundled ones, or None.
        started: time.monotonic() at the start of the build or cycle.
        log_stale: warn of each stale last good copy (a build; serve says it once).
        said: the sources whose start of failing this build said already (poll.transitions), not said again.
        announce: tell the planet's hubs (serve's last render at a stop does not
            wait for them: the next start tells them).
    Raises:
        EmptyBuildError: no entries at all; the output is left as it was.
        RenderError: the site could not be written; the output is left as it was.
    """
    statuses = site_statuses(config.sites, states, {}, now, config.stale_after)
    report.stale_copies = log_health(statuses, now, said) if log_stale else 0
    report.failing_sites = sum(status.health in TROUBLE for status in statuses)
    key = site_key(config, templates, store.generation(), (status.stale for status in statuses), now)
    entries = planet.published_entries(config, store, key)
    if entries is not None:
        report.entries = entries
        report.seconds = time.monotonic() - started
        write_report(report, now, config.cache)
        if announce:
            _announce(config, store)  # a ping a hub missed is sent again
        return
    selected, statuses = planet.select_site(config, store, states, now)
    report.entries = min(len(selected), config.feed_entries)
    report.seconds = time.monotonic() - started
    write_report(report, now, config.cache)
    if not selected:
        raise _empty_build(config, report)
    report.rendered = bool(planet.render_planet(config, store, selected, statuses, now, templates))
    report.seconds = time.monotonic() - started
    write_report(report, now, config.cache)
    planet.keep_publication(store, key, config, report.entries)
    if announce:
        _announce(config, store)  # after the swap: only a published site is announced


def _empty_build(config: Config, report: BuildReport) -> EmptyBuildError:
    """The error of a build that found no entries at all, saying whether this machine looked offline."""
    offline = (
        (
            " (every request failed to connect: is this machine offline? No site was counted as "
            "failing for it; the next build tries them all again, `--force` at once)"
        )
        if report.offline
        else " (is the network down?)" * _offline(report)
    )
    left = "is unchanged" if Path(config.output).exists() else "was not created"
    return EmptyBuildError(
        f"no entries from any of {len(config.sites)} sites; nothing was published and {config.output} {left}" + offline
    )


def _announce(config: Config, store: Store) -> None:
    """Tell the planet's WebSub hubs of a published feed they were not told of (announce.py); a hub's
    trouble is a warning, never the build's failure."""
    if config.hubs:
        from syndicator.push.announce import announce  # here: a planet without hubs never loads it (nor requests)

        announce(config, store)


def _offline(report: BuildReport) -> bool:
    """True when every request of the build failed the way a machine without network fails."""
    failed = report.failed_by_kind
    return report.fetched > 0 and failed.total() == report.fetched and all(kind_of(k).offline for k in failed)


def check_folders(config: Config, templates: Path | None) -> None:
    """Refuse, before anything is fetched or stored, the folders a build could never publish with: a
    cache folder that is the output folder or inside it (publishing replaces the output whole), and
    an output folder that is not a folder, is read-only, or holds files syndicator did not write in
    the way of the site's (:func:`output.check_output`; ``templates``: the ``--templates`` folder).

    Raises:
        ConfigError: naming both folders.
        RenderError: naming the output folder and the files in the way (exit code 6).
    """
    output, cache = Path(config.output).resolve(), Path(config.cache).resolve()
    if cache == output or output in cache.parents:
        raise ConfigError(
            f"the cache folder {config.cache} must not be the output folder {config.output} or inside "
            "it: every build replaces the output folder whole"
        )
    check_output(Path(config.output), planet.planned_names(config, templates))
    for line in planet.missing_faces(config, templates):
        log.warning("%s", line)


def _chosen_sources(config: Config, names: Iterable[str]) -> list[str] | None:
    """The feed URLs of the ``--site`` names, or None when none were given."""
    names = list(names)
    if not names:
        return None
    by_name = {site.name: site for site in config.sites}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise ConfigError(f"--site: no site named {unknown[0]!r} in {config.path}")
    paused = [name for name in names if not by_name[name].enabled]
    if paused:
        raise ConfigError(f"--site: {paused[0]!r} is paused (enabled: false in {config.path}); it is not fetched")
    return [by_name[name].feed for name in names]


def record_events(store: Store, config: Config) -> None:
    """Have ``store`` write an outbox event of each new and changed entry for the webhooks of the
    planets of ``config`` that publish it (:class:`push.routes.Routes`; none without deliveries), from
    the next save on. Every driver calls it when it opens the state and when sites.yaml is read again.

    Raises:
        ConfigError: a webhook URL is given two secrets (:func:`push.routes.webhooks`).
    """
    store.outbox = Routes(config) if webhooks(config) else None


def delivery_loop(loop: Any, config: Config) -> Any:
    """The delivery thread (a running push.deliveries.DeliveryLoop) for the webhooks of ``config``'s
    planets (:func:`push.routes.webhooks`), as ``serve`` and ``worker`` keep one: ``loop`` when they are
    its own, else a new one (``loop`` stopped, waiting up to the timeout for a POST under way), or None
    without deliveries."""
    if loop is not None and webhooks(loop.config) == webhooks(config):
        return loop
    if loop is not None:
        loop.stop(timeout=config.timeout + 2)
    if not webhooks(config):
        return None
    from syndicator.push.deliveries import DeliveryLoop  # noqa: PLC0415 - a planet without deliveries never loads it

    fresh = DeliveryLoop(config)  # the webhooks, on their own thread and connection (deliveries.py)
    fresh.start()
    return fresh


def _poll(
    config: Config,
    options: BuildOptions,
    store: Store,
    states: dict[str, SourceState],
    only: list[str] | None,
    report: BuildReport,
    started: float,
) -> tuple[dict[str, SourceState], set[str]]:
    """due | :meth:`poll.path.Poller.poll` for every due source, reported and logged as each one is
    stored; returns ({URL: the state stored}, the URLs of the sources said to start failing).

    ``states`` (as they were before the build) is only read. With nothing
    due, nothing is planned, so the schedule's ledger is left as it was: the
    last build's expectation holds until the next build that plans.
    """
    now = options.now
    fingerprints = schedule.site_fingerprints(config.sites)
    due = schedule.due_sources(config.sources, states, now, fingerprints, options.force, only)
    report.due = len(due)
    lifecycle.info("build: started; %d of %d feeds due", len(due), len(config.sources))
    if not due:
        return {}, set()
    policy, ledger = policy_of(config, states, now, schedule.Ledger.read(store.value(LEDGER_KEY)))
    store.keep(LEDGER_KEY, ledger.text())
    stored: dict[str, SourceState] = {}
    hosts: set[str] = set()
    trouble = HostTrouble()
    said: set[str] = set()
    with Poller(config) as poller:
        for done, (observation, decision) in enumerate(
            poller.poll(store, states, due, now, started, policy, fingerprints), start=1
        ):
            source = observation.request.source
            stored[source] = decision.state
            host = "(local files)" if is_local(source) else host_key(observation.request.url)
            report.add(observation, decision, host)
            hosts.add(host)
            trouble.note(observation)
            log_failure(observation)
            log_followed(observation, states.get(source), config.site_names.get(source, ()))
            if transition(states.get(source) or SourceState(source, source), decision.state) == "failing":
                said.add(source)
            if options.progress:
                options.progress(done, len(due))
    if _offline(report) and len(hosts) >= OFFLINE_HOSTS:
        stored.update(_forgive(store, states, stored, now))
        report.offline = True
    else:
        trouble.warn(config)
    report.record_peaks({host: stats.peak for host, stats in poller.stats.items()})
    return stored, said


def _forgive(
    store: Store, before: Mapping[str, SourceState], after: Mapping[str, SourceState], now: datetime
) -> dict[str, SourceState]:
    """The states of a build in which this machine, not the hosts, was offline.

    Every request failed to connect, to :data:`OFFLINE_HOSTS` hosts or
    more: no source climbs its backoff for it. Each keeps the failure count
    it had before the build (the error is still shown) and is due again at
    once, so the first build after the network returns fetches everything.
    """
    forgiven = {}
    for source, state in after.items():
        failures = before[source].failures if source in before else 0
        forgiven[source] = replace(
            state,
            failures=failures,
            next_attempt=now,
            reason="offline: every request of the last build failed to connect; tried again by the next build",
        )
        save(store, forgiven[source], None, now)
    return forgiven
