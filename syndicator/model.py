"""Frozen dataclasses shared by the pipeline stages.

Units are in the names or comments: durations are seconds (float), sizes are
bytes (int), and every datetime is timezone-aware UTC.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from syndicator.errors import FeedError
from syndicator.failures import Verdict, host_verdict


@dataclass(frozen=True)
class Habits:
    """What a feed's entry dates say about when it posts.

    Attributes:
        weight: decayed count of entries seen, as of ``at``.
        at: the time ``weight`` and the histograms refer to (UTC).
        newest: the newest entry date counted (UTC); later dates are new posts.
        oldest: the oldest entry date counted (UTC).
        count: entries counted, undecayed.
        timeless: of those, entries dated exactly 00:00:00.
        hours: decayed entry counts per hour of the day (24, UTC).
        days: decayed entry counts per weekday (7, Monday first).
    """

    weight: float = 0.0
    at: datetime | None = None
    newest: datetime | None = None
    oldest: datetime | None = None
    count: int = 0
    timeless: int = 0
    hours: tuple[float, ...] = (0.0,) * 24
    days: tuple[float, ...] = (0.0,) * 7


def content_hash(*fields: str | None) -> str:
    """Hash of an entry's visible content, to tell an edit from a new post (hex str)."""
    joined = "\x1f".join(field or "" for field in fields)
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()[:32]


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
    """

    name: str
    feed: str
    link: str | None = None
    face: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    language: str | None = None

    @property
    def local(self) -> bool:
        """True when the feed is a local file, read from disk rather than fetched (bool)."""
        return is_local(self.feed)

    @property
    def public_feed(self) -> str | None:
        """The feed URL to publish (str), or None for a local file, whose path is not published."""
        return None if self.local else self.feed


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
            fetch, retries included, is cut at ``timeout * 2`` seconds.
        retries: extra attempts after a transient failure within one build.
        items_per_feed: newest entries each feed contributes (seed 004: 5).
        feed_entries: cap on entries in feed.xml (seed 004: 1,000).
        summary_chars: front-page summaries are cut on a word boundary to
            about this many characters of text.
        stale_after: seconds without success before a "last seen" badge.
        user_agent: the full User-Agent header sent with every request.
        max_bytes: cap on a response body after decompression, bytes.
        output: folder the site is published to; cache: the state folder.
        default_interval: seconds between checks of a source with no
            history yet; min_interval, max_interval: bounds, seconds, of
            every interval the schedule chooses (max at most 7 days).
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
        snapshot: publish the state beside the site (statefile.py).
        restore_from: where a build with an empty cache folder loads the
            state from: an http(s) URL, or a path relative to sites.yaml; or None.
        hubs: the WebSub hubs (absolute http(s) URLs, at most 4) feed.xml and
            feed.json advertise and announce.py notifies of a change; () for none.
        deliveries: the webhooks each new or changed entry is POSTed to
            (:mod:`deliveries`, at most 16); () for none.
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
    snapshot: bool = False
    restore_from: str | None = None
    hubs: tuple[str, ...] = ()
    state: str | None = None
    deliveries: tuple[Delivery, ...] = ()

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
        requests: HTTP requests made, redirect hops and retries included.
    """

    url: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    permanent_url: str | None = None
    elapsed: float = 0.0
    requests: int = 1


