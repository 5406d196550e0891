"""The one poller of every planet a sites.yaml defines (docs/planets.md): :func:`poller_view`, the Config
the poll side reads, and :func:`planets_of_sources`, which planets use each source.

A feed named by several planets is one source: fetched once, on one schedule, with one state. The poll
side (the due sources, the schedule's budget and fingerprints, ``new_feed_items``, the sites named in
messages, serve's and worker's planners) reads ``config.sites``, ``config.sources`` and
``config.site_names``; given the poller view, those cover the union of every planet's sites, so none of
them needs to know that there are planets.
"""

from __future__ import annotations

from dataclasses import replace

from syndicator.configtypes import Config
from syndicator.errors import ConfigError

__all__ = ["planet_figures", "planet_named", "planets_of_sources", "poller_view"]


def poller_view(config: Config) -> Config:
    """The Config the poller runs on: ``config`` (the file's own planet, whose settings are the poller's)
    with the sites of every planet of :meth:`Config.all_planets`, each distinct site once, in file order
    (the file's own first), and no ``planets``; ``config`` itself for a file of one planet."""
    if not config.planets:
        return config
    sites = dict.fromkeys(site for planet in config.all_planets() for site in planet.sites)
    return replace(config, sites=tuple(sites), planets=())


def planets_of_sources(config: Config) -> dict[str, tuple[str, ...]]:
    """{feed URL: the labels (:attr:`Config.label`) of the planets that list it, in file order}, over
    every planet of ``config``, paused sites included (a paused site's posts stay published)."""
    found: dict[str, dict[str, None]] = {}
    for planet in config.all_planets():
        for url in planet.listed_sources:
            found.setdefault(url, {})[planet.label] = None
    return {url: tuple(labels) for url, labels in found.items()}


def planet_named(config: Config, label: str) -> Config:
    """The planet of ``config`` whose :attr:`Config.label` is ``label`` (``main``: the file's own).

    Raises:
        ConfigError: no planet has that name; the message lists those there are.
    """
    for planet in config.all_planets():
        if planet.label == label:
            return planet
    names = ", ".join(planet.label for planet in config.all_planets())
    raise ConfigError(f"--planet: no planet named {label!r} in {config.path} (its planets: {names})")


def planet_figures(config: Config) -> tuple[dict[str, int], int]:
    """({planet label: the sources it fetches, paused sites' left out}, how many of the sources of every
    planet more than one planet lists), for /metrics (``syndicator_planet_sources``, ``_shared_sources``)."""
    per_planet = {planet.label: len(planet.sources) for planet in config.all_planets()}
    used = planets_of_sources(config)
    shared = sum(1 for url in poller_view(config).sources if len(used.get(url, ())) > 1)
    return per_planet, shared
