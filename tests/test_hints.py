"""Publisher hints: reading them from documents and headers, and what they imply."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import islice

import pytest
from dateutil.rrule import rrulestr
from hypothesis import given, settings
from hypothesis import strategies as st

from syndicator.feedtypes import FeedHints
from syndicator.parse import hints, recurrence

from .conftest import NOW, post, rss

HOUR, DAY = 3600.0, 86400.0
PODCAST = 'xmlns:podcast="https://podcastindex.org/namespace/1.0"'
SY = 'xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"'


def document(extra: str, namespaces: str = f"{SY} {PODCAST}") -> bytes:
    return rss(post(1), extra=extra).replace('<rss version="2.0"', f'<rss version="2.0" {namespaces}').encode()


@pytest.mark.parametrize(
    ("extra", "namespaces", "expected"),
    [
        ("<ttl>60</ttl>", "", FeedHints(ttl=3600.0)),
        (
            "<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>",
            SY,
            FeedHints(update_period=1800.0),
        ),
        ("<sy:updatePeriod> weekly </sy:updatePeriod>", SY, FeedHints(update_period=7 * DAY)),
        (
            "<sy:updateFrequency>4</sy:updateFrequency>",
            SY,
            FeedHints(update_period=DAY / 4),
        ),  # period defaults to daily
        (
            "<s:updatePeriod>daily</s:updatePeriod>",
            'xmlns:s="http://purl.org/rss/1.0/modules/syndication/"',
            FeedHints(update_period=DAY),
        ),
        (
            "<skipHours><hour>0</hour><hour>1</hour><hour>23</hour><hour>24</hour></skipHours>",
            "",
            FeedHints(skip_hours=(0, 1, 23)),
        ),
        (
            "<skipDays><day>Saturday</day><day>Sunday</day><day>Someday</day></skipDays>",
            "",
            FeedHints(skip_days=(5, 6)),
        ),
        (
            '<podcast:updateFrequency complete="false" dtstart="2023-04-10T00:00:00.000Z"'
            ' rrule="FREQ=WEEKLY;BYDAY=MO,WE">'
            "Twice weekly</podcast:updateFrequency>",
            PODCAST,
            FeedHints(rrule="FREQ=WEEKLY;BYDAY=MO,WE", dtstart="2023-04-10T00:00:00.000Z"),
        ),
        (
            "<pod:updateFrequency complete='true'>That's all folks!</pod:updateFrequency>",
            'xmlns:pod="https://podcastindex.org/namespace/1.0"',
            FeedHints(complete=True),
        ),
        ("<ttl>soon</ttl>", "", FeedHints()),
        ("", "", FeedHints()),
    ],
    ids=[
        "ttl",
        "sy-hourly-2",
        "sy-weekly",
        "sy-frequency-only",
        "sy-other-prefix",
        "skip-hours",
        "skip-days",
        "podcast-rrule",
        "podcast-complete",
        "ttl-garbage",
        "none",
    ],
)
def test_hints_are_read_from_the_channel(extra: str, namespaces: str, expected: FeedHints) -> None:
    assert hints.from_document(document(extra, namespaces)) == expected


def test_item_level_elements_are_not_channel_hints() -> None:
    body = rss({"title": "x", "ttl": "5"}).encode()
    assert hints.from_document(body) == FeedHints()


# Hostile heads: each of these took the old regexes minutes (a rescan of the
# 256 KiB head from each of many start positions); the outcome is checked.
@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("<skipHours>" * 20_000, FeedHints()),
        ("<skipHours>" * 20_000 + "<hour>3</hour></skipHours>", FeedHints(skip_hours=(3,))),
        ("<podcast:updateFrequency " * 10_000, FeedHints()),
        (
            f'<podcast:updateFrequency {"a" * 200_000} rrule="FREQ=DAILY">x</podcast:updateFrequency>',
            FeedHints(rrule="FREQ=DAILY"),
        ),
        ('<x xmlns:a="' * 20_000 + '"/>', FeedHints()),
        ("<ttl" + " " * 200_000 + "<ttl>5</ttl>", FeedHints(ttl=300.0)),
    ],
    ids=[
        "unclosed-skiphours",
        "unclosed-then-closed",
        "unclosed-update-frequency",
        "long-attribute-name-run",
        "unclosed-namespace-values",
        "long-space-run",
    ],
)
def test_hostile_heads_are_read(extra: str, expected: FeedHints) -> None:
    assert hints.from_document(document(extra)) == expected


def test_attributes_are_read_as_before() -> None:
    element = (
        '<podcast:updateFrequency complete=\'false\' x.y-z:w = "1" rrule="FREQ=WEEKLY" bare '
        "dtstart='2026-01-01'>w</podcast:updateFrequency>"
    )
    assert hints.from_document(document(element)) == FeedHints(rrule="FREQ=WEEKLY", dtstart="2026-01-01")


def test_non_xml_bodies_have_no_hints() -> None:
    assert hints.from_document(b'{"version": "https://jsonfeed.org/version/1.1", "items": []}') == FeedHints()
    assert hints.from_document(bytes(range(256)) * 10) == FeedHints()


# The podcast namespace's own examples, clamped to [15 min, 7 d] (seed 001).
@pytest.mark.parametrize(
    ("rule", "dtstart", "expected"),
    [
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
    ],
    ids=lambda value: str(value),
)
def test_rrule_examples(rule: str, dtstart: str | None, expected: float) -> None:
    seconds, _note = hints.rrule_interval(rule, dtstart, NOW)
    assert seconds == expected


@pytest.mark.parametrize(
    ("rule", "dtstart"),
    [
        ("FREQ=WEEKLY;UNTIL=2023-12-31T00:00:00.000Z;BYDAY=MO", None),
        ("FREQ=WEEKLY;UNTIL=2023-12-31;BYDAY=MO", None),
        ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;COUNT=10", "2023-08-28T00:00:00.000Z"),
    ],
)
def test_an_rrule_that_is_used_up_means_no_further_releases(rule: str, dtstart: str | None) -> None:
    seconds, note = hints.rrule_interval(rule, dtstart, NOW)
    assert seconds == 7 * DAY
    assert "no further releases" in note


def test_a_daily_show_is_expected_daily_and_a_future_start_waits() -> None:
    start = (NOW + timedelta(days=30)).isoformat()
    assert hints.rrule_interval("FREQ=DAILY", start, NOW)[0] == 7 * DAY
    assert hints.rrule_interval("FREQ=DAILY", None, NOW)[0] == DAY


@pytest.mark.parametrize(
    "rule", ["garbage", "FREQ=SOMETIMES", "FREQ=DAILY;INTERVAL=0", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"]
)
def test_unreadable_or_impossible_rrules_give_no_hint(rule: str) -> None:
    assert hints.rrule_interval(rule, None, NOW)[0] is None


# --- bounded work, whatever the rule and its dtstart say (syndicator/parse/recurrence.py) -------

HOURS = ",".join(str(h) for h in range(24))
MINUTES = ",".join(str(m) for m in range(60))


@pytest.mark.parametrize(
    ("rule", "dtstart", "expected"),
    [
        (f"FREQ=DAILY;BYHOUR={HOURS};BYMINUTE={MINUTES}", "1900-01-01T00:00:00Z", 15 * 60.0),  # hours of work before
        (f"FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYHOUR={HOURS};BYMINUTE={MINUTES}", None, 15 * 60.0),
        ("FREQ=DAILY;BYHOUR=9;BYMINUTE=30", "1900-01-01T00:00:00Z", DAY),
        ("FREQ=WEEKLY;BYDAY=WE", "1901-01-02T00:00:00Z", 7 * DAY),
        ("FREQ=DAILY;BYMONTH=1;BYYEARDAY=100", None, None),  # no calendar has it: dateutil searched to 9999
        ("FREQ=WEEKLY;BYMONTH=1;BYYEARDAY=100", "1900-01-01T00:00:00Z", None),
        ("FREQ=DAILY;BYMONTH=1;BYYEARDAY=100;COUNT=5", None, None),
        ("FREQ=DAILY;BYMONTH=1;BYYEARDAY=100;UNTIL=2030-01-01", None, None),
        ("FREQ=DAILY;BYWEEKNO=60", None, None),
        ("FREQ=YEARLY;BYYEARDAY=0", None, None),
        ("FREQ=DAILY;BYMONTH=1;BYYEARDAY=100;BYSETPOS=1", None, None),
        ("FREQ=DAILY;INTERVAL=\u00b2", None, None),
    ],
    ids=[
        "dense-from-1900",
        "dense-yearly",
        "daily-from-1900",
        "weekly-from-1901",
        "impossible-daily",
        "impossible-weekly-1900",
        "impossible-count",
        "impossible-until",
        "week-60",
        "year-day-0",
        "impossible-setpos",
        "superscript-interval",
    ],
)
def test_rrules_that_took_seconds_to_hours(rule: str, dtstart: str | None, expected: float | None) -> None:
    assert hints.rrule_interval(rule, dtstart, NOW)[0] == expected


def test_an_until_with_no_release_left_before_it_means_no_further_releases() -> None:
    seconds, note = hints.rrule_interval("FREQ=YEARLY;BYMONTH=6;UNTIL=2027-01-31", "2020-06-01T00:00:00Z", NOW)
    assert (seconds, note) == (7 * DAY, ": no further releases before UNTIL")


def naive_interval(rule: str, start: datetime, now: datetime) -> float | None:
    """The reading of seed 001 by plain dateutil iteration from dtstart (the code before the bounds)."""
    expanded = rrulestr(rule, dtstart=start)
    horizon = now + timedelta(days=28)
    if "COUNT" in rule:
        every = list(islice(expanded, 1000))
        if not any(when > now for when in every):
            return 7 * DAY if every else None
        upcoming = [when for when in every if now < when <= horizon]
    else:
        upcoming = []
        for when in expanded:
            if when > horizon:
                break
            if when > now:
                upcoming.append(when)
    if len(upcoming) < 2:
        return 7 * DAY
    gap = (upcoming[-1] - upcoming[0]).total_seconds() / (len(upcoming) - 1)
    return min(7 * DAY, max(15 * 60.0, gap, (upcoming[0] - now).total_seconds()))


DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


@st.composite
def possible_rules(draw: st.DrawFn) -> str:
    """Daily-or-coarser rules with occurrences every few years at most (plain iteration must end)."""
    freq = draw(st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "YEARLY"]))
    parts = [f"FREQ={freq}", f"INTERVAL={draw(st.integers(1, 3 if freq == 'DAILY' else 4))}"]
    if draw(st.booleans()):
        parts.append("BYDAY=" + ",".join(draw(st.lists(st.sampled_from(DAYS), min_size=1, max_size=3, unique=True))))
    if draw(st.booleans()):
        parts.append(
            "BYMONTHDAY=" + ",".join(map(str, draw(st.lists(st.integers(1, 28), min_size=1, max_size=3, unique=True))))
        )
    if "INTERVAL=1" in parts and draw(st.booleans()):
        parts.append(
            "BYMONTH=" + ",".join(map(str, draw(st.lists(st.integers(1, 12), min_size=1, max_size=4, unique=True))))
        )
    for name, top in (("BYHOUR", 24), ("BYMINUTE", 60)):
        if draw(st.booleans()):
            parts.append(
                f"{name}="
                + ",".join(map(str, draw(st.lists(st.integers(0, top - 1), min_size=1, max_size=4, unique=True))))
            )
    if draw(st.integers(0, 4)) == 0:
        parts.append(f"COUNT={draw(st.integers(1, 400))}")
    return ";".join(parts)


@settings(max_examples=150, deadline=None)
@given(possible_rules(), st.integers(-3 * 366 * 24, 60 * 24), st.integers(0, 3599))
def test_bounded_reading_equals_plain_iteration(rule: str, hours: int, seconds: int) -> None:
    start = NOW + timedelta(hours=hours, seconds=seconds)
    assert hints.rrule_interval(rule, start.isoformat(), NOW)[0] == naive_interval(rule, start, NOW)


def naive_upcoming(rule: str, start: datetime, now: datetime) -> list[datetime]:
    """Occurrences in (now, now + 28 d] by plain dateutil iteration from dtstart."""
    expanded, horizon, found = rrulestr(rule, dtstart=start), now + timedelta(days=28), []
    for when in islice(expanded, 1000) if "COUNT" in rule else expanded:
        if when > horizon:
            break
        if when > now:
            found.append(when)
    return found


@settings(max_examples=150, deadline=None)
@given(possible_rules(), st.integers(-3 * 366 * 24, 60 * 24), st.integers(0, 3599))
def test_bounded_occurrences_equal_plain_iteration(rule: str, hours: int, seconds: int) -> None:
    start = NOW + timedelta(hours=hours, seconds=seconds)
    expected = naive_upcoming(rule, start, NOW)[: recurrence.RRULE_MAX_OCCURRENCES]
    assert recurrence.upcoming(rule, start.isoformat(), NOW) == expected


@pytest.mark.parametrize(
    ("rule", "dtstart"),
    [
        ("FREQ=MONTHLY", "2020-01-31T10:00:00Z"),  # only months with a 31st, at 10:00
        ("FREQ=YEARLY", "1904-02-29T08:00:00Z"),  # leap days only
        ("FREQ=MONTHLY;INTERVAL=5;BYDAY=+2FR", "1999-03-15T06:30:00Z"),
        ("FREQ=WEEKLY;INTERVAL=3", "1995-05-17T23:59:00Z"),
        ("FREQ=YEARLY;BYWEEKNO=49;BYDAY=TH", "1995-01-01T00:00:00Z"),
        ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "2001-01-01T17:00:00Z"),
    ],
    ids=["monthly-31st", "leap-day", "second-friday-every-5-months", "every-3-weeks", "week-49", "last-weekday"],
)
def test_moving_dtstart_forward_keeps_what_dateutil_derived_from_it(rule: str, dtstart: str) -> None:
    start = datetime.fromisoformat(dtstart)
    for now in (NOW, NOW + timedelta(days=45), NOW + timedelta(days=400)):
        assert recurrence.upcoming(rule, dtstart, now) == naive_upcoming(rule, start, now)
        assert hints.rrule_interval(rule, dtstart, now)[0] == naive_interval(rule, start, now)


def test_document_hints_label_each_hint() -> None:
    found = hints.document_hints(FeedHints(ttl=3600.0, update_period=1800.0, complete=True), NOW)
    assert [(h.seconds, h.label, h.kind) for h in found] == [
        (3600.0, "ttl 60 min", "freshness"),
        (1800.0, "sy:updatePeriod every 30 min", "cadence"),
        (7 * DAY, "podcast:updateFrequency complete: no further releases", "cadence"),
    ]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"cache-control": "public, max-age=600"}, 600.0),
        ({"cache-control": 'max-age="120"'}, 120.0),
        ({"cache-control": "no-cache, max-age=600"}, None),
        ({"cache-control": "no-store"}, None),
        ({"expires": "Mon, 30 Nov 2026 13:00:00 GMT", "date": "Mon, 30 Nov 2026 12:00:00 GMT"}, 3600.0),
        ({"expires": "0", "date": "Mon, 30 Nov 2026 12:00:00 GMT"}, None),
        ({"expires": "Mon, 30 Nov 2026 13:00:00 GMT"}, None),
        ({}, None),
    ],
)
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