@dataclass(frozen=True)
class NotModified:
    """A 304 response: the stored snapshot is still current (RFC 9110 15.4.5)."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    permanent_url: str | None = None
    elapsed: float = 0.0
    requests: int = 1


@dataclass(frozen=True)
class Failed:
    """A fetch or parse that failed; ``error`` carries the URL and kind.

    ``requests`` counts the HTTP requests made (0 when none got out).
    """

    error: FeedError
    elapsed: float = 0.0
    requests: int = 1


@dataclass(frozen=True)
class NotRequested:
    """A due source the fetch pool did not request in this build.

    Attributes:
        reason: "throttled" (its host asked us to wait: a 429, or a 5xx with
            Retry-After) or "breaker" (its host failed repeatedly in this build).
        host: the host key.
        retry_after: the seconds the host asked for, when it said (throttled).
    """

    reason: str
    host: str
    retry_after: float | None = None
    requests: int = 0


FetchResult = Fetched | NotModified | Failed | NotRequested


@dataclass(frozen=True)
class Enclosure:
    """A file published with an entry: a podcast's audio, a video, a document.

    From RSS ``<enclosure>``, Atom ``link rel="enclosure"`` (RFC 4287
    section 4.2.7.2), Media RSS ``media:content`` of an audio or video type,
    and JSON Feed ``attachments`` (see media.py).

    Attributes:
        url: absolute http(s) URL.
        mime_type: a media type such as "audio/mpeg", lower case, or "" when
            neither the feed nor the file name tells.
        length: size in bytes, or None when unknown (feeds often write 0).
        duration: playing time in whole seconds, or None when unknown.
    """

    url: str
    mime_type: str = ""
    length: int | None = None
    duration: int | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """One item of a feed, normalized.

    Attributes:
        id: identity within its source: the feed's guid/id, else the link,
            else a fingerprint of stable fields (see parse/feed.py).
        title: plain text (may be empty).
        link: absolute http(s) URL or None.
        author: a name as plain text, without e-mail addresses, or None.
        date: publication date (UTC) from the first usable field of the
            fallback order, or None when the feed gives no usable date.
        updated: last-modified date (UTC) or None.
        summary: sanitized HTML fragment (may be empty).
        content: sanitized HTML fragment of the full content (may be empty).
        date_note: why a date the feed gave was not used, or None.
        aliases: other names of the same post (see identity.alias_keys),
            strongest first; the store uses them to keep one identity when
            the publisher changes identifier style.
        enclosures: files published with the entry, each URL once, in
            document order (see media.py).
        image: absolute http(s) URL of an image given beside the text
            (media:content or media:thumbnail, an image enclosure,
            itunes:image, JSON Feed image or banner_image), or None.
        language: the language of the entry's text, a well-formed BCP 47 tag
            in canonical case (:func:`language.language_tag`), or None when
            the feed gives none (see parse/feed.py for where it comes from).
        content_src: the absolute http(s) URL of content published out of
            line (Atom ``<content src>``, RFC 4287 section 4.1.3.2), or None.
        content_type: the media type that ``content`` element gives for it
            (``application/pdf``), lower case, or "" when it gives none usable.
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
    enclosures: tuple[Enclosure, ...] = ()
    image: str | None = None
    language: str | None = None
    content_src: str | None = None
    content_type: str = ""


@dataclass(frozen=True)
class FeedHints:
    """What a feed document says about its own schedule (see hints.py).

    Values are as the publisher wrote them, lightly normalized; the
    schedule compares them with observed behaviour and caps them.

    Attributes:
        ttl: RSS 2.0 ``<ttl>``, seconds (the spec writes minutes).
        update_period: sy:updatePeriod / sy:updateFrequency, seconds
            between updates (period divided by frequency).
        rrule: podcast:updateFrequency ``rrule`` attribute, as written.
        dtstart: its ``dtstart`` attribute, as written.
        complete: podcast:updateFrequency ``complete="true"``: no more releases.
        skip_hours: RSS ``<skipHours>``, hours 0-23 (UTC) not to fetch in.
        skip_days: RSS ``<skipDays>``, weekdays (0 = Monday) not to fetch on.
    """

    ttl: float | None = None
    update_period: float | None = None
    rrule: str | None = None
    dtstart: str | None = None
    complete: bool = False
    skip_hours: tuple[int, ...] = ()
    skip_days: tuple[int, ...] = ()


