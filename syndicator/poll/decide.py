"""Decide what one observation means for a source. Pure: values in, values out.

``fetch | parse | decide | store``: this is the *decide* step.
:func:`decide` takes the stored state and what this build saw and returns
a :class:`~syndicator.model.Decision`: the new state with its next attempt
planned (:func:`syndicator.poll.intervals.plan`), the snapshot to store if it
changed, and the build's counts. It reads no clock and touches nothing
but its arguments. Rules for the new state (seed 000):

* a 200 that parsed replaces the snapshot and takes the response's
  validators (an absent one is cleared);
* a 200 whose body hash equals the stored one is "unchanged": the snapshot
  is kept and not parsed again, but new validators are still taken;
* a 304 is a success: the snapshot is kept, new validators are taken and
  omitted ones kept (a 304 to a request without validators never gets
  here: fetch makes it a ``protocol`` failure, so it adds no check to the
  history and the sites page does not call it ok);
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
* a 410 puts the source on hold with its sites.yaml fingerprint (401/403
  take the slow ladder instead: see failures.py);
* a body that failed to parse is remembered by hash, with its own failure
  kind and message, and not parsed again;
* every parsed document teaches the source's posting habits the dates of
  its entries newer than any counted before (:func:`habits.learn`);
* a feed followed from the HTML page the configured URL answers with is
  kept as ``discovered`` (shown by status and the sites page); the fetch
  URL stays the page's, so a page that later points elsewhere is followed
  there, and the validators are bound to the followed feed's URL, so the
  feed is asked conditionally and the page never is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from syndicator.dates import http_date
from syndicator.failures import kind_of
from syndicator.feedtypes import Entry, ParsedFeed
from syndicator.model import Check, Decision, Failed, Fetched, NotModified, NotRequested, Observation, SourceState
from syndicator.parse import hints
from syndicator.poll import habits, intervals, schedule

#: A document must hold at least this many entries, all new, to count as overflowed:
#: with fewer, "all new" is what any change of a short feed looks like.
OVERFLOW_MIN_ENTRIES = 3
#: Successful checks kept as a source's change history.
WINDOW = 8


def decide(
    state: SourceState, observation: Observation, now: datetime, policy: schedule.Policy, fingerprint: str | None = None
) -> Decision:
    """What ``observation`` means for its source: state, plan, snapshot and counts.

    Args:
        state: the stored state (a fresh SourceState for a new source).
        observation: what this build saw (NotRequested when the pool skipped it).
        now: the build's clock (UTC).
        policy: the configured intervals.
        fingerprint: the fingerprint of the source's sites.yaml entries,
            kept as ``hold`` after a 410.
    Returns:
        the Decision; ``entries`` is the new snapshot only when it changed.
    """
    result = observation.result
    if isinstance(result, NotRequested):
        return Decision(intervals.skipped(state, result.reason, result.host, now, result.retry_after))
    updated = new_state(state, observation, now, fingerprint)
    headers = result.headers if isinstance(result, Fetched | NotModified) else {}
    plan = intervals.plan(updated, now, policy, observation.retry_after, hints.http_freshness(headers))
    updated = replace(updated, next_attempt=plan.next_attempt, interval=plan.interval, reason=plan.reason)
    changed = observation.parsed is not None and updated.snapshot_hash != state.snapshot_hash
    due_lag = None
    if state.next_attempt is not None and state.next_attempt <= now:
        due_lag = observation.started + (now - state.next_attempt).total_seconds()
    return Decision(
        updated,
        observation.parsed.entries if changed and observation.parsed else None,
        changed,
        bytes_saved=(state.body_size or 0) if isinstance(result, NotModified) else 0,
        due_lag=due_lag,
    )


def new_state(
    state: SourceState, observation: Observation, now: datetime, fingerprint: str | None = None
) -> SourceState:
    """The source's state after ``observation`` (see module docstring).

    Args:
        state: the stored state (a fresh SourceState for a new source).
        observation: what this build saw.
        now: the build's clock (UTC).
        fingerprint: the fingerprint of the source's sites.yaml entries,
            stored as ``hold`` after a 410.
    Returns:
        the new SourceState; times are ``now`` where they change. The
        schedule fields (next_attempt, interval, reason) are left as they
        were: :func:`syndicator.poll.intervals.plan` sets them.
    """
    result = observation.result
    if isinstance(result, NotRequested):
        return state
    state = replace(state, last_attempt=now, discovered=_discovered(state, observation))
    if isinstance(result, Failed):
        return _failed_state(state, result, observation.body_hash, fingerprint)
    return _succeeded_state(state, observation, result, now)


def _failed_state(state: SourceState, result: Failed, body_hash: str | None, fingerprint: str | None) -> SourceState:
    """The state after a failure: one more failure of its kind, a hold after a 410 (with ``fingerprint``),
    and the failed body's hash, kind and message when a body failed (``body_hash``)."""
    kind, message = result.error.kind, result.error.message
    state = replace(
        state,
        failures=state.failures + 1,
        error_kind=kind,
        error_message=message,
        hold=fingerprint if kind_of(kind).hold else None,
    )
    if body_hash is None:  # no body failed: the last failed body keeps its own failure
        return state
    return replace(state, failed_body_hash=body_hash, failed_body_kind=kind, failed_body_message=message)


