"""The planet's optional settings in sites.yaml: :data:`SETTINGS`, the one table of them.

Each entry names a setting, gives its reader (:mod:`config.readers`, which checks the value and its
bounds, and says what it takes), the :class:`configtypes.Config` field it sets and what it means; its
default is that field's default, and only there. The docs' settings page is made from this table
(:mod:`config.reference`). Durations are seconds, ints are counts
(max_bytes: bytes).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any

from syndicator.config.filters import read_filters
from syndicator.config.readers import (
    Field,
    Reader,
    choice,
    duration,
    integer,
    number,
    read_bool,
    read_date_format,
    read_deliveries,
    read_file,
    read_free_text,
    read_hubs,
    read_image,
    read_language,
    read_location,
    read_new_items,
    read_old_feeds,
    read_path,
    read_state,
    read_timezone,
    read_url,
)
from syndicator.config.yamlfile import LineDict
from syndicator.configtypes import Config

#: Most fetch threads (the --workers option has the same bound).
WORKERS_MAX = 64
_DAY = 86400.0

#: Each :class:`Config` field's default (a field without one, such as ``title``, is not here).
_DEFAULTS = {f.name: f.default for f in fields(Config) if f.default is not MISSING}


@dataclass(frozen=True)
class Setting:
    """One optional setting of sites.yaml: its ``name`` there, the reader of its value (``read``), and the
    Config field it sets (``attribute``: ``field``, or the setting's own name), and what it means
    (``means``); ``default`` is that field's default."""

    name: str
    read: Reader
    field: str | None = None
    #: What the setting does, in the user's words (one line, Markdown: the settings page shows it).
    means: str = ""

    @property
    def attribute(self) -> str:
        """The name of the :class:`Config` field this setting sets (str)."""
        return self.field or self.name

    @property
    def default(self) -> Any:
        """The value a sites.yaml without this setting gets: its Config field's default."""
        return _DEFAULTS[self.attribute]


#: The optional settings, in the order they are read (the first invalid one is reported). Each says what it
#: means in the user's words: the settings page of the docs (docs/reference/settings.md) is made from this
#: table (name, default, what its reader takes, meaning).
SETTINGS: dict[str, Setting] = {
    setting.name: setting
    for setting in (
        Setting("workers", integer(1, WORKERS_MAX), means="fetch threads"),
        Setting(
            "timeout",
            duration(1, 300),
            means="time to connect and between bytes; a whole fetch, name lookup included, is cut at twice this",
        ),
        Setting("retries", integer(0, 5), means="extra attempts after a timeout, connection error or 5xx"),
        Setting("items_per_feed", integer(1, 100), means="newest entries each feed contributes to the merged stream"),
        # A site's first fetch publishes its newest few entries, not its whole archive (docs/first-fetch.md).
        Setting(
            "new_feed_items",
            read_new_items,
            means="entries of a site's first fetch that are published (its newest); `all` or `0` for every one",
        ),
        Setting("feed_entries", integer(1, 100_000), means="entries in `feed.xml` and `feed.json`"),
        Setting(
            "summary_chars",
            integer(20, 100_000),
            means="front-page summaries are cut on a word boundary to about this many characters",
        ),
        Setting(
            "stale_after",
            duration(60, 365 * _DAY),
            means='time without a successful fetch before a site gets a "last seen" badge',
        ),
        Setting(
            "max_bytes",
            integer(1024, 100 * 1024 * 1024),
            means="largest response body accepted, in bytes after decompression (at most 100 MiB)",
        ),
        # The contact URL in the User-Agent (default: the planet's link); Config.user_agent is the whole header.
        Setting(
            "user_agent",
            read_url,
            means="contact URL put in the User-Agent, `syndicator/0.1.0 (+URL)`; without it, the planet's `link`",
        ),
        Setting("output", read_path, means="folder the site is published to"),
        Setting("cache", read_path, means="folder of durable state, kept between builds"),
        # The schedule (docs/reference/schedule.md): first interval, and bounds of every interval.
        Setting(
            "default_interval",
            duration(60, 7 * _DAY),
            means="interval of a feed with no dated entries and no change history yet",
        ),
        Setting("min_interval", duration(60, 7 * _DAY), means="no feed is checked more often"),
        Setting("max_interval", duration(60, 7 * _DAY), means="no healthy feed waits longer between checks"),
        # The request budget the schedule spends where posts are likely (docs/reference/schedule.md).
        Setting(
            "requests_per_feed_per_day",
            number(0.1, 1440),
            means="the request budget the schedule keeps to on average",
        ),
        # Host fairness: requests at once, seconds between starts, failures that skip a host.
        Setting("per_host_concurrency", integer(1, 16), means="requests to one host at once"),
        Setting("host_gap", duration(0, 60), means="minimum time between two request starts to one host"),
        Setting(
            "host_breaker",
            integer(0, 1000),
            means="consecutive failures (timeout, connection, TLS, 5xx) from one host in a build after which its "
            "other feeds wait for the next build; `0` disables",
        ),
        # URLs learned from the network (redirects, advertised feeds and hubs on another host) may reach
        # loopback and private addresses (docs/reference/requests.md, "Private networks"; netguard.py).
        Setting(
            "allow_private_networks",
            read_bool,
            means="let URLs learned from the network (redirects, advertised feeds and hubs on another host) "
            "reach loopback and private addresses",
        ),
        # The pages: who runs the planet, how it shows times, how much it shows.
        Setting(
            "description",
            read_free_text,
            means="shown under the title, as the feeds' `subtitle`/`description` and the pages' meta description",
        ),
        Setting(
            "owner",
            read_free_text,
            means='who runs the planet: in the footer ("Run by ...") and as the feeds\' author (else the title)',
        ),
        Setting("logo", read_image, means="an image beside the title, and the Atom `logo`"),
        Setting("favicon", read_image, means="the pages' icon, and the Atom `icon`"),
        Setting(
            "timezone",
            read_timezone,
            means="the zone dates are shown in on the pages (the feeds keep UTC)",
        ),
        Setting("date_format", read_date_format, means="how dates are shown on the pages (English names)"),
        Setting("page_entries", integer(1, 10_000), means="entries on the front page (at most `feed_entries`)"),
        Setting(
            "feed_content",
            choice("full", "summary"),
            means="what `feed.xml` and `feed.json` carry of each entry: its content, or the front page's summary "
            "for much lighter files",
        ),
        Setting(
            "activity_threshold",
            duration(_DAY, 3650 * _DAY),
            means='time without a post before the sites page marks a site "inactive"',
        ),
        # The sites page (docs/site-pages.md): plain words for readers, or the maintainer's details.
        Setting(
            "sites_page_details",
            read_bool,
            means="show the maintainer's details on the public sites page (habits, intervals, failures and advice)",
        ),
        # A moved planet's old feeds (docs/site-pages.md).
        Setting(
            "old_feeds",
            read_old_feeds,
            means="also publish the old planet's feeds under their old names, for their subscribers",
        ),
        # Running from CI (docs/ci.md): the state published beside the site, and where to restore it from
        # when the cache folder is empty.
        Setting(
            "snapshot",
            read_bool,
            means="publish the state beside the site as `syndicator-state.json.gz`, for a CI cache that is lost",
        ),
        Setting(
            "restore_from",
            read_location,
            means="where a build whose cache folder holds no state loads it from first",
        ),
        # The planet as a WebSub publisher (docs/websub.md): the hubs its feeds advertise and announce.py
        # notifies.
        Setting(
            "hub",
            read_hubs,
            field="hubs",
            means="WebSub hubs named in `feed.xml` and `feed.json` and told when they change",
        ),
        # Where the state lives (docs/postgresql.md): a postgresql:// URL; absent, the SQLite database in the
        # cache folder.
        Setting(
            "state",
            read_state,
            means="keep the state in that PostgreSQL database instead of the SQLite file in the cache folder; "
            "`--state` and `$SYNDICATOR_STATE` take precedence",
        ),
        # Webhooks (docs/webhooks.md): where each new or changed entry is POSTed, signed.
        Setting(
            "deliveries",
            read_deliveries,
            means="webhooks each new or changed entry is POSTed to as JSON, signed with the `secret`",
        ),
        # Private feeds (docs/private-feeds.md): where the credentials that sites name are kept.
        Setting(
            "secrets",
            read_file,
            means="a YAML file of the credentials private feeds name with `credentials:`; an environment variable "
            "(`SYNDICATOR_CREDENTIALS_TEAM` for `team`) wins over it. Keep it out of version control, mode 600",
        ),
        # Curation (docs/filters.md): which stored entries the planet publishes; a site's own apply as well.
        Setting(
            "filters",
            read_filters,
            means="which stored entries are published: `drop` rules, and `keep` rules an entry must match "
            "(by category, keyword, author, language, link or age); changing them needs no fetch",
        ),
        # Archives (docs/archives.md): every entry published stays reachable, by month, site and category.
        Setting(
            "archive",
            read_bool,
            means="keep every entry the planet publishes and publish monthly archive pages and a page and feeds "
            "per site and per category",
        ),
        Setting(
            "archive_days",
            integer(1, 365_000),
            means="how many days of posts the archive keeps, by each post's date (left out: for ever)",
        ),
        # Languages (docs/languages.md), search (docs/search.md), sharing (docs/sharing.md).
        Setting(
            "language",
            read_language,
            means="the language of the pages: their text, day and month names and `lang` (English text when "
            "no translation of it is shipped)",
        ),
        Setting(
            "search",
            read_bool,
            means="publish a search page over the archive (it works offline, with no other site asked)",
        ),
        Setting(
            "robots",
            choice("index", "noindex", "none"),
            means="`robots.txt`: `index` lets search engines in (and names the sitemap), `noindex` keeps them "
            "out (and the pages say so), `none` writes no robots.txt",
        ),
    )
}


def read_setting(data: LineDict, key: str) -> Any:
    """The value of the planet setting ``key`` of ``data`` (a key of :data:`SETTINGS`), read by its reader.

    Raises:
        FieldError: the value is not one the setting takes (the message names the line and the key).
    """
    return SETTINGS[key].read(Field(data, key, data[key], data.lines[key]))
