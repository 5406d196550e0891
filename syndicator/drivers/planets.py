"""Every planet of one sites.yaml published by one build (docs/planets.md): the output locks of all of
them, their folders checked before anything is fetched, and each published in turn.

The poll side runs once, over the poller view (:func:`config.union.poller_view`); then each planet of
:meth:`Config.all_planets` is published into its own output with :func:`pipeline.publish_site`: its own
templates, its own publication key (:meth:`Config.state_key`), its own hubs. A planet whose pages would
come out as they are is not written. A planet without entries (all of them filtered out, say) is not
published and the build ends with :class:`errors.EmptyBuildError` (exit code 3) once the other planets
are published, its message naming each such planet.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Collection, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from syndicator.configtypes import Config, Site
from syndicator.drivers.buildlog import log_health
from syndicator.drivers.report import BuildReport, write_report
from syndicator.errors import EmptyBuildError
from syndicator.health import TROUBLE
from syndicator.model import SourceState
from syndicator.site.output import output_lock
from syndicator.site.selection import site_statuses
from syndicator.state.store import Store

__all__ = ["check_planets", "planet_locks", "publish_planets", "templates_of"]

log = logging.getLogger("syndicator")


def templates_of(planet: Config, templates: Path | None) -> Path | None:
    """The templates folder a planet is rendered with: its own ``templates`` (a planet of ``planets:``),
    else ``templates`` (the ``--templates`` option's, or None for the bundled ones)."""
    return planet.templates or templates


@contextmanager
def planet_locks(config: Config) -> Iterator[None]:
    """Hold the output lock (:func:`output.output_lock`) of every planet of ``config``, in file order.

    Raises:
        OutputLockedError: another build or serve holds one of them; the others taken are let go.
    """
    with ExitStack() as stack:
        for planet in config.all_planets():
            stack.enter_context(output_lock(planet.output))
        yield


def check_planets(config: Config, templates: Path | None) -> None:
    """:func:`pipeline.check_folders` for every planet of ``config``, with its own templates folder; a
    site several planets list is warned of (a missing face) once.

    Raises:
        ConfigError, RenderError: as check_folders, for the first planet whose folders are refused.
    """
    from syndicator.drivers.pipeline import check_folders  # noqa: PLC0415 - pipeline imports this module

    seen: set[Site] = set()
    for planet in config.all_planets():
        check_folders(
            replace(planet, sites=tuple(s for s in planet.sites if s not in seen)), templates_of(planet, templates)
        )
        seen.update(planet.sites)


def publish_planets(
    config: Config,
    poller: Config,
    store: Store,
    states: Mapping[str, SourceState],
    now: datetime,
    templates: Path | None,
    report: BuildReport,
    started: float,
    said: Collection[str] = (),
) -> None:
    """Publish every planet of ``config`` (:func:`pipeline.publish_site` each), after saying the health of
    every site of the ``poller`` view once (a site several planets list is said once).

    ``report`` gets the sites' figures (stale copies, failing sites over every planet), the file's own
    planet's entries and whether it was written, and, with ``planets:``, each planet's under
    ``planets`` ({label: {"entries", "rendered", "empty"}}); it is written to report.json at the end.

    Raises:
        EmptyBuildError: one or more planets had no entries (each named); every other planet was published.
        RenderError: a planet could not be written (the planets after it are not published).
    """
    from syndicator.drivers.pipeline import publish_site  # noqa: PLC0415 - pipeline imports this module

    statuses = site_statuses(poller.sites, states, {}, now, poller.stale_after)
    stale = log_health(statuses, now, said)
    empty: list[str] = []
    for planet in config.all_planets():
        part = copy.deepcopy(report)
        try:
            publish_site(planet, store, states, now, templates_of(planet, templates), part, started, False, said=said)
        except EmptyBuildError as error:
            empty.append(f"planet {planet.label!r}: {error}" if config.planets else str(error))
        if planet is config:
            report.entries, report.rendered, report.seconds = part.entries, part.rendered, part.seconds
        if config.planets:
            report.planets[planet.label] = {
                "entries": part.entries,
                "rendered": part.rendered,
                "empty": not part.entries,
            }
    report.stale_copies = stale
    report.failing_sites = sum(status.health in TROUBLE for status in statuses)
    write_report(report, now, config.cache)
    if empty:
        raise EmptyBuildError("; ".join(empty))
