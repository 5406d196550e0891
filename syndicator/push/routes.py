"""Which webhooks are sent an entry's event: those of the planets that publish the entry (issue 27).

One sites.yaml may define several planets (:meth:`Config.all_planets`), each
with its own ``deliveries``, sharing one state, one poller and one outbox. An
entry's change is one ``outbox`` event, written once in the transaction that
stores the entry (:mod:`push.deliveries`); :class:`Routes` says which webhooks
get a pending delivery of it: those of every planet that publishes the entry,
that is, a planet one of whose sites has the entry's feed and whose filters
keep it there (:func:`site.filters.passes`, the rule selection follows). A
planet whose filters drop an entry is sent nothing of it; an event no planet
publishes is not written.

A webhook is its URL: a URL named by several planets is one destination, sent
each event once (one delivery row per event and URL, one status, one retry
schedule), and it must have one secret: :func:`webhooks` refuses two secrets
for one URL. The body, the signature and the Idempotency-Key are the event's,
whichever planets sent it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from syndicator.configtypes import Config, Delivery, Site
from syndicator.errors import ConfigError
from syndicator.feedtypes import StoredEntry
from syndicator.site import filters

__all__ = ["Routes", "webhooks"]


def webhooks(config: Config) -> tuple[Delivery, ...]:
    """Every webhook of every planet of ``config`` (its own ``deliveries``, then each planet's), each URL
    once, in file order: the destinations the delivery loop sends to and ``status`` counts.

    Raises:
        ConfigError: one URL is given two different secrets (naming the URL and the planets, never the secrets).
    """
    found: dict[str, tuple[Delivery, str]] = {}
    for planet in config.all_planets():
        for delivery in planet.deliveries:
            first = found.setdefault(delivery.url, (delivery, planet.name))
            if first[0].secret != delivery.secret:
                raise ConfigError(
                    f"{config.path}: deliveries: the webhook {delivery.url} is given two different secrets "
                    f"(in {_named(first[1])} and {_named(planet.name)}); a webhook has one secret"
                )
    return tuple(delivery for delivery, _ in found.values())


def _named(name: str) -> str:
    """A planet as messages name it: its name, or the file's own planet."""
    return f"planet {name!r}" if name else "the file's own planet"


class Routes:
    """The :data:`saves.Router` of a configuration: called with an entry as stored and the save's ``now``
    (UTC), it returns the URLs (each once, in file order) of the webhooks of the planets that publish it.

    Made once per configuration read (:func:`drivers.pipeline.record_events`); an entry whose feed no
    planet with deliveries lists costs a dictionary look-up.

    Raises:
        ConfigError: from :func:`webhooks`, when it is made.
    """

    def __init__(self, config: Config) -> None:
        webhooks(config)  # one secret per URL, said before anything is stored
        #: {feed URL: [(a planet with webhooks, its sites of that feed, its webhook URLs)]}
        self._routes: dict[str, list[tuple[Config, list[Site], tuple[str, ...]]]] = {}
        for planet in config.all_planets():
            urls = tuple(delivery.url for delivery in planet.deliveries)
            if not urls:
                continue
            sites: dict[str, list[Site]] = {}
            for site in planet.sites:
                sites.setdefault(site.feed, []).append(site)
            for feed, of_feed in sites.items():
                self._routes.setdefault(feed, []).append((planet, of_feed, urls))

    def __call__(self, stored: StoredEntry, now: datetime) -> Sequence[str]:
        """The webhook URLs that get ``stored``'s event: those of each planet one of whose sites of its feed
        keeps it (:func:`site.filters.passes`)."""
        urls: dict[str, None] = {}
        for planet, sites, planet_urls in self._routes.get(stored.source, ()):
            if any(filters.passes(planet, site, stored, now) for site in sites):
                urls.update(dict.fromkeys(planet_urls))
        return tuple(urls)
