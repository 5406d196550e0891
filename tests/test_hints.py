"""Publisher hints: reading them from documents and headers, and what they imply."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from syndicator import hints
from syndicator.model import FeedHints

from .conftest import NOW, post, rss

HOUR, DAY = 3600.0, 86400.0
PODCAST = 'xmlns:podcast="https://podcastindex.org/namespace/1.0"'
SY = 'xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"'


def document(extra: str, namespaces: str = f"{SY} {PODCAST}") -> bytes:
    return rss(post(1), extra=extra).replace('<rss version="2.0"', f'<rss version="2.0" {namespaces}').encode()


@pytest.mark.parametrize(("extra", "namespaces", "expected"), [
    ("<ttl>60</ttl>", "", FeedHints(ttl=3600.0)),
    ("<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>", SY,
     FeedHints(update_period=1800.0)),
    ("<sy:updatePeriod> weekly </sy:updatePeriod>", SY, FeedHints(update_period=7 * DAY)),
    ("<sy:updateFrequency>4</sy:updateFrequency>", SY, FeedHints(update_period=DAY / 4)),  # period defaults to daily
    ("<s:updatePeriod>daily</s:updatePeriod>", 'xmlns:s="http://purl.org/rss/1.0/modules/syndication/"',
     FeedHints(update_period=DAY)),
    ("<skipHours><hour>0</hour><hour>1</hour><hour>23</hour><hour>24</hour></skipHours>", "",
     FeedHints(skip_hours=(0, 1, 23))),
    ("<skipDays><day>Saturday</day><day>Sunday</day><day>Someday</day></skipDays>", "", FeedHints(skip_days=(5, 6))),
    ('<podcast:updateFrequency complete="false" dtstart="2023-04-10T00:00:00.000Z" rrule="FREQ=WEEKLY;BYDAY=MO,WE">'
     "Twice weekly</podcast:updateFrequency>", PODCAST,
     FeedHints(rrule="FREQ=WEEKLY;BYDAY=MO,WE", dtstart="2023-04-10T00:00:00.000Z")),
    ("<pod:updateFrequency complete='true'>That's all folks!</pod:updateFrequency>",
     'xmlns:pod="https://podcastindex.org/namespace/1.0"', FeedHints(complete=True)),
    ("<ttl>soon</ttl>", "", FeedHints()),
    ("", "", FeedHints()),
], ids=["ttl", "sy-hourly-2", "sy-weekly", "sy-frequency-only", "sy-other-prefix", "skip-hours", "skip-days",
        "podcast-rrule", "podcast-complete", "ttl-garbage", "none"])
def test_hints_are_read_from_the_channel(extra: str, namespaces: str, expected: FeedHints) -> None:
    assert hints.from_document(document(extra, namespaces)) == expected


def test_item_level_elements_are_not_channel_hints() -> None:
    body = rss({"title": "x", "ttl": "5"}).encode()
    assert hints.from_document(body) == FeedHints()


# Hostile heads: each of these took the old regexes minutes (a rescan of the
# 256 KiB head from each of many start positions); the outcome is checked.
@pytest.mark.parametrize(("extra", "expected"), [
    ("<skipHours>" * 20_000, FeedHints()),
    ("<skipHours>" * 20_000 + "<hour>3</hour></skipHours>", FeedHints(skip_hours=(3,))),
    ("<podcast:updateFrequency " * 10_000, FeedHints()),
    (f'<podcast:updateFrequency {"a" * 200_000} rrule="FREQ=DAILY">x</podcast:updateFrequency>',
     FeedHints(rrule="FREQ=DAILY")),
    ('<x xmlns:a="' * 20_000 + '"/>', FeedHints()),
    ("<ttl" + " " * 200_000 + "<ttl>5</ttl>", FeedHints(ttl=300.0)),
], ids=["unclosed-skiphours", "unclosed-then-closed", "unclosed-update-frequency", "long-attribute-name-run",
        "unclosed-namespace-values", "long-space-run"])
def test_hostile_heads_are_read(extra: str, expected: FeedHints) -> None:
    assert hints.from_document(document(extra)) == expected


def test_attributes_are_read_as_before() -> None:
    element = ("<podcast:updateFrequency complete='false' x.y-z:w = \"1\" rrule=\"FREQ=WEEKLY\" bare "
               "dtstart='2026-01-01'>w</podcast:updateFrequency>")
    assert hints.from_document(document(element)) == FeedHints(rrule="FREQ=WEEKLY", dtstart="2026-01-01")


def test_non_xml_bodies_have_no_hints() -> None:
    assert hints.from_document(b'{"version": "https://jsonfeed.org/version/1.1", "items": []}') == FeedHints()
    assert hints.from_document(bytes(range(256)) * 10) == FeedHints()


# The podcast namespace's own examples, clamped to [15 min, 7 d] (seed 001).
@pytest.mark.parametrize(("rule", "dtstart", "expected"), [
    ("FREQ=DAILY", None, DAY),
    ("FREQ=WEEKLY", None, 7 * DAY),
    ("FREQ=WEEKLY;INTERVAL=2", None, 7 * DAY),
    ("FREQ=MONTHLY", None, 7 * DAY),
    ("FREQ=MONTHLY;INTERVAL=2", None, 7 * DAY),
    ("FREQ=YEARLY", None, 7 * DAY),
    ("FREQ=WEEKLY;BYDAY=MO,WE", None, pytest.approx(3.5 * DAY, rel=0.15)),
    ("FREQ=DAILY;INTERVAL=1;BYDAY=MO,TU,WE,TH,FR", None, pytest.approx(1.4 * DAY, rel=0.15)),
    ("FREQ=WEEKLY;BYDAY=FR;BYMONTHDAY=13", None, 7 * DAY),
    ("FREQ=YEARLY;BYDAY=+4TH;BYMONTH=11", None, 7 * DAY),
    ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;COUNT=10", "2023-08-28T00:00:00.000Z", 7 * DAY),
    ("FREQ=WEEKLY;UNTIL=2023-12-31T00:00:00.000Z;BYDAY=MO", None, 7 * DAY),
    ("FREQ=WEEKLY", "2025-01-01T00:00:00.000Z", 7 * DAY),
    ("FREQ=HOURLY;INTERVAL=2", None, 2 * HOUR),
    ("FREQ=MINUTELY", None, 15 * 60.0),
    ("FREQ=DAILY;UNTIL=2027-12-31T00:00:00.000Z", None, DAY),
    ("FREQ=DAILY;UNTIL=20271231T000000Z", None, DAY),
], ids=lambda value: str(value))
def test_rrule_examples(rule: str, dtstart: str | None, expected: float) -> None:
    seconds, _note = hints.rrule_interval(rule, dtstart, NOW)
    assert seconds == expected


@pytest.mark.parametrize(("rule", "dtstart"), [
    ("FREQ=WEEKLY;UNTIL=2023-12-31T00:00:00.000Z;BYDAY=MO", None),
    ("FREQ=WEEKLY;UNTIL=2023-12-31;BYDAY=MO", None),
    ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;COUNT=10", "2023-08-28T00:00:00.000Z"),
])
def test_an_rrule_that_is_used_up_means_no_further_releases(rule: str, dtstart: str | None) -> None:
    seconds, note = hints.rrule_interval(rule, dtstart, NOW)
    assert seconds == 7 * DAY
    assert "no further releases" in note


def test_a_daily_show_is_expected_daily_and_a_future_start_waits() -> None:
    start = (NOW + timedelta(days=30)).isoformat()
    assert hints.rrule_interval("FREQ=DAILY", start, NOW)[0] == 7 * DAY
    assert hints.rrule_interval("FREQ=DAILY", None, NOW)[0] == DAY


@pytest.mark.parametrize("rule", ["garbage", "FREQ=SOMETIMES", "FREQ=DAILY;INTERVAL=0",
                                  "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"])
def test_unreadable_or_impossible_rrules_give_no_hint(rule: str) -> None:
    assert hints.rrule_interval(rule, None, NOW)[0] is None


def test_document_hints_label_each_hint() -> None:
    found = hints.document_hints(FeedHints(ttl=3600.0, update_period=1800.0, complete=True), NOW)
    assert [(h.seconds, h.label, h.kind) for h in found] == [
        (3600.0, "ttl 60 min", "freshness"),
        (1800.0, "sy:updatePeriod every 30 min", "cadence"),
        (7 * DAY, "podcast:updateFrequency complete: no further releases", "cadence"),
    ]


@pytest.mark.parametrize(("headers", "expected"), [
    ({"cache-control": "public, max-age=600"}, 600.0),
    ({"cache-control": 'max-age="120"'}, 120.0),
    ({"cache-control": "no-cache, max-age=600"}, None),
    ({"cache-control": "no-store"}, None),
    ({"expires": "Mon, 30 Nov 2026 13:00:00 GMT", "date": "Mon, 30 Nov 2026 12:00:00 GMT"}, 3600.0),
    ({"expires": "0", "date": "Mon, 30 Nov 2026 12:00:00 GMT"}, None),
    ({"expires": "Mon, 30 Nov 2026 13:00:00 GMT"}, None),
    ({}, None),
])
def test_http_freshness(headers: dict[str, str], expected: float | None) -> None:
    hint = hints.http_freshness(headers)
    assert (hint.seconds if hint else None) == expected


def test_next_allowed_skips_hours_and_days_within_the_limit() -> None:
    due = datetime(2026, 11, 28, 23, 17, 5, tzinfo=UTC)  # a Saturday
    weekend = FeedHints(skip_days=(5, 6))
    moved = hints.next_allowed(due, weekend, due + timedelta(days=3))
    assert moved == datetime(2026, 11, 30, 0, 17, 5, tzinfo=UTC)
    assert hints.next_allowed(due, weekend, due + timedelta(hours=5)) == due  # never past the limit
    every_hour = FeedHints(skip_hours=tuple(range(24)))
    assert hints.next_allowed(due, every_hour, due + timedelta(days=7)) == due
    assert hints.next_allowed(due, None, due) == due