def _succeeded_state(
    state: SourceState, observation: Observation, result: Fetched | NotModified, now: datetime
) -> SourceState:
    """The state after a 200 or a 304 (see the module docstring): failures cleared, the change history
    grown, the validators taken, and for a parsed 200 the snapshot, hints, title, link and habits."""
    changed = (
        isinstance(result, Fetched)
        and observation.parsed is not None
        and observation.snapshot_hash != state.snapshot_hash
    )
    history = _history(state, observation, now, changed)
    state = replace(
        state,
        fetch_url=result.permanent_url or state.fetch_url,
        failures=0,
        error_kind=None,
        error_message=None,
        last_success=now,
        hold=None,
        failed_body_hash=None,
        failed_body_kind=None,
        failed_body_message=None,
        history=history,
    )
    modified = _trusted_last_modified(result.last_modified, result.headers, now)
    if isinstance(result, NotModified):
        return replace(
            state,
            validators_url=result.url,
            etag=result.etag or state.etag,
            last_modified=modified or state.last_modified,
        )
    state = replace(
        state, validators_url=result.url, etag=result.etag, last_modified=modified, body_size=len(result.body)
    )
    if observation.unchanged or observation.parsed is None:
        return state
    parsed = observation.parsed
    state = replace(
        state,
        body_hash=observation.body_hash,
        snapshot_hash=observation.snapshot_hash,
        hints=parsed.hints,
        title=parsed.title or state.title,
        link=parsed.link or state.link,
        habits=habits.learn(state.habits, (entry.date for entry in parsed.entries), now),
    )
    return replace(state, last_change=now) if changed else state


def _discovered(state: SourceState, observation: Observation) -> str | None:
    """The feed URL discovered on the source's page: this build's, else the stored one when the
    page itself could not be fetched (no body), else None (the URL serves a feed, or a page without one)."""
    if observation.followed is not None:
        return observation.followed
    if isinstance(observation.result, Failed) and observation.body_hash is None:
        return state.discovered
    return None


def _history(state: SourceState, observation: Observation, now: datetime, changed: bool) -> tuple[Check, ...]:
    """The change history with this success added (no entry for a first success)."""
    if state.last_success is None or now <= state.last_success:
        return state.history
    since = state.last_success
    entries = observation.parsed.entries if changed and observation.parsed is not None else ()
    new = sum(1 for entry in entries if entry.date is not None and since < entry.date <= now)
    overflowed = len(entries) >= OVERFLOW_MIN_ENTRIES and new == len(entries)
    check = Check(
        at=now, elapsed=(now - since).total_seconds(), changed=changed, new_entries=new, overflowed=overflowed
    )
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


@dataclass(frozen=True)
class Reconciled:
    """How a notification's entries compared with the stored snapshot (:func:`decide_push`).

    Attributes:
        taken: new entries and newer versions of stored ones that the merged snapshot holds (int).
        stale: pushed entries left out because the store holds something newer (int): an older version of a
            stored entry, or a post older than every entry kept (one that fell out of the snapshot).
        doubtful: pushed versions that differ from the stored ones with no dates to order them (int); the
            stored ones are kept, and the topic's own document should settle it (a conditional poll).
    """

    taken: int = 0
    stale: int = 0
    doubtful: int = 0

    @property
    def replay(self) -> bool:
        """True when the notification brought nothing newer and something older: a replay (seed 003)."""
        return self.taken == 0 and (self.stale > 0 or self.doubtful > 0)


