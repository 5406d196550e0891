"""The pure rules of a save (poll/known.py) on plain values: no database, no HTTP.

The end-to-end behaviour (through a real store on disk) is in test_store.py,
test_identity.py, test_entry_dates.py and test_deliveries.py; these pin each
rule alone: aliases, first dates, new vs changed, the baseline, the events.
"""

from __future__ import annotations

from datetime import timedelta

from syndicator.feedtypes import Entry, content_hash
from syndicator.poll.known import alias, backlog, intents, keep_first_date, lookups, resolve
from syndicator.saves import Known, Seen

from .conftest import NOW

EARLIER = NOW - timedelta(days=3)


def _hash(entry: Entry) -> str:
    return content_hash(entry.title, entry.link, entry.summary, entry.content)


def test_an_unseen_entry_is_new_with_its_first_seen_and_first_date() -> None:
    entry = Entry(id="a", title="A", date=EARLIER)
    decided = intents(Known(), [entry], NOW, announce=True)
    assert decided.new == [Seen("a", NOW.isoformat(), _hash(entry), EARLIER.isoformat())]
    assert decided.snapshot == [entry]
    assert [(event.kind, event.entry.id, event.version) for event in decided.events] == [("new", "a", _hash(entry))]
    assert decided.edits == [] and decided.first_dates == []


def test_a_seen_entry_with_the_same_content_is_neither_new_nor_changed() -> None:
    entry = Entry(id="a", title="A", date=EARLIER)
    decided = intents(Known({"a": (EARLIER.isoformat(), _hash(entry))}), [entry], NOW, announce=True)
    assert decided.new == [] and decided.edits == [] and decided.events == []


def test_an_edit_is_changed_and_dated_now() -> None:
    entry = Entry(id="a", title="A, corrected", date=EARLIER)
    decided = intents(Known({"a": (EARLIER.isoformat(), "old hash")}), [entry], NOW, announce=True)
    assert decided.edits == [("a", _hash(entry), NOW.isoformat())]
    assert [event.kind for event in decided.events] == ["changed"]


def test_a_hash_recorded_for_the_first_time_is_no_edit() -> None:
    entry = Entry(id="a", title="A")
    decided = intents(Known({"a": (None, None)}), [entry], NOW, announce=True)
    assert decided.edits == [("a", _hash(entry), None)]
    assert decided.events == []


def test_the_first_snapshot_of_a_source_is_a_baseline_without_events() -> None:
    entries = [Entry(id="a", title="A"), Entry(id="b", title="B")]
    decided = intents(Known(has_history=False), entries, NOW, announce=True)
    assert [seen.id for seen in decided.new] == ["a", "b"]
    assert decided.events == []


def test_no_events_without_deliveries() -> None:
    decided = intents(Known(), [Entry(id="a", title="A")], NOW, announce=False)
    assert [seen.id for seen in decided.new] == ["a"]
    assert decided.events == []


def test_an_alias_key_resolves_a_new_id_to_the_seen_entry_and_records_the_old_id() -> None:
    entry = Entry(id="tag:new", title="A", aliases=("link://example.org/a",))
    known = Known({"https://example.org/a": (None, _hash(entry))})
    decided = intents(known, [entry], NOW, announce=True)
    assert [stored.id for stored in decided.snapshot] == ["https://example.org/a"]
    assert decided.new == [] and decided.events == []
    assert decided.aliases == [
        ("link://example.org/a", "https://example.org/a"),
        ("id:tag:new", "https://example.org/a"),
    ]


def test_the_first_id_wins_and_a_seen_entry_is_claimed_once() -> None:
    first = Entry(id="x", aliases=("guid:1",))
    second = Entry(id="y", aliases=("guid:1",))
    resolved = resolve(Known({"seen": (None, None)}, {"guid:1": "seen"}), [first, second])
    assert [entry.id for entry in resolved] == ["seen", "y"]


def test_an_exact_id_claims_before_an_alias() -> None:
    by_alias = Entry(id="x", aliases=("guid:1",))
    exact = Entry(id="seen")
    resolved = resolve(Known({"seen": (None, None)}, {"guid:1": "seen"}), [by_alias, exact])
    assert [entry.id for entry in resolved] == ["x", "seen"]


def test_a_url_key_finds_the_url_under_either_scheme_and_is_looked_up_so() -> None:
    entry = Entry(id="n", aliases=("uri://example.org/p",))
    assert alias(Known({"http://example.org/p": (None, None)}), "uri://example.org/p") == "http://example.org/p"
    keys, ids = lookups([entry])
    assert keys == {"id:n", "uri://example.org/p"}
    assert ids == {"n", "https://example.org/p", "http://example.org/p"}


def test_a_date_that_moved_forward_keeps_the_first_date() -> None:
    entry = Entry(id="a", date=NOW)
    kept = keep_first_date(Known({"a": (EARLIER.isoformat(), None)}), entry)
    assert (kept.date, kept.updated) == (EARLIER, NOW)


def test_a_date_moved_back_is_stored_as_given_and_becomes_the_first_date() -> None:
    entry = Entry(id="a", date=EARLIER, title="A")
    known = Known({"a": (NOW.isoformat(), _hash(entry))})
    assert keep_first_date(known, entry) == entry
    assert intents(known, [entry], NOW, announce=True).first_dates == [("a", EARLIER.isoformat())]


def test_a_separate_updated_date_is_stored_as_given() -> None:
    entry = Entry(id="a", date=NOW, updated=NOW + timedelta(hours=1))
    assert keep_first_date(Known({"a": (EARLIER.isoformat(), None)}), entry) == entry


def test_a_first_snapshot_marks_its_newest_shown_and_the_others_held() -> None:
    entries = [
        Entry(id="undated"),
        Entry(id="old", date=EARLIER - timedelta(days=1)),
        Entry(id="new", date=EARLIER),
        Entry(id="also-undated"),
    ]
    assert backlog(entries, 2) == ["held", "shown", "shown", "held"]  # dated first, newest first
    assert backlog(entries, 3) == ["shown", "shown", "shown", "held"]  # then undated, in document order
    assert backlog(entries, 0) == ["shown"] * 4  # 0: all
    decided = intents(Known(has_history=False), entries, NOW, announce=False, new_items=2)
    assert [(seen.id, seen.backlog) for seen in decided.new] == [
        ("undated", "held"),
        ("old", "shown"),
        ("new", "shown"),
        ("also-undated", "held"),
    ]
    assert [entry.id for entry in decided.snapshot] == [entry.id for entry in entries]  # every one stored


def test_a_later_snapshots_new_entries_have_no_backlog_mark() -> None:
    decided = intents(Known(), [Entry(id="a"), Entry(id="b", date=EARLIER)], NOW, announce=False, new_items=1)
    assert [(seen.id, seen.backlog) for seen in decided.new] == [("a", None), ("b", None)]
