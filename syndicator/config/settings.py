"""The planet's optional settings in sites.yaml: :data:`SETTINGS`, the one table of them.

Each entry names a setting, gives its reader (:mod:`config.readers`, which checks the value and its
bounds, documented in README.md, "Configuration") and the :class:`configtypes.Config` field it sets;
its default is that field's default, and only there. Durations are seconds, ints are counts
(max_bytes: bytes).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any

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
    read_free_text,
    read_hubs,
    read_image,
    read_location,
    read_new_items,
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
    Config field it sets (``attribute``: ``field``, or the setting's own name); ``default`` is that field's
    default."""

    name: str
    read: Reader
    field: str | None = None

    @property
    def attribute(self) -> str:
        """The name of the :class:`Config` field this setting sets (str)."""
        return self.field or self.name

    @property
    def default(self) -> Any:
        """The value a sites.yaml without this setting gets: its Config field's default."""
        return _DEFAULTS[self.attribute]


#: The optional settings, in the order they are read (the first invalid one is reported).
SETTINGS: dict[str, Setting] = {
    setting.name: setting
    for setting in (
        Setting("workers", integer(1, WORKERS_MAX)),
        Setting("timeout", duration(1, 300)),
        Setting("retries", integer(0, 5)),
        Setting("items_per_feed", integer(1, 100)),
        # A site's first fetch publishes its newest few entries, not its whole archive (docs/first-fetch.md).
        Setting("new_feed_items", read_new_items),
        Setting("feed_entries", integer(1, 100_000)),
        Setting("summary_chars", integer(20, 100_000)),
        Setting("stale_after", duration(60, 365 * _DAY)),
        Setting("max_bytes", integer(1024, 100 * 1024 * 1024)),
        # The contact URL in the User-Agent (default: the planet's link); Config.user_agent is the whole header.
        Setting("user_agent", read_url),
        Setting("output", read_path),
        Setting("cache", read_path),
        # The schedule (README.md, "Polite polling"): first interval, and bounds of every interval.
        Setting("default_interval", duration(60, 7 * _DAY)),
        Setting("min_interval", duration(60, 7 * _DAY)),
        Setting("max_interval", duration(60, 7 * _DAY)),
        # The request budget the schedule spends where posts are likely (README.md, "How often a feed is checked").
        Setting("requests_per_feed_per_day", number(0.1, 1440)),
        # Host fairness: requests at once, seconds between starts, failures that skip a host.
        Setting("per_host_concurrency", integer(1, 16)),
        Setting("host_gap", duration(0, 60)),
        Setting("host_breaker", integer(0, 1000)),
        # URLs learned from the network (redirects, advertised feeds and hubs on another host) may reach
        # loopback and private addresses (README.md, "Private networks"; netguard.py).
        Setting("allow_private_networks", read_bool),
        # The pages (README.md, "Configuration"): who runs the planet, how it shows times, how much it shows.
        Setting("description", read_free_text),
        Setting("owner", read_free_text),
        Setting("logo", read_image),
        Setting("favicon", read_image),
        Setting("timezone", read_timezone),
        Setting("date_format", read_date_format),
        Setting("page_entries", integer(1, 10_000)),
        Setting("feed_content", choice("full", "summary")),
        Setting("activity_threshold", duration(_DAY, 3650 * _DAY)),
        # Running from CI (README.md, "Running from CI"): the state published beside the site, and where to
        # restore it from when the cache folder is empty.
        Setting("snapshot", read_bool),
        Setting("restore_from", read_location),
        # The planet as a WebSub publisher (README.md, "Your planet as a WebSub publisher"): the hubs its feeds
        # advertise and announce.py notifies.
        Setting("hub", read_hubs, field="hubs"),
        # Where the state lives (README.md, "The state in PostgreSQL"): a postgresql:// URL; absent, the SQLite
        # database in the cache folder.
        Setting("state", read_state),
        # Webhooks (README.md, "Deliveries (webhooks)"): where each new or changed entry is POSTed, signed.
        Setting("deliveries", read_deliveries),
    )
}


def read_setting(data: LineDict, key: str) -> Any:
    """The value of the planet setting ``key`` of ``data`` (a key of :data:`SETTINGS`), read by its reader.

    Raises:
        FieldError: the value is not one the setting takes (the message names the line and the key).
    """
    return SETTINGS[key].read(Field(data, key, data[key], data.lines[key]))