@dataclass(frozen=True)
class ParsedFeed:
    """A parsed feed document.

    Attributes:
        title, link: the feed's own metadata (plain text, absolute URL).
        entries: entries in document order.
        format: a short name such as "rss20", "atom10" or "json11".
        hints: the publisher's scheduling hints (empty FeedHints if none).
        hubs: the WebSub hubs the document advertises (feed-level
            ``rel="hub"`` links; JSON Feed 1.1 ``hubs`` of type WebSub):
            absolute http(s) URLs in document order, each once, at most
            ``hubs.MAX_HUBS`` (see :func:`parse.hubs.collect`).
        self_url: the document's own URL as it states it (feed-level
            ``rel="self"`` link; JSON Feed ``feed_url``), absolute http(s),
            or None; the WebSub topic (WebSub section 4).
    """

    title: str
    link: str | None
    entries: tuple[Entry, ...]
    format: str = ""
    hints: FeedHints = field(default_factory=FeedHints)
    hubs: tuple[str, ...] = ()
    self_url: str | None = None


@dataclass(frozen=True)
class Check:
    """One successful check of a source, for the schedule's change history.

    Attributes:
        at: when the check ran (UTC).
        elapsed: seconds since the previous successful check.
        changed: True when the snapshot (the normalized entries) changed.
        new_entries: entries dated within those ``elapsed`` seconds.
        overflowed: every entry of the document (at least
            ``update.OVERFLOW_MIN_ENTRIES``) is new since the previous check,
            so posts may have scrolled off the feed unseen.
    """

    at: datetime
    elapsed: float
    changed: bool
    new_entries: int = 0
    overflowed: bool = False


@dataclass(frozen=True)
class Observation:
    """What this build saw of one source: one fetch (and parse), or none.

    Made on a worker thread from the request and the source's state as it
    was before the build; read by ``decide``.

    Attributes:
        request: what was asked.
        result: Fetched, NotModified, Failed (a parse failure is Failed too)
            or NotRequested.
        parsed: the parsed feed when a 200 body was parsed, else None.
        body_hash: SHA-256 of the 200 body (hex str), else None.
        unchanged: True when the 200 body equals the stored one (not parsed).
        parse_seconds: CPU seconds spent parsing.
        snapshot_hash: hash of the parsed entries (document-level dedup), else None.
        started: seconds from the start of the build to the request's start.
        followed: the feed URL followed because ``request.url`` answered
            with an HTML page advertising it (feed discovery), else None;
            ``result`` and ``parsed`` are then that feed's.
    """

    request: FetchRequest
    result: FetchResult
    parsed: ParsedFeed | None = None
    body_hash: str | None = None
    unchanged: bool = False
    parse_seconds: float = 0.0
    snapshot_hash: str | None = None
    started: float = 0.0
    followed: str | None = None

    @property
    def status(self) -> int | None:
        """The HTTP status the source answered with: 200, 304, or None for a fetch failure."""
        if isinstance(self.result, NotModified):
            return 304
        if isinstance(self.result, Fetched) or self.body_hash is not None:
            return 200
        return None

    @property
    def outcome(self) -> str:
        """One word for reports: "fetched", "unchanged", "not_modified", "failed" or "skipped"."""
        if isinstance(self.result, NotRequested):
            return "skipped"
        if isinstance(self.result, Failed):
            return "failed"
        if isinstance(self.result, NotModified):
            return "not_modified"
        return "unchanged" if self.unchanged else "fetched"

    @property
    def failure(self) -> FeedError | None:
        """The error of a failed fetch or parse, else None."""
        return self.result.error if isinstance(self.result, Failed) else None

    @property
    def verdict(self) -> Verdict:
        """What this outcome means for its host in this build (failures.host_verdict)."""
        failure = self.failure
        return host_verdict(failure.kind if failure is not None else None, self.retry_after)

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked us to wait (Retry-After, RFC 9110 section 10.2.3), or None."""
        if isinstance(self.result, NotRequested):
            return self.result.retry_after
        return getattr(self.failure, "retry_after", None)


@dataclass(frozen=True)
class Decision:
    """What one observation means for its source: ``decide``'s answer.

    Attributes:
        state: the state to store, next attempt, interval and reason planned.
        entries: the new snapshot, or None to keep the stored one.
        changed: True when the snapshot's entries changed.
        bytes_saved: body bytes a 304 spared, from the stored size.
        due_lag: seconds the request started after its planned time, or
            None when it was not due by the schedule (new, forced, not requested).
    """

    state: SourceState
    entries: tuple[Entry, ...] | None = None
    changed: bool = False
    bytes_saved: int = 0
    due_lag: float | None = None


@dataclass(frozen=True)
class SourceState:
    """Durable per-source state (one row of the store).

    Times are UTC datetimes or None; ``failures`` counts consecutive failed
    observations and resets on a parsed 200 or a 304 (seed 000).

    Schedule fields: ``interval`` (seconds) and ``reason`` explain
    ``next_attempt``; ``history`` holds the most recent successful checks,
    oldest first; ``hints`` the last parsed document's hints. A source on
    hold (410 Gone) has ``hold`` set to the fingerprint of its
    sites.yaml entry and is not attempted until that entry changes.
    ``snapshot_hash`` identifies the stored entries (document dedup);
    ``failed_body_hash`` the last body that failed to parse (not parsed
    again), with the kind and message of that failure in ``failed_body_kind``
    and ``failed_body_message`` (a later failure of another kind, a
    timeout say, must not be reported for that body). ``discovered`` is the
    feed URL followed from the HTML page the configured URL answers with
    (feed discovery; the validators then belong to that URL), or None.
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
    interval: float | None = None
    reason: str | None = None
    history: tuple[Check, ...] = ()
    hints: FeedHints | None = None
    hold: str | None = None
    snapshot_hash: str | None = None
    failed_body_hash: str | None = None
    failed_body_kind: str | None = None
    failed_body_message: str | None = None
    habits: Habits | None = None
    discovered: str | None = None


