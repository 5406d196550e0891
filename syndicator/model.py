"""Frozen dataclasses the pipeline stages pass along for each source: requests and fetch results,
observations, decisions, and the durable per-source state with its check history and posting habits.

Feeds and their entries (ParsedFeed, Entry, StoredEntry...) are in ``feedtypes``; the configuration's
types (Config, Site, Delivery) are in ``configtypes``; the sites page's health rule (SiteStatus) is in
``health``. Units are in the names or comments: durations are seconds (float), sizes are bytes (int),
and every datetime is timezone-aware UTC.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from syndicator.credential import Credential
from syndicator.errors import FeedError
from syndicator.failures import Verdict, host_verdict
from syndicator.feedtypes import Entry, FeedHints, ParsedFeed


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


@dataclass(frozen=True)
class FetchRequest:
    """What to ask for one source.

    Attributes:
        source: the configured URL (identity; used in errors and logs).
        url: the URL to request now (after any permanent redirect).
        etag, last_modified: validators to send back byte for byte, or None.
        validators_url: the URL the validators came from; they are sent
            only on a request to that URL (seed 000).
        credential: a private feed's credential, sent only to the origin of ``source``
            (:mod:`fetch.private`); None for a public feed. Not in the repr.
        user_agent: the User-Agent to send instead of the fetcher's, or None (a site's own:
            :meth:`configtypes.Config.request_for`).
        headers: extra request headers, ((name, value), ...): a site's ``headers``.
        timeout: seconds to connect and between bytes instead of the fetcher's (the whole fetch
            is cut at twice this), or None (:meth:`configtypes.Config.timeout_for`).
    """

    source: str
    url: str
    etag: str | None = None
    last_modified: str | None = None
    validators_url: str | None = None
    credential: Credential | None = field(default=None, repr=False)
    user_agent: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None


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
