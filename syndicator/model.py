"""Frozen dataclasses shared by the pipeline stages.

Units are in the names or comments: durations are seconds (float), sizes are
bytes (int), and every datetime is timezone-aware UTC.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .errors import FeedError


@dataclass(frozen=True)
class Site:
    """One subscription in sites.yaml.

    Attributes:
        name: display name, unique within the config.
        feed: the configured feed URL; the identity of its source.
        link: the site's home page (http(s) URL) or None.
    """

    name: str
    feed: str
    link: str | None = None


@dataclass(frozen=True)
class Config:
    """A validated sites.yaml. Paths are resolved against the file's folder.

    Attributes:
        path: the sites.yaml file read.
        title: the planet's title; link: its public home page.
        sites: the subscriptions, in file order.
        workers: size of the fetch pool (threads).
        timeout: connect and read timeout per request, seconds; a whole
            fetch is also cut at ``timeout * 2`` seconds (the total deadline).
        retries: extra attempts after a transient failure within one build.
        items_per_feed: newest entries each feed contributes (seed 004: 5).
        feed_entries: cap on entries in feed.xml (seed 004: 1,000).
        summary_chars: front-page summaries are cut on a word boundary to
            about this many characters of text.
        stale_after: seconds without success before a "last seen" badge.
        user_agent: the full User-Agent header sent with every request.
        max_bytes: cap on a response body after decompression, bytes.
        output: folder the site is published to; cache: the state folder.
    """

    path: Path
    title: str
    link: str
    sites: tuple[Site, ...]
    workers: int = 8
    timeout: float = 15.0
    retries: int = 1
    items_per_feed: int = 5
    feed_entries: int = 1000
    summary_chars: int = 600
    stale_after: float = 4 * 86400.0
    user_agent: str = ""
    max_bytes: int = 10 * 1024 * 1024
    output: Path = Path("public")
    cache: Path = Path("cache")

    @property
    def sources(self) -> tuple[str, ...]:
        """Distinct configured feed URLs, in file order (tuple of str)."""
        return tuple(dict.fromkeys(site.feed for site in self.sites))


@dataclass(frozen=True)
class FetchRequest:
    """What to ask for one source.

    Attributes:
        source: the configured URL (identity; used in errors and logs).
        url: the URL to request now (after any permanent redirect).
        etag, last_modified: validators to send back byte for byte, or None.
        validators_url: the URL the validators came from; they are sent
            only on a request to that URL (seed 000).
    """

    source: str
    url: str
    etag: str | None = None
    last_modified: str | None = None
    validators_url: str | None = None


@dataclass(frozen=True)
class Fetched:
    """A 200 response.

    Attributes:
        url: the URL that finally answered (after redirects).
        permanent_url: the new fetch URL when every redirect hop was
            permanent (301/308), else None.
        body: the decompressed body, at most ``Config.max_bytes`` bytes.
        headers: response headers with lower-case names.
        etag, last_modified: validators of this response, or None.
        elapsed: seconds from first byte sent to last byte read.
    """

    url: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    permanent_url: str | None = None
    elapsed: float = 0.0


@dataclass(frozen=True)
class NotModified:
    """A 304 response: the stored snapshot is still current (RFC 9110 15.4.5)."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    permanent_url: str | None = None
    elapsed: float = 0.0


@dataclass(frozen=True)
class Failed:
    """A fetch or parse that failed; ``error`` carries the URL and kind."""

    error: FeedError
    elapsed: float = 0.0


FetchResult = Fetched | NotModified | Failed


@dataclass(frozen=True)
class Entry:
    """One item of a feed, normalized.

    Attributes:
        id: identity within its source: the feed's guid/id, else the link,
            else a fingerprint of stable fields (see parse.py).
        title: plain text (may be empty).
        link: absolute http(s) URL or None.
        author: plain text or None.
        date: publication date (UTC) from the first usable field of the
            fallback order, or None when the feed gives no usable date.
        updated: last-modified date (UTC) or None.
        summary: sanitized HTML fragment (may be empty).
        content: sanitized HTML fragment of the full content (may be empty).
        date_note: why a date the feed gave was not used, or None.
        aliases: other names of the same post (see identity.alias_keys),
            strongest first; the store uses them to keep one identity when
            the publisher changes identifier style.
    """

    id: str
    title: str = ""
    link: str | None = None
    author: str | None = None
    date: datetime | None = None
    updated: datetime | None = None
    summary: str = ""
    content: str = ""
    date_note: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParsedFeed:
    """A parsed feed document.

    Attributes:
        title, link: the feed's own metadata (plain text, absolute URL).
        entries: entries in document order.
        format: a short name such as "rss20", "atom10" or "json11".
    """

    title: str
    link: str | None
    entries: tuple[Entry, ...]
    format: str = ""


@dataclass(frozen=True)
class SourceState:
    """Durable per-source state (one row of the store).

    Times are UTC datetimes or None; ``failures`` counts consecutive failed
    observations and resets on a parsed 200 or a 304 (seed 000).
    """

    url: str
    fetch_url: str
    etag: str | None = None
    last_modified: str | None = None
    validators_url: str | None = None
    body_hash: str | None = None
    body_size: int | None = None
    title: str | None = None
    link: str | None = None
    last_attempt: datetime | None = None
    last_success: datetime | None = None
    last_change: datetime | None = None
    failures: int = 0
    error_kind: str | None = None
    error_message: str | None = None
    next_attempt: datetime | None = None

    @property
    def ever_worked(self) -> bool:
        """True once a fetch of this source has succeeded (bool)."""
        return self.last_success is not None


@dataclass(frozen=True)
class StoredEntry:
    """An entry of a stored snapshot.

    Attributes:
        source: the configured URL of its source.
        entry: the entry itself.
        first_seen: when syndicator first saw this entry id (UTC).
        changed: when syndicator last saw its content change (UTC), or
            None if it never changed since first seen.
    """

    source: str
    entry: Entry
    first_seen: datetime
    changed: datetime | None = None

    @property
    def date(self) -> datetime:
        """The date used for sorting: the entry's date, else first seen (UTC)."""
        return self.entry.date or self.first_seen


@dataclass(frozen=True)
class SelectedEntry:
    """An entry chosen for output, with the site it is credited to."""

    site: Site
    stored: StoredEntry

    @property
    def entry(self) -> Entry:
        """The entry (Entry)."""
        return self.stored.entry

    @property
    def date(self) -> datetime:
        """Sort date, UTC (datetime)."""
        return self.stored.date


@dataclass(frozen=True)
class SiteStatus:
    """What the sites page shows about one site.

    Attributes:
        site: the subscription.
        state: its source's durable state, or None if never attempted.
        stale: True when the last success is older than ``stale_after``
            (or there never was one while attempts were made).
        entries: number of entries its snapshot holds.
    """

    site: Site
    state: SourceState | None
    stale: bool
    entries: int
