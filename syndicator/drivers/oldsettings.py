"""The old planets' settings as sites.yaml says them, for ``syndicator init``: one table per kind of old
planet (:data:`MAPPED`: old key -> our setting and how its value is written) and the reason each
other setting is not carried over (:data:`UNSUPPORTED`, :data:`FEED_UNSUPPORTED`). docs/moving-in.md
shows the same tables to users.

Sources: Planet Venus's docs/config.html, docs/normalization.html and planet/config.py (Planet 2.0's
settings are a subset of Venus's); pluto's pluto-models/lib/pluto/models/site.rb; rawdog's sample
``config`` file (times without a unit are minutes there, but for ``timeout``: seconds).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from syndicator.configtypes import OLD_FEEDS

__all__ = ["FEED_UNSUPPORTED", "KINDS", "MAPPED", "UNSUPPORTED", "Mapped", "feed_reason", "reason"]

#: What each kind of old planet is called in messages.
KINDS = {
    "venus": "Planet Venus / Planet 2.0 INI",
    "pluto": "pluto INI",
    "rawdog": "rawdog config",
    "opml": "OPML",
}


def _text(value: str) -> str | None:
    return value.strip() or None


def _count(value: str) -> int | None:
    """A positive whole number, or None (0 and other values mean "no limit" or "off" to the old planets)."""
    return int(value) if value.strip().isdigit() and int(value) > 0 else None


def _days(value: str) -> str | None:
    """Venus's days (a whole number) as a duration such as ``180d``; 0 (off) is None."""
    count = _count(value)
    return f"{count}d" if count is not None else None


