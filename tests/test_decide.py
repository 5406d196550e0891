"""The decide step: validators, redirects, future Last-Modified, change history."""

from __future__ import annotations

from datetime import timedelta

from syndicator.errors import HTTPStatusError
from syndicator.feedtypes import Entry, ParsedFeed
from syndicator.model import Failed, Fetched, FetchRequest, NotModified, SourceState
from syndicator.poll.decide import WINDOW, Observation, new_state, snapshot_hash

from .conftest import NOW

URL = "https://blog.example.org/feed.xml"
PAST = "Sun, 29 Nov 2026 10:00:00 GMT"
FUTURE = "Tue, 01 Dec 2026 10:00:00 GMT"
DATE = "Mon, 30 Nov 2026 12:00:00 GMT"
REQUEST = FetchRequest(URL, URL)


def parsed_200(
    etag: str | None = None,
    modified: str | None = None,
    headers: dict[str, str] | None = None,
    entries: tuple[Entry, ...] = (Entry("a"),),
) -> Observation:
    result = Fetched(URL, b"<rss/>", headers=headers or {"date": DATE}, etag=etag, last_modified=modified)
    digest = snapshot_hash(entries)
    return Observation(REQUEST, result, ParsedFeed("T", None, entries), body_hash="h1", snapshot_hash=digest)


def test_a_future_last_modified_is_not_kept() -> None:
    state = new_state(SourceState(URL, URL), parsed_200('"e"', FUTURE), NOW)
    assert state.last_modified is None and state.etag == '"e"'
    assert new_state(SourceState(URL, URL), parsed_200(None, PAST), NOW).last_modified == PAST


def test_last_modified_is_judged_against_the_servers_date() -> None:
    late_server = {"date": "Wed, 02 Dec 2026 10:00:00 GMT"}  # its clock runs ahead of ours
    state = new_state(SourceState(URL, URL), parsed_200(None, FUTURE, late_server), NOW)
    assert state.last_modified == FUTURE


def test_not_modified_takes_new_validators_and_keeps_omitted_ones() -> None:
    stored = SourceState(URL, URL, etag='W/"old"', last_modified=PAST, last_success=NOW - timedelta(hours=1))
    fresh = Observation(REQUEST, NotModified(URL, etag='W/"new"'))
    state = new_state(stored, fresh, NOW)
    assert (state.etag, state.last_modified) == ('W/"new"', PAST)
    future = Observation(REQUEST, NotModified(URL, headers={"date": DATE}, last_modified=FUTURE))
    assert new_state(stored, future, NOW).last_modified == PAST


def test_unchanged_body_still_takes_validators() -> None:
    stored = SourceState(URL, URL, body_hash="h1", snapshot_hash="s", last_success=NOW - timedelta(hours=1))
    result = Fetched(URL, b"<rss/>", etag='"now-sent"')
    state = new_state(stored, Observation(REQUEST, result, body_hash="h1", unchanged=True), NOW)
    assert state.etag == '"now-sent"' and state.snapshot_hash == "s"
    assert state.history[-1].changed is False


def test_permanent_redirect_moves_the_fetch_url_and_binds_validators() -> None:
    moved = "https://new.example.org/feed.xml"
    result = Fetched(moved, b"<rss/>", etag='"x"', permanent_url=moved)
    observation = Observation(REQUEST, result, ParsedFeed("T", None, ()), body_hash="h", snapshot_hash="s")
    state = new_state(SourceState(URL, URL), observation, NOW)
    assert (state.url, state.fetch_url, state.validators_url) == (URL, moved, moved)
    temporary = Fetched(moved, b"<rss/>", etag='"y"')
    observation = Observation(REQUEST, temporary, ParsedFeed("T", None, ()), body_hash="h", snapshot_hash="s")
    state = new_state(SourceState(URL, URL), observation, NOW)
    assert (state.fetch_url, state.validators_url) == (URL, moved)


def test_changes_are_entries_not_bytes() -> None:
    first = new_state(SourceState(URL, URL), parsed_200(), NOW)
    assert first.last_change == NOW and first.history == ()
    later = NOW + timedelta(hours=1)
    same_entries = new_state(first, parsed_200(), later)  # new bytes (say a lastBuildDate), same entries
    assert same_entries.last_change == NOW and same_entries.history[-1].changed is False
    new_entry = (Entry("b", date=NOW + timedelta(minutes=30)), Entry("a"))
    changed = new_state(first, parsed_200(entries=new_entry), later)
    assert changed.last_change == later
    check = changed.history[-1]
    assert (check.changed, check.new_entries, check.elapsed) == (True, 1, 3600)


def test_history_keeps_the_last_window_of_checks() -> None:
    state = new_state(SourceState(URL, URL), parsed_200(), NOW)
    for hour in range(1, WINDOW + 4):
        state = new_state(state, Observation(REQUEST, NotModified(URL)), NOW + timedelta(hours=hour))
    assert len(state.history) == WINDOW
    assert state.history[-1].at == NOW + timedelta(hours=WINDOW + 3)


def test_failure_count_resets_only_on_success() -> None:
    state = SourceState(URL, URL, failures=3, error_kind="timeout", hold=None)
    failed = new_state(state, Observation(REQUEST, Failed(HTTPStatusError(URL, 503))), NOW)
    assert (failed.failures, failed.error_kind) == (4, "http_5xx")
    recovered = new_state(failed, Observation(REQUEST, NotModified(URL)), NOW)
    assert (recovered.failures, recovered.error_kind, recovered.last_success) == (0, None, NOW)
