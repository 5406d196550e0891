"""What a validated sites.yaml says: :class:`Config` (the planet and its settings), :class:`Site` (one
subscription) and :class:`Delivery` (one webhook), frozen dataclasses shared by every stage.

Each setting's default is its :class:`Config` field's default, and only there: ``config/settings.py``
reads each setting from sites.yaml (its reader and bounds), and a Config made in code (tests,
benchmarks) gets the same defaults. Reading and validating the file is ``config``'s job, not this
module's; the values the pipeline passes along (observations, decisions) are in ``model``, feeds and
entries in ``feedtypes``.
Units: durations are seconds (float), sizes are bytes (int).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from syndicator.credential import PRIVATE_FRAGMENT, Credential
from syndicator.rules import Filters

#: The files an old planet published that ``old_feeds`` may name (Planet Venus's default theme,
#: themes/classic_fancy/config.ini, and Planet 2.0's examples): RSS 2.0, RSS 1.0 and Atom 1.0 feeds of
#: the entries, and the FOAF list of the sites (opml.xml, the other one, is always published).
OLD_FEEDS = ("rss20.xml", "rss10.xml", "atom.xml", "foafroll.xml")
#: The fields of the one poller every planet of a file shares (fetching, the schedule, the state): set at
#: the top of sites.yaml only (config/planets.py refuses them in a planet), and given to every planet by
#: :meth:`Config.all_planets`, so a command-line override (``--cache``, ``--state``) reaches them all.
POLLER_FIELDS = (
    *("workers", "state", "cache", "per_host_concurrency", "host_gap", "requests_per_feed_per_day", "host_breaker"),
    *("allow_private_networks", "timeout", "retries", "user_agent", "max_bytes", "default_interval"),
    *("min_interval", "max_interval", "restore_from", "secrets"),
)
#: How status, metrics and ``--planet`` name the planet the file itself describes (``Config.name`` "").
MAIN_PLANET = "main"


@dataclass(frozen=True)
class Site:
    """One subscription in sites.yaml.

    Attributes:
        name: display name, unique within the config.
        feed: the configured feed URL; the identity of its source. A local
            file given as a path in sites.yaml is the ``file:`` URI of its
            absolute path (RFC 8089).
        link: the site's home page (http(s) URL) or None.
        face: an image of the site or its author: an http(s) URL, or a
            path inside the published folder (from a ``static/`` folder), or None.
        extra: anything else the site's entry in sites.yaml gives under
            ``extra``, for templates ({name: YAML value}).
        language: the site's ``language`` in sites.yaml, a BCP 47 tag
            (:func:`language.language_tag`) that overrides what its feed
            says of its entries, or None (the feed's own word stands).
        enabled: False for a paused site (``enabled: false``): no driver fetches
            its feed, and what is stored of it stays published.
        line: the line (1-based) of its ``feed`` in sites.yaml, for messages; 0
            for a site made in code. Not part of the site's identity (equality,
            repr, the schedule's fingerprints).
        new_feed_items: the site's own ``new_feed_items`` (see :class:`Config`), or None (the
            planet's stands). Not in the repr: it is no part of the fingerprint that retries a
            feed gone for good (schedule.site_fingerprints), as it changes nothing of fetching.
        credential: what a private feed sends to its origin (``credentials:`` in sites.yaml), or
            None. A private site's ``feed`` is its URL plus :data:`PRIVATE_FRAGMENT` and the
            credential's name, so it is a source of its own, never shared with a site of the same
            URL without that credential; :attr:`url` is the URL as written.
        items_per_feed, min_interval, max_interval (seconds), timeout (seconds): the site's own
            values of the planet's settings of those names, or None (the planet's stand).
        user_agent: the whole User-Agent header its feed is fetched with (made from the site's
            contact URL), or None (the planet's).
        headers: extra request headers its feed is fetched with, ((name, value), ...) in file order.
        summary_only: publish each entry's summary, never its content (pages and feeds).
        The per-site settings from ``items_per_feed`` on are not in the repr, so a site that gives
        none hashes as it did before they existed; the schedule's fingerprints and the site key
        (``site/sitekey.py``) add :attr:`own_settings`.
        filters: the site's own ``filters``, applied as well as the planet's (:class:`Filters`). Not
            in the repr either, for the same reason; the render key adds them (sitekey.site_key).
    """

    name: str
    feed: str
    link: str | None = None
    face: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    language: str | None = None
    enabled: bool = True
    line: int = field(default=0, compare=False, repr=False)
    new_feed_items: int | None = field(default=None, repr=False)
    credential: Credential | None = None
    items_per_feed: int | None = field(default=None, repr=False)
    min_interval: float | None = field(default=None, repr=False)
    max_interval: float | None = field(default=None, repr=False)
    timeout: float | None = field(default=None, repr=False)
    user_agent: str | None = field(default=None, repr=False)
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    summary_only: bool = field(default=False, repr=False)

    @property
    def own_settings(self) -> tuple[tuple[str, Any], ...]:
        """The per-site settings this site gives, ((name, value), ...) in a fixed order; () for none.
        For the fingerprints that must move when a site's entry in sites.yaml changes."""
        names = ("items_per_feed", "min_interval", "max_interval", "timeout", "user_agent", "headers")
        given = tuple((name, getattr(self, name)) for name in names if getattr(self, name) not in (None, ()))
        return (*given, ("summary_only", True)) if self.summary_only else given

    filters: Filters = field(default=Filters(), repr=False)

    @property
    def local(self) -> bool:
        """True when the feed is a local file, read from disk rather than fetched (bool)."""
        return is_local(self.feed)

    @property
    def private(self) -> bool:
        """True when the feed needs credentials (``credentials:`` in sites.yaml) (bool)."""
        return self.credential is not None

    @property
    def url(self) -> str:
        """The feed URL as sites.yaml gives it (str): :attr:`feed` without a private site's fragment."""
        return feed_url(self.feed)

    @property
    def public_feed(self) -> str | None:
        """The feed URL to publish (str), or None for a local file, whose path is not published, and
        for a private feed, which subscribers cannot read."""
        return None if self.local or self.private else self.feed


def feed_url(source: str) -> str:
    """The feed URL of a source key (str -> str): a private site's key without its
    :data:`PRIVATE_FRAGMENT`; any other key as it is."""
    return source.split(PRIVATE_FRAGMENT, 1)[0]


def is_local(url: str) -> bool:
    """True for a ``file:`` URI: a feed read from a local file (str -> bool)."""
    return url.startswith("file:")


@dataclass(frozen=True)
class Delivery:
    """One webhook of ``deliveries:`` in sites.yaml (:mod:`deliveries`).

    Attributes:
        url: the http(s) URL each event is POSTed to.
        secret: the key of the body's HMAC-SHA256 signature; never shown (not in the repr).
    """

    url: str
    secret: str = field(repr=False)


@dataclass(frozen=True)
class Config:
    """A validated sites.yaml. Paths are resolved against the file's folder.

    Attributes:
        path: the sites.yaml file read.
        title: the planet's title; link: its public home page.
        sites: the subscriptions, in file order.
        workers: size of the fetch pool (threads).
        timeout: connect and read timeout per request, seconds; a whole
            fetch, retries included, is cut at ``timeout * 2`` seconds. A site's own
            overrides it for its feed (:meth:`timeout_for`).
        retries: extra attempts after a transient failure within one build.
        items_per_feed: newest entries each feed contributes (seed 004: 5); a site's own
            overrides it (:meth:`items_for`).
        new_feed_items: how many entries of a source's first fetch are published, its newest
            (Planet Venus's setting of that name); the others are stored, never published; 0:
            all of them. A site's own value overrides it (:meth:`new_items`).
        feed_entries: cap on entries in feed.xml (seed 004: 1,000).
        summary_chars: front-page summaries are cut on a word boundary to
            about this many characters of text.
        stale_after: seconds without success before a "last seen" badge.
        user_agent: the full User-Agent header sent with every request (a site's own instead
            for its feed: :meth:`request_for`).
        max_bytes: cap on a response body after decompression, bytes.
        output: folder the site is published to; cache: the state folder.
        default_interval: seconds between checks of a source with no
            history yet; min_interval, max_interval: bounds, seconds, of
            every interval the schedule chooses (max at most 7 days); a site's own
            bound its feed instead (:meth:`intervals_for`).
        requests_per_feed_per_day: the request budget the schedule
            keeps to on average over the sources (schedule.spend).
        per_host_concurrency: requests to one host key at once.
        host_gap: minimum seconds between two request starts to one host.
        host_breaker: consecutive failures from one host in a build after
            which its remaining sources wait for the next build (0: never).
        allow_private_networks: URLs learned from the network may reach
            loopback and private addresses (:mod:`netguard`).
        description, owner: one line of text each about the planet ("" when not given).
        logo, favicon: images of the planet (an http(s) URL, or a path inside
            the published folder), or None.
        timezone: IANA name of the zone dates are shown in on the pages.
        date_format: strftime format of dates on the pages.
        page_entries: entries on the front page (at most ``feed_entries``).
        feed_content: ``full`` (feed.xml and feed.json carry each entry's
            content) or ``summary`` (its front-page summary only).
        activity_threshold: seconds without a post before a site is shown as inactive.
        sites_page_details: the sites page shows the maintainer's details (each failure, what to do,
            the next check and why), as ``syndicator status`` does; False: plain words for readers.
        old_feeds: the files an old planet (Planet Venus, Planet 2.0) published that subscribers may
            still follow, written beside feed.xml with its entries (``rss20.xml``, ``rss10.xml``,
            ``atom.xml``, ``foafroll.xml``: :data:`OLD_FEEDS`); () for none.
        snapshot: publish the state beside the site (statefile.py).
        restore_from: where a build with an empty cache folder loads the
            state from: an http(s) URL, or a path relative to sites.yaml; or None.
        hubs: the WebSub hubs (absolute http(s) URLs, at most 4) feed.xml and
            feed.json advertise and announce.py notifies of a change; () for none.
        deliveries: the webhooks each new or changed entry is POSTed to
            (:mod:`deliveries`, at most 16); () for none.
        name: the planet's name in status and metrics: "" for the planet the file itself
            describes, else the name its entry of ``planets:`` gives.
        planets: the other planets the same file defines (``planets:``), each a whole Config of
            its own (its sites, output, settings), sharing this one's state and poller; () for a
            file of one planet. A planet in ``planets`` has no ``planets`` of its own.
        secrets: the secrets file private feeds' credentials are read from (``secrets:``), or None.
        filters: the planet's ``filters``: which stored entries it publishes (:class:`Filters`; none:
            every one). Each site's own apply as well (:attr:`Site.filters`).
        view_of: the planet this one is a view of (``view_of:`` in sites.yaml: its sites are this
            one's, and its filters apply too), without its ``planets``; or None.
        archive: keep every entry the planet published and publish archive pages and feeds (archive.py);
            archive_days: how long (days by the entry's date; None: for ever). language: the pages'
            language (BCP 47), their text and dates (None: English, and the feeds claim none).
            search: publish search.html and its index.
            robots: ``index``, ``noindex`` (robots.txt refuses, pages say noindex) or ``none`` (no robots.txt).
        templates: the planet's own templates folder (``templates:`` of an item of ``planets:``),
            overriding the bundled ones; or None (the ``--templates`` option's, if any).
    """

    path: Path
    title: str
    link: str
    sites: tuple[Site, ...]
    workers: int = 8
    timeout: float = 15.0
    retries: int = 1
    items_per_feed: int = 5
    new_feed_items: int = 3
    feed_entries: int = 1000
    summary_chars: int = 600
    stale_after: float = 4 * 86400.0
    user_agent: str = ""
    max_bytes: int = 10 * 1024 * 1024
    output: Path = Path("public")
    cache: Path = Path("cache")
    default_interval: float = 3600.0
    min_interval: float = 900.0
    max_interval: float = 86400.0
    requests_per_feed_per_day: float = 14.5
    per_host_concurrency: int = 2
    host_gap: float = 0.5
    host_breaker: int = 5
    allow_private_networks: bool = False
    description: str = ""
    owner: str = ""
    logo: str | None = None
    favicon: str | None = None
    timezone: str = "UTC"
    date_format: str = "%Y-%m-%d %H:%M %Z"
    page_entries: int = 60
    feed_content: str = "full"
    activity_threshold: float = 180 * 86400.0
    sites_page_details: bool = False
    old_feeds: tuple[str, ...] = ()
    snapshot: bool = False
    restore_from: str | None = None
    hubs: tuple[str, ...] = ()
    state: str | None = None
    deliveries: tuple[Delivery, ...] = ()
    name: str = ""
    planets: tuple[Config, ...] = ()
    secrets: Path | None = None
    filters: Filters = Filters()
    view_of: Config | None = None
    templates: Path | None = None
    archive: bool = True
    archive_days: int | None = None
    language: str | None = None
    search: bool = True
    robots: str = "index"

    @property
    def label(self) -> str:
        """The planet's name as status, metrics and ``--planet`` show it: its ``name``, or
        :data:`MAIN_PLANET` for the file's own (str)."""
        return self.name or MAIN_PLANET

    def state_key(self, key: str) -> str:
        """The key under which the state keeps this planet's own value ``key`` (what it published,
        what its hubs were told): ``key`` itself for the file's own planet, ``key.NAME`` for another."""
        return f"{key}.{self.name}" if self.name else key

    def all_planets(self) -> tuple[Config, ...]:
        """This planet, then those of ``planets``, in file order (tuple of Config), each with this one's
        :data:`POLLER_FIELDS` (the settings of the poller they share)."""
        poller = {name: getattr(self, name) for name in POLLER_FIELDS}
        return (self, *(replace(planet, **poller) for planet in self.planets))

    def new_items(self, feed: str) -> int:
        """How many entries of the first fetch of the source ``feed`` (a configured URL) are
        published: the ``new_feed_items`` of the first site naming it that gives one, else the
        planet's (int; 0: all)."""
        return self._new_items_of_sites.get(feed, self.new_feed_items)

    @cached_property
    def _new_items_of_sites(self) -> dict[str, int]:
        """{feed URL: the first ``new_feed_items`` a site naming it gives}, read once."""
        given: dict[str, int] = {}
        for site in self.sites:
            if site.new_feed_items is not None:
                given.setdefault(site.feed, site.new_feed_items)
        return given

    def credential(self, source: str) -> Credential | None:
        """The credential a request for the source ``source`` (a site's ``feed``) carries, from the
        sites of every planet (:meth:`all_planets`); None for a feed that is not private."""
        return self._credentials.get(source)

    @cached_property
    def _credentials(self) -> dict[str, Credential]:
        """{source: credential} of the private sites of every planet, read once."""
        found: dict[str, Credential] = {}
        for planet in self.all_planets():
            for site in planet.sites:
                if site.credential is not None:
                    found.setdefault(site.feed, site.credential)
        return found

    def items_for(self, feed: str) -> int:
        """How many newest entries the source ``feed`` contributes to the merged stream: the
        ``items_per_feed`` of the first site naming it (the one its entries are credited to), else
        the planet's (int)."""
        first = self._first_sites.get(feed)
        return first.items_per_feed if first is not None and first.items_per_feed is not None else self.items_per_feed

    def intervals_for(self, feed: str) -> tuple[float, float]:
        """(min_interval, max_interval) of the source ``feed``, seconds: the smallest of each among
        the sites naming it, a site without its own counting the planet's (the fastest need wins)."""
        sites = self._sites_of.get(feed, ())
        if not sites:
            return self.min_interval, self.max_interval
        low = min(self.min_interval if site.min_interval is None else site.min_interval for site in sites)
        high = min(self.max_interval if site.max_interval is None else site.max_interval for site in sites)
        return low, high

    def timeout_for(self, feed: str) -> float | None:
        """The timeout (seconds) the source ``feed`` is fetched with when a site naming it gives its
        own: the largest among those sites, one without its own counting the planet's; None when none
        gives one (the fetcher's own stands)."""
        sites = self._sites_of.get(feed, ())
        if all(site.timeout is None for site in sites):
            return None
        return max(self.timeout if site.timeout is None else site.timeout for site in sites)

    def request_for(self, feed: str) -> tuple[str | None, tuple[tuple[str, str], ...]]:
        """(User-Agent, extra headers) the source ``feed`` is fetched with: those of the first site
        naming it (config/duplicates.py warns when another site of it gives others); (None, ()) when
        it gives neither (the planet's User-Agent stands)."""
        first = self._first_sites.get(feed)
        return (None, ()) if first is None else (first.user_agent, first.headers)

    @property
    def longest_timeout(self) -> float:
        """The longest timeout any source is fetched with, seconds: the planet's or a site's (float)."""
        return max([self.timeout, *(site.timeout for site in self.sites if site.timeout is not None)])

    @cached_property
    def _sites_of(self) -> dict[str, tuple[Site, ...]]:
        """{feed URL: the sites naming it, in file order}, made once per Config."""
        sites: dict[str, tuple[Site, ...]] = {}
        for site in self.sites:
            sites[site.feed] = (*sites.get(site.feed, ()), site)
        return sites

    @cached_property
    def _first_sites(self) -> dict[str, Site]:
        """{feed URL: the first site naming it}, made once per Config."""
        return {feed: sites[0] for feed, sites in self._sites_of.items()}

    @property
    def sources(self) -> tuple[str, ...]:
        """Distinct feed URLs to fetch, in file order: those of the sites not paused (tuple of str)."""
        return tuple(dict.fromkeys(site.feed for site in self.sites if site.enabled))

    @property
    def listed_sources(self) -> tuple[str, ...]:
        """Distinct feed URLs of every site, paused ones included, in file order: what is published
        (tuple of str)."""
        return tuple(dict.fromkeys(site.feed for site in self.sites))

    @cached_property
    def site_names(self) -> dict[str, tuple[str, ...]]:
        """The names of the sites of each feed URL, in file order ({URL: names}; made once per Config)."""
        names: dict[str, tuple[str, ...]] = {}
        for site in self.sites:
            names[site.feed] = (*names.get(site.feed, ()), site.name)
        return names