@dataclass(frozen=True, slots=True)
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


def newest(stored: Sequence[StoredEntry], count: int) -> list[int]:
    """Positions of the ``count`` newest entries of one snapshot, newest first.

    Newest by :attr:`StoredEntry.date`; among equal dates the earlier in the
    document first. The one ranking the store (which loads these entries in
    full, :meth:`store.Store.snapshots`) and selection (which shows them) share.
    """
    return sorted(range(len(stored)), key=lambda i: (-stored[i].date.timestamp(), i))[: max(count, 0)]


@dataclass(frozen=True, slots=True)
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
        last_post: the date of its newest entry (its first-seen time when
            undated; UTC), or None when it holds none.
        inactive: True when its newest entry is older than ``activity_threshold``.
    """

    site: Site
    state: SourceState | None
    stale: bool
    entries: int
    last_post: datetime | None = None
    inactive: bool = False

    @property
    def health(self) -> str:
        """The site's health as ``syndicator status`` names it (str): ``new`` (never attempted),
        ``gone`` (410, on hold), ``denied`` (401 or 403), ``failing`` (another failure) or ``ok``."""
        if self.state is None or self.state.last_attempt is None:
            return "new"
        kind = self.state.error_kind
        if kind is None:
            return "ok"
        return {"http_410": "gone" if self.state.hold is not None else "failing", "http_401": "denied"}.get(
            kind, "failing"
        )


def by_health(statuses: Sequence[SiteStatus]) -> list[SiteStatus]:
    """The sites page's order: sites in trouble (failing, denied, gone) first, then stale ones, then
    inactive ones, then the rest, each in sites.yaml order."""
    return sorted(
        statuses,
        key=lambda status: 0 if status.health in TROUBLE else 1 if status.stale else 2 if status.inactive else 3,
    )


#: The healths of a site in trouble: shown first, and by ``status --failing``.
TROUBLE = ("failing", "denied", "gone")
