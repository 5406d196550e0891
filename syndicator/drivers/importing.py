"""Subscription lists -> new sites in sites.yaml: ``syndicator import`` and ``syndicator add``.

read_list(FILE) | plan(existing sites) | write(sites.yaml), or fetch_site(URL) | plan | write.

The lists are read by :mod:`sublists`, the merge rules are :mod:`merge`'s, and sites.yaml is
written by :mod:`sitesfile`.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from syndicator.configtypes import Config, Site
from syndicator.drivers.merge import Plan, clean_name, plan
from syndicator.drivers.sitesfile import open_planet, write
from syndicator.errors import ConfigError, FeedError
from syndicator.parse.sublists import Candidate, read_list
from syndicator.urls import canonical
from syndicator.values import url_problem

__all__ = ["add_site", "fetch_site", "import_list"]


def import_list(config_path: Path, source: Path, dry_run: bool = False) -> Plan:
    """``syndicator import``: add the feeds of ``source`` to ``config_path`` (unless ``dry_run``).

    Returns:
        the Plan (what was, or would be, added and skipped).
    Raises:
        ConfigError: from :func:`read_list`, :func:`open_planet` or :func:`write`; nothing is written.
    """
    candidates = read_list(source)
    planet = open_planet(config_path)
    result = plan(planet.sites, candidates, str(source))
    if result.added and not dry_run:
        write(planet, result.added)
    return result


def add_site(config_path: Path, url: str, name: str | None, now: datetime, timeout: float = Config.timeout) -> Site:
    """``syndicator add``: find the feed of ``url`` and add it to ``config_path`` as one site.

    Args:
        url: an http(s) URL, of a feed or of a page advertising feeds.
        name: the site's name, else the feed's title.
        now: the clock (UTC), for parsing.
        timeout: seconds, as for a build's fetches (the whole fetch: twice this).
    Returns:
        the Site added (its name made unique, as :func:`plan` does).
    Raises:
        ConfigError: sites.yaml is missing or invalid, the feed is already
            listed, or no name was given and the feed has no title.
        FeedError: the URL could not be fetched, or gives no feed.
    """
    planet = open_planet(config_path)
    if name is not None and not clean_name(name):
        raise ConfigError("--name must be non-empty text")
    listed = {canonical(site.feed): site.name for site in planet.sites}
    if canonical(url) in listed:
        raise ConfigError(f"<{url}> is already listed in {config_path} as {listed[canonical(url)]!r}")
    found = fetch_site(url, now, timeout, planet.user_agent)
    if name is None and not clean_name(found.name):
        raise ConfigError(f"<{found.feed}> gives no title: name the site with --name")
    result = plan(planet.sites, [Candidate(found.feed, name or found.name, found.link)], url)
    if result.skipped:
        raise ConfigError(f"{result.skipped[0].reason} in {config_path}; nothing was added")
    write(planet, result.added)
    return result.added[0]


def fetch_site(url: str, now: datetime, timeout: float = Config.timeout, user_agent: str | None = None) -> Candidate:
    """The feed of ``url``, fetched and parsed once as a build does (observe: fetch | parse | follow).

    A page that advertises feeds is followed to the one a build would
    follow (the first that reads, best first by :func:`discover.rank`); the
    page is then the site's home page when the feed names none.

    Returns:
        a Candidate: the feed URL (``url`` itself when it is a feed), the
        feed's title, and its home page (http(s)) or None.
    Raises:
        FeedError: the fetch or the parse failed (the message starts with the URL).
    """
    from syndicator.fetch.http import Fetcher
    from syndicator.poll.observe import job_for, observe

    with Fetcher.for_config(None, user_agent=user_agent, timeout=timeout, retries=0) as fetcher:
        seen = observe(job_for(url, None), fetcher, now, time.monotonic())
    failure = seen.failure
    if failure is not None:
        raise FeedError(failure.url, f"{failure.url}: {failure.message}", failure.kind) from failure
    if seen.parsed is None:
        raise FeedError(url, f"{url}: no feed was read")
    home = seen.parsed.link if seen.parsed.link and url_problem(seen.parsed.link) is None else None
    return Candidate(seen.followed or url, seen.parsed.title, home or (url if seen.followed else None))