def _seconds(value: str) -> str | None:
    """A number of seconds (Venus's feed_timeout; rawdog's timeout, which may carry a unit) as a duration."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", value)
    return f"{match[1]}{match[2] or 's'}" if match else None


def _old_feeds(value: str) -> list[str] | None:
    """The feeds among Venus's ``template_files`` (``.../rss20.xml.tmpl`` -> ``rss20.xml``) that old subscribers
    follow, as ``old_feeds`` (:data:`configtypes.OLD_FEEDS`), or None when it names none of them."""
    names = {name.rsplit("/", 1)[-1].rsplit(".", 1)[0] for name in value.split()}
    return [name for name in OLD_FEEDS if name in names] or None


@dataclass(frozen=True)
class Mapped:
    """How one old setting becomes ours: ``setting`` in sites.yaml, its value written by ``convert``
    (the old text -> our value, or None when the old value means "off" or cannot be read)."""

    setting: str
    convert: Callable[[str], Any] = _text


#: {kind: {old key (lower case): Mapped}}.
MAPPED: dict[str, dict[str, Mapped]] = {
    "venus": {
        "name": Mapped("title"),
        "link": Mapped("link"),
        "owner_name": Mapped("owner"),
        "items_per_page": Mapped("page_entries", _count),
        "new_feed_items": Mapped("new_feed_items", _count),
        "date_format": Mapped("date_format"),
        "activity_threshold": Mapped("activity_threshold", _days),
        "feed_timeout": Mapped("timeout", _seconds),
        "spider_threads": Mapped("workers", _count),
        "pubsubhubbub_hub": Mapped("hub"),
        # The old feeds its subscribers follow are written again; its HTML templates are not (a note says so).
        "template_files": Mapped("old_feeds", _old_feeds),
    },
    "pluto": {
        "title": Mapped("title"),
        "name": Mapped("title"),
        "author": Mapped("owner"),
        "owner": Mapped("owner"),
    },
    "rawdog": {
        "maxarticles": Mapped("page_entries", _count),
        "timeout": Mapped("timeout", _seconds),
        "numthreads": Mapped("workers", _count),
        "datetimeformat": Mapped("date_format"),
    },
    "opml": {
        "title": Mapped("title"),
        "ownername": Mapped("owner"),
    },
}

_TEMPLATES = (
    "syndicator writes index.html, sites.html, feed.xml (Atom), feed.json and opml.xml from its own "
    "Jinja2 templates; --templates names a folder of your own"
)
_STATIC = "copy the images and style sheets into a static/ folder beside sites.yaml"
_FILTERS = "write them again as rules of filters, see docs/filters.md"
_NORMALIZE = "syndicator sanitizes, resolves URLs and reads dates itself, with no overrides"
_LOGS = "syndicator logs when it starts and stops, warnings and errors; -v and -q ask for more or fewer lines"
_NO_EMAIL = "the pages show no e-mail address; write it into owner or description to show it"
_DAYS = "the front page groups entries by day under headings like 'Monday 30 November 2026'"
_KEPT = "each feed contributes its items_per_feed newest entries of the last good copy; no history is kept"

#: {kind: {old key: why it is not carried over}}; a key of none of these is not a setting syndicator knows.
UNSUPPORTED: dict[str, dict[str, str]] = {
    "venus": {
        "owner_email": _NO_EMAIL,
        "cache_directory": "syndicator keeps its own state in cache (default cache/ beside sites.yaml)",
        "output_dir": "a folder of the old machine; set output (default public/ beside sites.yaml), "
        "which syndicator replaces whole",
        "output_theme": f"Venus themes do not run here; {_TEMPLATES}",
        "template_directories": _TEMPLATES,
        "bill_of_materials": _STATIC,
        "filters": _FILTERS,
        "filter_directories": _FILTERS,
        "filter": _FILTERS,
        "exclude": _FILTERS,
        "days_per_page": "the front page holds page_entries entries, not days",
        "new_date_format": _DAYS,
        "encoding": "used to read this file; the pages are always UTF-8",
        "locale": "the pages are in English",
        "log_level": _LOGS,
        "log_format": _LOGS,
        "generator": "the feeds name syndicator as their generator",
        "generator_uri": "the feeds name syndicator as their generator",
        "http_cache_directory": "syndicator sends conditional requests and keeps validators in its state",
        "cache_keep_entries": _KEPT,
        "pubsubhubbub_feeds": "feed.xml and feed.json both advertise the hubs",
        "django_autoescape": "templates always escape",
        "feed": "the planet's feed is feed.xml beside index.html",
        "feedtype": "the planet's feed is Atom (feed.xml) and JSON Feed (feed.json)",
        **dict.fromkeys(
            ("ignore_in_feed", "name_type", "title_type", "summary_type", "content_type", "future_dates", "xml_base"),
            _NORMALIZE,
        ),
    },
    "pluto": {
        "email": _NO_EMAIL,
        "source": "pluto's source of its own config, not a home page",
        "url": "pluto's source of its own config, not a home page",
        "key": "pluto's database key",
        "slug": "pluto's database key",
        **dict.fromkeys(("include", "includes", "exclude", "excludes"), _FILTERS),
    },
    "rawdog": {
        "maxage": _KEPT,
        "expireage": _KEPT,
        "keepmin": _KEPT,
        "currentonly": _KEPT,
        "daysections": _DAYS,
        "dayformat": _DAYS,
        "timesections": _DAYS,
        "timeformat": "entries show their date and time in date_format",
        **dict.fromkeys(
            ("template", "pagetemplate", "itemtemplate", "feedlisttemplate", "feeditemtemplate", "define"), _TEMPLATES
        ),
        "outputfile": "syndicator publishes a folder: output (default public/ beside sites.yaml)",
        "userefresh": "the pages do not refresh themselves",
        "showfeeds": "sites.html lists every site and opml.xml every feed",
        **dict.fromkeys(("ignoretimeouts", "showtracebacks", "verbose"), _LOGS),
        "blocklevelhtml": _NORMALIZE,
        "tidyhtml": _NORMALIZE,
        "sortbyfeeddate": "entries are sorted by their own date; an undated one by when it was first seen",
        "useids": "entries are always told apart by their ids, else their links",
        "hideduplicates": "a post reached through two feeds is shown once (same link or id)",
        "newfeedperiod": "syndicator learns how often each feed changes",
        "changeconfig": "a permanent redirect is followed and kept in the state; sites.yaml is left as it is",
        **dict.fromkeys(("plugindirs", "loadplugins"), "syndicator has no plugins"),
        "splitstate": "the state is one SQLite database (or PostgreSQL)",
    },
    "opml": {
        "owneremail": _NO_EMAIL,
        **dict.fromkeys(
            ("datecreated", "datemodified", "docs", "expansionstate", "vertscrollstate")
            + ("windowtop", "windowleft", "windowbottom", "windowright", "ownerid"),
            "says how the list was edited, not how to show the planet",
        ),
    },
}

_CREDENTIALS = "no HTTP authentication: a feed URL with credentials would be published on the sites page"
_PROXY = "syndicator takes its proxy from the environment (HTTPS_PROXY, HTTP_PROXY) for every feed"
#: {per-feed key: why no site setting takes it}, the kinds together (their keys do not clash).
FEED_UNSUPPORTED: dict[str, str] = {
    **dict.fromkeys(("filters", "filter", "exclude", "include", "includes", "excludes"), _FILTERS),
    **dict.fromkeys(
        ("ignore_in_feed", "name_type", "title_type", "summary_type", "content_type", "future_dates", "xml_base"),
        _NORMALIZE,
    ),
    **dict.fromkeys(
        ("items_per_page", "days_per_page", "cache_keep_entries", "maxage", "keepmin"),
        "per-site counts of entries kept or shown: not carried over; a site's items_per_feed can be given by hand",
    ),
    "new_feed_items": "not carried over per site yet: write the site's new_feed_items in sites.yaml by hand",
    "activity_threshold": "activity_threshold is one setting for every site",
    "feed_timeout": "not carried over per site yet: write the site's timeout in sites.yaml by hand",
    "encoding": "a feed's encoding is read from the feed itself",
    "charset": "a feed's encoding is read from the feed itself",
    "period": "syndicator learns how often each feed changes, between min_interval and max_interval",
    "user": _CREDENTIALS,
    "password": _CREDENTIALS,
    "proxyuser": _PROXY,
    "proxypassword": _PROXY,
    "format": "descriptions are read as the feed marks them; no plain-text override",
    "allowduplicates": "entries of one feed are never merged with each other",
}


def reason(kind: str, key: str) -> str:
    """Why the old planet setting ``key`` of ``kind`` is not carried over (str)."""
    return UNSUPPORTED.get(kind, {}).get(key, "syndicator has no such setting")


def feed_reason(key: str) -> str:
    """Why the per-feed setting ``key`` is not carried over (str)."""
    if key.endswith("_proxy"):
        return _PROXY
    return FEED_UNSUPPORTED.get(key, "syndicator has no such per-site setting")
