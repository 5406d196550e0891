"""Decide what one observation means for a source. Pure: values in, values out.

``fetch | parse | decide | store``: this is the *decide* step. Given the
stored state and what this build saw, it returns the new state and whether
the snapshot is replaced. Rules (seed 000):

* a 200 that parsed replaces the snapshot and takes the response's
  validators (an absent one is cleared);
* a 200 whose body hash equals the stored one is "unchanged": the snapshot
  is kept and not parsed again, but new validators are still taken;
* a 304 is a success: the snapshot is kept, new validators are taken and
  omitted ones kept;
* validators are bound to the URL that answered;
* a permanent redirect (every hop 301/308) moves the fetch URL; the
  configured URL stays the identity;
* the failure count resets only on a parsed 200, an unchanged 200 or a 304;
* a Last-Modified later than the response's Date (or ``now``) is not kept:
  sent back, it would pin the feed to 304 for ever; the body hash decides;
* every success after the first adds a :class:`Check` to the change history
  (the last :data:`WINDOW`), which the schedule learns from; a snapshot
  counts as changed when its entries differ (``snapshot_hash``), not merely
  its bytes, so a feed that rewrites a timestamp on every request is quiet;
* a 410 or 401/403 puts the source on hold with its sites.yaml fingerprint;
* a body that failed to parse is remembered by hash and not parsed again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from .dates import http_date
from .failures import kind_of
from .model import Check, Entry, Failed, Fetched, FetchRequest, FetchResult, NotModified, ParsedFeed, SourceState

#: A document must hold at least this many entries, all new, to count as overflowed:
#: with fewer, "all new" is what any change of a short feed looks like.
OVERFLOW_MIN_ENTRIES = 3
#: Successful checks kept as a source's change history.
WINDOW = 8


@dataclass(frozen=True)
class Observation:
    """What one fetch (and parse) of a source produced.

    Attributes:
        request: what was asked.
        result: Fetched, NotModified or Failed (a parse failure is Failed too).
        parsed: the parsed feed when a 200 body was parsed, else None.
        body_hash: hash of the 200 body (hex str), else None.
        unchanged: True when the 200 body equals the stored one (not parsed).
        parse_seconds: CPU time spent parsing, seconds.
        snapshot_hash: :func:`snapshot_hash` of the parsed entries, else None.
        started: seconds from the start of the build to the request's start.
    """

    request: FetchRequest
    result: FetchResult
    parsed: ParsedFeed | None = None
    body_hash: str | None = None
    unchanged: bool = False
    parse_seconds: float = 0.0
    snapshot_hash: str | None = None
    started: float = 0.0

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
        """One word for reports: "fetched", "unchanged", "not_modified" or "failed"."""
        if isinstance(self.result, Failed):
            return "failed"
        if isinstance(self.result, NotModified):
            return "not_modified"
        return "unchanged" if self.unchanged else "fetched"


def new_state(state: SourceState, observation: Observation, now: datetime,
              fingerprint: str | None = None) -> SourceState:
    """The source's state after ``observation`` (see module docstring).

    Args:
        state: the stored state (a fresh SourceState for a new source).
        observation: what this build saw.
        now: the build's clock (UTC).
        fingerprint: the fingerprint of the source's sites.yaml entries,
            stored as ``hold`` after a 410 or 401/403.
    Returns:
        the new SourceState; times are ``now`` where they change. The
        schedule fields (next_attempt, interval, reason) are left as they
        were: :func:`syndicator.schedule.plan` sets them.
    """
    result = observation.result
    state = replace(state, last_attempt=now)
    if isinstance(result, Failed):
        kind = result.error.kind
        return replace(state, failures=state.failures + 1, error_kind=kind, error_message=result.error.message,
                       hold=fingerprint if kind_of(kind).hold else None,
                       failed_body_hash=observation.body_hash or state.failed_body_hash)
    changed = isinstance(result, Fetched) and observation.parsed is not None \
        and observation.snapshot_hash != state.snapshot_hash
    history = _history(state, observation, now, changed)
    state = replace(state, fetch_url=result.permanent_url or state.fetch_url, failures=0, error_kind=None,
                    error_message=None, last_success=now, hold=None, failed_body_hash=None, history=history)
    modified = _trusted_last_modified(result.last_modified, result.headers, now)
    if isinstance(result, NotModified):
        return replace(state, validators_url=result.url, etag=result.etag or state.etag,
                       last_modified=modified or state.last_modified)
    state = replace(state, validators_url=result.url, etag=result.etag,
                    last_modified=modified, body_size=len(result.body))
    if observation.unchanged or observation.parsed is None:
        return state
    parsed = observation.parsed
    state = replace(state, body_hash=observation.body_hash, snapshot_hash=observation.snapshot_hash,
                    hints=parsed.hints, title=parsed.title or state.title, link=parsed.link or state.link)
    return replace(state, last_change=now) if changed else state


def _history(state: SourceState, observation: Observation, now: datetime, changed: bool) -> tuple[Check, ...]:
    """The change history with this success added (no entry for a first success)."""
    if state.last_success is None or now <= state.last_success:
        return state.history
    since = state.last_success
    entries = observation.parsed.entries if changed and observation.parsed is not None else ()
    new = sum(1 for entry in entries if entry.date is not None and since < entry.date <= now)
    overflowed = len(entries) >= OVERFLOW_MIN_ENTRIES and new == len(entries)
    check = Check(at=now, elapsed=(now - since).total_seconds(), changed=changed, new_entries=new,
                  overflowed=overflowed)
    return (*state.history, check)[-WINDOW:]


def _trusted_last_modified(value: str | None, headers: Mapping[str, str], now: datetime) -> str | None:
    """``value`` (as sent) unless it is a date later than the response's Date (or ``now``).

    RFC 9110 section 8.8.2.1: an origin must not send a Last-Modified later
    than its Date; a value that cannot be read as a date is kept as is.
    """
    if value is None:
        return None
    modified, date = http_date(value), http_date(headers.get("date"))
    if modified is not None and modified > (date or now):
        return None
    return value


def snapshot_hash(entries: Iterable[Entry]) -> str:
    """A hash of normalized entries (hex str): equal iff the snapshot is the same.

    Document-level deduplication (seed 000): a feed whose bytes change but
    whose entries do not (a new lastBuildDate, say) is not a change.
    """
    digest = hashlib.sha256()
    for entry in entries:
        digest.update(repr(entry).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
    return digest.hexdigest()
