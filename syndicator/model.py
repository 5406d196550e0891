"""Frozen dataclasses the pipeline stages pass along: requests, fetch results, parsed feeds and entries,
observations, decisions, the durable per-source state and stored entries, and what a save knows of a
source's entries and writes for a new snapshot (Known, Intents).

The configuration's types (Config, Site, Delivery) are in ``configtypes``; the sites page's health
rule (SiteStatus) is in ``health``. Units are in the names or comments: durations are seconds (float), sizes are
bytes (int), and every datetime is timezone-aware UTC.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from syndicator.configtypes import Site
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


@dataclass(frozen=True)
class Known:
    """What the store knows of a source, for the ids and alias keys of the entries being saved
    (read by :meth:`state.store.Store.read_known`; the rules that use it are :mod:`poll.known`'s).

    Attributes:
        seen: {entry id: (first date as ISO 8601 text or None, content hash or None)}.
        aliases: {alias key: the seen entry id it names}.
        has_history: the source has a seen entry (any, not only these): False for its first snapshot.
    """

    seen: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    has_history: bool = True


@dataclass(frozen=True)
class Seen:
    """A ``seen`` row of a new id: first seen ``now``, its content hash and first date (ISO 8601 or None)."""

    id: str
    first_seen: str
    content_hash: str
    first_date: str | None


@dataclass(frozen=True)
class Event:
    """A new or changed entry to announce (an ``outbox`` row): ``kind`` "new" or "changed", ``version``
    its content hash."""

    entry: Entry
    kind: str
    version: str


@dataclass(frozen=True)
class Intents:
    """What a save writes for a new snapshot, besides the source's row (decided by
    :func:`poll.known.intents`, written by :meth:`state.store.Store.write_intents`).

    Attributes:
        snapshot: the entries, each under the id it resolves to, in document order.
        new: the ``seen`` rows of ids never seen.
        first_dates: (id, ISO 8601 date) of seen entries dated earlier than their first date.
        edits: (id, content hash, change time or None) of seen entries whose hash differs; None
            for an entry stored before hashes were kept (its hash recorded, not an edit).
        aliases: (alias key, id) to record (a key already recorded keeps its id).
        events: the entries to announce, empty without deliveries or for a baseline.
    """

    snapshot: list[Entry]
    new: list[Seen]
    first_dates: list[tuple[str, str]]
    edits: list[tuple[str, str, str | None]]
    aliases: list[tuple[str, str]]
    events: list[Event]


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
