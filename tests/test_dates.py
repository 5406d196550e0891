"""Dates: every form feeds use, read into UTC; untrusted dates fall back to first seen."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from syndicator import dates
from syndicator.dates import http_date, parse_date, trusted
from syndicator.parse.feed import parse_feed
from syndicator.poll.path import save
from syndicator.site.selection import select_entries
from syndicator.state.store import Store

from .conftest import NOW, rss

T = datetime(2024, 3, 12, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tue, 12 Mar 2024 10:00:00 GMT", T),
        ("Tue, 12 Mar 2024 10:00:00 +0000", T),
        ("Tue, 12 Mar 2024 11:00:00 +0100", T),
        ("Tue, 12 Mar 2024 05:00:00 EST", T),
        ("Tue, 12 Mar 2024 03:00:00 PDT", T),
        ("Tue, 12 Mar 2024 12:00:00 CEST", T),
        ("Tue, 12 Mar 2024 19:00:00 JST", T),
        ("Tue, 12 Mar 2024 10:00:00", T),  # no zone: UTC
        ("Tue, 12 Mar 2024 10:00 Z", T),
        ("Fri, 12 Mar 2024 10:00:00 GMT", T),  # the day name disagrees: the date wins
        ("Tue, 12 Mar 24 10:00:00 GMT", T),  # two-digit year
        ("12 Mar 2024 10:00:00 GMT", T),
        ("Tuesday, March 12, 2024 10:00 AM", T),
        ("Di, 12 Mär 2024 11:00:00 +0100", T),  # German
        ("mar., 12 mars 2024 11:00:00 +0100", T),  # French
        ("martes, 12 de marzo de 2024 11:00:00 +0100", T),  # Spanish
        ("mar 12 mar 2024 10:00:00 GMT", T),  # Italian
        ("Ter, 12 Mar 2024 07:00:00 -0300", T),  # Portuguese
        ("di 12 maart 2024 10:00:00 GMT", T),  # Dutch
        ("12 marca 2024 10:00:00 GMT", T),  # Polish
        ("12 марта 2024 13:00:00 +0300", T),  # Russian
        ("2024-03-12T10:00:00Z", T),
        ("2024-03-12T11:00:00+01:00", T),
        ("2024-03-12T10:00:00.000-00:00", T),
        ("2024-03-12T10:00Z", T),
        ("2024-03-12 10:00:00", T),  # no zone: UTC
        ("20240312T100000Z", T),
        ("2024-03-12", datetime(2024, 3, 12, tzinfo=UTC)),  # W3C-DTF date only
        ("2024-03", datetime(2024, 3, 1, tzinfo=UTC)),  # W3C-DTF reduced precision: the first day
        ("2024", datetime(2024, 1, 1, tzinfo=UTC)),
        ("not a date", None),
        ("", None),
        ("Tue, 32 Mar 2024 10:00:00 GMT", None),
        ("2024-13-45T99:00:00Z", None),
    ],
)
def test_parse_date(text: str, expected: datetime | None) -> None:
    assert parse_date(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("12", id="day-only"),
        pytest.param("1e9", id="number"),
        pytest.param("version 3", id="words-and-a-digit"),
        pytest.param("v2", id="version"),
        pytest.param("Mar 12", id="no-year"),
        pytest.param("March 2024", id="no-day"),
        pytest.param("10:00", id="time-only"),
        pytest.param("Tuesday 10:00", id="weekday-and-time"),
        pytest.param("202611", id="compact-year-month-is-not-iso"),
    ],
)
def test_incomplete_dates_are_unreadable_not_filled_from_the_clock(text: str) -> None:
    assert parse_date(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("03/12/24 10:00", T, id="24-is-2024"),
        pytest.param("12-Mar-69 10:00", datetime(1969, 3, 12, 10, tzinfo=UTC), id="69-is-1969"),
        pytest.param("March 12, 2024", datetime(2024, 3, 12, tzinfo=UTC), id="no-time-is-midnight"),
    ],
)
def test_dateutil_forms_read_the_same_in_every_year(text: str, expected: datetime) -> None:
    """Two-digit years follow RFC 2822's fixed rule, not dateutil's window around today."""
    assert parse_date(text) == expected


def test_an_entry_with_a_time_but_no_date_falls_back_with_a_reason() -> None:
    document = rss({"title": "Odd", "link": "https://b.example/odd", "pubDate": "10:00"})
    entry = parse_feed(document.encode(), "https://b.example/feed", {}, NOW).entries[0]
    assert entry.date is None
    assert entry.date_note == "unreadable date '10:00'"


def test_untrusted_dates_are_refused_with_a_reason() -> None:
    assert trusted(NOW + timedelta(hours=23), NOW) == (NOW + timedelta(hours=23), None)
    value, why = trusted(NOW + timedelta(days=2), NOW)
    assert value is None and why and "future" in why
    value, why = trusted(datetime(1994, 12, 31, tzinfo=UTC), NOW)
    assert value is None and why and "1995" in why


def test_rss1_dc_date_is_read() -> None:
    document = """<?xml version="1.0"?>
    <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
             xmlns:dc="http://purl.org/dc/elements/1.1/">
    <channel rdf:about="https://b.example/"><title>B</title><link>https://b.example/</link></channel>
    <item rdf:about="https://b.example/1"><title>One</title><link>https://b.example/1</link>
    <dc:date>2024-03-12T11:00:00+01:00</dc:date></item></rdf:RDF>"""
    assert parse_feed(document.encode(), "https://b.example/rss", {}, NOW).entries[0].date == T


def test_json_feed_item_with_only_date_modified_uses_it() -> None:
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "J",
        "items": [
            {"id": "1", "url": "https://j.example/1", "content_text": "x", "date_modified": "2024-03-12T10:00:00Z"},
            {
                "id": "2",
                "url": "https://j.example/2",
                "content_text": "y",
                "date_published": "2024-03-11T10:00:00Z",
                "date_modified": "2024-03-12T10:00:00Z",
            },
        ],
    }
    entries = parse_feed(json.dumps(document).encode(), "https://j.example/feed.json", {}, NOW).entries
    assert [e.date for e in entries] == [T, T - timedelta(days=1)]
    assert entries[1].updated == T


def test_pubdate_wins_over_updated() -> None:
    item = {
        "title": "t",
        "link": "https://b.example/1",
        "pubDate": "Tue, 12 Mar 2024 10:00:00 GMT",
        "dc:date": "2024-05-01T00:00:00Z",
    }
    entry = parse_feed(rss(item).encode(), "https://b.example/feed", {}, NOW).entries[0]
    assert entry.date == T and entry.updated == datetime(2024, 5, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("pub_date", "reason"),
    [
        ("Wed, 30 Nov 2039 10:00:00 GMT", "future"),
        ("Sat, 01 Jan 1994 10:00:00 GMT", "before 1995"),
        ("sometime last week", "unreadable"),
    ],
)
def test_untrusted_date_falls_back_to_first_seen(tmp_path, pub_date: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    """In a feed with no usable date (among dated items, see test_entry_dates)."""
    document = rss(
        {"title": "Odd", "link": "https://b.example/odd", "pubDate": pub_date},
        {"title": "Undated", "link": "https://b.example/undated"},
    )
    parsed = parse_feed(document.encode(), "https://b.example/feed", {}, NOW)
    odd = parsed.entries[0]
    assert odd.date is None and odd.date_note and reason in odd.date_note
    from syndicator.configtypes import Site
    from syndicator.model import SourceState

    site = Site("B", "https://b.example/feed")
    with Store.open(tmp_path) as store:
        save(store, SourceState(site.feed, site.feed), parsed.entries, NOW - timedelta(days=3))
        save(store, SourceState(site.feed, site.feed), parsed.entries, NOW)  # seen again later
        snapshot = store.snapshots([site.feed])
    merged = select_entries([site], snapshot, 5)
    assert [(s.entry.title, s.date) for s in merged] == [
        ("Odd", NOW - timedelta(days=3)),
        ("Undated", NOW - timedelta(days=3)),
    ]


def test_equal_dates_keep_a_deterministic_order() -> None:
    from syndicator.configtypes import Site
    from syndicator.feedtypes import StoredEntry

    sites = [Site("A", "https://a.example/feed"), Site("B", "https://b.example/feed")]

    def snapshot(site: Site, host: str) -> list[StoredEntry]:
        document = rss(
            *(
                {"title": f"{host} {n}", "link": f"https://{host}/{n}", "pubDate": "Tue, 12 Mar 2024 10:00:00 GMT"}
                for n in range(3)
            )
        )
        return [StoredEntry(site.feed, e, NOW) for e in parse_feed(document.encode(), site.feed, {}, NOW).entries]

    snapshots = {sites[1].feed: snapshot(sites[1], "b.example"), sites[0].feed: snapshot(sites[0], "a.example")}
    first = [s.entry.title for s in select_entries(sites, snapshots, 5)]
    again = [s.entry.title for s in select_entries(sites, dict(reversed(snapshots.items())), 5)]
    assert first == again == ["a.example 0", "a.example 1", "a.example 2", "b.example 0", "b.example 1", "b.example 2"]


@settings(max_examples=800, deadline=None)
@given(
    st.from_regex(
        r"\A((Mon|Tue|Sat|Mar|mon), ?)?[0-9]{1,2} (Jan|Feb|Mar|Sep|Dec|dec|Mai) [0-9]{2,4} "
        r"[0-9]{1,2}:[0-9]{2}(:[0-9]{2})? ?(GMT|UTC|UT|Z|EST|[+-][0-9]{4}|[+-][0-9]{2}:[0-9]{2})?\Z"
    )
)
def test_the_shortcut_for_plain_rfc822_dates_gives_what_the_general_path_gives(text: str) -> None:
    fast = parse_date(text)
    shortcut = dates._PLAIN_RFC822
    dates._PLAIN_RFC822 = re.compile(r"(?!)")  # never matches: every date through the general path
    try:
        assert fast == parse_date(text)
    finally:
        dates._PLAIN_RFC822 = shortcut


@pytest.mark.parametrize(
    "text", ["Mon, 01 Jan 0001 00:00:00 +0000", "Mon, 01 Jan 0099 00:00:00 GMT", "Jan 01 0001", "01 Jan 0026 10:00 GMT"]
)
def test_a_year_written_with_leading_zeros_is_unreadable_not_widened(text: str) -> None:
    assert parse_date(text) is None  # the email package and dateutil would read 0001 as 2001


def test_two_digit_years_are_still_widened() -> None:
    assert parse_date("Mon, 01 Jan 01 00:00:00 +0000") == datetime(2001, 1, 1, tzinfo=UTC)
    assert parse_date("Fri, 01 Jan 99 00:00:00 +0000") == datetime(1999, 1, 1, tzinfo=UTC)
    # a zone written without its sign has four digits and a leading zero too, but is no year
    assert parse_date("Mon, 01 Jan 2024 10:00:00 0000") == datetime(2024, 1, 1, 10, tzinfo=UTC)


@pytest.mark.parametrize("value", ["Fri, 31 Dec 9999 23:59:59 -0100", "not a date", "", None])
def test_an_http_date_out_of_range_or_unreadable_is_none(value: str | None) -> None:
    assert http_date(value) is None


def test_an_http_date_with_an_offset_is_read_in_utc() -> None:
    assert http_date("Tue, 01 Dec 2026 13:00:00 +0100") == datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