def decide_push(
    state: SourceState, parsed: ParsedFeed, stored: Sequence[Entry], now: datetime
) -> tuple[Decision, Reconciled]:
    """What a verified WebSub notification means for its source. Pure.

    A hub may deliver the whole feed or only its new entries (WebSub 7
    leaves it to the hub), so the pushed entries are merged into the stored
    snapshot rather than replacing it. Notifications arrive out of order
    and may be replayed, and a later-arriving one may describe an older
    representation of the feed (seed 003), so a notification never replaces
    newer stored content:

    * a pushed entry whose id is not stored is new, and goes first (in
      document order);
    * a pushed version of a stored entry replaces it only when it is newer
      (its ``updated``, else its ``date``, is later); the same text is the
      same entry; an older one is *stale*, one that cannot be ordered (no
      dates, or equal dates and another text) is *doubtful*: both keep the
      stored one;
    * the merged snapshot holds as many entries as the larger of the two;
      what gives way is the oldest entries (by ``updated``, else ``date``;
      undated ones count as newest), so a replayed post that had fallen out
      of the snapshot falls out again.

    A push is not a poll: validators, body hash, failures and the schedule
    are left as they were; the snapshot hash, title, link, habits and, when
    the entries changed, ``last_change`` are updated (title and link only
    when the notification brought something newer).

    Args:
        state: the stored state of the topic's source.
        parsed: the notification's body, parsed.
        stored: the source's stored snapshot, in document order.
        now: the loop's clock (UTC).
    Returns:
        (the Decision, whose ``entries`` is the merged snapshot when it changed; what was taken and left).
    """
    merged, count = _merged(parsed.entries, stored)
    digest = snapshot_hash(merged)
    changed = digest != state.snapshot_hash
    updated = replace(
        state, snapshot_hash=digest, habits=habits.learn(state.habits, (entry.date for entry in parsed.entries), now)
    )
    if count.taken:
        updated = replace(updated, title=parsed.title or state.title, link=parsed.link or state.link)
    if changed:
        updated = replace(updated, last_change=now)
    return Decision(updated, tuple(merged) if changed else None, changed), count


def _merged(pushed: Sequence[Entry], stored: Sequence[Entry]) -> tuple[list[Entry], Reconciled]:
    """The stored snapshot with the ``pushed`` entries merged in (the rules of :func:`decide_push`), and
    what was taken and left."""
    by_id = {entry.id: entry for entry in stored}
    newer: dict[str, Entry] = {}
    stale = doubtful = 0
    for entry in pushed:
        old = by_id.get(entry.id)
        if old is None:
            continue
        order = _order(entry, old)
        if order == "newer":
            newer[entry.id] = entry
        stale += order == "older"
        doubtful += order == "doubtful"
    fresh = [entry for entry in pushed if entry.id not in by_id]
    merged = _newest(fresh + [newer.get(entry.id, entry) for entry in stored], max(len(stored), len(pushed)))
    kept = {id(entry) for entry in merged}
    taken = sum(1 for entry in (*fresh, *newer.values()) if id(entry) in kept)
    return merged, Reconciled(taken, stale + sum(1 for entry in fresh if id(entry) not in kept), doubtful)


def _order(pushed: Entry, stored: Entry) -> str:
    """``same``, ``newer``, ``older`` or ``doubtful``: a pushed version of an entry against the stored one."""
    if _text(pushed) == _text(stored):
        return "same"
    pushed_at, stored_at = pushed.updated or pushed.date, stored.updated or stored.date
    if pushed_at is None or stored_at is None or pushed_at == stored_at:
        return "doubtful"
    return "newer" if pushed_at > stored_at else "older"


def _text(entry: Entry) -> tuple[object, ...]:
    """What a reader sees of an entry, dates aside (the store may move a date: ``Store._keep_first_date``)."""
    return (entry.title, entry.link, entry.author, entry.summary, entry.content, entry.enclosures, entry.image)


def _newest(entries: list[Entry], cap: int) -> list[Entry]:
    """``entries`` in their order, without the oldest beyond ``cap`` (undated ones count as newest; of two
    equally old, the later one gives way)."""
    if len(entries) <= cap:
        return entries
    ranked = sorted(
        range(len(entries)),
        key=lambda index: (_moment(entries[index]) is None, _moment(entries[index]) or datetime.min, -index),
    )
    dropped = set(ranked[: len(entries) - cap])
    return [entry for index, entry in enumerate(entries) if index not in dropped]


def _moment(entry: Entry) -> datetime | None:
    return entry.updated or entry.date
